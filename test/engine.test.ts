// The engine on the worker pool: bit-identical results whatever the workers and band size, state
// that commits only when a whole frame succeeds, unchanged frames not recomputed, large fields
// announced, the memory limit refused clearly, and a dead worker replaced.

import t from 'tap';
import { Engine } from '../src/main/engine.js';
import { EvaluationError, groupFailure } from '../src/main/evaluation-error.js';
import type { Group } from '../src/ir/fuse.js';
import { readField } from '../src/main/field.js';
import { FieldMemory } from '../src/main/memory.js';
import { bandRowsFor, EvalPool } from '../src/workers/pool.js';
import { EXAMPLES, exampleScene, firstDifference, run, textScene } from './helpers.js';

const pools = new Map<string, { memory: FieldMemory; pool: EvalPool }>();
function poolOf(workers: number) {
  const key = String(workers);
  let p = pools.get(key);
  if (!p) {
    const memory = new FieldMemory();
    p = { memory, pool: new EvalPool(memory.memory, { workers }) };
    pools.set(key, p);
  }
  return p;
}
t.teardown(async () => {
  for (const { pool } of pools.values()) await pool.destroy();
});

t.test('results are bit-identical whatever the number of workers and the band size', async (t) => {
  for (const name of EXAMPLES) {
    const scene = exampleScene(name, [67, 45]);
    const frames = name === 'life' ? 3 : 1;
    const direct = await run(scene, { backend: 'jit' }, frames);
    // Without a pool, a large domain runs in bands on the calling thread.
    for (const bandRows of [1, 5]) {
      const banded = await run(scene, { backend: 'jit', bandRows, poolThreshold: 0 }, frames);
      t.equal(firstDifference(direct, banded), undefined, `${name}: no pool, bands of ${bandRows} rows`);
    }
    for (const workers of [1, 2, 3]) {
      for (const bandRows of [1, 5, 64]) {
        const { memory, pool } = poolOf(workers);
        const pooled = await run(scene, { backend: 'jit', memory, pool, bandRows, poolThreshold: 0 }, frames);
        t.equal(firstDifference(direct, pooled), undefined, `${name}: ${workers} workers, bands of ${bandRows} rows`);
      }
    }
  }
});

t.test('without a pool, a large frame runs on the calling thread in bands', async (t) => {
  // (V8 moves a module to its optimised code only at a call: one call per frame would keep a
  // single large frame in baseline code.)
  const engine = new Engine(exampleScene('rings', [67, 45]), { poolThreshold: 0, bandRows: 5 });
  const report = await engine.evaluate({ time: 0 });
  const placed = new Set(report.placements.map((p) => `${p.tiles} tiles, ${p.workers} worker`));
  t.same([...placed], ['9 tiles, 1 worker'], '45 rows in 9 bands of 5');
  engine.dispose();
});

t.test('on the pool, a frame under 1024 rows runs in 32 bands of 8 rows or more; a taller one in bands of 32', async (t) => {
  // (A short frame's costly bands would otherwise leave one thread working alone at its end.)
  t.equal(bandRowsFor(45), 8, 'no fewer than 8 rows');
  t.equal(bandRowsFor(256), 8);
  t.equal(bandRowsFor(512), 16);
  t.equal(bandRowsFor(4096), 32, 'no more than 32 rows');
  const { memory, pool } = poolOf(2);
  for (const [rows, tiles] of [[256, 32], [45, 6], [2048, 64]]) {
    const engine = new Engine(exampleScene('rings', [16, rows]), { memory, pool, poolThreshold: 0 });
    const report = await engine.evaluate({ time: 0 });
    t.same([...new Set(report.placements.map((p) => p.tiles))], [tiles], `${rows} rows in ${tiles} bands`);
    engine.dispose();
  }
  // Named, the session's band rows win (bisect's replays take them).
  const engine = new Engine(exampleScene('rings', [16, 256]), { memory, pool, poolThreshold: 0, bandRows: 32 });
  t.same([...new Set((await engine.evaluate({ time: 0 })).placements.map((p) => p.tiles))], [8], 'bandRows: 32 gives 8 bands');
  engine.dispose();
});

const SPIN = `param spin: f32 = 0.0;
kernel t.count@1 {
  grants field.write;
  state n: field2<f32> = 0.0;
  in spin: f32 = 0.0;
  out r: field2<f32>;
  each (x, y) {
    let k = 0;
    while (spin > 0.5) { k++; }
    n = n + 1.0;
    r = n + k;
  }
}
node counter: t.count@1 { size = 64 x 32; spin = spin; }
output r <- counter.r;
`;

t.test('a failed frame leaves state and frame as they were; the next frame works', async (t) => {
  for (const backend of ['jit', 'interp'] as const) {
    for (const pooled of backend === 'jit' ? [false, true] : [false]) {
      const scene = textScene({ 'scene.esn': SPIN });
      const { memory, pool } = poolOf(2);
      const engine = new Engine(scene, pooled ? { backend, memory, pool, poolThreshold: 0 } : { backend });
      await engine.evaluate();
      await engine.evaluate();
      t.equal(engine.frame, 2);
      engine.params.set('spin', [1]);
      const err = await engine.evaluate().catch((e) => e);
      t.ok(err instanceof EvaluationError, `${backend}${pooled ? ' on the pool' : ''}: the frame fails`);
      t.equal(err.node, 'counter', 'the error names the node');
      t.match(err.message, /node `counter` ran out of fuel/);
      t.equal(engine.frame, 2, 'the frame counter did not advance');
      engine.params.set('spin', [0]);
      await engine.evaluate();
      t.equal(engine.frame, 3);
      const [r] = readField(engine.memory, engine.outputField('r')!);
      t.equal(r[0], 3, 'the state counted three good frames, not the failed one');
      t.equal(r[r.length - 1], 3);
      engine.dispose();
    }
  }
});

t.test('an unchanged frame is not recomputed; a changed param or time is', async (t) => {
  const engine = new Engine(exampleScene('rings'));
  const a = await engine.evaluate({ time: 0.5 });
  t.same(a.executed, ['rings', 'tint']);
  t.equal(a.cached, false);
  t.same(a.placements.map((p) => [p.node, p.backend, p.group]), [['rings', 'jit', 0], ['tint', 'jit', 0]], 'rings fused into tint: one group');
  t.equal(a.timings.length, 1);
  const b = await engine.evaluate({ time: 0.5 });
  t.equal(b.cached, true);
  t.same(b.executed, []);
  engine.params.set('warmth', [0.9]);
  t.equal((await engine.evaluate({ time: 0.5 })).cached, false, 'a param change recomputes');
  t.equal((await engine.evaluate({ time: 0.75 })).cached, false, 'a time change recomputes');
  engine.dispose();
});

t.test('large fields raise an event; past the memory limit the request is refused clearly', async (t) => {
  const big = new Engine(exampleScene('rings', [1024, 1024]), { largeBytes: 8 << 20 });
  t.equal(big.events.length, 1);
  t.equal(big.events[0].kind, 'large');
  t.match(big.events[0].message, /1024 x 1024 \(16 MiB\)/);
  big.dispose();

  const memory = new FieldMemory(32 << 20);
  t.throws(() => new Engine(exampleScene('blur', [2048, 2048]), { memory }), { name: 'MemoryLimitError', message: /more than the memory budget of 32\.0 MiB.*alone needs/ });
  t.equal(memory.allocations, 0, 'nothing stays allocated after the refusal');
  const small = new Engine(exampleScene('blur', [64, 64]), { memory });
  t.ok((await small.evaluate()).executed.length, 'the same memory still serves a scene that fits: its frame runs');
  small.dispose();
});

t.test('8192 x 8192 renders of the examples work', { skip: process.env.ENTELECHY_QUICK ? 'quick run' : false }, async (t) => {
  const { memory, pool } = poolOf(2);
  for (const name of ['rings', 'mandelbrot']) {
    const engine = new Engine(exampleScene(name, [8192, 8192]), { memory, pool });
    const report = await engine.evaluate();
    const f = engine.outputField(engine.scene.outputs[0].name)!;
    t.same([f.width, f.height], [8192, 8192], `${name} at 8192 x 8192 in ${report.timings.map((x) => x.millis).join('+')} ms`);
    t.ok(report.placements[0].tiles > 100, 'computed in many bands');
    engine.dispose();
  }
});

/** Rows near the bottom spin long while `slow` is set (bounded by fuel), so a frame is surely still running once its first row is written. */
const SLOW_ROWS = `param slow: f32 = 0.0;
kernel t.slow@1 {
  in slow: f32 = 0.0;
  out r: field2<f32>;
  each (x, y) {
    let k = 0;
    const n = slow > 0.5 && y >= height - 2 ? 12000000 : 0;
    for (let i = 0; i < n; i++) { k++; }
    r = 1.0 + f32(k) * 0.0;
  }
}
node rows: t.slow@1 { size = 16 x 64; slow = slow; }
output r <- rows.r;
`;

t.test('a worker that dies mid-frame fails the frame, commits nothing, and is replaced; the next frame works', async (t) => {
  const memory = new FieldMemory();
  const pool = new EvalPool(memory.memory, { workers: 2 });
  t.teardown(() => pool.destroy());
  const engine = new Engine(textScene({ 'scene.esn': SLOW_ROWS }), { memory, pool, poolThreshold: 0, bandRows: 1 });
  t.teardown(() => engine.dispose());
  const internals = pool as unknown as { loaded: Int32Array; piscina: { threads: { threadId: number; terminate(): Promise<number> }[] } };
  await engine.evaluate({ time: 0 });
  // Both workers have loaded (ending one mid-load can crash Node 20; src/workers/loaded.ts).
  while (Atomics.load(internals.loaded, 0) < 2) await new Promise((r) => setImmediate(r));
  const out = engine.outputField('r')!;
  const firstRow = out.ptr / 4;
  engine.params.set('slow', [1]);
  // Once the first row is written the frame runs; its last rows spin millions of times longer.
  // End a thread that is computing a band of it (the other may not have woken yet). On a busy
  // machine this thread may not look again before the frame is over (the CI of 9bcee14 waited
  // for ever): then another frame is run.
  let frame: Promise<unknown> | undefined;
  let before = engine.frame;
  for (let attempt = 0; !frame && attempt < 10; attempt++) {
    memory.f32.fill(0, firstRow, firstRow + out.stride * out.height);
    before = engine.frame;
    const running = engine.evaluate({ time: 1 + attempt });
    let settled = false;
    void running.then(() => (settled = true), () => (settled = true));
    while (!settled && (memory.f32[firstRow] !== 1 || pool.computing.length === 0)) await new Promise((r) => setImmediate(r));
    if (settled) await running;
    else frame = running;
  }
  if (!frame) return t.fail('10 frames were over before this thread saw a thread computing a band of them');
  const [inFrame] = pool.computing;
  await internals.piscina.threads.find((w) => w.threadId === inFrame)!.terminate();
  const err = await frame.then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof EvaluationError, `the frame fails with an evaluation error (${err})`);
  t.equal(engine.frame, before, 'the frame counter did not advance');
  engine.params.set('slow', [0]);
  const next = await engine.evaluate({ time: 20 });
  t.equal(next.frame, before + 1, 'the next frame runs');
  t.equal(internals.piscina.threads.length, 2, 'the pool has two threads again: the dead one was replaced');
  const [plane] = readField(memory, out);
  t.ok(plane.every((v) => v === 1), 'and is complete');
});

t.test('a failure that already names its node is told once (it read "node `n` failed: node `n` ran out of fuel")', async (t) => {
  const g = { nodes: [{ name: 'n' }] } as unknown as Group;
  const once = groupFailure(g, undefined, new Error('node `n` ran out of fuel: a loop ran more than 5 times at one element'));
  t.same([once.message, (once as EvaluationError).node], ['node `n` ran out of fuel: a loop ran more than 5 times at one element', 'n']);
  t.equal(groupFailure(g, undefined, new Error('out of memory')).message, 'node `n` failed: out of memory', 'another failure is named');
});
