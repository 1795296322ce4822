// The IR walker (src/ir/walk.ts) knows every kind of expression and statement, and the type
// system makes it so: a new kind added to the IR without a case in the walker does not compile.
// The first test proves that by compiling the walker against a copy of the IR with one more kind
// of each; the others run the walker over a sample of every kind.

import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { Expr, Stmt } from '../src/ir/ir.js';
import { exprChildren, mapExpr, mapStmts, someStmtExpr, stmtExprs, stmtLists, visitExpr, visitStmts } from '../src/ir/walk.js';
import { scratchDir } from './scratch.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Type-check walk.ts against ir.ts as `edit` leaves it; the errors' file names and messages. */
function checkWalker(edit: (ir: string) => string): { file: string; line: number; message: string }[] {
  const dir = scratchDir('entelechy-walk-');
  try {
    writeFileSync(join(dir, 'ir.ts'), edit(readFileSync(join(ROOT, 'src/ir/ir.ts'), 'utf8')));
    for (const file of ['walk.ts', 'unreachable.ts']) writeFileSync(join(dir, file), readFileSync(join(ROOT, 'src/ir', file), 'utf8'));
    const program = ts.createProgram([join(dir, 'walk.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noFallthroughCasesInSwitch: true,
      types: [],
      lib: ['lib.es2022.d.ts'],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => ({
      file: d.file ? d.file.fileName.slice(dir.length + 1) : '',
      line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The lines of walk.ts where a switch over `e` (expressions) or `s` (statements) ends in `never`. */
function neverLines(v: 'e' | 's'): number[] {
  const lines = readFileSync(join(ROOT, 'src/ir/walk.ts'), 'utf8').split('\n');
  return lines.flatMap((l, i) => (l.includes(`unreachable(${v})`) ? [i + 1] : []));
}

t.test('a kind the walker does not handle is a type error in the walker', async (t) => {
  t.ok(neverLines('e').length >= 4 && neverLines('s').length >= 4, 'the walker has its switches');
  t.same(checkWalker((ir) => ir), [], 'the walker compiles against the IR as it is');

  const newExpr = checkWalker((ir) => ir.replace("| { k: 'select';", "| { k: 'swizzle'; t: Scalar; of: Expr }\n  | { k: 'select';"));
  t.ok(newExpr.length > 0, 'a new kind of expression does not compile');
  t.ok(newExpr.every((d) => d.file === 'walk.ts' && /never/.test(d.message)), 'each error is a `never` in the walker');
  t.same([...new Set(newExpr.map((d) => d.line))], neverLines('e'), 'every switch over expressions fails, at its `never`');

  const newStmt = checkWalker((ir) => ir.replace("| { k: 'break'; depth: number };", "| { k: 'break'; depth: number }\n  | { k: 'trap'; node: number };"));
  t.ok(newStmt.length > 0, 'a new kind of statement does not compile');
  t.ok(newStmt.every((d) => d.file === 'walk.ts' && /never/.test(d.message)), 'each error is a `never` in the walker');
  t.same([...new Set(newStmt.map((d) => d.line))], neverLines('s'), 'every switch over statements fails, at its `never`');
});

// One sample of every kind; the mapped types make leaving a kind out a type error here too.
const X: Expr = { k: 'coord', t: 'i32', axis: 0 };
const L: Expr = { k: 'local', t: 'f32', i: 1 };
const EXPRS: { [K in Expr['k']]: { e: Extract<Expr, { k: K }>; children: Expr[] } } = {
  const: { e: { k: 'const', t: 'f32', v: 1 }, children: [] },
  local: { e: { k: 'local', t: 'f32', i: 0 }, children: [] },
  coord: { e: { k: 'coord', t: 'i32', axis: 1 }, children: [] },
  extent: { e: { k: 'extent', t: 'i32', axis: 0, field: 0 }, children: [] },
  uniform: { e: { k: 'uniform', t: 'f32', slot: 0 }, children: [] },
  load: { e: { k: 'load', t: 'f32', field: 0, comp: 0, at: { mode: 'clamp', coords: [X, X] } }, children: [X, X] },
  op: { e: { k: 'op', t: 'f32', op: 'f32.add', args: [L, L] }, children: [L, L] },
  select: { e: { k: 'select', t: 'f32', c: { k: 'const', t: 'bool', v: 1 }, a: L, b: X }, children: [{ k: 'const', t: 'bool', v: 1 }, L, X] },
};
const SET: Stmt = { k: 'set', local: 0, e: L };
const STMTS: { [K in Stmt['k']]: { s: Extract<Stmt, { k: K }>; exprs: Expr[]; lists: Stmt[][] } } = {
  set: { s: { k: 'set', local: 0, e: X }, exprs: [X], lists: [] },
  if: { s: { k: 'if', c: L, then: [SET], else: [] }, exprs: [L], lists: [[SET], []] },
  block: { s: { k: 'block', body: [SET] }, exprs: [], lists: [[SET]] },
  loop: { s: { k: 'loop', body: [SET, { k: 'break', depth: 0 }], node: 0 }, exprs: [], lists: [[SET, { k: 'break', depth: 0 }]] },
  break: { s: { k: 'break', depth: 0 }, exprs: [], lists: [] },
};

t.test('every kind of expression: its children, mapped and visited', async (t) => {
  for (const [kind, { e, children }] of Object.entries(EXPRS)) {
    t.same(exprChildren(e), children, `${kind}: children`);
    t.same(mapExpr(e, (x) => x), e, `${kind}: the identity map gives it back`);
    // Replacing every local by a constant reaches the locals among the children.
    const mapped = mapExpr(e, (x) => (x.k === 'local' ? { k: 'const', t: x.t, v: 7 } : x));
    let locals = 0;
    visitExpr(mapped, (x) => x.k === 'local' && locals++);
    t.equal(locals, 0, `${kind}: the map reaches every sub-expression`);
    let nodes = 0;
    visitExpr(e, () => nodes++);
    t.equal(nodes, 1 + children.length, `${kind}: the visit sees the node and its children`);
  }
});

t.test('every kind of statement: its expressions and lists, mapped and visited', async (t) => {
  for (const [kind, { s, exprs, lists }] of Object.entries(STMTS)) {
    t.same(stmtExprs(s), exprs, `${kind}: expressions`);
    t.same(stmtLists(s), lists, `${kind}: statement lists`);
    t.same(mapStmts([s], {}), [s], `${kind}: the identity map gives it back`);
  }
  const all = Object.values(STMTS).map((x) => x.s);
  const kinds: string[] = [];
  visitStmts(all, { stmt: (s) => kinds.push(s.k) });
  t.same(kinds, ['set', 'if', 'set', 'block', 'set', 'loop', 'set', 'break', 'break'], 'the visit sees every statement, in order');
  const renumbered = mapStmts(all, { stmt: (s) => (s.k === 'set' ? { ...s, local: s.local + 10 } : s) });
  const locals: number[] = [];
  visitStmts(renumbered, { stmt: (s) => s.k === 'set' && locals.push(s.local) });
  t.same(locals, [10, 10, 10, 10], 'the map reaches the sets inside every list');
  t.ok(someStmtExpr(all, (e) => e.k === 'coord'), 'a coordinate is found inside the statements');
  t.notOk(someStmtExpr(all, (e) => e.k === 'uniform'), 'no uniform is');
});

t.test('a kind the types did not foresee (data from elsewhere) is an error, not passed through', async (t) => {
  const bogus = { k: 'swizzle', t: 'f32' } as unknown as Expr;
  t.throws(() => exprChildren(bogus), /unknown kind "swizzle"/);
  t.throws(() => mapExpr(bogus, (x) => x), /unknown kind "swizzle"/);
  t.throws(() => mapStmts([{ k: 'trap' } as unknown as Stmt], {}), /unknown kind "trap"/);
});
