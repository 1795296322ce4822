// Redundant sets as copies (src/ir/redundant.ts): a value a local already holds is read from it,
// never when a local it reads, or its holder, was set in between, nor when it was set in a branch,
// a block or a loop that may not have run, nor across a loop's repetitions when the loop writes
// what it reads. The compiled code (both tiers, through the pass) must give the interpreter's
// results (the original IR) bit for bit.

import t from 'tap';
import { dropRedundant } from '../src/ir/redundant.js';
import type { Expr, IrFunction, Stmt } from '../src/ir/ir.js';
import { visitStmts } from '../src/ir/walk.js';
import { agree } from './compare.js';
import { X, Y, brk, extent, f32, field, fn, gather, iff, local, loop, op, set } from './ir-gen.js';

const TIERS = { fast: { tier: 'fast' as const }, optimised: { tier: 'optimised' as const } };
const domain = { width: 13, height: 5, depth: 1 };
const input = { width: 6, height: 4, depth: 1 };
const L = (i: number) => local(i, 'f32');
const I = (i: number) => local(i, 'i32');

/** How many expressions of `fn`'s body are `f32.floor`s. */
function floors(f: IrFunction): number {
  let n = 0;
  visitStmts(f.body, { expr: (e) => e.k === 'op' && e.op === 'f32.floor' && n++ });
  return n;
}

/** The axis part of a sample at coordinate c into locals p, fl, base, frac (as lowering writes it). */
function axis(c: Expr, axisOf: 0 | 1, p: number): Stmt[] {
  return [
    set(p, op('f32.sub', op('f32.mul', c, op('i32.to_f32', extent(axisOf, 0))), f32(0.5))),
    set(p + 1, op('f32.floor', L(p))),
    set(p + 2, op('f32.to_i32', L(p + 1))),
    set(p + 3, op('f32.sub', L(p), L(p + 1))),
  ];
}

/** A bilinear sample from bases bx, by and weights fx, fy into local `into`. */
function bilinear(bx: number, by: number, fx: number, fy: number, into: number): Stmt {
  const at = (dx: number, dy: number) => gather(0, 0, 'f32', 'clamp', dx ? op('i32.add', I(bx), { k: 'const', t: 'i32', v: 1 }) : I(bx), dy ? op('i32.add', I(by), { k: 'const', t: 'i32', v: 1 }) : I(by));
  const row = (dy: number) => op('f32.add', at(0, dy), op('f32.mul', op('f32.sub', at(1, dy), at(0, dy)), L(fx)));
  return set(into, op('f32.add', row(0), op('f32.mul', op('f32.sub', row(1), row(0)), L(fy))));
}

const u = op('f32.mul', op('i32.to_f32', X), f32(0.09));
const v = op('f32.sub', op('f32.mul', op('i32.to_f32', Y), f32(0.31)), f32(0.2));
const e = f32(1 / 6);

/**
 * The gradient of a ray marcher in 2-D: sample(u, v), sample(u + e, v), sample(u, v + e), the
 * second and third sharing v's and u's axis with the first. `between`: statements after the
 * first sample.
 */
function gradient(between: Stmt[] = [], wrap = (s: Stmt[]) => s): IrFunction {
  return fn({
    // Each axis's base (local p + 2 of the axis at p = 2, 6, ..., 22) is an i32.
    locals: Array.from({ length: 42 }, (_, k) => (k >= 4 && k <= 24 && k % 4 === 0 ? 'i32' : 'f32')),
    fields: [field('in', 'read', 2, ['f32']), field('out', 'write', 2, ['f32', 'f32', 'f32'])],
    body: [
      set(0, u),
      set(1, v),
      ...axis(L(0), 0, 2), ...axis(L(1), 1, 6), bilinear(4, 8, 5, 9, 38),
      ...between,
      ...wrap([
        ...axis(op('f32.add', L(0), e), 0, 10), ...axis(L(1), 1, 14), bilinear(12, 16, 13, 17, 39),
        ...axis(L(0), 0, 18), ...axis(op('f32.add', L(1), e), 1, 22), bilinear(20, 24, 21, 25, 40),
      ]),
      set(41, op('f32.add', L(39), L(40))),
    ],
    stores: [{ field: 1, comp: 0, local: 38 }, { field: 1, comp: 1, local: 39 }, { field: 1, comp: 2, local: 41 }],
  });
}

const run = (f: IrFunction) => ({ fn: f, domain, extents: [input, domain], uniforms: [] });

t.test('axes shared between samples are computed once', (tt) => {
  const f = gradient();
  tt.equal(floors(f), 6);
  tt.equal(floors(dropRedundant(f)), 4, "the second and third samples reuse v's and u's axis");
  agree(tt, 'the gradient', run(f), TIERS);
  tt.end();
});

t.test('a local set again in between is not reused', (tt) => {
  // u changes after the first sample: the third sample's u axis is a new value.
  const f = gradient([set(0, op('f32.add', L(0), f32(0.25)))]);
  tt.equal(floors(dropRedundant(f)), 5, "only v's axis is reused");
  agree(tt, 'u set again', run(f), TIERS);
  tt.end();
});

t.test('values set in a branch are not reused after it; a loop forgets what it writes', (tt) => {
  // The first sample inside an `if` (on some lanes only): the later samples compute their own.
  const b = gradient().body;
  const inIf = fn({ ...gradient(), body: [b[0], b[1], iff(op('f32.gt', op('i32.to_f32', X), f32(4)), b.slice(2, 11)), ...b.slice(11)] });
  tt.equal(floors(dropRedundant(inIf)), 6, 'nothing reused past the if');
  agree(tt, 'first sample in an if', run(inIf), TIERS);
  // The later samples in a loop that moves v: v's axis is not the one before the loop.
  const looped = gradient([], (s) => [
    loop(0, iff(op('f32.gt', L(1), f32(1.2)), [brk(0)]), ...s, set(1, op('f32.add', L(1), f32(0.3)))),
  ]);
  tt.equal(floors(dropRedundant(looped)), 5, "in the loop, only u's axis (not written by it) is reused");
  agree(tt, 'samples in a loop that moves v', run(looped), TIERS);
  tt.end();
});

t.test('a set of the value its own local holds stays right', (tt) => {
  const f = fn({
    locals: ['f32', 'f32', 'f32'],
    fields: [field('out', 'write', 2, ['f32', 'f32'])],
    body: [
      set(0, op('f32.floor', op('f32.mul', op('i32.to_f32', X), f32(0.7)))),
      set(1, op('f32.floor', op('f32.mul', op('i32.to_f32', X), f32(0.7)))),
      set(0, op('f32.add', L(0), f32(1))),
      set(2, op('f32.floor', op('f32.mul', op('i32.to_f32', X), f32(0.7)))),
      set(0, op('f32.add', L(0), L(2))),
    ],
    stores: [{ field: 0, comp: 0, local: 0 }, { field: 0, comp: 1, local: 1 }],
  });
  // L1 = L0 is a copy; once L0 changes, neither is known to hold the value (the third computes it).
  tt.equal(floors(dropRedundant(f)), 2, 'the second reused, the third computed again');
  agree(tt, 'holder set again', { fn: f, domain, extents: [domain], uniforms: [] }, TIERS);
  tt.end();
});
