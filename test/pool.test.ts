// The evaluation pool: bit-identical results whatever the worker count and band size, fuel traps
// reported once with the node index, recovery after a trap, no leak over many small runs, memory
// growth seen by the workers, and its band loops (band-loop.ts): leaving and coming back between
// runs, making room for a call, modules forgotten and sent again, more runs at once than slots.

import t, { type Test } from 'tap';
import binaryen from 'binaryen';
import { EvalPool, PoolTrap } from '../src/workers/pool.js';
import { FieldMemory } from '../src/main/memory.js';
import { ARGS } from '../src/ir/ir.js';
import { allocField } from '../src/main/field.js';
import type { DeflatedStrip } from '../src/main/png.js';

/** Where the test module reads the row to trap at (a reserved word of the ARGS block). */
const TRAP_ROW = 16;
const TRAP_NODE = 5;

/** Words of the ARGS block's header no module reads: the counting module's run number and count of instances that ran. */
const EPOCH = 24;
const COUNT = 28;
const SLOW_ROW = 200_000;

/**
 * run(args, r0, r1): for r in [r0, r1), x in [0, width): f32[base + 4 (r * width + x)] =
 * r * 1000 + x, with base and width the ARGS block's field 0 base and width. With `trap`, row
 * `i32[args + 16]` writes TRAP_NODE into the trap word and executes `unreachable`. With `count`,
 * an instance's first call in a run (a new `i32[args + EPOCH]`) adds 1 to `i32[args + COUNT]`:
 * every thread has its own instance, so that is how many threads computed bands of the run; and
 * each row first counts to SLOW_ROW (~0.1 ms), so that a run lasts a few of the OS's time slices.
 */
function buildModule(trap: boolean, count = false): WebAssembly.Module {
  const m = new binaryen.Module();
  m.setFeatures(binaryen.Features.Atomics | binaryen.Features.BulkMemory | binaryen.Features.MutableGlobals);
  m.setMemory(1, 65536, null, [], true, false, 'mem');
  m.addMemoryImport('mem', 'env', 'memory', true);
  const i32 = binaryen.i32;
  const [ARG, R1, R, X, BASE, W] = [0, 2, 3, 4, 5, 6];
  const get = (i: number) => m.local.get(i, i32);
  const c = (v: number) => m.i32.const(v);
  const rowBody: binaryen.ExpressionRef[] = [];
  const prologue: binaryen.ExpressionRef[] = [];
  if (count) {
    m.addGlobal('epoch', i32, true, c(0));
    const epoch = m.i32.load(EPOCH, 4, get(ARG), 'mem');
    prologue.push(
      m.if(
        m.i32.ne(m.global.get('epoch', i32), epoch),
        m.block(null, [m.global.set('epoch', epoch), m.drop(m.i32.atomic.rmw.add(COUNT, get(ARG), c(1), 'mem'))]),
      ),
    );
    rowBody.push(
      m.local.set(X, c(0)),
      m.loop('slow', m.block(null, [m.local.set(X, m.i32.add(get(X), c(1))), m.br('slow', m.i32.lt_s(get(X), c(SLOW_ROW)))])),
    );
  }
  if (trap)
    rowBody.push(
      m.if(
        m.i32.eq(get(R), m.i32.load(TRAP_ROW, 4, get(ARG), 'mem')),
        m.block(null, [m.i32.store(ARGS.trap, 4, get(ARG), c(TRAP_NODE), 'mem'), m.unreachable()]),
      ),
    );
  rowBody.push(
    m.local.set(X, c(0)),
    m.block('xdone', [
      m.loop(
        'xl',
        m.block(null, [
          m.br('xdone', m.i32.ge_s(get(X), get(W))),
          m.f32.store(
            0,
            4,
            m.i32.add(get(BASE), m.i32.shl(m.i32.add(m.i32.mul(get(R), get(W)), get(X)), c(2))),
            m.f32.convert_s.i32(m.i32.add(m.i32.mul(get(R), c(1000)), get(X))),
            'mem',
          ),
          m.local.set(X, m.i32.add(get(X), c(1))),
          m.br('xl'),
        ]),
      ),
    ]),
    m.local.set(R, m.i32.add(get(R), c(1))),
    m.br('rl'),
  );
  m.addFunction(
    'run',
    binaryen.createType([i32, i32, i32]),
    binaryen.none,
    [i32, i32, i32, i32],
    m.block(null, [
      ...prologue,
      m.local.set(BASE, m.i32.load(ARGS.field(0), 4, get(ARG), 'mem')),
      m.local.set(W, m.i32.load(ARGS.field(0) + 4, 4, get(ARG), 'mem')),
      m.local.set(R, get(1)),
      m.block('rdone', [m.loop('rl', m.block(null, [m.br('rdone', m.i32.ge_s(get(R), get(R1))), ...rowBody]))]),
    ]),
  );
  m.addFunctionExport('run', 'run');
  if (!m.validate()) throw new Error('test module does not validate');
  const bytes = m.emitBinary();
  m.dispose();
  return new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
}

const plain = buildModule(false);
const trapping = buildModule(true);
const counting = buildModule(false, true);

function setup(mem: FieldMemory, width: number, rows: number, trapRow = -1) {
  const args = mem.alloc(ARGS.size(1, 0));
  const base = mem.alloc(width * rows * 4);
  const i32 = mem.i32;
  i32[(args + ARGS.trap) >>> 2] = -1;
  i32[(args + TRAP_ROW) >>> 2] = trapRow;
  i32[(args + ARGS.field(0)) >>> 2] = base;
  i32[(args + ARGS.field(0) + 4) >>> 2] = width;
  mem.f32.fill(NaN, base >>> 2, (base >>> 2) + width * rows);
  return { args, base };
}

function check(t: Test, mem: FieldMemory, base: number, width: number, rows: number, what: string) {
  const f = mem.f32;
  let bad = 0;
  for (let r = 0; r < rows; r++)
    for (let x = 0; x < width; x++) if (f[(base >>> 2) + r * width + x] !== r * 1000 + x) bad++;
  t.equal(bad, 0, `${what}: every element written as expected`);
}

t.test('bit-identical with 1, 2, 3 workers and bands of 1, 7, 64 rows', async (t) => {
  const width = 37;
  const rows = 301;
  for (const workers of [1, 2, 3]) {
    const mem = new FieldMemory();
    const pool = new EvalPool(mem.memory, { workers });
    t.equal(pool.workers, workers);
    try {
      for (const band of [1, 7, 64]) {
        const { args, base } = setup(mem, width, rows);
        const r = await pool.run(plain, 'plain', args, rows, band);
        t.same(r, { tasks: Math.min(workers, Math.ceil(rows / band)), bands: Math.ceil(rows / band) });
        check(t, mem, base, width, rows, `${workers} workers, bands of ${band}`);
      }
    } finally {
      await pool.destroy();
    }
  }
});

t.test('the calling thread taking part: every row once, never more threads computing than workers, traps reported', async (t) => {
  const width = 37;
  const rows = 301;
  for (const workers of [1, 2, 3]) {
    const mem = new FieldMemory();
    // With 1 worker, lazy: no thread should start. Else the loops are up first (a run without the
    // calling thread waits for them), and every loop spins between runs (20 ms): all are awake for the next.
    const pool = new EvalPool(mem.memory, { workers, lazy: workers === 1, spinners: workers, spinMicros: 20_000 });
    if (workers > 1) await pool.run(plain, 'plain', setup(mem, 8, 8).args, 8, 1);
    const instance = new WebAssembly.Instance(counting, { env: { memory: mem.memory } });
    const run = instance.exports.run as (args: number, r0: number, r1: number) => void;
    let mine = 0;
    const here = (args: number, r0: number, r1: number) => {
      mine += r1 - r0;
      run(args, r0, r1);
    };
    try {
      let most = 0;
      let over = 0;
      for (let i = 1; i <= 20; i++) {
        const band = [1, 7, 64][i % 3];
        const { args, base } = setup(mem, width, rows);
        mem.i32[(args + EPOCH) >>> 2] = i;
        mem.i32[(args + COUNT) >>> 2] = 0;
        mine = 0;
        const r = await pool.run(counting, 'counting', args, rows, band, undefined, 0, here);
        t.same(r, { tasks: Math.min(workers, Math.ceil(rows / band)), bands: Math.ceil(rows / band) });
        if (i <= 3) check(t, mem, base, width, rows, `${workers} workers with the calling thread, bands of ${band}`);
        const threads = mem.i32[(args + COUNT) >>> 2];
        if (threads > workers) over++;
        most = Math.max(most, threads);
        if (workers === 1) t.equal(mine, rows, 'with 1 worker the calling thread computes every row');
      }
      t.equal(over, 0, `${workers} workers: no run computed on more than ${workers} threads (at most ${most})`);
      if (workers === 1) t.equal(pool.threads, 0, 'and no thread was started');
      else t.ok(most >= 2, `${workers} workers: the loops took part too (up to ${most} threads)`);

      // A trap in a band, wherever it runs, rejects with the node index; the next run succeeds.
      const { args, base } = setup(mem, width, rows);
      const trapRun = new WebAssembly.Instance(trapping, { env: { memory: mem.memory } }).exports.run as (args: number, r0: number, r1: number) => void;
      mem.i32[(args + TRAP_ROW) >>> 2] = 150;
      const err = await pool.run(trapping, 'trapping', args, rows, 7, undefined, 0, trapRun).catch((e: unknown) => e);
      t.ok(err instanceof PoolTrap && err.trap === TRAP_NODE, `${workers} workers: the trap names the node`);
      mem.i32[(args + TRAP_ROW) >>> 2] = -1;
      mem.i32[(args + ARGS.trap) >>> 2] = -1;
      await pool.run(trapping, 'trapping', args, rows, 7, undefined, 0, trapRun);
      check(t, mem, base, width, rows, `${workers} workers: the run after the trap`);
    } finally {
      await pool.destroy();
    }
  }
});

t.test('an idle pool burns no CPU: its loops sleep after a run', async (t) => {
  const mem = new FieldMemory();
  // idleMillis long, so the loops stay seated (asleep, not gone) through every window measured.
  const pool = new EvalPool(mem.memory, { workers: 2, idleMillis: 60_000 });
  try {
    const { args } = setup(mem, 64, 64);
    for (let i = 0; i < 100; i++) await pool.run(plain, 'plain', args, 64, 4);
    await new Promise((r) => setTimeout(r, 50)); // past the loops' spin
    // A loop spinning would use a whole core in every window; V8's own background work (a tier-up
    // compile, a GC) can land in one window, so the quietest of three windows is what is judged. A
    // spinning loop measured 302 ms of 300 here (spinMicros 30 s); a sleeping pool 0.3-7 ms.
    const windows: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = process.cpuUsage();
      await new Promise((r) => setTimeout(r, 300));
      const used = process.cpuUsage(before);
      windows.push((used.user + used.system) / 1000);
    }
    const quietest = Math.min(...windows);
    t.ok(quietest < 100, `CPU of the whole process in the quietest of three 300 ms idle windows: ${quietest.toFixed(1)} ms (${windows.map((w) => w.toFixed(1)).join(', ')})`);
  } finally {
    await pool.destroy();
  }
});

t.test('a trap rejects once with the node index; the next run succeeds', async (t) => {
  const mem = new FieldMemory();
  const pool = new EvalPool(mem.memory, { workers: 2 });
  try {
    const width = 16;
    const rows = 200;
    for (const band of [1, 8, 64]) {
      const { args } = setup(mem, width, rows, 123);
      const err = await pool.run(trapping, 'trapping', args, rows, band).then(
        () => undefined,
        (e: unknown) => e,
      );
      t.ok(err instanceof PoolTrap, `bands of ${band}: rejects with PoolTrap`);
      t.equal((err as PoolTrap).trap, TRAP_NODE);
      t.equal(pool.pending, 0, 'no task left behind');
      // The same module (cached instances) without a trap row, then another module.
      const ok = setup(mem, width, rows);
      await pool.run(trapping, 'trapping', ok.args, rows, band);
      check(t, mem, ok.base, width, rows, 'the trapping module after a trap');
      const ok2 = setup(mem, width, rows);
      await pool.run(plain, 'plain', ok2.args, rows, band);
      check(t, mem, ok2.base, width, rows, 'another module after a trap');
    }
    // A non-fuel WebAssembly error (out of bounds): a plain Error, trap word untouched.
    const oob = setup(mem, width, rows);
    mem.i32[(oob.args + ARGS.field(0)) >> 2] = mem.bytes - 64;
    await t.rejects(pool.run(plain, 'plain', oob.args, rows, 8), { name: 'Error' });
    t.equal(mem.i32[(oob.args + ARGS.trap) >> 2], -1);
    // A module that cannot be instantiated (a missing import): an Error, and the pool still works.
    const bad = new binaryen.Module();
    bad.addFunctionImport('f', 'env', 'missing', binaryen.none, binaryen.none);
    const badModule = new WebAssembly.Module(bad.emitBinary() as Uint8Array<ArrayBuffer>);
    bad.dispose();
    await t.rejects(pool.run(badModule, 'bad', oob.args, rows, 8), { name: 'Error' });
    const after = setup(mem, width, rows);
    await pool.run(plain, 'plain', after.args, rows, 8);
    check(t, mem, after.base, width, rows, 'after an instantiation error');
    t.equal(pool.pending, 0);
  } finally {
    await pool.destroy();
  }
});

t.test("a thread's failure outside any run (piscina's 'error' event) is logged, and the process and pool go on", async (t) => {
  const mem = new FieldMemory();
  const pool = new EvalPool(mem.memory, { workers: 2 });
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    // What piscina does for a message from a thread with no task: with no listener, emit throws.
    const piscina = (pool as unknown as { piscina: import('node:events').EventEmitter }).piscina;
    t.doesNotThrow(() => piscina.emit('error', new Error('Unexpected message from Worker')));
    process.stderr.write = write;
    t.match(written.join(''), /one of the evaluation threads failed outside a run \(it is replaced\): Unexpected message from Worker/);
    const ok = setup(mem, 16, 40);
    await pool.run(plain, 'plain', ok.args, 40, 8);
    check(t, mem, ok.base, 16, 40, 'a run after the error');
  } finally {
    process.stderr.write = write;
    await pool.destroy();
  }
});

t.test('concurrent runs use separate counters, more of them than the pool has slots', async (t) => {
  const mem = new FieldMemory();
  const pool = new EvalPool(mem.memory, { workers: 2 });
  try {
    const jobs = Array.from({ length: 40 }, () => setup(mem, 20, 97));
    await Promise.all(jobs.map((j) => pool.run(plain, 'plain', j.args, 97, 5)));
    jobs.forEach((j, i) => check(t, mem, j.base, 20, 97, `concurrent run ${i}`));
  } finally {
    await pool.destroy();
  }
});

t.test('workers see memory growth', async (t) => {
  const mem = new FieldMemory(undefined, 2);
  const pool = new EvalPool(mem.memory, { workers: 2 });
  try {
    const a = setup(mem, 8, 8);
    await pool.run(plain, 'plain', a.args, 8, 1);
    const before = mem.bytes;
    const width = 256;
    const rows = 600; // 600 KiB: past the first 2 pages, so the memory grows
    const b = setup(mem, width, rows);
    t.ok(mem.bytes > before, 'the memory grew');
    t.ok(b.base + width * rows * 4 > before, 'the field lies past the old end');
    await pool.run(plain, 'plain', b.args, rows, 16);
    check(t, mem, b.base, width, rows, 'after growth');
  } finally {
    await pool.destroy();
  }
});

t.test('1000 consecutive small runs do not leak', async (t) => {
  const mem = new FieldMemory();
  const pool = new EvalPool(mem.memory, { workers: 2 });
  try {
    const { args, base } = setup(mem, 4, 8);
    for (let i = 0; i < 1000; i++) await pool.run(plain, 'plain', args, 8, 2);
    t.equal(pool.pending, 0);
    check(t, mem, base, 4, 8, 'after 1000 runs');
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      await pool.run(plain, 'plain', args, 8, 2);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    t.comment(`tiny run, 2 workers: median ${times[100].toFixed(3)} ms, p90 ${times[180].toFixed(3)} ms`);
  } finally {
    await pool.destroy();
  }
});

t.test('loops that leave after every run come back for the next: 1000 runs, every row each time', async (t) => {
  // No spin and no idle time: each loop leaves as soon as it finds nothing, so every run races a
  // loop on its way out (band-loop.ts, leave; pool.ts, open).
  for (const workers of [1, 2, 3]) {
    const mem = new FieldMemory();
    const pool = new EvalPool(mem.memory, { workers, spinMicros: 0, idleMillis: 0 });
    try {
      const { args, base } = setup(mem, 8, 24);
      let wrong = 0;
      for (let i = 0; i < 1000; i++) {
        mem.f32.fill(NaN, base >> 2, (base >> 2) + 8 * 24);
        await pool.run(plain, 'plain', args, 24, 1 + (i % 5));
        if (mem.f32[(base >> 2) + 23 * 8 + 7] !== 23007) wrong++;
      }
      t.equal(wrong, 0, `${workers} workers: every run complete`);
      check(t, mem, base, 8, 24, `${workers} workers, after 1000 runs`);
      t.equal(pool.pending, 0);
    } finally {
      await pool.destroy();
    }
  }
});

t.test('a call on the workers between and beside runs: the loops make room for it', async (t) => {
  const mem = new FieldMemory();
  // Loops that would sleep for ten minutes: the call is served because they step aside, not because they left.
  const pool = new EvalPool(mem.memory, { workers: 2, idleMillis: 600_000 });
  try {
    const field = allocField(mem, [16, 8], ['f32'], 'a test field');
    const strip = () => pool.call<DeflatedStrip[]>('pngStrips', { field, name: 'out', y0: 0, y1: 8 });
    const a = setup(mem, 30, 50);
    await pool.run(plain, 'plain', a.args, 50, 4);
    t.ok((await strip()).length > 0, 'a call after a run');
    const b = setup(mem, 30, 50);
    const [strips] = await Promise.all([strip(), pool.run(plain, 'plain', b.args, 50, 4), strip()]);
    t.ok(strips.length > 0, 'calls beside a run');
    check(t, mem, b.base, 30, 50, 'the run beside the calls');
    const c = setup(mem, 30, 50);
    await pool.run(plain, 'plain', c.args, 50, 4);
    check(t, mem, c.base, 30, 50, 'a run after the calls');
    t.equal(pool.pending, 0);
  } finally {
    await pool.destroy();
  }
});

t.test('past the modules the loops keep, the least recently run are dropped and sent again when run', async (t) => {
  const mem = new FieldMemory();
  const pool = new EvalPool(mem.memory, { workers: 2 });
  try {
    const { args, base } = setup(mem, 4, 16);
    // 300 digests (the same code): past the pool's 256, the first ones are dropped by the loops.
    for (let i = 0; i < 300; i++) await pool.run(plain, `plain-${i}`, args, 16, 1);
    mem.f32.fill(NaN, base >> 2, (base >> 2) + 4 * 16);
    await pool.run(plain, 'plain-0', args, 16, 1);
    check(t, mem, base, 4, 16, 'a dropped module run again');
    const other = setup(mem, 4, 16, 3);
    const err = await pool.run(trapping, 'plain-1', other.args, 16, 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof PoolTrap, 'a digest dropped and sent again runs the module it is sent with');
  } finally {
    await pool.destroy();
  }
});

t.test('an argument block and a field past 2 GiB (addresses that do not fit a signed 32-bit integer)', async (t) => {
  const mem = new FieldMemory();
  mem.alloc(2 ** 31, 'the 2 GiB before'); // never touched: its pages cost nothing
  const pool = new EvalPool(mem.memory, { workers: 2 });
  try {
    const { args, base } = setup(mem, 24, 40);
    t.ok(args >= 2 ** 31 && base >= 2 ** 31, 'both past 2 GiB');
    await pool.run(plain, 'plain', args, 40, 3);
    check(t, mem, base, 24, 40, 'past 2 GiB');
    const trap = setup(mem, 24, 40, 17);
    await t.rejects(pool.run(trapping, 'trapping', trap.args, 40, 3), { name: 'PoolTrap', trap: TRAP_NODE }, 'a trap there names its node');
  } finally {
    await pool.destroy();
  }
});
