// Shared values become locals. Lowering builds expressions as a DAG: a value used twice is one
// object referenced twice (`noise` reads each corner's cell twice, each `hash` round reads its
// state twice). Every walk over the IR (fusion, the analyses, the interpreter's printer, codegen)
// treats an expression as a tree, so a DAG of n nodes could cost 2^n: `noise(vec3(x, y, 1.0))`
// printed as ~2 MB of JavaScript and emitted ~1.5 MB of WebAssembly before binaryen's CSE.
//
// This pass sets each value shared within a statement to a fresh local just before that
// statement, and reads the local where the value was used, so what every later pass sees is
// linear in the DAG's size. Within one statement the hoisting is exact: expressions have no
// effects and the statement evaluates all of its expression before it assigns or branches.
// Small shared values (`x + 2`, read by a vec4 gather's four loads) stay inline: codegen
// recognises their shapes (a gather at `x + constant`), and copying them costs a constant factor.
// A shared gather (a load at other elements) is a local whatever its size: it is small as a tree
// but costs codegen a load per lane (`sample`'s lerps read six of its eight corners twice).

import type { Expr, IrFunction, Scalar, Stmt } from './ir.js';
import { exprChildren, mapChildren, stmtExprs, unreachable } from './walk.js';

/** A shared value of at most this many nodes (as a tree) stays inline. */
export const SHARE_ABOVE = 12;

/** `fn` with every value shared within a statement computed once, into a local of its own. */
export function shareValues(fn: IrFunction): IrFunction {
  const locals = [...fn.locals];
  const body = shareList(fn.body, locals);
  if (locals.length === fn.locals.length) return fn;
  return { ...fn, locals, body };
}

function shareList(list: Stmt[], locals: Scalar[]): Stmt[] {
  const out: Stmt[] = [];
  for (const s of list) {
    const roots = stmtExprs(s);
    const { rebuilt, sets } = roots.length ? shareRoots(roots, locals) : { rebuilt: roots, sets: [] };
    out.push(...sets);
    switch (s.k) {
      case 'set':
        out.push(sets.length ? { k: 'set', local: s.local, e: rebuilt[0] } : s);
        break;
      case 'if':
        out.push({ k: 'if', c: rebuilt[0], then: shareList(s.then, locals), else: shareList(s.else, locals) });
        break;
      case 'block':
      case 'loop':
        out.push({ ...s, body: shareList(s.body, locals) });
        break;
      case 'break':
        out.push(s);
        break;
      default:
        unreachable(s);
    }
  }
  return out;
}

function shareRoots(roots: readonly Expr[], locals: Scalar[]): { rebuilt: Expr[]; sets: Stmt[] } {
  // How many parents (or roots) reference each node, each node walked once. A leaf (a constant,
  // a local, a load at the element) is never shared: not counted (it was about half the map's
  // work, and this pass ~a quarter of the inline corpus kernel's check).
  const refs = new Map<Expr, number>();
  const count = (e: Expr): void => {
    const children = exprChildren(e);
    if (!children.length) return;
    const n = refs.get(e);
    refs.set(e, (n ?? 0) + 1);
    if (n === undefined) for (const c of children) count(c);
  };
  roots.forEach(count);
  // Each node's size as a tree, capped (it can be exponential), memoised.
  const sizes = new Map<Expr, number>();
  const size = (e: Expr): number => {
    let n = sizes.get(e);
    if (n === undefined) {
      n = 1;
      for (const c of exprChildren(e)) n = Math.min(n + size(c), 1 << 30);
      sizes.set(e, n);
    }
    return n;
  };
  const shared = (e: Expr, n: number): boolean => n > 1 && (size(e) > SHARE_ABOVE || (e.k === 'load' && !!e.at));
  // Nothing to share (an IR lowering shared already, which codegen shares again): the statement
  // as it is, not rebuilt (rebuilding the noise corpus kernel's IR took ~4 ms per compile).
  let any = false;
  for (const [e, n] of refs) if ((any = shared(e, n))) break;
  if (!any) return { rebuilt: [...roots], sets: [] };
  const sets: Stmt[] = [];
  const done = new Map<Expr, Expr>();
  const rebuild = (e: Expr): Expr => {
    let r = done.get(e);
    if (r) return r;
    r = mapChildren(e, rebuild);
    if (shared(e, refs.get(e) ?? 0)) {
      const local = locals.length;
      locals.push(e.t);
      sets.push({ k: 'set', local, e: r });
      r = { k: 'local', t: e.t, i: local };
    }
    done.set(e, r);
    return r;
  };
  return { rebuilt: roots.map(rebuild), sets };
}
