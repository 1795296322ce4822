// Grants on every path: a case per row of the operations table's `grants` (docs/protocol.md,
// "Grants"), each refused under reduced grants and — the precondition, so that a refusal is the
// grant's and not something else's — accepted with the grant held. Also: a session whose scene
// needs a grant it lacks does not load (so no `pin`, `trace` or `evaluate` can run that kernel),
// and `entelechy test` replays under `--deny`.

import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_GRANTS, type Grant } from '../src/ir/grants.js';
import { Session } from '../src/main/session.js';
import { OPERATIONS } from '../src/protocol/operations.js';
import { WebSocket } from 'ws';
import { PLAYER_SOCKET_PATH, startPlayer } from '../src/player/start.js';
import { ROOT } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

/** An input the host writes, shown by a kernel that needs no grant at all. */
const SCENE = `input canvas: field2<f32> = 0.25 size 8 x 4;
param gain: f32 = 1.0 range 0..4;
kernel t.show@1 {
  in src: field2<f32>;
  in gain: f32 = 1.0;
  out result: field2<f32>;
  each (x, y) { result = src * gain; }
}
node show: t.show@1 { src <- canvas; gain = gain; }
output result <- show.result;
`;
/** A kernel that reads the clock: it needs time.read. */
const CLOCK = 'kernel t.clock@1 {\n  grants time.read;\n  out result: field2<f32>;\n  each (x, y) { result = time; }\n}';
const NO_CLOCK = 'kernel t.clock@1 {\n  out result: field2<f32>;\n  each (x, y) { result = 1.0; }\n}';

const without = (g: Grant) => ALL_GRANTS.filter((x) => x !== g);
const folders: string[] = [];
t.teardown(() => folders.forEach((d) => rmSync(d, { recursive: true, force: true })));

function folder(docs: Record<string, string>): string {
  const dir = scratchDir('entelechy-grants-');
  folders.push(dir);
  for (const [path, text] of Object.entries(docs)) writeFileSync(join(dir, path), text);
  return dir;
}

async function open(t: Test, grants: Grant[], docs: Record<string, string> = { 'scene.esn': SCENE }) {
  const dir = folder(docs);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, grants });
  t.teardown(() => s.close());
  const ask = async (req: object): Promise<{ ok?: any; error?: any }> => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const ok = async (req: object) => {
    const a = await ask(req);
    if (!a.ok) t.fail(`${JSON.stringify(req).slice(0, 120)} answered ${JSON.stringify(a.error).slice(0, 300)}`);
    return a.ok;
  };
  /** The canvas as the kernel shows it after a frame: every element (they are all alike here). */
  const shown = async (): Promise<number[]> => {
    await ok({ op: 'evaluate' });
    const data = (await ok({ op: 'read', format: 'f32' })).data as string;
    const bytes = Buffer.from(data, 'base64');
    return [...new Set(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4))];
  };
  const loaded = async () => {
    const st = await ok({ op: 'status' });
    t.equal(st.loaded, true, 'precondition: the scene loaded under these grants');
    t.same(st.grants, grants);
  };
  return { s, dir, ask, ok, shown, loaded };
}

/** A snapshot of a session that sets the input `canvas` (8 x 4) to `v`: what a hand-made snapshot can hold. */
async function snapshotSetting(ok: (r: object) => Promise<any>, v: number): Promise<string> {
  const snap = JSON.parse((await ok({ op: 'snapshot' })).data);
  const data = Buffer.from(new Float32Array(32).fill(v).buffer).toString('base64');
  snap.state.push({ key: 'input:canvas', comps: ['f32'], size: [8, 4, 1], packed: true, data });
  return JSON.stringify(snap);
}

/** A refusal naming the grant, and a write_refused event when `event`. */
async function refused(t: Test, x: Awaited<ReturnType<typeof open>>, req: object, grant: Grant, event: boolean) {
  const a = await x.ask(req);
  t.ok(a.error, `${JSON.stringify(req).slice(0, 80)} is refused`);
  t.equal(a.error?.grant, grant, 'the error names the grant');
  t.match(a.error?.message, new RegExp(`${grant.replace('.', '\\.')}.*nothing was changed`));
  // `--grant` grants only what it names: the advice keeps what the session holds (it named the lacking grant alone).
  t.ok(a.error?.message.includes(`start it with --grant ${[...x.s.grants, grant].join(' ')}: what it holds and this`), a.error?.message);
  const { events } = await x.ok({ op: 'sync' });
  const told = events.find((e: any) => e.kind === 'write_refused');
  if (event) t.ok(told, 'a write_refused event');
  return told;
}

/** A refusal by the checker: the kernel needs a grant the session lacks. */
function kernelRefusal(t: Test, a: { error?: any }, grant: Grant) {
  t.ok(a.error, 'refused');
  t.match(JSON.stringify(a.error?.diagnostics ?? a.error?.message), new RegExp(`needs ${grant.replace('.', '\\.')}, which this session does not grant`));
}

/** The outcome of a saved edit, as the session pushes it (rejected or published): no polling. */
function outcomeOf(s: Session): { outcome: Promise<any>; stop: () => void } {
  let see: (e: any) => void = () => undefined;
  const outcome = new Promise<any>((resolve) => {
    see = (e: any) => {
      if ((e.kind === 'rejected' || e.kind === 'published') && Array.isArray(e.paths)) (s.pending.observers.delete(see), resolve(e));
    };
    s.pending.observers.add(see);
  });
  return { outcome, stop: () => s.pending.observers.delete(see) };
}

/**
 * Save `text` to `file` and sync: the saved edit's outcome (rejected or published), or, when the
 * sync's answer says no change started (no `preparing` event for the file), `{ kind: 'not
 * started' }` at once, so that a missing outcome fails the test instead of waiting for ever.
 */
async function save(x: { s: Session; dir: string; ok: (r: object) => Promise<any> }, file: string, text: string): Promise<any> {
  // A saved edit still finishing hides a new one from sync (syncDisk returns while one runs).
  await x.s.syncing;
  const { outcome, stop } = outcomeOf(x.s);
  writeFileSync(join(x.dir, file), text);
  const { events } = await x.ok({ op: 'sync' });
  if (!events.some((e: any) => e.kind === 'preparing' && e.path === file)) return (stop(), { kind: 'not started', events });
  return outcome;
}

/** The cases, by `op/grant` as the table names them; every row of the table must have one. */
const CASES: Record<string, (t: Test) => Promise<void>> = {
  'write/field.write': async (t) => {
    const x = await open(t, without('field.write'));
    await x.loaded();
    t.same(await x.shown(), [0.25], 'the input holds its declared value');
    // The event names an input as `input` (as a refused saved edit's does), whichever field the write named it by.
    t.match(await refused(t, x, { op: 'write', node: 'canvas', value: 1 }, 'field.write', true), { input: 'canvas', node: undefined });
    t.match(await refused(t, x, { op: 'write', input: 'canvas', value: 1 }, 'field.write', true), { input: 'canvas', node: undefined });
    await refused(t, x, { op: 'write', node: 'canvas', data: Buffer.from(new Float32Array(32).buffer).toString('base64') }, 'field.write', true);
    t.same(await x.shown(), [0.25], 'the input is as it was');
    const y = await open(t, ALL_GRANTS);
    await y.ok({ op: 'write', node: 'canvas', value: 1 });
    t.same(await y.shown(), [1], 'with field.write the same write sets the input');
  },
  'compose/field.write': async (t) => {
    const x = await open(t, without('field.write'));
    await x.loaded();
    const edit = { op: 'compose', edits: [{ input: 'canvas', text: 'input canvas: field2<f32> = 0.5 size 8 x 4;' }] };
    await refused(t, x, edit, 'field.write', true);
    t.equal(readFileSync(join(x.dir, 'scene.esn'), 'utf8'), SCENE, 'nothing was written');
    t.same(await x.shown(), [0.25], 'the input is as it was');
    await x.ok({ op: 'compose', edits: [{ node: 'show', member: 'gain', text: 'gain = 2.0;' }] });
    t.same(await x.shown(), [0.5], 'a compose that leaves the inputs as they are is accepted');
    const y = await open(t, ALL_GRANTS);
    await y.ok(edit);
    t.same(await y.shown(), [0.5], 'with field.write the compose sets the input');
  },
  'compose/kernels': async (t) => {
    const x = await open(t, without('time.read'), { 'scene.esn': `use "k.esn";\n${SCENE}`, 'k.esn': NO_CLOCK });
    await x.loaded();
    const doc = (k: string) => ({ op: 'compose', path: 'k.esn', text: k });
    kernelRefusal(t, await x.ask(doc(CLOCK)), 'time.read');
    t.equal(readFileSync(join(x.dir, 'k.esn'), 'utf8'), NO_CLOCK, 'nothing was written');
    await x.ok(doc(`${NO_CLOCK}\n`));
    t.equal(readFileSync(join(x.dir, 'k.esn'), 'utf8'), `${NO_CLOCK}\n`, 'precondition: the same compose without the grant is accepted');
  },
  'sync/kernels': async (t) => {
    const x = await open(t, without('time.read'), { 'scene.esn': `use "k.esn";\n${SCENE}`, 'k.esn': NO_CLOCK });
    await x.loaded();
    const first = await save(x, 'k.esn', CLOCK);
    t.equal(first.kind, 'rejected', 'the saved kernel is rejected');
    t.match(first.message, /needs time\.read, which this session does not grant/, 'for its grant');
    t.equal((await save(x, 'k.esn', `${NO_CLOCK}\n// saved again`)).kind, 'published', 'precondition: the same file without the grant publishes');
  },
  'sync/field.write': async (t) => {
    // A saved edit setting an input's value is a write into it, as a compose's is; the Player's
    // folder watcher takes the same path (syncDisk), tested below through a real Player.
    const x = await open(t, without('field.write'));
    await x.loaded();
    const savedValue = SCENE.replace('= 0.25 size', '= 0.5 size');
    const first = await save(x, 'scene.esn', savedValue);
    t.equal(first.kind, 'rejected', 'the saved input value is rejected');
    t.equal(first.grant, 'field.write', 'for the grant');
    t.match(first.message, /input `canvas` needs the grant field\.write/);
    t.ok((await x.ok({ op: 'sync' })).events.some((e: any) => e.kind === 'write_refused'), 'a write_refused event');
    t.same(await x.shown(), [0.25], 'the input is as it was');
    t.equal((await save(x, 'scene.esn', SCENE.replace('gain = gain;', 'gain = 2.0;'))).kind, 'published', 'a saved edit that leaves the inputs as they are publishes');
    const y = await open(t, ALL_GRANTS);
    t.equal((await save(y, 'scene.esn', savedValue)).kind, 'published', 'with field.write the same saved edit publishes');
    t.same(await y.shown(), [0.5], 'and sets the input');
  },
  'prepare/kernels': async (t) => {
    const x = await open(t, without('time.read'));
    await x.loaded();
    kernelRefusal(t, await x.ask({ op: 'prepare', source: CLOCK }), 'time.read');
    await x.ok({ op: 'prepare', source: NO_CLOCK });
  },
  'publish/kernels': async (t) => {
    const x = await open(t, without('time.read'));
    await x.loaded();
    kernelRefusal(t, await x.ask({ op: 'publish', source: CLOCK }), 'time.read');
    t.equal((await x.ok({ op: 'kernels' })).kernels.length, 1, 'nothing was published');
    await x.ok({ op: 'publish', source: NO_CLOCK });
  },
  'restore/kernels': async (t) => {
    const x = await open(t, without('time.read'));
    await x.loaded();
    const snap = JSON.parse((await x.ok({ op: 'snapshot' })).data);
    const a = await x.ask({ op: 'restore', data: JSON.stringify({ ...snap, published: { 't.clock@1': CLOCK } }) });
    kernelRefusal(t, a, 'time.read');
    t.match(a.error?.message, /nothing was restored/);
    await x.ok({ op: 'restore', data: JSON.stringify({ ...snap, published: { 't.clock@1': NO_CLOCK } }) });
    t.equal((await x.ok({ op: 'kernels' })).kernels.length, 2, 'precondition: the snapshot without the grant restores its kernel');
  },
};

t.test('every row of the grants table has a case', async (t) => {
  const rows = OPERATIONS.flatMap((o) => (o.grants ?? []).map((g) => `${o.name}/${g.grant}`));
  t.ok(rows.length >= 7, 'the table has its rows');
  t.same(rows.filter((r) => !CASES[r]), [], 'rows without a case');
  t.same(Object.keys(CASES).filter((c) => !rows.includes(c)), [], 'cases without a row');
});

for (const [row, run] of Object.entries(CASES)) t.test(row, run);

t.test('restore sets state ports only: a snapshot naming an input is refused, the input as it was, under any grants', async (t) => {
  for (const grants of [without('field.write'), ALL_GRANTS]) {
    const x = await open(t, grants);
    await x.loaded();
    const snap = await snapshotSetting(x.ok, 0.75);
    const a = await x.ask({ op: 'restore', data: snap });
    t.match(a.error?.message, /no state `input:canvas`: nothing was restored/, 'the input key refuses the snapshot');
    writeFileSync(join(x.dir, 'crafted.snapshot'), snap);
    t.match((await x.ask({ op: 'restore', path: 'crafted.snapshot' })).error?.message, /nothing was restored/);
    t.same(await x.shown(), [0.25], `${grants.length} grants: the input is as it was, from data and from a file`);
  }
});

t.test('a scene needing a grant the session lacks does not load, even for a node no output needs (pin)', async (t) => {
  const unrun = `${SCENE}${CLOCK}\nnode clock: t.clock@1 { size = 4 x 4; }\n`;
  const x = await open(t, without('time.read'), { 'scene.esn': unrun });
  const st = await x.ok({ op: 'status' });
  t.equal(st.loaded, false, 'the scene is refused');
  t.match(st.refused?.message, /t\.clock@1 needs time\.read, which this session does not grant/);
  t.ok((await x.ask({ op: 'pin', node: 'clock' })).error, 'pin cannot run it');
  t.match((await x.ask({ op: 'evaluate' })).error, { refused: true, message: /^the scene is refused, so there is nothing to evaluate/ }, 'nor evaluate');
  const y = await open(t, ALL_GRANTS, { 'scene.esn': unrun });
  t.equal((await y.ok({ op: 'status' })).loaded, true, 'precondition: with the grant it loads');
  t.same((await y.ok({ op: 'pin', node: 'clock' })).pins, ['clock'], 'and pin runs it');
});

t.test('entelechy test replays under --deny', async (t) => {
  const dir = folder({
    'scene.esn': SCENE,
    'write.replay': '> {"op": "write", "node": "canvas", "value": 1}\n< {"error": {"grant": "field.write"}}\n',
  });
  const cli = join(ROOT, 'bin', 'entelechy.js');
  const denied = spawnSync(process.execPath, [cli, 'test', join(dir, 'write.replay'), '--deny', 'field.write'], { encoding: 'utf8' });
  t.equal(denied.status, 0, `the write is refused under --deny field.write: ${denied.stdout}${denied.stderr}`);
  t.match(denied.stdout, /1 passed, 0 failed/);
  const granted = spawnSync(process.execPath, [cli, 'test', join(dir, 'write.replay')], { encoding: 'utf8' });
  t.equal(granted.status, 1, 'without --deny the write runs, and the replay expecting a refusal fails');
  t.match(granted.stdout, /FAIL/);
});

t.test("the Player's routes hold the grants: its page's protocol requests and its folder watcher", async (t) => {
  const dir = folder({ 'scene.esn': SCENE });
  const player = await startPlayer(join(dir, 'scene.esn'), { listen: '127.0.0.1:0', workers: 1, grants: without('field.write'), log: () => undefined });
  t.teardown(() => player.close());
  const ws = new WebSocket(`ws://127.0.0.1:${player.listener.port}${PLAYER_SOCKET_PATH}`);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  t.teardown(() => ws.close());
  const answers: any[] = [];
  ws.on('message', (data, binary) => {
    if (binary) return;
    const m = JSON.parse(data.toString());
    if (m.id !== undefined) answers.push(m);
  });
  const ask = (req: object) =>
    new Promise<any>((resolve) => {
      const id = `grants-${answers.length}-${Math.random()}`;
      const look = () => {
        const a = answers.find((x) => x.id === id);
        if (a) (ws.off('message', look), resolve(a));
      };
      ws.on('message', look);
      ws.send(JSON.stringify({ ...req, id }));
    });
  const a = await ask({ op: 'write', input: 'canvas', value: 1 });
  t.equal(a.error?.grant, 'field.write', "a write on the page's socket is refused for its grant");
  const { outcome: rejected } = outcomeOf(player.session);
  // The watcher sees the saved edit (no sync asked for).
  writeFileSync(join(dir, 'scene.esn'), SCENE.replace('= 0.25 size', '= 0.5 size'));
  const seen = await rejected;
  t.equal(seen.kind, 'rejected', 'a saved input value the watcher picks up is rejected');
  t.equal(seen.grant, 'field.write');
  const held = player.session.engine.fields.input('canvas')!;
  t.equal(player.session.memory.f32[held.ptr / 4], 0.25, 'the input is as it was');
  t.equal((await ask({ op: 'status' })).ok?.loaded, true, 'precondition: the page socket answers requests');
});
