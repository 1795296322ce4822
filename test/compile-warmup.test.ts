// The compile worker's warm-up (src/workers/compile-warmup.ts): it waits for the worker to be
// idle, compiles its scene a fixed number of rounds, stops at its first error, and never changes
// what a request gets: the same bytes as a worker without it, and an answer even when it fails.

import t from 'tap';
import { IDLE_MS, WARM_ROUNDS, warmUp, warmUpIrs, type Warmth } from '../src/workers/compile-warmup.js';
import { CompileWorker } from '../src/main/compiler.js';
import type { IrFunction } from '../src/ir/ir.js';
import { textScene } from './helpers.js';
import { sceneGroups } from '../src/main/scene-groups.js';

const SCENE = `
kernel ramp@1 {
  out image: field2<f32>;
  each (x, y) { image = sin(x * 0.1) + y * 0.5; }
}
node view: ramp@1 { size = 16 x 16; }
output image <- view.image;
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(warmth: () => Warmth | null | Promise<Warmth | null>, ms = 60_000): Promise<Warmth | null> {
  const end = Date.now() + ms;
  for (;;) {
    const w = await warmth();
    if (!w || w.done || Date.now() > end) return w;
    await sleep(20);
  }
}

t.test('the warm-up scene checks, and the warm-up compiles it WARM_ROUNDS times once idle', async (t) => {
  const irs = await warmUpIrs();
  t.ok(irs.length >= 2, 'a stencil and its source: two groups');
  const compiled: IrFunction[] = [];
  const warmth = warmUp((ir) => void compiled.push(ir), () => -Infinity);
  await until(() => warmth);
  t.same(warmth, { rounds: WARM_ROUNDS, done: true });
  t.equal(compiled.length, WARM_ROUNDS * irs.length);
});

t.test('the warm-up waits while requests come, and starts IDLE_MS after the last', async (t) => {
  let busy = true;
  let last = 0;
  let compiles = 0;
  // While busy, a request has just been answered; then the last one was answered at `last`.
  const warmth = warmUp(() => void compiles++, () => (busy ? performance.now() : last));
  await sleep(IDLE_MS * 8);
  t.equal(compiles, 0, 'no warm-up compile while the worker is busy');
  busy = false;
  last = performance.now();
  await until(() => warmth);
  t.ok(performance.now() - last >= IDLE_MS, 'not before IDLE_MS');
  t.same(warmth, { rounds: WARM_ROUNDS, done: true }, 'then all of it');
});

t.test('a request answered during the warm-up ends it', async (t) => {
  let last = -Infinity;
  let compiles = 0;
  // The third warm-up compile is followed by a request (the worker answers one between two steps).
  const warmth = warmUp(() => {
    if (++compiles === 3) last = performance.now() - IDLE_MS * 10;
  }, () => last);
  await until(() => warmth);
  t.same(warmth, { rounds: 1, done: true, cut: true });
  t.equal(compiles, 3, 'no compile after the request');
});

t.test('a warm-up that fails stops, with its error, and nothing else', async (t) => {
  let compiles = 0;
  const failing = warmUp(() => {
    compiles++;
    throw new Error('binaryen broke');
  }, () => -Infinity);
  await until(() => failing);
  t.same(failing, { rounds: 0, done: true, error: 'binaryen broke' });
  t.equal(compiles, 1, 'not tried again');
  const noScene = warmUp(() => t.fail('no scene, no compile'), () => -Infinity, () => Promise.reject(new Error('no scene')));
  await until(() => noScene);
  t.same(noScene, { rounds: 0, done: true, error: 'no scene' });
});

const irs = () => sceneGroups(textScene({ 'scene.esn': SCENE }), [], true).map((g) => g.ir);

t.test('a warm worker answers its first request, and compiles the same bytes as a cold one', async (t) => {
  const warm = new CompileWorker({ warm: true });
  const cold = new CompileWorker();
  t.teardown(() => Promise.all([warm.close(), cold.close()]));
  // Asked before binaryen has loaded: the request is answered before the warm-up begins.
  const first = await warm.compile(irs(), 'fast');
  t.equal(first.length, 1);
  t.ok(first[0].module instanceof WebAssembly.Module);
  t.same(await cold.warmth(), null, 'a worker started without a warm-up has none');
  const warmth = await until(() => warm.warmth());
  t.same(warmth, { rounds: WARM_ROUNDS, done: true }, 'then it warmed up, without an error');
  for (const tier of ['fast', 'optimised'] as const) {
    const [a] = await warm.compile(irs(), tier);
    const [b] = await cold.compile(irs(), tier);
    t.same(Buffer.from(a.bytes), Buffer.from(b.bytes), `${tier}: the same bytes after the warm-up`);
  }
});

t.test('a worker whose warm-up fails still compiles', async (t) => {
  process.env.ENTELECHY_TEST_WARMUP_FAIL = '1';
  const worker = new CompileWorker({ warm: true });
  delete process.env.ENTELECHY_TEST_WARMUP_FAIL;
  t.teardown(() => worker.close());
  await worker.ready;
  const warmth = await until(() => worker.warmth());
  t.match(warmth, { rounds: 0, done: true, error: /warm-up failed/ });
  const [c] = await worker.compile(irs(), 'fast');
  t.ok(WebAssembly.validate(c.bytes), 'the request is answered all the same');
});
