// Events of compose and sync: `removed` for statements and members a compose removes, `renamed`
// when a document the world runs moves on disk.

import t, { type Test } from 'tap';
import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/index.js';
import { ROOT } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';
import { MAX_UNTAKEN_EVENTS } from '../src/main/session-types.js';

/** A session on a copy of examples/rings, and a way to send it a request. */
async function openRings(t: Test) {
  const dir = scratchDir('entelechy-events-');
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const req = async (o: object) => JSON.parse(await dispatch(s, JSON.stringify(o)));
  return { dir, s, req };
}

t.test('removed and renamed events', async (t) => {
  const { dir, req } = await openRings(t);
  const composed = await req({ op: 'compose', edits: [{ node: 'tint', member: 'warmth', text: null }] });
  t.match(composed.ok.events, [{ kind: 'wrote' }, { kind: 'removed', node: 'tint', member: 'warmth', path: 'scene.esn' }]);
  renameSync(join(dir, 'kernels.esn'), join(dir, 'moved.esn'));
  const synced = await req({ op: 'sync' });
  t.same(synced.ok.events, [{ kind: 'renamed', from: 'kernels.esn', to: 'moved.esn' }]);
  t.same((await req({ op: 'sync' })).ok.events, [], 'reported once');
  t.ok((await req({ op: 'evaluate' })).ok, 'the running world goes on');
});

t.test('the entry renamed: a save of another document waits, told once, and is taken once the entry is back', async (t) => {
  const { dir, s, req } = await openRings(t);
  renameSync(join(dir, 'scene.esn'), join(dir, 'main.esn'));
  t.same((await req({ op: 'sync' })).ok.events, [{ kind: 'renamed', from: 'scene.esn', to: 'main.esn', message: '`scene.esn` was renamed to `main.esn`: saved edits wait until `scene.esn` is back (this session runs the scene `scene.esn`)' }]);
  const kernels = join(dir, 'kernels.esn');
  writeFileSync(kernels, readFileSync(kernels, 'utf8').replace('0.8 * v', '0.1 * v'));
  const waits = (await req({ op: 'sync' })).ok.events;
  t.match(waits, [{ kind: 'waiting', path: 'kernels.esn', message: /^`kernels\.esn` was saved, but the scene's entry `scene\.esn` is gone from disk: the edit is taken once `scene\.esn` is back/ }], 'the save is told as waiting (it was ignored without a word)');
  t.same((await req({ op: 'sync' })).ok.events, [], 'told once');
  renameSync(join(dir, 'main.esn'), join(dir, 'scene.esn'));
  t.match((await req({ op: 'sync' })).ok.events, [{ kind: 'preparing', path: 'kernels.esn' }], 'back: the save is taken');
  await s.syncing;
  t.match((await req({ op: 'sync' })).ok.events, [{ kind: 'published' }]);
  t.match((await req({ op: 'kernel', kernel: 'demo.rings@1' })).ok.source, /0\.1 \* v/, 'and runs');
});

t.test('a saved edit whose fields pass the memory budget is rejected with where the size is (the Player places its overlay there)', async (t) => {
  const { dir, s, req } = await openRings(t);
  const scene = join(dir, 'scene.esn');
  writeFileSync(scene, readFileSync(scene, 'utf8').replace('size = 256 x 256', 'size = 65536 x 65536'));
  await req({ op: 'sync' });
  await s.syncing;
  t.match((await req({ op: 'sync' })).ok.events, [{ kind: 'rejected', path: 'scene.esn', line: 7, column: 3, node: 'rings', message: /more than the memory budget/ }]);
});

t.test('a save while another saved edit compiles is taken when that one is done, without another sync', async (t) => {
  const { dir, s, req } = await openRings(t);
  const scene = join(dir, 'scene.esn');
  const original = readFileSync(scene, 'utf8');
  const first = original.replace(/size = \d+ x \d+/, 'size = 40 x 30');
  const second = original.replace(/size = \d+ x \d+/, 'size = 50 x 20');
  t.not(first, original, 'precondition: the scene has a size to change');
  writeFileSync(scene, first);
  t.match((await req({ op: 'sync' })).ok.events, [{ kind: 'preparing', path: 'scene.esn' }], 'the first save is being prepared');
  t.ok(s.syncing, 'and compiles in the background');
  writeFileSync(scene, second);
  t.same((await req({ op: 'sync' })).ok.events, [], 'a second save meanwhile is not taken at once');
  // Wait out the first change and the one its end starts for the second save (no further sync).
  while (s.syncing) await s.syncing;
  const size = (await req({ op: 'evaluate' })).ok.outputs[0];
  t.same([size.width, size.height], [50, 20], 'the world runs the second save');
  const events = (await req({ op: 'sync' })).ok.events;
  t.equal(events.filter((e: { kind: string }) => e.kind === 'published').length, 2, 'both saves were published, in turn');
});

t.test("each connection is told every event once at its own sync: one connection's sync took another's published; a compose refused on one was told to all", async (t) => {
  const { dir, s } = await openRings(t);
  const lostB = new AbortController();
  const A = { kind: 'tcp', id: 1 };
  const B = { kind: 'tcp', id: 2, lost: lostB.signal };
  const C = { kind: 'websocket', id: 1 }; // ids are counted per door: not A's
  const req = async (conn: object, o: object) => JSON.parse(await dispatch(s, JSON.stringify(o), conn as never));
  const kinds = (a: { ok: { events: { kind: string }[] } }) => a.ok.events.map((e) => e.kind);
  for (const c of [A, B, C]) t.same(kinds(await req(c, { op: 'sync' })), [], 'nothing yet');

  // A saves an edit and syncs; B syncs first after it is published.
  const kernels = readFileSync(join(dir, 'kernels.esn'), 'utf8');
  writeFileSync(join(dir, 'kernels.esn'), kernels.replace('src.x * (0.5 + warmth)', 'src.x * (0.6 + warmth)'));
  t.same(kinds(await req(A, { op: 'sync' })), ['preparing']);
  await s.syncing;
  t.ok(kinds(await req(B, { op: 'sync' })).includes('published'), 'B is told');
  t.ok(kinds(await req(A, { op: 'sync' })).includes('published'), 'and A, whose edit it was, is told too');
  t.ok(kinds(await req(C, { op: 'sync' })).includes('published'), 'and C');
  t.same(kinds(await req(A, { op: 'sync' })), [], 'once');

  // A compose refused on A: A's next sync says scene_rejected (its listeners hear it); no one else's.
  const refused = await req(A, { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = nope;' }] });
  t.ok(refused.error);
  t.same(kinds(await req(B, { op: 'sync' })), [], 'not told to B as if B\'s edit were rejected');
  t.same(kinds(await req(A, { op: 'sync' })), ['scene_rejected']);

  // A connection that closed is told nothing more, and holds no events back.
  lostB.abort();
  writeFileSync(join(dir, 'kernels.esn'), kernels);
  await req(A, { op: 'sync' });
  await s.syncing;
  t.ok(kinds(await req(A, { op: 'sync' })).includes('published'));
  t.ok(kinds(await req(C, { op: 'sync' })).includes('published'));
  t.equal(s.pending.length, 0, 'every event taken by every open connection is let go');
});

t.test("a change's events, answered to its own connection, are told to every other at its sync: not a dry run's, not idle", async (t) => {
  const { s, dir } = await openRings(t);
  const A = { kind: 'tcp', id: 1 };
  const B = { kind: 'websocket', id: 1 };
  const req = async (conn: object, o: object) => JSON.parse(await dispatch(s, JSON.stringify(o), conn as never));
  const kinds = (a: { ok: { events: { kind: string }[] } }) => a.ok.events.map((e) => e.kind);
  for (const c of [A, B]) await req(c, { op: 'sync' });
  const edit = (count: string) => ({ op: 'compose', edits: [{ node: 'rings', member: 'count', text: `count = ${count};` }] });
  t.same(kinds(await req(A, { ...edit('12.0'), dry_run: true })), [], 'a dry run answers no events');
  t.same(kinds(await req(B, { op: 'sync' })), [], 'and tells no one');
  const composed = await req(A, edit('12.0'));
  t.same(kinds(composed), ['wrote', 'scene_loaded']);
  t.same((await req(B, { op: 'sync' })).ok.events, composed.ok.events, 'B is told what A was answered');
  t.same(kinds(await req(A, { op: 'sync' })), [], 'A, whose answer held them, is not told them again');
  t.same(kinds(await req(A, edit('12.0'))), ['idle'], 'the same texts again: nothing happened');
  t.same(kinds(await req(B, { op: 'sync' })), [], 'which is not news to B');
  // What a sync sees on disk is news to the others too: only the connection that synced was told a document was removed.
  renameSync(join(dir, 'kernels.esn'), join(dir, 'moved.esn'));
  t.same(kinds(await req(A, { op: 'sync' })), ['renamed']);
  t.same((await req(B, { op: 'sync' })).ok.events, [{ kind: 'renamed', from: 'kernels.esn', to: 'moved.esn' }], 'B is told at its sync');
  t.same(kinds(await req(A, { op: 'sync' })), [], 'A is not told again');
});

t.test('a connection that does not sync for long is told how many of the oldest events it missed', async (t) => {
  const { s } = await openRings(t);
  const A = { kind: 'tcp', id: 1 };
  const B = { kind: 'tcp', id: 2 };
  const req = async (conn: object, o: object) => JSON.parse(await dispatch(s, JSON.stringify(o), conn as never));
  await req(A, { op: 'status' });
  await req(B, { op: 'status' });
  for (let i = 0; i < MAX_UNTAKEN_EVENTS + 5; i++) s.tell({ kind: 'idle', reason: `event ${i}` });
  const a = (await req(A, { op: 'sync' })).ok.events;
  t.same(a[0], { kind: 'missed', count: 5, message: `5 events came while this connection did not sync, past the ${MAX_UNTAKEN_EVENTS} kept for it: the oldest are not told` });
  t.equal(a.length, MAX_UNTAKEN_EVENTS + 1);
  t.equal(a[1].reason, 'event 5', 'the newest are kept');
  t.equal((await req(B, { op: 'sync' })).ok.events.length, MAX_UNTAKEN_EVENTS + 1, 'B too');
});
