// The corners of one `f.sample(...)`, as lowering writes them and codegen finds them again.
//
// Lowering (src/ir/lower/expression.ts) sets each corner's component to a local of its own, in one
// run of consecutive `set`s: corner 0 .. 2^dims - 1 (bit i set: base + 1 along axis i), each
// corner's components in order, every load clamped at the same base locals (+0 or +1). The
// interpreter runs them as any sets; codegen (src/codegen/sample.ts) recognises the run and loads
// each (x, x + 1) pair of a row at once when every lane's base is inside the field.

import type { Expr, IrFunction, Scalar, Stmt } from './ir.js';

type Set = Extract<Stmt, { k: 'set' }>;

/** Corner `bits` of a sample at `base` (one i32 expression per axis): its clamped coordinates. */
export function cornerCoords(base: Expr[], bits: number): Expr[] {
  return base.map((b, i) => ((bits >> i) & 1 ? { k: 'op', t: 'i32', op: 'i32.add', args: [b, { k: 'const', t: 'i32', v: 1 }] } : b));
}

/** The loads of a sample's corners in run order: corner-major, then component. */
export function cornerLoads(field: number, comps: readonly Scalar[], base: Expr[]): Expr[] {
  const loads: Expr[] = [];
  for (let bits = 0; bits < 1 << base.length; bits++) {
    const at = { mode: 'clamp' as const, coords: cornerCoords(base, bits) };
    comps.forEach((t, comp) => loads.push({ k: 'load', t, field, comp, at }));
  }
  return loads;
}

/** A run of sets that loads the corners of one sample. */
export interface SampleRun {
  field: number;
  /** The base local per axis of the field. */
  base: number[];
  /** The sets, in run order (cornerLoads). */
  sets: Set[];
}

/**
 * The sample run that starts at stmts[i], or null. The sets must not write a base local (the
 * corners after it would read another base).
 */
export function sampleRunAt(fn: IrFunction, stmts: readonly Stmt[], i: number): SampleRun | null {
  const first = stmts[i];
  if (first.k !== 'set' || first.e.k !== 'load' || first.e.at?.mode !== 'clamp' || first.e.comp !== 0) return null;
  const field = first.e.field;
  const coords = first.e.at.coords;
  if (!coords.every((c) => c.k === 'local' && c.t === 'i32')) return null;
  const base = coords.map((c) => (c as Extract<Expr, { k: 'local' }>).i);
  const want = cornerLoads(field, fn.fields[field].comps, coords);
  if (i + want.length > stmts.length) return null;
  const sets: Set[] = [];
  for (let k = 0; k < want.length; k++) {
    const s = stmts[i + k];
    if (s.k !== 'set' || base.includes(s.local) || !sameLoad(s.e, want[k])) return null;
    sets.push(s);
  }
  return { field, base, sets };
}

/** Do two expressions of the shapes cornerLoads builds (loads, locals, constants, i32.add) agree? */
function sameLoad(a: Expr, b: Expr): boolean {
  switch (a.k) {
    case 'load':
      return b.k === 'load' && a.t === b.t && a.field === b.field && a.comp === b.comp && a.at?.mode === b.at?.mode
        && a.at !== undefined && a.at.coords.length === b.at!.coords.length && a.at.coords.every((c, i) => sameLoad(c, b.at!.coords[i]));
    case 'local':
      return b.k === 'local' && a.i === b.i && a.t === b.t;
    case 'const':
      return b.k === 'const' && a.t === b.t && a.v === b.v;
    case 'op':
      return b.k === 'op' && a.op === 'i32.add' && b.op === 'i32.add' && sameLoad(a.args[0], b.args[0]) && sameLoad(a.args[1], b.args[1]);
    default:
      return false;
  }
}
