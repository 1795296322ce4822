// Lockstep counters (src/codegen/lockstep.ts): a `while` loop's counter that every lane still in
// the loop agrees on is tested once, as a scalar, and ends the loop for all lanes at once. Which
// locals qualify, and that loops with and without such counters give the interpreter's results
// bit for bit: one vector per step and fused, lanes leaving on either part of the test, fuel.

import t, { type Test } from 'tap';
import binaryen from 'binaryen';
import type { Expr, IrFunction, Stmt } from '../src/ir/ir.js';
import { analyse } from '../src/codegen/analysis.js';
import { Gen } from '../src/codegen/context.js';
import { lockstep } from '../src/codegen/lockstep.js';
import { newModule } from '../src/codegen/module.js';
import { agree as agreeWith, type Extents } from './compare.js';
import { X, Y, brk, extent, f32, field, fn, i32, iff, local, loop, op, rng, set, type RandomCase } from './ir-gen.js';

const VARIANTS = { 'one vector': { interleave: 1 }, '3 vectors per step': { interleave: 3 }, 'fused (default)': {} };
const agree = (tt: Test, name: string, c: RandomCase) => agreeWith(tt, name, c, VARIANTS);
const domain = (width: number, height: number): Extents => ({ width, height, depth: 1 });
const WIDTHS = [3, 4, 13, 16, 23];

const zr = local(0, 'f32');
const zi = local(1, 'f32');
const n = local(2, 'i32');
const t3 = local(3, 'f32');
const LOCALS = ['f32', 'f32', 'i32', 'f32', 'i32', 'i32'] as const;

/** `while (stay && zr^2 + zi^2 <= 4) { z = z^2 + c; ...steps }`, the escape-time shape. */
function escape(opts: { init?: Stmt[]; stay: Expr; steps: Stmt[]; before?: Stmt[]; fuel?: number; wrap?: (s: Stmt[]) => Stmt[]; orForm?: boolean }): IrFunction {
  const cx = op('f32.sub', op('f32.mul', op('i32.to_f32', X), f32(0.17)), f32(2.1));
  const cy = op('f32.sub', op('f32.mul', op('i32.to_f32', Y), f32(0.41)), f32(0.9));
  const body: Stmt[] = [
    ...(opts.init ?? [set(2, i32(0))]),
    ...(opts.before ?? []),
    loop(0,
      iff(opts.orForm
        // if (!stay || |z|^2 > 4) break
        ? op('bool.or', op('bool.not', opts.stay), op('f32.gt', op('f32.add', op('f32.mul', zr, zr), op('f32.mul', zi, zi)), f32(4)))
        // while (stay && |z|^2 <= 4)
        : op('bool.not', op('bool.and', opts.stay, op('f32.le', op('f32.add', op('f32.mul', zr, zr), op('f32.mul', zi, zi)), f32(4)))),
      [brk(0)]),
      set(3, op('f32.add', op('f32.sub', op('f32.mul', zr, zr), op('f32.mul', zi, zi)), cx)),
      set(1, op('f32.add', op('f32.mul', op('f32.mul', f32(2), zr), zi), cy)),
      set(0, t3),
      ...opts.steps,
    ),
  ];
  return fn({
    nodes: ['escape'],
    locals: [...LOCALS],
    fields: [field('out', 'write', 2, ['i32', 'f32', 'i32'])],
    fuel: opts.fuel,
    body: opts.wrap ? opts.wrap(body) : body,
    stores: [{ field: 0, comp: 0, local: 2 }, { field: 0, comp: 1, local: 0 }, { field: 0, comp: 2, local: 4 }],
  });
}

const inc = (l: number, k = 1) => set(l, op('i32.add', local(l, 'i32'), i32(k)));

/** lockstep() on the function's first top-level loop: the shadowed locals, or null. */
function counters(f: IrFunction): number[] | null {
  const g = new Gen(newModule({ nodes: f.nodes, fuel: f.fuel }), f, analyse(f));
  const at = f.body.findIndex((s) => s.k === 'loop');
  const ls = lockstep(g, f.body.slice(0, at), f.body[at] as Extract<Stmt, { k: 'loop' }>);
  return ls ? [...ls.shadows.keys()] : null;
}

t.test('which locals are lockstep counters', (tt) => {
  const limit = op('i32.lt', n, i32(20));
  tt.same(counters(escape({ stay: limit, steps: [inc(2)] })), [2], 'i = 0; while (i < 20 && ...) { ...; i++ }');
  tt.same(counters(escape({ stay: limit, steps: [inc(2), set(4, op('i32.add', local(4, 'i32'), n))], init: [set(2, i32(0)), set(4, i32(3))] })),
    [2, 4], 'a counter stepped by another counter');
  tt.equal(counters(escape({ stay: limit, steps: [inc(2)], init: [set(2, op('i32.rem', X, i32(3)))] })), null, 'not when it starts from x');
  tt.equal(counters(escape({ stay: limit, steps: [iff(op('f32.gt', zr, f32(0)), [inc(2)])] })), null, 'not when a varying if steps it');
  tt.equal(counters(escape({ stay: limit, steps: [inc(2)], init: [set(5, i32(1)), set(2, local(5, 'i32')), set(5, i32(2))] })),
    null, 'not when what its start reads changes before the loop');
  tt.equal(counters(escape({ stay: op('f32.lt', zi, f32(9)), steps: [inc(2)] })), null, 'not when no conjunct of the test is lockstep');
  tt.equal(counters(escape({ stay: limit, steps: [set(2, op('i32.add', n, op('f32.to_i32', zr)))] })), null, 'not when its step is varying');
  tt.end();
});

t.test('lockstep loops agree with the interpreter', (tt) => {
  const cases: [string, IrFunction][] = [
    ['i < 20', escape({ stay: op('i32.lt', n, i32(20)), steps: [inc(2)] })],
    ['i < 3 (every lane leaves on the counter)', escape({ stay: op('i32.lt', n, i32(3)), steps: [inc(2)] })],
    ['a start from y, a bound from y', escape({
      init: [set(2, op('i32.sub', op('i32.mul', Y, i32(3)), i32(4)))],
      stay: op('i32.lt', n, op('i32.add', op('i32.mul', Y, i32(2)), i32(9))),
      steps: [inc(2)],
    })],
    ['counting down by 3', escape({ init: [set(2, i32(40))], stay: op('i32.gt', n, i32(0)), steps: [inc(2, -3)] })],
    ['two counters, one stepped by the other, both in the test', escape({
      init: [set(2, i32(0)), set(4, i32(1))],
      stay: op('bool.and', op('i32.lt', n, i32(30)), op('i32.lt', local(4, 'i32'), i32(200))),
      steps: [inc(2), set(4, op('i32.add', local(4, 'i32'), n))],
    })],
    ['the counter read per lane in the loop', escape({
      stay: op('i32.lt', n, i32(25)),
      steps: [set(0, op('f32.add', zr, op('f32.mul', op('i32.to_f32', n), f32(0.01)))), inc(2)],
    })],
    ['a counter that starts from x (not lockstep)', escape({ init: [set(2, op('i32.rem', X, i32(4)))], stay: op('i32.lt', n, i32(20)), steps: [inc(2)] })],
    ['in a varying if (one vector per step)', escape({
      stay: op('i32.lt', n, i32(15)),
      steps: [inc(2)],
      wrap: (body) => [iff(op('i32.ne', op('i32.rem', X, i32(3)), i32(0)), body, [set(2, i32(-7))])],
    })],
  ];
  for (const [name, f] of cases) {
    for (const w of WIDTHS) agree(tt, `${name}, width ${w}`, { fn: f, domain: domain(w, 4), extents: [domain(w, 4)], uniforms: [] });
  }
  tt.end();
});

t.test('fuel in a lockstep loop: the first element in order that runs out names the node', (tt) => {
  // Points near the origin never escape: with a bound far above the fuel, they run out.
  const f = escape({ stay: op('i32.lt', n, i32(1 << 20)), steps: [inc(2)], fuel: 100 });
  const expected = agree(tt, 'bound above the fuel', { fn: f, domain: domain(23, 4), extents: [domain(23, 4)], uniforms: [] });
  tt.match(expected.trap, /^escape \(word 0\) at \(\d+, \d+\)$/, "the interpreter's trap, at its element (the wasm's agrees: agree)");
  const under = escape({ stay: op('i32.lt', n, i32(60)), steps: [inc(2)], fuel: 100 });
  tt.equal(agree(tt, 'bound under the fuel', { fn: under, domain: domain(23, 4), extents: [domain(23, 4)], uniforms: [] }).trap, undefined);
  tt.end();
});

t.test('a lockstep test is one scalar compare: no per-lane compare of the counter', (tt) => {
  const f = escape({ stay: op('i32.lt', n, i32(20)), steps: [inc(2)] });
  const g = new Gen(newModule({ nodes: f.nodes, fuel: f.fuel }), f, analyse(f));
  const ls = lockstep(g, f.body.slice(0, 1), f.body[1] as Extract<Stmt, { k: 'loop' }>)!;
  tt.equal(binaryen.getExpressionType(ls.stay), binaryen.i32, 'the stay test is an i32');
  tt.equal(ls.varying?.k === 'op' && ls.varying.op, 'f32.le', 'the lanes test only |z|^2 <= 4');
  tt.end();
});

t.test('random lockstep loops: starts, bounds, steps, both exit forms, fuel', (tt) => {
  let failures = 0;
  let lockstepped = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const r = rng(seed);
    const int = (n: number) => Math.floor(r() * n);
    const pick = <T>(xs: T[]): T => xs[int(xs.length)];
    const step = pick([1, 1, -1, 2, -3]);
    const start = pick([i32(int(7) - 3), op('i32.sub', op('i32.mul', Y, i32(int(3) + 1)), i32(int(5))), op('i32.rem', extent(1), i32(5))]);
    const reach = pick([i32(int(40) + 1), op('i32.add', op('i32.mul', Y, i32(int(9) + 1)), i32(int(20))), op('i32.mul', extent(0), i32(2))]);
    // Counting up: start + reach bounds it; counting down: start - reach.
    const bound = step > 0 ? op('i32.add', start, reach) : op('i32.sub', start, reach);
    const stay = step > 0
      ? pick([op('i32.lt', n, bound), op('bool.not', op('i32.ge', n, bound)), op('i32.le', op('i32.add', n, i32(1)), bound)])
      : op('i32.gt', n, bound);
    const readsN = r() < 0.4 ? [set(0, op('f32.add', zr, op('f32.mul', op('i32.to_f32', n), f32(0.001))))] : [];
    const f = escape({
      init: [set(2, start)],
      stay,
      steps: [...readsN, set(2, op('i32.add', n, i32(step)))],
      orForm: r() < 0.5,
      fuel: r() < 0.2 ? 30 + int(40) : undefined,
    });
    if (counters(f)?.includes(2)) lockstepped++;
    const w = pick([5, 13, 16, 23]);
    const c = { fn: f, domain: domain(w, 4), extents: [domain(w, 4)], uniforms: [] };
    const before = tt.counts.fail;
    agree(tt, `seed ${seed}`, c);
    if (tt.counts.fail > before && ++failures <= 3) tt.comment(JSON.stringify(f.body));
  }
  tt.equal(lockstepped, 60, 'every case has a lockstep counter');
  tt.end();
});
