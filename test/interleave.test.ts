// Interleaved vectors (src/codegen/interleave.ts): loops of several vectors fused into one must
// give the interpreter's results bit for bit, whatever the number of vectors per step, the row's
// width (steps, then single vectors for the columns left over) and the iteration at which each
// lane leaves; fuel traps must name the node of the first element in order that runs out.

import t, { type Test } from 'tap';
import type { IrFunction } from '../src/ir/ir.js';
import { agree as agreeWith, difference, runWith, type Extents } from './compare.js';
import { X, Y, brk, extent, f32, field, fn, i32, iff, load, local, loop, op, randomCase, select, set, type RandomCase } from './ir-gen.js';

const FACTORS = { '2 vectors per step': { interleave: 2 }, '3 vectors per step': { interleave: 3 }, '4 vectors per step': { interleave: 4 } };
const agree = (tt: Test, name: string, c: RandomCase) => agreeWith(tt, name, c, FACTORS);

const domain = (width: number, height: number): Extents => ({ width, height, depth: 1 });
const WIDTHS = [1, 3, 4, 5, 8, 12, 13, 16, 17, 23, 31, 33];

// z = z^2 + c from a point given by (x, y): lanes leave at very different repetitions.
function mandelbrot(limit: number, fuel?: number): IrFunction {
  const zr = local(0, 'f32');
  const zi = local(1, 'f32');
  const n = local(2, 'i32');
  const cx = op('f32.sub', op('f32.mul', op('i32.to_f32', X), f32(0.11)), f32(2.1));
  const cy = op('f32.sub', op('f32.mul', op('i32.to_f32', Y), f32(0.37)), f32(0.9));
  return fn({
    nodes: ['mandel'],
    locals: ['f32', 'f32', 'i32', 'f32', 'f32', 'f32'],
    fields: [field('out', 'write', 2, ['i32', 'f32', 'f32'])],
    fuel,
    body: [
      set(3, cx),
      set(4, cy),
      loop(0,
        iff(op('bool.not', op('bool.and', op('i32.lt', n, i32(limit)),
          op('f32.le', op('f32.add', op('f32.mul', zr, zr), op('f32.mul', zi, zi)), f32(4)))), [brk(0)]),
        set(5, op('f32.add', op('f32.sub', op('f32.mul', zr, zr), op('f32.mul', zi, zi)), local(3, 'f32'))),
        set(1, op('f32.add', op('f32.mul', op('f32.mul', f32(2), zr), zi), local(4, 'f32'))),
        set(0, local(5, 'f32')),
        set(2, op('i32.add', n, i32(1))),
      ),
      set(3, op('f32.div', op('i32.to_f32', n), f32(limit))),
    ],
    stores: [{ field: 0, comp: 0, local: 2 }, { field: 0, comp: 1, local: 0 }, { field: 0, comp: 2, local: 3 }],
  });
}

t.test('a while loop whose lanes leave at different repetitions', (tt) => {
  const f = mandelbrot(64);
  for (const w of WIDTHS) agree(tt, `width ${w}`, { fn: f, domain: domain(w, 3), extents: [domain(w, 3)], uniforms: [] });
  tt.end();
});

t.test('a loop that is not a plain while: break in the middle, a varying if, code before and after', (tt) => {
  const n = local(0, 'i32');
  const acc = local(1, 'f32');
  const f = fn({
    nodes: ['k'],
    locals: ['i32', 'f32', 'f32'],
    fields: [field('in', 'read', 2, ['f32']), field('out', 'write', 2, ['i32', 'f32', 'f32'])],
    body: [
      iff(op('f32.gt', load(0, 0, 'f32'), f32(0)), [set(2, f32(1))], [set(2, f32(-1))]),
      loop(0,
        set(1, op('f32.add', op('f32.mul', acc, f32(1.5)), local(2, 'f32'))),
        iff(op('i32.eq', op('i32.rem', op('i32.add', X, n), i32(3)), i32(0)), [set(2, op('f32.neg', local(2, 'f32')))]),
        iff(op('f32.gt', op('f32.abs', acc), op('f32.add', op('i32.to_f32', X), f32(3))), [brk(0)]),
        set(0, op('i32.add', n, i32(1))),
        iff(op('i32.ge', n, op('i32.add', op('i32.rem', X, i32(7)), i32(5))), [brk(0)]),
      ),
      iff(op('i32.lt', n, i32(3)), [set(1, op('f32.mul', acc, f32(0.5)))]),
    ],
    stores: [{ field: 1, comp: 0, local: 0 }, { field: 1, comp: 1, local: 1 }, { field: 1, comp: 2, local: 2 }],
  });
  for (const w of WIDTHS) {
    agree(tt, `width ${w}`, { fn: f, domain: domain(w, 2), extents: [domain(w, 2), domain(w, 2)], uniforms: [] });
  }
  tt.end();
});

t.test('fuel: the first element in order that runs out names the node', (tt) => {
  const n = local(0, 'i32');
  const spinAt = (x: number) => iff(op('i32.eq', X, i32(x)), [set(1, i32(1000000))]);
  // Loop `a` (fused) runs `limit[x]` times; loop `b` after it runs local 1 times.
  const f = (spinA: number[], spinB: number[]) => fn({
    nodes: ['a', 'b'],
    locals: ['i32', 'i32', 'i32'],
    fields: [field('out', 'write', 2, ['i32'])],
    fuel: 100,
    body: [
      set(2, op('i32.add', op('i32.rem', X, i32(5)), i32(2))),
      ...spinA.map((x) => iff(op('i32.eq', X, i32(x)), [set(2, i32(1000000))])),
      loop(0, iff(op('i32.ge', n, local(2, 'i32')), [brk(0)]), set(0, op('i32.add', n, i32(1)))),
      ...spinB.map(spinAt),
      loop(1, iff(op('i32.le', local(1, 'i32'), i32(0)), [brk(0)]), set(1, op('i32.sub', local(1, 'i32'), i32(1)))),
    ],
    stores: [{ field: 0, comp: 0, local: 0 }],
  });
  const cases: [string, number[], number[], string | undefined][] = [
    ['none runs out', [], [], undefined],
    ['x = 0 (the first lane of a step) in a', [0], [], 'a (word 0) at (0, 0)'],
    ['x = 9 in a, x = 6 later in b', [9], [6], 'b (word 1) at (6, 0)'],
    ['x = 6 in a, x = 9 in b', [6], [9], 'a (word 0) at (6, 0)'],
    ['x = 8 (a later vector\'s first lane) in a, x = 6 in b', [8], [6], 'b (word 1) at (6, 0)'],
    ['x = 4 in a, x = 1 in b', [4], [1], 'b (word 1) at (1, 0)'],
    ['x = 13 in a, x = 12 in b', [13], [12], 'b (word 1) at (12, 0)'],
    ['x = 3 and x = 2 in a', [3, 2], [], 'a (word 0) at (2, 0)'],
    ['x = 21 in b (columns left over)', [], [21], 'b (word 1) at (21, 0)'],
  ];
  for (const [name, a, b, trap] of cases) {
    const c = { fn: f(a, b), domain: domain(22, 2), extents: [domain(22, 2)], uniforms: [] };
    const expected = agree(tt, name, c);
    tt.equal(expected.trap, trap, `${name}: the interpreter's trap`);
  }
  tt.end();
});

t.test('fuel: a loop after the fused one counts on from the fused loop\'s repetitions', (tt) => {
  // Loop `a` (fused, one shared repetition count) runs x % 5 + 2 times, loop `b` after it
  // b + x - (x % 5 + 2) times: the element charged b + x + 2 in all, so the first element that
  // runs out is x = 39 - b, in every vector of a step in turn (then in the columns left over).
  const n = local(0, 'i32');
  const f = (b: number) => fn({
    nodes: ['a', 'b'],
    locals: ['i32', 'i32', 'i32'],
    fields: [field('out', 'write', 2, ['i32'])],
    fuel: 40,
    body: [
      set(2, op('i32.add', op('i32.rem', X, i32(5)), i32(2))),
      loop(0, iff(op('i32.ge', n, local(2, 'i32')), [brk(0)]), set(0, op('i32.add', n, i32(1)))),
      set(1, op('i32.sub', op('i32.add', i32(b), X), local(2, 'i32'))),
      loop(1, iff(op('i32.le', local(1, 'i32'), i32(0)), [brk(0)]), set(1, op('i32.sub', local(1, 'i32'), i32(1)))),
    ],
    stores: [{ field: 0, comp: 0, local: 0 }],
  });
  const traps = new Set<string | undefined>();
  for (let b = 15; b <= 40; b++) {
    const c = { fn: f(b), domain: domain(22, 2), extents: [domain(22, 2)], uniforms: [] };
    traps.add(agree(tt, `b = ${b}`, c).trap?.replace(/ at \(.*\)$/, ''));
  }
  tt.ok(traps.has(undefined) && traps.has('b (word 1)'), 'some cases trap in b, some do not');
  tt.end();
});

t.test('fuel: a fused loop with no loop after it (counts kept only in the slow path)', (tt) => {
  // The loop runs b + (7 x) % 11 times: the first element that runs out moves through the
  // vectors of a step and the columns left over as b grows.
  const n = local(0, 'i32');
  const f = (b: number) => fn({
    nodes: ['a'],
    locals: ['i32', 'i32'],
    fields: [field('out', 'write', 2, ['i32', 'i32'])],
    fuel: 40,
    body: [
      set(1, op('i32.add', op('i32.rem', op('i32.mul', X, i32(7)), i32(11)), i32(b))),
      loop(0, iff(op('i32.ge', n, local(1, 'i32')), [brk(0)]), set(0, op('i32.add', n, i32(1)))),
      set(1, op('i32.mul', n, i32(3))),
    ],
    stores: [{ field: 0, comp: 0, local: 0 }, { field: 0, comp: 1, local: 1 }],
  });
  const traps = new Set<string | undefined>();
  for (let b = 24; b <= 40; b++) {
    const c = { fn: f(b), domain: domain(22, 2), extents: [domain(22, 2)], uniforms: [] };
    traps.add(agree(tt, `b = ${b}`, c).trap?.replace(/ at \(.*\)$/, ''));
  }
  tt.ok(traps.has(undefined) && traps.has('a (word 0)'), 'some cases trap, some do not');
  tt.end();
});

t.test('random functions at wider domains, 2 and 3 vectors per step', (tt) => {
  let failures = 0;
  let checked = 0;
  for (let seed = 1; seed <= Number(process.env.INTERLEAVE_CASES ?? 150); seed++) {
    const c = randomCase(seed, {});
    if (!c.fn.body.some((s) => s.k === 'loop')) continue;
    const old = c.domain;
    const width = [9, 17, 26][seed % 3];
    const same = (e: Extents) => e.width === old.width && e.height === old.height && e.depth === old.depth;
    const wide = { ...c, domain: { ...old, width }, extents: c.extents.map((e) => (same(e) ? { ...e, width } : e)) };
    checked++;
    const expected = runWith(wide, 'interp');
    for (const k of [2, 3]) {
      const d = difference(expected, runWith(wide, { interleave: k }));
      if (d !== undefined && ++failures <= 5) tt.fail(`seed ${seed}, ${k} vectors: ${d}\n${JSON.stringify(c.fn)}`);
    }
  }
  tt.equal(failures, 0, `${checked} random functions with a top-level loop`);
  tt.end();
});

t.test('straight-line pointwise bodies: vectors side by side, statement by statement', (tt) => {
  // A rings-like chain (divide, square root, sine-free polynomial) with a varying if and a
  // select, reading a pointwise input: every factor, every width, the columns left over.
  const px = op('f32.sub', op('f32.div', op('f32.add', op('i32.to_f32', X), f32(0.5)), op('i32.to_f32', extent(0))), f32(0.5));
  const f = fn({
    nodes: ['rings'],
    locals: ['f32', 'f32', 'f32'],
    fields: [field('in', 'read', 2, ['f32']), field('out', 'write', 2, ['f32', 'f32', 'f32'])],
    body: [
      set(0, op('f32.sqrt', op('f32.add', op('f32.mul', px, px), op('f32.mul', load(0, 0, 'f32'), f32(0.25))))),
      set(1, op('f32.add', op('f32.mul', op('f32.mul', local(0, 'f32'), local(0, 'f32')), f32(-0.1666)), f32(1))),
      iff(op('f32.gt', local(1, 'f32'), f32(0.99)), [set(1, op('f32.neg', local(1, 'f32')))]),
      set(2, select(op('i32.eq', op('i32.rem', X, i32(3)), i32(0)), local(0, 'f32'), local(1, 'f32'))),
    ],
    stores: [{ field: 1, comp: 0, local: 0 }, { field: 1, comp: 1, local: 2 }, { field: 1, comp: 2, local: 1 }],
  });
  const variants = { ...FACTORS, '6 vectors per step (the default)': {}, 'one vector': { interleave: 1 } };
  for (const w of [...WIDTHS, 24, 25, 47, 48, 49]) {
    const d = domain(w, 3);
    agreeWith(tt, `width ${w}`, { fn: f, domain: d, extents: [d, d], uniforms: [] }, variants);
  }
  tt.end();
});
