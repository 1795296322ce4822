// The compile worker's warm-up (src/workers/compile-warmup.ts): it waits for the worker to be
// idle, compiles the functions it was given round-robin up to its limits, stops at its first
// error, and never changes what a request gets: the same bytes as a cold worker, an answer even
// when it fails. A session warms its own worker with its first world's groups.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IDLE_MS, WARM_COMPILES, warmUp, type Warmth } from '../src/workers/compile-warmup.js';
import { CompileWorker } from '../src/main/compiler.js';
import { Session } from '../src/main/session.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import type { IrFunction } from '../src/ir/ir.js';
import { textScene } from './helpers.js';
import { scratchDir } from './scratch.js';

const SCENE = `
kernel ramp@1 {
  out image: field2<f32>;
  each (x, y) { image = sin(x * 0.1) + y * 0.5; }
}
kernel blur@1 {
  grants field.read;
  in src: field2<f32>;
  out image: field2<f32>;
  each (x, y) { image = (src.at(x - 1, y) + src.at(x + 1, y)) * 0.5; }
}
node ramp: ramp@1 { size = 16 x 16; }
node blur: blur@1 { size = 16 x 16; src <- ramp.image; }
output image <- blur.image;
`;

function irs(): IrFunction[] {
  const scene = textScene({ 'scene.esn': SCENE });
  if (scene.diagnostics.length) throw new Error(`the test's scene does not check: ${scene.diagnostics[0].message}`);
  return sceneGroups(scene, [], true).map((g) => g.ir);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(warmth: () => Warmth | null | Promise<Warmth | null>, ms = 60_000): Promise<Warmth | null> {
  const end = Date.now() + ms;
  for (;;) {
    const w = await warmth();
    if ((w && w.done) || Date.now() > end) return w;
    await sleep(10);
  }
}

t.test('the warm-up compiles its functions round-robin, up to its count or its time', async (t) => {
  const fns = irs();
  t.ok(fns.length >= 2, 'a stencil and its source: two groups');
  const compiled: IrFunction[] = [];
  const warmth = warmUp(fns, (ir) => void compiled.push(ir), () => -Infinity);
  t.equal(warmth.done, false, 'it starts later, not within the call');
  await until(() => warmth);
  t.match(warmth, { compiles: WARM_COMPILES, done: true });
  t.equal(compiled.length, WARM_COMPILES);
  t.same(compiled.slice(0, 4), [fns[0], fns[1], fns[0], fns[1]], 'every function in turn');
  // A time limit ends it sooner: each compile here takes 5 ms, the limit is 12.
  let n = 0;
  const slow = warmUp(fns, () => void (n++, Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)), () => -Infinity, () => false, { compiles: 100, millis: 12 });
  await until(() => slow);
  t.equal(slow.compiles, 3, 'stops once its compiles took 12 ms');
  t.equal(n, 3);
  t.match(warmUp([], () => t.fail('nothing to compile'), () => -Infinity), { compiles: 0, done: true }, 'no functions: done at once');
});

t.test('the warm-up waits while requests come, and goes on IDLE_MS after the last', async (t) => {
  let busy = true;
  let last = 0;
  let compiles = 0;
  // While busy, a request has just been answered; then the last one was answered at `last`.
  const warmth = warmUp(irs(), () => void compiles++, () => (busy ? performance.now() : last));
  await sleep(IDLE_MS * 8);
  t.equal(compiles, 0, 'no warm-up compile while requests keep coming');
  busy = false;
  last = performance.now();
  await until(() => warmth);
  t.ok(performance.now() - last >= IDLE_MS, 'not before IDLE_MS');
  t.match(warmth, { compiles: WARM_COMPILES, done: true }, 'then all of it');
});

t.test('the warm-up waits while the process is busy (frames running), and goes on once it is quiet', async (t) => {
  let busy = true;
  let asked = 0;
  let compiles = 0;
  const warmth = warmUp(irs(), () => void compiles++, () => -Infinity, () => (asked++, busy));
  await sleep(IDLE_MS * 8);
  t.equal(compiles, 0, 'no warm-up compile while the process is busy');
  t.ok(asked >= 3, `it kept looking (${asked} times)`);
  busy = false;
  await until(() => warmth);
  t.match(warmth, { compiles: WARM_COMPILES, done: true }, 'then all of it');
});

t.test('a warm-up that fails stops at its first error, and nothing else', async (t) => {
  let compiles = 0;
  const failing = warmUp(irs(), () => {
    compiles++;
    throw new Error('binaryen broke');
  }, () => -Infinity);
  await until(() => failing);
  t.match(failing, { compiles: 0, done: true, error: 'binaryen broke' });
  t.equal(compiles, 1, 'not tried again');
});

t.test('a warmed worker compiles the same bytes as a cold one, and answers while it warms', async (t) => {
  const warm = new CompileWorker();
  const cold = new CompileWorker();
  t.teardown(() => Promise.all([warm.close(), cold.close()]));
  t.same(await warm.warmth(), null, 'no warm-up before one is asked for');
  warm.warm(irs());
  const during = await warm.compile(irs(), 'fast');
  t.ok(during[0].module instanceof WebAssembly.Module, 'a request during the warm-up is answered');
  const warmth = await until(() => warm.warmth());
  t.match(warmth, { compiles: WARM_COMPILES, done: true }, 'then it warmed up, without an error');
  t.notOk(warmth!.error);
  warm.warm(irs());
  t.equal((await warm.warmth())!.compiles, WARM_COMPILES, 'a second warm-up is not started');
  for (const tier of ['fast', 'optimised'] as const) {
    const a = await warm.compile(irs(), tier);
    const b = await cold.compile(irs(), tier);
    t.same(a.map((m) => Buffer.from(m.bytes)), b.map((m) => Buffer.from(m.bytes)), `${tier}: the same bytes after the warm-up`);
  }
});

t.test('a worker whose warm-up fails still compiles', async (t) => {
  process.env.ENTELECHY_TEST_WARMUP_FAIL = '1';
  const worker = new CompileWorker();
  delete process.env.ENTELECHY_TEST_WARMUP_FAIL;
  t.teardown(() => worker.close());
  worker.warm(irs());
  const warmth = await until(() => worker.warmth());
  t.match(warmth, { compiles: 0, done: true, error: /warm-up failed/ });
  const [c] = await worker.compile(irs(), 'fast');
  t.ok(WebAssembly.validate(c.bytes), 'the request is answered all the same');
});

t.test('a session warms its compile worker with its own groups, and an edit meanwhile publishes', async (t) => {
  const dir = scratchDir('entelechy-warmup-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  // Asked at once after the opening world went live: the edit below may land within the warm-up.
  const answer = JSON.parse(await dispatch(s, JSON.stringify({ op: 'compose', edits: [{ kernel: 'ramp@1', text: 'kernel ramp@1 {\n  out image: field2<f32>;\n  each (x, y) { image = sin(x * 0.2) + y * 0.5; }\n}' }] })));
  t.ok(answer.ok, `the edit is answered: ${JSON.stringify(answer.error ?? '')}`);
  t.ok(answer.ok?.events.some((e: { kind: string }) => e.kind === 'published'), 'and published');
  const warmth = await until(() => s.compiler!.warmth());
  t.ok(warmth && warmth.compiles > 0 && warmth.done && !warmth.error, `the session's worker warmed up: ${JSON.stringify(warmth)}`);
  const evaluated = JSON.parse(await dispatch(s, JSON.stringify({ op: 'evaluate' })));
  t.ok(evaluated.ok, 'frames run after it');
  // A session sharing another's compile worker (options.compiler) leaves that worker alone.
  const shared = new CompileWorker();
  t.teardown(() => shared.close());
  const other = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null, compiler: shared });
  t.teardown(() => other.close());
  await sleep(100);
  t.same(await shared.warmth(), null, 'not its own: not warmed by it');
});
