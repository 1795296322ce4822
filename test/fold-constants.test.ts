// Arithmetic on f32 constants folded before codegen (src/ir/fold.ts): the folded values must be
// the interpreter's bit for bit (both tiers, against the interpreter on the unfolded IR), edge
// values included (-0, infinities, a division by zero); a NaN result is left to the machine.

import t from 'tap';
import { foldConstants } from '../src/ir/fold.js';
import type { Expr, IrFunction } from '../src/ir/ir.js';
import { visitStmts } from '../src/ir/walk.js';
import { agree } from './compare.js';
import { X, brk, f32, field, fn, iff, local, loop, op, set } from './ir-gen.js';

const TIERS = { fast: { tier: 'fast' as const }, optimised: { tier: 'optimised' as const } };
const domain = { width: 9, height: 2, depth: 1 };

/** How many operations are left in fn's body. */
function ops(f: IrFunction): number {
  let n = 0;
  visitStmts(f.body, { expr: (e) => e.k === 'op' && n++ });
  return n;
}

const c = (name: Parameters<typeof op>[0], ...args: Expr[]) => op(name, ...args);
// 1 / sqrt(0.16 + 0.09 + 0.64): a normalised constant vector's scale (7 operations).
const scale = c('f32.div', f32(1), c('f32.sqrt', c('f32.add', c('f32.add', c('f32.mul', f32(-0.4), f32(-0.4)), c('f32.mul', f32(-0.3), f32(-0.3))), c('f32.mul', f32(0.8), f32(0.8)))));
const EDGES: Expr[] = [
  scale,
  c('f32.mul', f32(-0), f32(3)), // -0
  c('f32.div', f32(1), f32(0)), // +infinity
  c('f32.sub', f32(3.4e38), f32(-3.4e38)), // overflow to infinity
  c('f32.add', f32(1e-45), f32(1e-45)), // subnormals
  c('f32.div', f32(0), f32(0)), // NaN: not folded
  c('f32.sqrt', f32(-1)), // NaN: not folded
];

function kernel(): IrFunction {
  const x = op('i32.to_f32', X);
  return fn({
    locals: ['f32', 'f32', ...EDGES.map(() => 'f32' as const)],
    fields: [field('out', 'write', 2, ['f32', 'f32', ...EDGES.map(() => 'f32' as const)])],
    body: [
      // In a loop, as the ray marcher's light direction is.
      loop(0,
        iff(op('f32.ge', local(0, 'f32'), op('f32.add', x, f32(3))), [brk(0)]),
        set(1, op('f32.add', local(1, 'f32'), op('f32.mul', local(0, 'f32'), scale))),
        set(0, op('f32.add', local(0, 'f32'), f32(1))),
      ),
      ...EDGES.map((e, i) => set(2 + i, op('f32.add', e, op('f32.mul', x, f32(0))))),
    ],
    stores: [{ field: 0, comp: 0, local: 0 }, { field: 0, comp: 1, local: 1 }, ...EDGES.map((_, i) => ({ field: 0, comp: 2 + i, local: 2 + i }))],
  });
}

t.test('constants folded as the interpreter computes them', (tt) => {
  const f = kernel();
  const folded = foldConstants(f);
  // Folded: the scale in the loop (7) and in the edges (7), -0, the infinities, the subnormal
  // (4); the two NaNs and every operation on x stay.
  tt.equal(ops(f) - ops(folded), 18, '18 operations folded');
  tt.equal(foldConstants(folded), folded, 'nothing left to fold: the same function');
  agree(tt, 'folded constants', { fn: f, domain, extents: [domain], uniforms: [] }, TIERS);
  tt.end();
});
