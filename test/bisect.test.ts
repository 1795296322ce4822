// Bisect (protocol/bisect.ts), in process: over a history built by real composes and a save, with
// the bug planted at a known version, it answers exactly that version, the diff from the one
// before, the failed step, and runs about log2 N replays; the running world, the folder and the
// history are as before; the answer does not depend on the worker count; every misnamed version
// and every replay that cannot tell is refused saying what to do.

import t, { type Test } from 'tap';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { versionOf } from '../src/main/documents.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { badKernel, buildGenerations, buildHistory, DEFAULT_TILES, FAILING_LINE, GENERATIONS, historyDir, replayText, SAVED, VERSIONS, versionText } from './bisect-fixtures.js';

type Ask = (req: Record<string, unknown>) => Promise<{ ok?: any; error?: any }>;

/** A session with the bug planted at `planted`, its frames run by `workers` in tiles of `bandRows` rows (64 rows: DEFAULT_TILES by default). */
async function session(t: Test, planted: number, workers = 1, bandRows?: number) {
  const dir = historyDir(t, planted, workers, bandRows === undefined ? DEFAULT_TILES : Math.ceil(64 / bandRows));
  const s = await Session.open(join(dir, 'scene.esn'), { workers, ...(bandRows === undefined ? {} : { bandRows }) });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  await buildHistory(ask, dir, planted);
  return { dir, s, ask };
}

/** Everything a bisect must leave as it was, as one string: the world, its history and the folder's files. */
async function fingerprint(ask: Ask, dir: string): Promise<string> {
  const status = (await ask({ op: 'status' })).ok;
  const kernels = (await ask({ op: 'kernels' })).ok.kernels.map((k: any) => [k.id, k.generation, k.origin]);
  const history = (await ask({ op: 'history' })).ok;
  const files = readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]);
  return JSON.stringify({ frame: status.frame, time: status.time, revision: status.revision, kernels, history, files });
}

// One history with the bug at version 3, for most of the tests below (each leaves it as it was).
let shared: Awaited<ReturnType<typeof session>>;
t.before(async () => {
  shared = await session(t, 3);
});

// Each planted position: the edges (1: the first after good; 6: the bad one itself) and between.
for (const planted of [1, 3, 6]) {
  t.test(`the bug planted at version ${planted}: bisect finds exactly it`, async (t) => {
    const { dir, ask } = planted === 3 ? shared : await session(t, planted);
    const h = (await ask({ op: 'history' })).ok;
    t.same(h.versions.map((v: any) => v.origin), ['load', 'compose', 'disk', 'compose', 'compose', 'compose', 'compose'], 'a history of composes and a save');
    t.ok((await ask({ op: 'evaluate' })).ok, 'the running world runs a frame');
    const before = await fingerprint(ask, dir);

    const a = await ask({ op: 'bisect', good: '0', bad: 'running', test: 'check.replay' });
    t.ok(a.ok, JSON.stringify(a.error));
    t.same([a.ok.first_bad.position, a.ok.first_bad.version, a.ok.first_bad.origin], [planted, versionOf(versionText(planted, planted)), planted === SAVED ? 'disk' : 'compose'], 'the first bad version');
    t.same([a.ok.last_good.position, a.ok.last_good.version], [planted - 1, versionOf(versionText(planted - 1, planted))], 'the last good one, just before');
    t.match(a.ok.diff, /^-    result = vec4\(0\.5, /m, 'the diff: the red as it was');
    t.match(a.ok.diff, /^\+    result = vec4\(0\.25, /m, 'and as it became');
    t.match(a.ok.diff, new RegExp(`^--- scene\\.esn@${a.ok.last_good.version}`, 'm'), 'a unified diff, from the last good version');
    t.same([a.ok.failure.line, a.ok.failure.column > 0, JSON.parse(a.ok.failure.request).op], [FAILING_LINE, true, 'trace'], 'the failed step: its line in the replay and its request');
    t.match(a.ok.failure.message, /values\[0\]\.value\[0\]: expected 0\.5, got 0\.25/, 'and what differed');
    t.same([a.ok.failure.expected, a.ok.failure.actual], [0.5, 0.25]);
    t.ok(a.ok.candidates <= 2 + Math.ceil(Math.log2(VERSIONS - 1)), `log2 N replays: ${a.ok.candidates}`);
    t.same(a.ok.runs.slice(0, 2).map((r: any) => [r.position, r.passed]), [[6, false], [0, true]], 'the bad version first, then the good one');
    t.equal(a.ok.runs.length, a.ok.candidates);
    for (const r of a.ok.runs) t.equal(r.passed, r.position < planted, `position ${r.position} ${r.passed ? 'passed' : 'failed'}, as planted`);

    t.equal(await fingerprint(ask, dir), before, 'the world (frame, clock, revision, generations), the history and every file of the folder as before');
    // The background optimiser's own events (its tier swap) come when they come: none else.
    const told = (await ask({ op: 'sync' })).ok.events.filter((e: any) => !['optimised', 'optimise_abandoned'].includes(e.kind));
    t.same(told, [], 'nothing told to sync');
  });
}

// Tiles here are the session's: a frame's rows run in tiles of `bandRows` rows, claimed by the
// workers (placements' `tiles`). Sessions do not run rectangular tiles (render --tile's).
t.test('the answer does not depend on the worker count or the tiling', async (t) => {
  const answers = [];
  const configs: [number, number | undefined][] = [[1, undefined], [2, undefined], [1, 8], [2, 16], [2, 5]];
  for (const [workers, bandRows] of configs) {
    const { ask } = workers === 1 && bandRows === undefined ? shared : await session(t, 3, workers, bandRows);
    // The replay checks the frame ran on `workers` workers in 64 / bandRows tiles: the versions tried run with the session's.
    const a = await ask({ op: 'bisect', good: '0', bad: '6', test: 'check.replay' });
    t.ok(a.ok, `${workers} worker(s), tiles of ${bandRows ?? 64 / DEFAULT_TILES} rows: ${JSON.stringify(a.error)}`);
    if (!a.ok) continue;
    const { first_bad, last_good, ...rest } = a.ok;
    answers.push({ ...rest, first_bad: { ...first_bad, at: 0 }, last_good: { ...last_good, at: 0 } });
  }
  t.equal(answers[0].first_bad.position, 3);
  t.equal(answers.length, configs.length);
  for (let i = 1; i < answers.length; i++)
    t.same(answers[i], answers[0], `${configs[i]![0]} worker(s), tiles of ${configs[i]![1] ?? 64 / DEFAULT_TILES} rows: the same answer as 1 worker and the default tiles (but the times each history was made)`);
});

t.test('what good and bad name, and the mistakes', async (t) => {
  const { dir, s, ask } = shared;
  const list = (await ask({ op: 'history' })).ok.versions;
  const bisect = (good: unknown, bad: unknown, more: Record<string, unknown> = {}) => ask({ op: 'bisect', good: String(good), bad: String(bad), test: 'check.replay', ...more });
  const found = async (good: unknown, bad: unknown) => (await bisect(good, bad)).ok?.first_bad.position;
  t.equal(await found(list[1].version, list[5].version), 3, 'whole digests');
  t.equal(await found(list[0].version.slice(0, 4), 'running'), 3, 'a digest\'s first 4 characters');
  t.equal(await found('2', 'disk'), 3, 'positions as text, and disk');

  const before = await fingerprint(ask, dir);
  const refused = async (good: unknown, bad: unknown, re: RegExp, field: string, more: Record<string, unknown> = {}) => {
    const e = (await bisect(good, bad, more)).error;
    t.match(e?.message, re, e?.message);
    t.equal(e?.field, field);
    return e;
  };
  await refused(3, 6, /good version \(position 3, [0-9a-f]{16}\) fails `check\.replay` too, at line 5: .*name an earlier version that passes as `good`/, 'good');
  // The first point fails too: there is no earlier one to name (it said to name one).
  const first = await refused(0, 6, /good version \(position 0, [0-9a-f]{16}\) fails the replay too, at line 2: .*\. It is the first point this session has seen, so no earlier one can pass/, 'good', { test: undefined, replay: '> {"op":"status"}\n< {"frame": 999}\n' });
  t.notMatch(first.message, /name an earlier version/);
  const late = await refused(0, 2, /bad version \(position 2, [0-9a-f]{16}\) passes `check\.replay`: there is no failure to find/, 'bad');
  t.equal(late.candidates, 1, 'refused after replaying the bad version only');
  await refused(5, 1, /good version \(position 5\) comes after the bad one \(position 1\)/, 'good');
  await refused(4, 4, /is the bad version itself/, 'good');
  await refused(0, 7, /position 7, but `history` lists 7 versions of `scene\.esn` \(positions 0 to 6\)/, 'bad');
  await refused('ffff', 6, /no version of `scene\.esn` in this session's history begins `ffff`/, 'good');
  await refused('HEAD', 6, /`HEAD` names no version; `good` is a position in `history`'s versions/, 'good');
  await refused('abc', 6, /names no version/, 'good');
  await refused(0, 6, /no file `none\.replay` under the scene's folder/, 'test', { test: 'none.replay' });
  await refused(0, 6, /give the replay to bisect with: `test`.*or `replay`/, undefined as never, { replay: 'x' });
  t.match((await ask({ op: 'bisect', good: '0', bad: '6' })).error?.fields, ['test', 'replay'], 'no replay: says which fields give one');
  await refused(0, 6, /^replay:2:1: a line starts with `>`/, 'replay', { test: undefined, replay: '> {"op":"status"}\nstatus' });
  await refused(0, 6, /replays `other\.esn` \(its @scene line\)/, 'replay', { test: undefined, replay: '@scene other.esn\n> {"op":"status"}' });
  await refused(0, 6, /has no requests/, 'replay', { test: undefined, replay: '# nothing\n' });
  await refused(0, 6, /this session has seen no document `lib\.esn`/, 'path', { path: 'lib.esn' });
  t.equal(await fingerprint(ask, dir), before, 'refusals change nothing either');

  // A rollback: the same text at two positions is replayed once.
  t.ok((await ask({ op: 'compose', text: versionText(1, 3) })).ok, 'a rollback to version 1');
  const again = await bisect(0, 'running');
  t.same([again.ok?.first_bad.position], [undefined], 'the running version (a rollback to a good one) passes');
  t.match(again.error?.message, /bad version \(position 7/);
  const back = (await bisect(0, 6)).ok;
  t.equal(back.first_bad.position, 3, 'the range before the rollback still bisects');

  // A kernel published over the protocol is not a document version: said, and the versions tried run the document's.
  const grey = versionText(0, 3).split('\nnode ')[0]!.replace('vec4(0.5,', 'vec4(0.75,');
  t.ok((await ask({ op: 'publish', source: grey })).ok, 'a kernel published over the protocol');
  const over = (await bisect(0, 6)).ok;
  t.same([over?.first_bad.position, over?.published?.map((p: any) => p.kernel)], [3, ['t.paint@1']], 'the same answer, and the published kernel named');
  t.match(over?.note, /published over the protocol/);
  t.ok((await ask({ op: 'retire', kernel: 't.paint@1' })).ok, 'retired: the document\'s kernel runs again');

  // A history of one version: too short, saying how to make one.
  writeFileSync(join(dir, 'scene.esn'), versionText(0, 3));
  const fresh = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => fresh.close());
  const one = JSON.parse(await dispatch(fresh, JSON.stringify({ op: 'bisect', good: '0', bad: 'running', test: 'check.replay' }))).error;
  t.match(one?.message, /`scene\.esn` has one version in this session's history: bisect needs a good version and a later bad one/);
  t.ok(s.history.get('scene.esn')!.length > 1);
});

t.test('generations published over the protocol are points of the history: bisect finds one that broke the replay', async (t) => {
  const dir = historyDir(t, GENERATIONS.planted);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  await buildGenerations(ask);
  const h = (await ask({ op: 'history' })).ok;
  t.same(h.versions.map((v: any) => v.origin), ['load', 'compose', 'compose', 'compose'], 'four document versions');
  t.same(h.generations?.map((g: any) => [g.name, g.origin, g.after]), GENERATIONS.names.map((n, i) => [n, GENERATIONS.origins[i], GENERATIONS.after[i]]), 'and four generations, each after the version it came after');
  t.same(h.generations?.[0].kernels, [{ kernel: 't.paint@1', generation: 2 }]);
  const before = await fingerprint(ask, dir);
  const bisect = (good: string, bad: string) => ask({ op: 'bisect', good, bad, test: 'check.replay' });
  const [g2, g3, g4, g5] = GENERATIONS.names as [string, string, string, string];

  const a = await bisect('0', g2);
  t.ok(a.ok, JSON.stringify(a.error));
  t.same([a.ok.first_bad.kind, a.ok.first_bad.name, a.ok.first_bad.index, a.ok.first_bad.origin, a.ok.first_bad.position], ['generation', g2, 0, 'publish', 1], 'the first bad point is the publish, over version 1');
  t.same(a.ok.first_bad.kernels, [{ kernel: 't.paint@1', generation: 2 }]);
  t.same([a.ok.last_good.kind, a.ok.last_good.name, a.ok.last_good.position], ['document', '1', 1], 'the last good one is version 1 itself');
  t.notMatch(a.ok.diff, /^[-+] /m, 'the document did not change between them');
  t.match(a.ok.kernels_diff, /^--- \/dev\/null\n\+\+\+ \(protocol t\.paint@1\)/m, 'what did: the kernel published');
  t.match(a.ok.kernels_diff, /^\+    result = vec4\(0\.25, /m);
  t.same([a.ok.failure.line, a.ok.failure.actual], [FAILING_LINE, 0.25]);
  t.same(a.ok.runs.map((r: any) => [r.kind, r.name, r.passed]).slice(0, 2), [['generation', g2, false], ['document', '0', true]], 'the bad point first, then the good one');
  t.same((await bisect('1', 'p0')).ok?.first_bad.name, g2, '`pI` names it too');

  // Between two generations: the compose that took the kernel back (good), the second publish (bad).
  const again = (await bisect('2', g4)).ok;
  t.same([again?.first_bad.name, again?.last_good.name, again?.last_good.origin], [g4, g3, 'compose'], 'the second publish, after the compose\'s generation');
  t.match(again?.kernels_diff, /^\+    result = vec4\(0\.25, /m);
  // After the retire (good), the planted document version (bad).
  const late = (await bisect(g5, 'running')).ok;
  t.same([late?.first_bad.kind, late?.first_bad.position, late?.last_good.name, late?.last_good.origin], ['document', 3, g5, 'retire'], 'after the retire, the planted version');
  t.notOk(late?.kernels_diff, 'no kernel published between them');
  t.match(late?.diff, /^\+    result = vec4\(0\.25, /m);
  t.equal(late?.runs.find((r: any) => r.name === g5)?.passed, true, 'the retire\'s point passes: it ran the document\'s kernel');

  const mistakes: [string, string, RegExp][] = [
    ['0', 't.paint@1 g9', /no generation t\.paint@1 g9 was published over the protocol while the session saw `scene\.esn` \(of t\.paint@1: g2, g3, g4, g5\)/],
    ['0', 'p4', /generation p4, but `history` lists 4 \(p0 to p3\)/],
    ['p0', '1', /the good version \(p0\) comes after the bad one \(position 1\)/],
    [g2, '2', /the bad version \(position 2, [0-9a-f]{16}\) passes/],
    [g4, 'running', /the good version \(t\.paint@1 g4, publish over position 2, [0-9a-f]{16}\) fails/],
  ];
  for (const [good, bad, re] of mistakes) t.match((await bisect(good, bad)).error?.message, re, `${good}..${bad} refused`);
  t.equal(await fingerprint(ask, dir), before, 'the world, the history (with its generations) and the folder as before');

  // A snapshot's restore brings back the kernels published when it was taken: a generation too.
  t.ok((await ask({ op: 'compose', text: versionText(1, GENERATIONS.planted) })).ok, 'a good version again (4)');
  t.ok((await ask({ op: 'publish', source: badKernel() })).ok, 'the bad kernel published (p4)');
  const snap = (await ask({ op: 'snapshot' })).ok?.data;
  t.ok((await ask({ op: 'retire', kernel: 't.paint@1' })).ok, 'and retired (p5)');
  t.ok((await ask({ op: 'restore', data: snap })).ok, 'the snapshot restored (p6)');
  const restored = (await ask({ op: 'history' })).ok.generations;
  t.same(restored.slice(4).map((g: any) => [g.origin, g.after]), [['publish', 4], ['retire', 4], ['restore', 4]], 'each in history');
  const back = (await bisect('p5', 'running')).ok;
  t.same([back?.first_bad.kind, back?.first_bad.origin, back?.first_bad.index, back?.last_good.origin], ['generation', 'restore', 6, 'retire'], 'the restore is the first bad point');
  t.match(back?.kernels_diff, /^\+\+\+ \(protocol t\.paint@1\)/m);
});

t.test('a deadline and cancel stop a bisect; nothing of it is kept', async (t) => {
  const { dir, s, ask } = shared;
  const before = await fingerprint(ask, dir);
  const late = await ask({ op: 'bisect', good: '0', bad: '6', test: 'check.replay', deadline: 1 });
  t.same([late.error?.cancelled, late.error?.reason], [true, 'deadline'], late.error?.message);
  t.match(late.error?.message, /nothing of it was kept: it replays on copies, and the session's world, history and folder are as before it$/, 'in its own words (it said "state, clock and frame counter")');
  // A cancel of the connection, sent while the bisect runs.
  const conn = { kind: 'test', id: 7 };
  const running = dispatch(s, JSON.stringify({ id: 1, op: 'bisect', good: '0', bad: '6', test: 'check.replay' }), conn);
  const cancel = JSON.parse(await dispatch(s, JSON.stringify({ id: 2, op: 'cancel' }), conn));
  t.equal(cancel.ok?.cancelled, 1, 'cancel stopped one');
  const stopped = JSON.parse(await running);
  t.same([stopped.error?.cancelled, stopped.error?.reason], [true, 'cancel'], stopped.error?.message);
  t.equal(await fingerprint(ask, dir), before, 'nothing changed');
  t.equal((await ask({ op: 'bisect', good: '0', bad: '6', test: 'check.replay' })).ok?.first_bad.position, 3, 'and the next bisect runs whole');
  t.same(readdirSync(dir).sort(), ['check.replay', 'scene.esn'], 'no scratch copy left in the folder');
});

t.test('the replay text instead of a file', async (t) => {
  const a = await shared.ask({ op: 'bisect', good: '0', bad: '6', replay: replayText() });
  t.same([a.ok?.first_bad.position, a.ok?.failure.line], [3, FAILING_LINE]);
});
