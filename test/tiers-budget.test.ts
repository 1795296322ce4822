// The optimised tier's budget and priority (docs/architecture.md, Tiers; optimiser.ts): the
// compile thread runs at a low priority, its budget counts the CPU that thread ran (a thread
// waiting for a core is not charged), with a cap of WALL_FACTOR budgets in wall time; and a tier
// swap takes the running scene as it is, not checked again.

import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CompileWorker } from '../src/main/compiler.js';
import { OPTIMISE_NICE } from '../src/main/optimiser.js';
import { WALL_FACTOR, watchBudget } from '../src/main/optimise-budget.js';
import { kernelThreadId, threadCpuMs, threadNice } from '../src/main/thread-cpu.js';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const linux = kernelThreadId() !== undefined;
// watchBudget's timer does not hold a process open (a session's server does): this one does, meanwhile.
const alive = setInterval(() => undefined, 1000);
t.teardown(() => clearInterval(alive));

t.test('watchBudget: past the budget in CPU, or in wall time only at WALL_FACTOR times it', async (t) => {
  // CPU running as fast as the wall clock: stopped for CPU, near the budget.
  const t0 = performance.now();
  const busy = await watchBudget(30, () => performance.now() - t0).past;
  t.equal(busy.why, 'cpu', 'a compile that runs: stopped for its CPU');
  t.ok(busy.cpu_ms! > 30, `after the budget of CPU (${busy.cpu_ms!.toFixed(1)} ms), not the wall cap`);
  // No CPU at all (a starved thread): not stopped at the budget, only at the cap.
  const starved = watchBudget(30, () => 5);
  const early = await Promise.race([starved.past, new Promise((r) => setTimeout(() => r('running'), 3 * 30))]);
  t.equal(early, 'running', 'a starved compile still runs at 3 times its budget in wall time');
  const capped = await starved.past;
  t.equal(capped.why, 'wall');
  t.equal(capped.cpu_ms, 0, 'it ran no CPU');
  t.ok(capped.wall_ms >= 30 * WALL_FACTOR, `stopped at the wall cap (${capped.wall_ms.toFixed(0)} ms)`);
  // CPU time unknown (no /proc): the budget is wall time.
  const unknown = await Promise.race([watchBudget(30, () => undefined).past, new Promise<'cap'>((r) => setTimeout(() => r('cap'), 30 * WALL_FACTOR))]);
  t.not(unknown, 'cap', 'stopped before the wall cap');
  if (unknown !== 'cap') {
    t.same([unknown.why, unknown.cpu_ms], ['wall', undefined]);
    t.ok(unknown.wall_ms >= 30, `stopped past the budget in wall time (${unknown.wall_ms.toFixed(0)} ms)`);
  }
  // Stopped: never resolves after.
  const stopped = watchBudget(1, () => 0);
  stopped.stop();
  t.equal(await Promise.race([stopped.past.then(() => 'past'), new Promise((r) => setTimeout(() => r('quiet'), 50))]), 'quiet', 'stop() ends the watch');
});

t.test('the compile thread: its priority as asked, its own CPU time readable', { skip: !linux && 'no /proc: threads keep their priority' }, async (t) => {
  const niced = new CompileWorker({ nice: OPTIMISE_NICE });
  const plain = new CompileWorker();
  t.teardown(() => Promise.all([niced.close(), plain.close()]));
  const [a, b] = [await niced.thread(), await plain.thread()];
  t.ok(a && b && a !== b && a !== kernelThreadId(), 'each worker names its own thread');
  t.equal(threadNice(a!), OPTIMISE_NICE, `the optimiser's at nice ${OPTIMISE_NICE}`);
  t.equal(threadNice(b!), threadNice(kernelThreadId()!), 'the edit\'s compile worker at the process\'s priority');
  t.equal(threadNice(kernelThreadId()!), 0, 'and this thread untouched');
  t.ok(threadCpuMs(a!)! > 0, 'the worker thread ran (binaryen loaded)');
});

/** The literal of the rings example's kernel that rings(tag) changes. */
const LITERAL = '0.8 * v';

/** A copy of the rings example with a constant of its kernel changed by `tag` (modules are cached per process by their IR). */
function rings(tag: string): string {
  const dir = scratchDir('entelechy-tiers-budget-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['scene.esn', 'kernels.esn']) {
    const text = readFileSync(join(ROOT, 'examples', 'rings', f), 'utf8');
    if (f === 'kernels.esn' && !text.includes(LITERAL)) throw new Error(`examples/rings/kernels.esn has no \`${LITERAL}\``);
    writeFileSync(join(dir, f), f === 'kernels.esn' ? text.replace(LITERAL, LITERAL.replace('0.8', `0.8${tag}`)) : text);
  }
  return join(dir, 'scene.esn');
}

/** A session whose optimised compiles each wait `stallMs` first without running (ENTELECHY_TEST_STALL_OPTIMISED_MS), until its optimiser is idle. */
async function stalled(path: string, budget: number, stallMs: number): Promise<Session> {
  process.env.ENTELECHY_TEST_STALL_OPTIMISED_MS = String(stallMs);
  try {
    const s = await Session.open(path, { workers: 1, cacheDir: null, optimiseBudget: budget });
    t.teardown(() => s.close());
    await s.optimiser!.idle();
    return s;
  } finally {
    delete process.env.ENTELECHY_TEST_STALL_OPTIMISED_MS;
  }
}

const tierEvents = (s: Session) => s.pending.filter((e) => e.kind === 'optimised' || e.kind === 'optimise_abandoned');

t.test('a compile that waits past its budget in wall time, using little CPU, is not abandoned', { skip: !linux && 'no /proc: the budget is wall time' }, async (t) => {
  // 2 s waited, then the compile (tens of ms of CPU): a wall-time budget of 1.5 s would abandon it.
  const started = performance.now();
  const s = await stalled(rings('01'), 1500, 2000);
  t.ok(performance.now() - started > 2000, 'it waited');
  t.same(tierEvents(s).map((e) => e.kind), ['optimised'], 'swapped in, nothing abandoned');
  t.ok(s.engine.groupTiers().every((g) => g.tier === 'optimised'), 'the world runs the optimised tier');
});

t.test('a compile starved past WALL_FACTOR budgets is abandoned all the same', async (t) => {
  // 100 ms of CPU allowed, 1 s of wall time at most: a compile that waits 3 s is ended at 1 s.
  const s = await stalled(rings('02'), 100, 3000);
  const told = tierEvents(s);
  t.same(told.map((e) => [e.kind, e.budget_ms]), [['optimise_abandoned', 100]], 'abandoned, told with its budget');
  t.match(String(told[0].message), linux ? /ran \d+ ms with \d+ ms of CPU without finishing .* abandoned; the fast tier keeps running/ : /ran \d+ ms without finishing/);
  t.ok(s.engine.groupTiers().every((g) => g.tier === 'fast'), 'the fast tier keeps running');
});

t.test('a compile past its budget of CPU is abandoned, told so', async (t) => {
  // binaryen's -O3 of any kernel takes more than 2 ms of CPU; the wall cap (20 ms) would not come first on a quiet machine,
  // and on a busy one the message says which.
  const s = await Session.open(rings('03'), { workers: 1, cacheDir: null, optimiseBudget: 2 });
  t.teardown(() => s.close());
  await s.optimiser!.idle();
  const told = tierEvents(s);
  t.same(told.map((e) => [e.kind, e.budget_ms]), [['optimise_abandoned', 2]]);
  t.match(String(told[0].message), linux ? /took more than 2 ms of CPU and was abandoned|ran \d+ ms with \d+ ms of CPU without finishing/ : /ran \d+ ms without finishing/);
});

t.test('a tier swap runs the running scene: not checked again, the same groups', async (t) => {
  const s = await Session.open(rings('04'), { workers: 1, cacheDir: null, optimiseBudget: 600_000 });
  t.teardown(() => s.close());
  await s.optimiser!.idle(); // the scene's first swap (after opening)
  const text = readFileSync(join(s.folder.root, 'kernels.esn'), 'utf8');
  await dispatch(s, JSON.stringify({ op: 'compose', path: 'kernels.esn', text: text.replace('0.804', '0.805') }));
  const before = { scene: s.scene, groups: s.engine.groups, revision: s.revision };
  let checks = 0;
  const check = s.check.bind(s);
  s.check = (...args) => (checks++, check(...args));
  await dispatch(s, JSON.stringify({ op: 'evaluate', time: 0.5 }));
  await s.optimiser!.idle();
  t.ok(s.engine.groupTiers().every((g) => g.tier === 'optimised'), 'swapped');
  t.equal(checks, 0, 'the swap checked nothing');
  t.equal(s.scene, before.scene, 'the same scene');
  t.same(s.engine.groups, before.groups, 'its groups');
  t.equal(s.revision, before.revision, 'the same revision');
});
