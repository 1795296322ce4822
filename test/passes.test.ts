// The loop passes and the uses pass of codegen (src/codegen/unroll.ts, lockstep.ts, uses.ts):
// each decides before the code it governs is emitted, and emission follows. What each decides on
// hand-made IR, and that the module follows it (its WebAssembly text, and the interpreter's bits).

import t from 'tap';
import type { Expr, IrFunction, Stmt } from '../src/ir/ir.js';
import { analyse } from '../src/codegen/analysis.js';
import { compileFunction } from '../src/codegen/compile.js';
import { planLockstep } from '../src/codegen/lockstep.js';
import { planUnroll, type UnrollContext } from '../src/codegen/unroll.js';
import { dumpTo, type PassName } from '../src/ir/dump.js';
import { agree, type Extents } from './compare.js';
import { X, Y, brk, f32, field, fn, i32, iff, load, local, loop, op, set } from './ir-gen.js';

type Loop = Extract<Stmt, { k: 'loop' }>;
const ext = (width: number, height: number): Extents => ({ width, height, depth: 1 });
const BOTH = { fast: { tier: 'fast' as const }, optimised: {} };

/** What `passes` printed while compiling `f` (the fast tier: no binaryen optimiser). */
function dumped(f: IrFunction, passes: PassName[], options = { tier: 'fast' as const }): Map<PassName, string> {
  const out = new Map<PassName, string>();
  dumpTo(passes, (pass, text) => out.set(pass, text));
  try {
    compileFunction(f, options);
  } finally {
    dumpTo(undefined);
  }
  return out;
}

/** `for (let v = from; v < to; v++) { ...middle }` as the front end lowers it. */
const counted = (v: number, from: Expr, to: Expr, middle: Stmt[], node = 0): Stmt[] => [
  set(v, from),
  loop(node, iff(op('i32.ge', local(v, 'i32'), to), [brk(0)]), ...middle, set(v, op('i32.add', local(v, 'i32'), i32(1)))),
];

// A triangle: for (i = 0; i < 3; i++) for (j = 0; j < i; j++) acc += y + j. The inner loop's
// bound is the outer counter: a constant only in each copy of the outer loop.
const ACC = 0;
const triangle = fn({
  nodes: ['tri'],
  locals: ['f32', 'i32', 'i32'],
  fields: [field('out', 'write', 2, ['f32'])],
  body: [
    set(ACC, f32(0)),
    ...counted(1, i32(0), i32(3), counted(2, i32(0), local(1, 'i32'), [
      set(ACC, op('f32.add', local(ACC, 'f32'), op('i32.to_f32', op('i32.add', Y, local(2, 'i32'))))),
    ])),
  ],
  stores: [{ field: 0, comp: 0, local: ACC }],
});

t.test('unroll: a decision per context; the inner bound is the outer copy\'s constant', (tt) => {
  const root = planUnroll(triangle);
  const outer = triangle.body[2] as Loop;
  const d = root.loops.get(outer)!;
  tt.ok(d.unrolled, 'the outer loop is unrolled');
  tt.same(d.counted.values, [0, 1, 2, 3], 'its counter takes 0, 1, 2 (3 exits)');
  tt.equal(d.copies.length, 3, 'one context per copy');
  const inner = outer.body[2] as Loop;
  tt.equal(root.loops.has(inner), false, 'the inner loop is decided in the copies, not in the body');
  d.copies.forEach((copy: UnrollContext, k) => {
    tt.same([...copy.subst], [[1, k]], `copy ${k}: i = ${k}`);
    const i = copy.loops.get(inner)!;
    tt.ok(i.unrolled, `copy ${k}: the inner loop is unrolled`);
    tt.equal(i.counted.values.length - 1, k, `copy ${k}: the inner loop repeats ${k} times`);
  });
  // The nest's fuel is a constant of node 0: charged at the outer entry, nothing inside.
  tt.equal(d.charge, 4 + 1 + 2 + 3, 'the nest\'s fuel, charged once: 4 outer + 1 + 2 + 3 inner repetitions');
  tt.ok(d.copies.every((c) => c.charged), 'the copies charge nothing');
  tt.end();
});

t.test('unroll: emission follows the pass (no loop left in the module; the interpreter\'s bits)', (tt) => {
  const wat = dumped(triangle, ['unroll', 'emit']);
  tt.match(wat.get('unroll'), /counter L1: 3 repetitions, unrolled\n.*counter L2: 0 repetitions, unrolled\n.*counter L2: 1 repetitions, unrolled\n.*counter L2: 2 repetitions, unrolled$/);
  // The x and row loops remain; the two counted loops are gone.
  const loops = (wat.get('emit')!.match(/\(loop /g) ?? []).length;
  tt.equal(loops, 2, 'only the row and x loops');
  agree(tt, 'triangle', { fn: triangle, domain: ext(7, 3), extents: [ext(7, 3)], uniforms: [] }, BOTH);
  tt.end();
});

t.test('unroll: past the size budget a loop is kept, and loops inside it decided in its context', (tt) => {
  // 30 repetitions of 30 repetitions of a 5-node statement: past the 3000-node budget.
  const big = fn({
    nodes: ['big'],
    locals: ['f32', 'i32', 'i32'],
    fields: [field('out', 'write', 2, ['f32'])],
    body: [set(ACC, f32(0)), ...counted(1, i32(0), i32(30), counted(2, i32(0), i32(30), [set(ACC, op('f32.add', local(ACC, 'f32'), f32(1)))]))],
    stores: [{ field: 0, comp: 0, local: ACC }],
  });
  const root = planUnroll(big);
  const outer = big.body[2] as Loop;
  const inner = outer.body[2] as Loop;
  tt.equal(root.loops.get(outer)!.unrolled, false, 'the outer loop is kept');
  tt.equal(root.loops.get(inner)!.unrolled, true, 'the inner one, in the same context, is unrolled');
  tt.equal((dumped(big, ['emit']).get('emit')!.match(/\(loop /g) ?? []).length, 3, 'the row, x and outer loops');
  agree(tt, 'big', { fn: big, domain: ext(5, 2), extents: [ext(5, 2)], uniforms: [] }, BOTH);
  tt.end();
});

// An escape-time loop with a lockstep counter (n), inside a counted loop's copies.
const zr = local(0, 'f32');
const n = local(1, 'i32');
const escape = (node: number): Stmt[] => [
  set(1, i32(0)),
  set(0, op('f32.mul', op('i32.to_f32', X), f32(0.25))),
  loop(node,
    iff(op('bool.not', op('bool.and', op('i32.lt', n, i32(40)), op('f32.lt', zr, f32(50)))), [brk(0)]),
    set(0, op('f32.add', op('f32.mul', zr, f32(1.1)), f32(0.3))),
    set(1, op('i32.add', n, i32(1))),
  ),
];

t.test('lockstep: every while loop emission meets, through the unrolled copies, once each', (tt) => {
  const f = fn({
    nodes: ['outer', 'escape'],
    locals: ['f32', 'i32', 'i32', 'f32'],
    fields: [field('out', 'write', 2, ['f32'])],
    body: [
      set(3, f32(0)),
      ...counted(2, i32(0), i32(3), [...escape(1), set(3, op('f32.add', local(3, 'f32'), op('i32.to_f32', n)))]),
      // Never reached: the unroll pass's constant makes this branch dead in every copy.
      iff(op('i32.lt', i32(1), i32(0)), escape(1)),
    ],
    stores: [{ field: 0, comp: 0, local: 3 }],
  });
  const analysis = analyse(f);
  const plan = planLockstep(f, analysis, planUnroll(f));
  const counted3 = f.body[2] as Loop;
  const inner = counted3.body[3] as Loop;
  tt.same([...plan.keys()], [inner], 'the escape loop, once (its 3 copies are the same loop)');
  tt.same([...plan.get(inner)!.counters.keys()], [1], 'n is its lockstep counter');
  const wat = dumped(f, ['lockstep']);
  tt.match(wat.get('lockstep'), /loop of node 1: counters L1; tested once: i32\.lt\(L1, 40i\)/);
  agree(tt, 'escape in copies', { fn: f, domain: ext(13, 2), extents: [ext(13, 2)], uniforms: [] }, { ...BOTH, 'one vector': { interleave: 1 } });
  tt.end();
});

t.test('uses: the x vector and the top mask are kept exactly where the code reads them', (tt) => {
  const kernel = (body: Stmt[], locals: ('f32' | 'i32')[] = ['f32']) => fn({
    nodes: ['k'],
    locals,
    fields: [field('src', 'read', 2, ['f32']), field('out', 'write', 2, ['f32'])],
    body,
    stores: [{ field: 1, comp: 0, local: 0 }],
  });
  const cases: [string, IrFunction, RegExp][] = [
    ['y only', kernel([set(0, op('i32.to_f32', Y))]), /vector: x vector not read, top mask not read/],
    ['x', kernel([set(0, op('i32.to_f32', X))]), /vector: x vector kept, top mask not read/],
    // A uniform `if` is a scalar branch; a varying one runs its branch under the top mask (x < width).
    ['a uniform if', kernel([set(0, f32(1)), iff(op('f32.lt', op('i32.to_f32', Y), f32(2)), [set(0, f32(2))])]), /vector: x vector not read, top mask not read/],
    ['a varying if', kernel([set(0, f32(1)), iff(op('f32.lt', load(0, 0, 'f32'), f32(0.5)), [set(0, f32(2))])]), /vector: x vector kept, top mask kept/],
    ['a loop', kernel([...counted(1, i32(0), Y, [set(0, op('f32.add', local(0, 'f32'), f32(1)))])], ['f32', 'i32']), /vector: x vector kept, top mask kept/],
  ];
  for (const [name, f, expected] of cases) {
    const text = dumped(f, ['uses', 'emit']);
    tt.match(text.get('uses'), expected, `${name}: what the pass found`);
    agree(tt, name, { fn: f, domain: ext(6, 3), extents: [ext(6, 3), ext(6, 3)], uniforms: [] }, BOTH);
  }
  // Dropped values leave no code: with neither read, nothing computes x of the lanes.
  const wat = dumped(cases[0][1], ['emit']).get('emit')!;
  tt.notMatch(wat, /v128\.const i32x4 0x00000000 0x00000001 0x00000002 0x00000003/, 'y only: no x vector is built');
  tt.match(dumped(cases[1][1], ['emit']).get('emit')!, /v128\.const i32x4 0x00000000 0x00000001 0x00000002 0x00000003/, 'x: the x vector is built');
  tt.end();
});
