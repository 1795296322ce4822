// Uniformity analysis: which values and which control flow are the same for the 4 lanes of a
// vector (all lanes share y and z, so anything computed from constants, uniforms, extents, y
// and z is). Uniform conditions become scalar branches, uniform blocks and loops become plain
// WebAssembly control flow, and gathers at `x + uniform` can load 4 neighbours at once.
//
// - An expression is uniform when it depends on no x, no pointwise load and no varying local.
// - A construct (block or loop) is uniform when every break that leaves it is reached from it
//   through uniform `if`s and uniform constructs only: then all lanes leave it together.
// - A local is uniform when every `set` of it has a uniform value and runs under uniform control:
//   no varying `if` or varying construct encloses it (then the set writes every lane).
// Locals start uniform and are demoted until nothing changes (the two questions feed each other).

import type { Expr, IrFunction, Stmt } from '../ir/ir.js';
import { someStmt, unreachable, visitExpr, visitStmts } from '../ir/walk.js';

type Construct = Extract<Stmt, { k: 'block' } | { k: 'loop' }>;
type If = Extract<Stmt, { k: 'if' }>;

export interface Analysis {
  uniformLocal: boolean[];
  uniformExpr(e: Expr): boolean;
  /** Is this block or loop uniform? */
  uniformConstruct(s: Construct): boolean;
  /** Is this if's condition uniform? */
  uniformIf(s: If): boolean;
  hasLoops: boolean;
  /**
   * Does this `set` have to keep the old value in lanes outside the mask? Only when some lane
   * outside the mask may still read the local (see needsBlend).
   */
  blends(s: Stmt): boolean;
}

/** A step on the way from a break out to its target. */
type Step = { k: 'if'; s: If } | { k: 'construct'; s: Construct };

export function analyse(fn: IrFunction): Analysis {
  const uniformLocal = fn.locals.map(() => true);

  const uniformExpr = (e: Expr): boolean => {
    switch (e.k) {
      case 'const': case 'uniform': case 'extent':
        return true;
      case 'coord':
        return e.axis !== 0;
      case 'local':
        return uniformLocal[e.i];
      case 'load':
        return e.at !== undefined && e.at.coords.every(uniformExpr);
      case 'op':
        return e.args.every(uniformExpr);
      case 'select':
        return uniformExpr(e.c) && uniformExpr(e.a) && uniformExpr(e.b);
      default:
        return unreachable(e);
    }
  };

  // The paths of the breaks that target each construct, and the constructs in post-order
  // (inner ones first), collected once: they do not depend on the locals.
  const paths = new Map<Construct, Step[][]>();
  const postOrder: Construct[] = [];
  let hasLoops = false;
  const collect = (stmts: Stmt[], path: Step[], constructs: Construct[]): void => {
    for (const s of stmts) {
      if (s.k === 'if') {
        const p = [...path, { k: 'if', s } as Step];
        collect(s.then, p, constructs);
        collect(s.else, p, constructs);
      } else if (s.k === 'block' || s.k === 'loop') {
        if (s.k === 'loop') hasLoops = true;
        if (!paths.has(s)) paths.set(s, []);
        collect(s.body, [...path, { k: 'construct', s }], [...constructs, s]);
        if (!postOrder.includes(s)) postOrder.push(s);
      } else if (s.k === 'break') {
        const target = constructs[constructs.length - 1 - s.depth];
        if (!target) throw new Error(`internal: break ${s.depth} has no enclosing construct`);
        // Steps strictly inside the target, on the way to the break.
        let i = path.length - 1;
        const steps: Step[] = [];
        for (; i >= 0; i--) {
          const st = path[i];
          if (st.k === 'construct' && st.s === target) break;
          steps.push(st);
        }
        paths.get(target)!.push(steps);
      }
    }
  };
  collect(fn.body, [], []);

  const uniformC = new Map<Construct, boolean>();
  const computeConstructs = (): void => {
    for (const c of postOrder) {
      const ok = paths.get(c)!.every((steps) =>
        steps.every((st) => (st.k === 'if' ? uniformExpr(st.s.c) : uniformC.get(st.s) === true)),
      );
      uniformC.set(c, ok);
    }
  };

  // Demote locals set under varying control or to varying values, until stable.
  for (;;) {
    computeConstructs();
    let changed = false;
    const walk = (stmts: Stmt[], full: boolean): void => {
      for (const s of stmts) {
        switch (s.k) {
          case 'set':
            if (uniformLocal[s.local] && (!full || !uniformExpr(s.e))) {
              uniformLocal[s.local] = false;
              changed = true;
            }
            break;
          case 'if': {
            const f = full && uniformExpr(s.c);
            walk(s.then, f);
            walk(s.else, f);
            break;
          }
          case 'block': case 'loop':
            walk(s.body, full && uniformC.get(s) === true);
            break;
          case 'break':
            break;
          default:
            unreachable(s);
        }
      }
    };
    walk(fn.body, true);
    if (!changed) break;
  }

  const uniformConstruct = (s: Construct) => uniformC.get(s) === true;
  const blend = needsBlend(fn, uniformExpr, uniformConstruct);
  return {
    uniformLocal,
    uniformExpr,
    uniformConstruct,
    uniformIf: (s) => uniformExpr(s.c),
    hasLoops,
    blends: (s) => blend.has(s),
  };
}

// ---------------------------------------------------------------------------------------------
// Which masked sets must blend
//
// Lanes outside the mask at a `set` are either on the other side of an enclosing varying `if`
// (they go on in its other branch and after it) or have left an enclosing varying construct
// (they go on after it, or after an outer construct, which encloses the set as well). The set
// may overwrite all 4 lanes unless the local is live at one of those places. Liveness is the
// per-element (scalar) one: what an element may still read.

type Live = Set<number>;

/** The IR locals `e` reads, added to `into`. */
export function usesOf(e: Expr, into: Set<number> = new Set()): Set<number> {
  visitExpr(e, (x) => x.k === 'local' && into.add(x.i));
  return into;
}

const union = (a: Live, b: Live): Live => {
  const out = new Set(a);
  for (const x of b) out.add(x);
  return out;
};

function needsBlend(fn: IrFunction, uniformExpr: (e: Expr) => boolean, uniformConstruct: (s: Construct) => boolean): Set<Stmt> {
  // Live locals after each if/construct, and at the start of each if's else-branch (unions over
  // every pass, so loops' fixpoints and statements shared between places stay conservative).
  const after = new Map<Stmt, Live>();
  const elseIn = new Map<Stmt, Live>();
  const record = (map: Map<Stmt, Live>, s: Stmt, live: Live) => map.set(s, union(map.get(s) ?? new Set(), live));

  const listIn = (stmts: Stmt[], out: Live, targets: Live[]): Live => {
    let live = out;
    // A run of sets changes one copy in place (a copy per set made this pass quadratic in a long
    // body: ~10% of the inline corpus kernel's codegen). `out` and what stmtIn returns may be
    // held elsewhere (targets, a loop's head), so the first set of a run copies.
    let owned = false;
    for (let i = stmts.length - 1; i >= 0; i--) {
      const s = stmts[i];
      if (s.k !== 'set') {
        live = stmtIn(s, live, targets);
        owned = false;
        continue;
      }
      if (!owned) live = new Set(live);
      owned = true;
      live.delete(s.local);
      usesOf(s.e, live);
    }
    return live;
  };
  const stmtIn = (s: Stmt, out: Live, targets: Live[]): Live => {
    switch (s.k) {
      case 'set':
        return listIn([s], out, targets);
      case 'if': {
        record(after, s, out);
        const a = listIn(s.then, out, targets);
        const b = listIn(s.else, out, targets);
        record(elseIn, s, b);
        return usesOf(s.c, union(a, b));
      }
      case 'block':
        record(after, s, out);
        return listIn(s.body, out, [...targets, out]);
      case 'loop': {
        record(after, s, out);
        let head: Live = new Set();
        for (;;) {
          const next = union(head, listIn(s.body, head, [...targets, out]));
          if (next.size === head.size) return head;
          head = next;
        }
      }
      case 'break':
        return targets[targets.length - 1 - s.depth];
      default:
        return unreachable(s);
    }
  };
  const storesRead = new Set(fn.stores.map((st) => st.local));
  listIn(fn.body, storesRead, []);

  const blend = new Set<Stmt>();
  const walk = (stmts: Stmt[], need: Live): void => {
    for (const s of stmts) {
      switch (s.k) {
        case 'set':
          if (need.has(s.local)) blend.add(s);
          break;
        case 'if':
          if (uniformExpr(s.c)) {
            walk(s.then, need);
            walk(s.else, need);
          } else {
            const here = union(need, after.get(s)!);
            walk(s.then, union(here, elseIn.get(s)!));
            walk(s.else, here);
          }
          break;
        case 'block': case 'loop':
          walk(s.body, uniformConstruct(s) ? need : union(need, after.get(s)!));
          break;
        case 'break':
          break;
        default:
          unreachable(s);
      }
    }
  };
  walk(fn.body, new Set());
  return blend;
}

/** Does the statement contain a loop (which may stop lanes that run out of fuel)? */
export function containsLoop(s: Stmt): boolean {
  return someStmt([s], (t) => t.k === 'loop');
}

/**
 * The depths (relative to the statement's own level: 0 = the innermost construct enclosing the
 * statement) of the breaks inside `s` that leave it.
 */
export function escapingBreaks(s: Stmt, out: number[] = [], inner = 0): number[] {
  switch (s.k) {
    case 'break':
      if (s.depth >= inner) out.push(s.depth - inner);
      break;
    case 'block': case 'loop':
      for (const t of s.body) escapingBreaks(t, out, inner + 1);
      break;
    case 'if':
      for (const t of s.then) escapingBreaks(t, out, inner);
      for (const t of s.else) escapingBreaks(t, out, inner);
      break;
    case 'set':
      break;
    default:
      unreachable(s);
  }
  return out;
}

/** Calls `visit(i, written)` for every read and write of an IR local in `stmts`. */
export function visitLocals(stmts: Stmt[], visit: (i: number, written: boolean) => void): void {
  visitStmts(stmts, {
    stmt: (s) => s.k === 'set' && visit(s.local, true),
    expr: (e) => e.k === 'local' && visit(e.i, false),
  });
}

/**
 * A `while` loop: `if (c) break` to the loop itself first, then statements that lose no lanes
 * (no loop, no break out of them). Its lanes leave only at the exit test.
 */
export function whileShape(s: Extract<Stmt, { k: 'loop' }>): boolean {
  const [first, ...rest] = s.body;
  if (!first || first.k !== 'if' || first.else.length || first.then.length !== 1) return false;
  const brk = first.then[0];
  if (brk.k !== 'break' || brk.depth !== 0) return false;
  return !rest.some((r) => containsLoop(r) || escapingBreaks(r).length > 0);
}
