// Interior vectors (src/codegen/interior.ts): gathers along x without edge tests where every one
// of them is inside its field's row. Results must equal the interpreter's at every width (the
// vectors at and near both edges take the general version), for clamp and wrap, offsets written
// x + d and x - d, fields narrower or wider than the domain, and offsets that are not constants.

import t from 'tap';
import binaryen from 'binaryen';
import type { Expr } from '../src/ir/ir.js';
import { compileFunction } from '../src/codegen/index.js';
import { agree, type Extents } from './compare.js';
import { X, Y, f32, field, fn, gather, i32, iff, op, set, uniform } from './ir-gen.js';

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

t.test('aligned blocks: far offsets, and rows first gathered inside a branch', (tt) => {
  // Gathers read aligned 4-element blocks shared within a vector (interior.ts: alignedTap). A
  // block first loaded inside a branch that some vectors skip must be loaded again after it:
  // x % 8 < 4 holds for every lane of a vector or for none.
  const at = (d: number, dy = 0) => gather(0, 0, 'f32', 'clamp', op('i32.add', X, i32(d)), op('i32.add', Y, i32(dy)));
  const f = fn({
    locals: ['f32', 'f32', 'f32'],
    fields: [field('src', 'read', 2, ['f32']), field('out', 'write', 2, ['f32', 'f32', 'f32'])],
    body: [
      set(0, op('f32.add', at(-9), at(8))),
      iff(op('i32.lt', op('i32.rem', X, i32(8)), i32(4)),
        [set(1, op('f32.add', op('f32.add', at(5, 1), at(-4, 1)), at(3)))],
        [set(1, op('f32.mul', at(-1, -1), f32(2)))]),
      set(2, op('f32.add', op('f32.add', op('f32.add', at(6, 1), at(-3, 1)), at(2)), op('f32.add', at(-2, -1), at(0, -1)))),
    ],
    stores: [{ field: 1, comp: 0, local: 0 }, { field: 1, comp: 1, local: 1 }, { field: 1, comp: 2, local: 2 }],
  });
  for (const w of [...WIDTHS, 40, 41, 44, 64]) {
    agree(tt, `width ${w}`, { fn: f, domain: ext(w, 4), extents: [ext(w, 4), ext(w, 4)], uniforms: [] }, DEFAULT);
  }
  tt.end();
});

t.test('a 5 x 5 window: 2 shuffles per row in the interior', (tt) => {
  // Taps at x - 2, x, x + 2 are loads; x - 1 and x + 1 each take two lanes of the loads beside
  // them (interior.ts: alignedTap). Shuffles bound the blur on x64, so there are 2 per row, not 4.
  const text = (optimize: boolean) => {
    const m = binaryen.readBinary(compileFunction(kernel(window('clamp', 2)), { optimize }));
    try {
      return m.emitText();
    } finally {
      m.dispose();
    }
  };
  for (const optimize of [false, true]) {
    // Only the interior version shuffles (the general one tests each gather and loads it whole).
    tt.equal(text(optimize).match(/i8x16\.shuffle/g)?.length ?? 0, 10, `${optimize ? 'O3' : 'unoptimised'}: 10 shuffles for 5 rows`);
  }
  tt.end();
});

t.test('direct loads: offsets far from x, folded into the loads of their row', (tt) => {
  // A narrow span (no aligned blocks) far to the left and to the right of x, on two rows: each
  // row's loads share the address of x + lo (interior.ts: interiorTap).
  const at = (d: number, dy = 0) => gather(0, 0, 'f32', 'wrap', op('i32.add', X, i32(d)), op('i32.add', Y, i32(dy)));
  for (const [name, ds] of [['x + 9 .. x + 11', [9, 11, 10]], ['x - 13 .. x - 11', [-11, -13]], ['x - 1 .. x + 2', [2, -1, 0]]] as const) {
    const sum = (dy: number) => ds.map((d) => at(d, dy)).reduce((a, b) => op('f32.add', a, b));
    const f = kernel(op('f32.sub', sum(0), op('f32.mul', sum(1), f32(0.5))));
    for (const w of [5, 13, 16, 17, 29, 40, 64]) {
      agree(tt, `${name}, width ${w}`, { fn: f, domain: ext(w, 3), extents: [ext(w, 3), ext(w, 3)], uniforms: [] }, DEFAULT);
    }
  }
  tt.end();
});
