// The warm-ups (src/main/warm-up.ts): a warm-up waits for its thread to be idle and the process
// quiet, runs its steps round-robin up to its limits, stops at its first error or when told, and
// never changes what a request gets: the same bytes from a warmed compile worker as from a cold
// one, an answer even when it fails. A session warms its own worker with its first world's groups,
// and its coordinator with its documents.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Activity, IDLE_MS, WARM_RUNS, busyGauge, warmUp, type Warmth } from '../src/main/warm-up.js';
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
  const warmth = warmUp(fns, (ir) => void compiled.push(ir), { lastRequest: () => -Infinity });
  t.equal(warmth.done, false, 'it starts later, not within the call');
  await until(() => warmth);
  t.match(warmth, { runs: WARM_RUNS, done: true });
  t.equal(compiled.length, WARM_RUNS);
  t.same(compiled.slice(0, 4), [fns[0], fns[1], fns[0], fns[1]], 'every function in turn');
  // A time limit ends it sooner: each step here takes at least 5 ms, the limit is 12. A busy
  // machine stretches a step (a 5 ms wait took 12 in CI), so the steps' times are measured here.
  const took: number[] = [];
  const slow = warmUp(fns, () => {
    const start = performance.now();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    took.push(performance.now() - start);
  }, { lastRequest: () => -Infinity, limits: { runs: 100, millis: 12 } });
  await until(() => slow);
  t.equal(slow.runs, took.length, 'every step counted');
  t.ok(slow.done && slow.runs >= 1 && slow.runs <= 3, `stops once its steps took 12 ms: by the third step of 5 ms at the latest (${slow.runs})`);
  t.ok(slow.millis >= 12, `the time ended it, not the count (${slow.millis.toFixed(1)} ms)`);
  const before = took.slice(0, -1).reduce((a, b) => a + b, 0);
  t.ok(before < 12, `and not before: the steps before the last took ${before.toFixed(1)} ms`);
  t.match(warmUp([], () => t.fail('nothing to compile'), { lastRequest: () => -Infinity }), { runs: 0, done: true }, 'no functions: done at once');
});

t.test('the warm-up waits while requests come, and goes on IDLE_MS after the last', async (t) => {
  let busy = true;
  let last = 0;
  let compiles = 0;
  // While busy, a request has just been answered; then the last one was answered at `last`.
  const warmth = warmUp(irs(), () => void compiles++, { lastRequest: () => (busy ? performance.now() : last) });
  await sleep(IDLE_MS * 8);
  t.equal(compiles, 0, 'no warm-up compile while requests keep coming');
  busy = false;
  last = performance.now();
  await until(() => warmth);
  t.ok(performance.now() - last >= IDLE_MS, 'not before IDLE_MS');
  t.match(warmth, { runs: WARM_RUNS, done: true }, 'then all of it');
});

t.test('the warm-up waits while the process is busy (frames running), and goes on once it is quiet', async (t) => {
  let busy = true;
  let asked = 0;
  let compiles = 0;
  const warmth = warmUp(irs(), () => void compiles++, { lastRequest: () => -Infinity, busy: () => (asked++, busy) });
  await sleep(IDLE_MS * 8);
  t.equal(compiles, 0, 'no warm-up compile while the process is busy');
  t.ok(asked >= 3, `it kept looking (${asked} times)`);
  busy = false;
  await until(() => warmth);
  t.match(warmth, { runs: WARM_RUNS, done: true }, 'then all of it');
});

t.test('a warm-up that fails stops at its first error, and nothing else', async (t) => {
  let compiles = 0;
  const failing = warmUp(irs(), () => {
    compiles++;
    throw new Error('binaryen broke');
  }, { lastRequest: () => -Infinity });
  await until(() => failing);
  t.match(failing, { runs: 0, done: true, error: 'binaryen broke' });
  t.equal(compiles, 1, 'not tried again');
});

t.test('a warm-up ends when told, before its next step', async (t) => {
  const stop = new AbortController();
  let runs = 0;
  const warmth = warmUp(irs(), () => {
    if (++runs === 2) stop.abort();
  }, { lastRequest: () => -Infinity, signal: stop.signal });
  await until(() => warmth);
  t.match(warmth, { runs: 2, done: true }, 'the step running when told ends, and no other starts');
  t.equal(runs, 2);
});

t.test('busyGauge: a gauge per warm-up, reading the process since it last asked', async (t) => {
  const a = busyGauge();
  const b = busyGauge();
  const spin = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  spin(200);
  t.equal(a(), true, 'a thread spinning for the whole gap: busy');
  // V8's own threads may work a while after the spin (its optimising compiler, a GC): of three
  // gaps asleep, one is quiet.
  let quiet = false;
  for (let i = 0; i < 3 && !quiet; i++) {
    await sleep(80);
    quiet = !a();
  }
  t.ok(quiet, 'a thread asleep: quiet');
  // `b` was never asked: its gap is the whole test, the 200 ms spin in at most ~520 ms. One gauge
  // shared with `a` would measure only the quiet 40 ms since `a` last asked.
  await sleep(40);
  t.equal(b(), true, 'the other gauge still measures from its own start, the spin included');
});

t.test('Activity: a request at work reads as now; then the time the last one ended', async (t) => {
  const activity = new Activity();
  t.equal(activity.lastRequest(), -Infinity, 'nothing yet');
  let end!: () => void;
  const work = activity.track(new Promise<void>((r) => (end = r)));
  const failing = activity.track(Promise.reject(new Error('refused')));
  await t.rejects(failing, /refused/, 'a failure reaches the asker unchanged');
  const during = activity.lastRequest();
  await sleep(20);
  t.ok(activity.lastRequest() >= during + 15, 'one still at work: the time goes on with the clock');
  end();
  await work;
  const ended = activity.lastRequest();
  await sleep(20);
  t.equal(activity.lastRequest(), ended, 'all ended: it stays at the last end');
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
  t.match(warmth, { runs: WARM_RUNS, done: true }, 'then it warmed up, without an error');
  t.notOk(warmth!.error);
  warm.warm(irs());
  t.equal((await warm.warmth())!.runs, WARM_RUNS, 'a second warm-up is not started');
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
  t.match(warmth, { runs: 0, done: true, error: /warm-up failed/ });
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
  t.ok(warmth && warmth.runs > 0 && warmth.done && !warmth.error, `the session's worker warmed up: ${JSON.stringify(warmth)}`);
  // The coordinator warms its check of the documents up too (after the worker: each waits while the other works).
  const coordinator = await until(async () => (await s.warmth()).coordinator);
  t.ok(coordinator && coordinator.runs > 0 && coordinator.done && !coordinator.error, `the session's coordinator warmed up: ${JSON.stringify(coordinator)}`);
  const evaluated = JSON.parse(await dispatch(s, JSON.stringify({ op: 'evaluate' })));
  t.ok(evaluated.ok, 'frames run after it');
  // A session sharing another's compile worker (options.compiler) leaves that worker alone.
  const shared = new CompileWorker();
  t.teardown(() => shared.close());
  const other = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null, compiler: shared });
  t.teardown(() => other.close());
  await sleep(100);
  t.same(await shared.warmth(), null, 'not its own: not warmed by it');
  t.same(await other.warmth(), { coordinator: null, compiler: null }, 'nor its coordinator: a replay of another session');
});

t.test("a session's coordinator warm-up ends with the session, and leaves its world as it was", async (t) => {
  const dir = scratchDir('entelechy-warmup-close-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  const before = { revision: s.revision, scene: s.scene, texts: new Map(s.texts) };
  const warmth = await until(async () => (await s.warmth()).coordinator);
  t.ok(warmth?.done && warmth.runs > 0 && !warmth.error, `warmed: ${JSON.stringify(warmth)}`);
  t.equal(s.revision, before.revision, 'no change came of it');
  t.equal(s.scene, before.scene, 'the same checked scene runs');
  t.same(s.texts, before.texts);
  const second = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  await sleep(5); // its worker's warm-up may start; the coordinator's waits IDLE_MS
  await second.close();
  const closed = (await second.warmth()).coordinator;
  await sleep(IDLE_MS * 4);
  t.match((await second.warmth()).coordinator, { runs: closed?.runs ?? 0 }, 'closed: no step runs after');
  await s.close();
});
