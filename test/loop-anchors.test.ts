// Values set before a loop and only read in it are anchored where they are computed
// (control.ts, anchorInvariants): V8 would otherwise compute them again at every repetition. The
// anchors must change no result (both tiers against the interpreter, lanes leaving at different
// repetitions, a loop nested in a loop) and be there: one per such value, none for a value the
// loop writes.

import t from 'tap';
import { compileFunction } from '../src/codegen/index.js';
import type { Expr, IrFunction, Stmt } from '../src/ir/ir.js';
import { agree } from './compare.js';
import { X, Y, brk, f32, field, fn, i32, iff, local, loop, op, set } from './ir-gen.js';

const TIERS = { fast: { tier: 'fast' as const }, optimised: { tier: 'optimised' as const }, '1 vector per step': { tier: 'optimised' as const, interleave: 1 } };
const domain = (width: number, height: number) => ({ width, height, depth: 1 });

const fx = (e: Expr) => op('i32.to_f32', e);
const t_ = local(0, 'f32');
const acc = local(1, 'f32');
const inv = (i: number) => local(2 + i, 'f32');

/**
 * A ray-marcher's shape: a direction normalised per element (3 values, a square root and a
 * division), then `while (t < limit && acc < 4)` reading it past the exit test. `inLoop` false:
 * the loop reads none of the three (they are read after it instead).
 */
function marcher(inLoop: boolean, nested = false): IrFunction {
  const dx = op('f32.sub', op('f32.mul', fx(X), f32(0.13)), f32(0.7));
  const dy = op('f32.add', op('f32.mul', fx(Y), f32(0.21)), f32(0.3));
  const norm = op('f32.div', f32(1), op('f32.sqrt', op('f32.add', op('f32.add', op('f32.mul', dx, dx), op('f32.mul', dy, dy)), f32(1))));
  const step: Expr = inLoop
    ? op('f32.add', op('f32.mul', inv(0), t_), op('f32.mul', inv(1), op('f32.sub', t_, inv(2))))
    : op('f32.mul', t_, f32(0.37));
  const inner: Stmt[] = nested
    ? [set(6, i32(0)), loop(0, iff(op('i32.ge', local(6, 'i32'), op('i32.rem', op('i32.add', X, Y), i32(3))), [brk(0)]),
      set(1, op('f32.add', acc, op('f32.mul', inv(2), f32(0.01)))), set(6, op('i32.add', local(6, 'i32'), i32(1))))]
    : [];
  const body: Stmt[] = [
    set(2, op('f32.mul', dx, norm)),
    set(3, op('f32.mul', dy, norm)),
    set(4, norm),
    set(0, f32(0.2)),
    loop(0,
      iff(op('bool.not', op('bool.and', op('f32.lt', t_, f32(9)), op('f32.lt', acc, f32(4)))), [brk(0)]),
      set(1, op('f32.add', acc, op('f32.abs', step))),
      ...inner,
      set(0, op('f32.add', t_, op('f32.mul', f32(0.05), op('f32.add', f32(1), fx(op('i32.rem', X, i32(5))))))),
    ),
    set(5, inLoop ? acc : op('f32.add', acc, op('f32.add', inv(0), op('f32.add', inv(1), inv(2))))),
  ];
  return fn({
    nodes: ['march'],
    locals: ['f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'i32'],
    fields: [field('out', 'write', 2, ['f32', 'f32'])],
    body,
    stores: [{ field: 0, comp: 0, local: 5 }, { field: 0, comp: 1, local: 0 }],
  });
}

/** The anchors (exported globals) of f's module, one vector per step (interleave.ts anchors each of its vectors'). */
const anchors = (f: IrFunction, tier: 'fast' | 'optimised', interleave = 1) =>
  WebAssembly.Module.exports(new WebAssembly.Module(compileFunction(f, { tier, interleave }))).filter((e) => e.name.startsWith('anchor')).length;

t.test('anchored values give the interpreter\'s results on both tiers', (tt) => {
  for (const nested of [false, true])
    for (const w of [1, 4, 5, 13]) {
      const f = marcher(true, nested);
      agree(tt, `${nested ? 'nested loop, ' : ''}width ${w}`, { fn: f, domain: domain(w, 3), extents: [domain(w, 3)], uniforms: [] }, TIERS);
    }
  tt.end();
});

t.test('one anchor per value set before the loop and only read in it', (tt) => {
  for (const tier of ['fast', 'optimised'] as const) {
    // The three direction values; t and acc are written in the loop: not anchored.
    tt.equal(anchors(marcher(true), tier) - anchors(marcher(false), tier), 3, `${tier}: 3 anchors more when the loop reads the 3 values`);
    // 2 vectors per step: each vector's 3, and the single vector's after the steps.
    tt.equal(anchors(marcher(true), tier, 2) - anchors(marcher(false), tier, 2), 9, `${tier}, 2 vectors per step: 9 anchors more`);
  }
  tt.end();
});
