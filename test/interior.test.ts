// Interior vectors (src/codegen/interior.ts): gathers along x without edge tests where every one
// of them is inside its field's row. Results must equal the interpreter's at every width (the
// vectors at and near both edges take the general version), for clamp and wrap, offsets written
// x + d and x - d, fields narrower or wider than the domain, and offsets that are not constants.

import t from 'tap';
import type { Expr } from '../src/ir/ir.js';
import { agree, type Extents } from './compare.js';
import { X, Y, f32, field, fn, gather, i32, op, set, uniform } from './ir-gen.js';

const DEFAULT = { 'compiled': {} };
const WIDTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 21, 33];
const ext = (width: number, height: number): Extents => ({ width, height, depth: 1 });

/** sum over dy, dx in [-r, r] of src.mode(x + dx, y + dy), in the blur's order. */
function window(mode: 'clamp' | 'wrap', r: number, minus = false, extra: Expr[] = []): Expr {
  let sum: Expr = f32(0);
  for (let dy = -r; dy <= r; dy++)
    for (let dx = -r; dx <= r; dx++) {
      const xs = minus ? op('i32.sub', X, i32(-dx)) : op('i32.add', X, i32(dx));
      sum = op('f32.add', sum, gather(0, 0, 'f32', mode, xs, op('i32.add', Y, i32(dy))));
    }
  for (const e of extra) sum = op('f32.add', sum, e);
  return sum;
}

const kernel = (body: Expr, uniforms = 0) => fn({
  locals: ['f32'],
  fields: [field('src', 'read', 2, ['f32']), field('out', 'write', 2, ['f32'])],
  uniforms: Array.from({ length: uniforms }, (_, i) => ({ name: `u${i}`, t: 'i32' as const })),
  body: [set(0, body)],
  stores: [{ field: 1, comp: 0, local: 0 }],
});

t.test('5 x 5 windows at every width: clamp and wrap, x + d and x - d', (tt) => {
  for (const mode of ['clamp', 'wrap'] as const)
    for (const minus of [false, true]) {
      const f = kernel(window(mode, 2, minus));
      for (const w of WIDTHS) {
        agree(tt, `${mode} ${minus ? 'x - d' : 'x + d'} width ${w}`, { fn: f, domain: ext(w, 3), extents: [ext(w, 3), ext(w, 3)], uniforms: [] }, DEFAULT);
      }
    }
  tt.end();
});

t.test('a field narrower or wider than the domain', (tt) => {
  for (const mode of ['clamp', 'wrap'] as const) {
    const f = kernel(window(mode, 1));
    for (const [w, src] of [[17, 6], [17, 9], [13, 40], [24, 21], [9, 3]]) {
      agree(tt, `${mode} domain ${w}, field ${src}`, { fn: f, domain: ext(w, 2), extents: [ext(src, 4), ext(w, 2)], uniforms: [] }, DEFAULT);
    }
  }
  tt.end();
});

t.test('offsets that are not constants keep their edge test', (tt) => {
  // x + u0 (a uniform) next to constant offsets: the interior version is used for the constant
  // ones only.
  const extra = [gather(0, 0, 'f32', 'clamp', op('i32.add', X, uniform(0, 'i32')), Y), gather(0, 0, 'f32', 'wrap', op('i32.sub', X, uniform(0, 'i32')), Y)];
  const f = kernel(window('clamp', 1, false, extra), 1);
  for (const u of [0, 3, -5, 40])
    for (const w of [7, 16, 21]) {
      agree(tt, `u = ${u}, width ${w}`, { fn: f, domain: ext(w, 2), extents: [ext(w, 2), ext(w, 2)], uniforms: [u] }, DEFAULT);
    }
  tt.end();
});
