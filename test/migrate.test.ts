// State migrations: a changed state layout is carried by `migrate from`; a failing migration
// rejects the publication, names node, port and migration, and the old generation keeps running.

import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/index.js';
import { COUNT_STEP_V1, COUNT_STEP_V2 } from './fixtures.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

const SCENE = `${COUNT_STEP_V1}

node board: count.step@1 { size = 8 x 4; }
output result <- board.result;
`;

const V2 = COUNT_STEP_V2;

const floats = (a: { ok: { data: string } }) => Array.from(new Float32Array(Uint8Array.from(Buffer.from(a.ok.data, 'base64')).buffer));

const V3 = `kernel count.step@3 {
  grants field.write;
  state cells: field2<f32> = 0.0;
  out result: field2<f32>;
  each (x, y) { result = cells; }
  migrate from count.step@2 { let k = 0; while (old.cells.x > 0.0) { k++; } cells = k; }
}`;

t.test('migrate from carries state across a layout change; a failing one changes nothing', async (t) => {
  const dir = scratchDir('entelechy-migrate-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const req = async (o: object) => JSON.parse(await dispatch(s, JSON.stringify(o)));
  await req({ op: 'evaluate' });
  await req({ op: 'evaluate' });
  t.same(floats(await req({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 2, height: 1 } })), [2, 2]);

  const up = await req({ op: 'compose', edits: [{ kernel: 'count.step@2', text: V2 }, { node: 'board', text: 'node board: count.step@2 { size = 8 x 4; }' }] });
  t.ok(up.ok, JSON.stringify(up));
  t.ok(up.ok.events.some((e: { kind: string; migration?: string }) => e.kind === 'migrated' && e.migration === 'count.step@1 -> count.step@2'), 'a migrated event');
  await req({ op: 'evaluate' });
  // 2 * 100 + x, then + (1, 10): x + y components summed = 211 + x.
  t.same(floats(await req({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 2, height: 1 } })), [211, 212], 'the state came across through the migration');
  const text = readFileSync(join(dir, 'scene.esn'), 'utf8');
  const held = { allocations: s.memory.allocations, bytes: s.memory.allocatedBytes };

  const bad = await req({ op: 'compose', edits: [{ kernel: 'count.step@3', text: V3 }, { node: 'board', text: 'node board: count.step@3 { size = 8 x 4; }' }] });
  t.ok(bad.error, 'the publication is rejected');
  t.same([bad.error.node, bad.error.port, bad.error.migration], ['board', 'cells', 'count.step@2 -> count.step@3']);
  t.match(bad.error.message, /ran out of fuel/);
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), text, 'nothing was written');
  // The engine it built is freed with it (commit.ts).
  t.same({ allocations: s.memory.allocations, bytes: s.memory.allocatedBytes }, held, 'the refused engine holds no memory');
  await req({ op: 'evaluate' });
  t.same(floats(await req({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 2, height: 1 } })), [222, 223], 'the old generation keeps running with its state');
  const k = await req({ op: 'kernels' });
  t.same(k.ok.kernels.map((x: { id: string }) => x.id).sort(), ['count.step@1', 'count.step@2']);
});

/** A migration whose every element loops 16 million times (within fuel): minutes of work at 64 x 64. */
const LONG = `kernel count.step@2 {
  grants field.write;
  state cells: field2<vec2> = vec2(0, 0);
  out result: field2<f32>;
  each (x, y) { cells = cells + vec2(1.0, 10.0); result = cells.x + cells.y; }
  migrate from count.step@1 { let s = 0.0; for (let i = 0; i < 16000000; i++) { s += 1.0; } cells = vec2(s, 0.0); }
}`;

/** A session on SCENE at 64 x 64 on one worker, evaluated once, and a request function for two connections. */
async function longMigrationSession(t: Test) {
  const dir = scratchDir('entelechy-migrate-');
  const scene = SCENE.replace('8 x 4', '64 x 64');
  writeFileSync(join(dir, 'scene.esn'), scene);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const agent = { kind: 'test', id: 1001 };
  const other = { kind: 'test', id: 1002 };
  const req = async (o: object, conn: { kind: string; id: number; lost?: AbortSignal } = agent) => JSON.parse(await dispatch(s, JSON.stringify(o), conn));
  await req({ op: 'evaluate' });
  return { dir, scene, s, agent, other, req };
}

t.test('a long migration runs on the pool: other connections are answered meanwhile, and cancel, a deadline or a closed connection stop it', async (t) => {
  const { dir, scene, s, agent, other, req } = await longMigrationSession(t);
  const upgrade = { op: 'compose', edits: [{ kernel: 'count.step@2', text: LONG }, { node: 'board', text: 'node board: count.step@2 { size = 64 x 64; }' }] };
  /** Resolves once the pool runs the migration's tasks (the compose has checked, compiled and started migrating). */
  const migrating = async () => {
    while (s.pool!.pending === 0 && !answered) await new Promise((r) => setImmediate(r));
  };
  let answered = false;

  for (const stop of ['cancel', 'deadline', 'closed'] as const) {
    const order: string[] = [];
    const lost = new AbortController();
    const fields = stop === 'deadline' ? { ...upgrade, deadline: 3000 } : upgrade;
    answered = false;
    const composing = req(fields, stop === 'closed' ? { ...agent, lost: lost.signal } : agent).then((a) => (order.push('compose'), (answered = true), a));
    await migrating();
    const status = await req({ op: 'status' }, other);
    order.push('status');
    t.equal(status.ok?.revision, 1, `${stop}: status on another connection is answered while the migration runs, on the world as it was`);
    if (stop === 'cancel') t.equal((await req({ op: 'cancel' })).ok?.cancelled, 1, 'cancel finds the compose');
    if (stop === 'closed') lost.abort();
    const a = await composing;
    t.same(order, ['status', 'compose'], `${stop}: status was answered before the compose ended`);
    t.equal(a.error?.cancelled, true, `${stop}: the compose answers that it was cancelled`);
    t.equal(a.error?.reason, stop);
    t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), scene, `${stop}: nothing was written`);
    t.equal((await req({ op: 'status' })).ok.revision, 1, `${stop}: the world was not swapped`);
    t.equal(s.pool!.pending, 0, `${stop}: nothing runs on the pool any more`);
  }
  await req({ op: 'evaluate' });
  t.same(floats(await req({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } })), [2], 'the old generation runs on, with its state');
});

/** The scene with `board` on the long migration, as an editor would save it (`note` makes each save new). */
const savedUpgrade = (scene: string, note: string) => `${LONG}\n\n${scene.replace('count.step@1 { size', 'count.step@2 { size')}// ${note}\n`;

t.test('a saved edit whose migration is long: sync takes a deadline, and cancel, the deadline or a closed connection stop it after the answer', async (t) => {
  const { dir, scene, s, agent, other, req } = await longMigrationSession(t);
  for (const stop of ['cancel', 'deadline', 'closed'] as const) {
    const saved = savedUpgrade(scene, stop);
    writeFileSync(join(dir, 'scene.esn'), saved);
    const lost = new AbortController();
    const a = await req(stop === 'deadline' ? { op: 'sync', deadline: 3000 } : { op: 'sync' }, stop === 'closed' ? { ...agent, lost: lost.signal } : agent);
    t.ok(a.ok?.events.some((e: { kind: string }) => e.kind === 'preparing'), `${stop}: sync answers at once that it is preparing the saved edit`);
    const syncing = s.syncing!;
    t.ok(syncing, `${stop}: the saved edit is being published in the background`);
    while (s.pool!.pending === 0) await new Promise((r) => setImmediate(r));
    t.equal((await req({ op: 'status' }, other)).ok?.revision, 1, `${stop}: status on another connection is answered while the migration runs`);
    if (stop === 'cancel') t.equal((await req({ op: 'cancel' })).ok?.cancelled, 1, 'cancel finds the sync after its answer');
    if (stop === 'closed') lost.abort();
    await syncing;
    const later = (await req({ op: 'sync' })).ok.events;
    const rejected = later.find((e: { kind: string }) => e.kind === 'rejected');
    t.ok(rejected, `${stop}: a later sync tells the edit was rejected: ${JSON.stringify(later)}`);
    t.same([rejected?.cancelled, rejected?.reason, rejected?.node], [true, stop, 'board'], `${stop}: it was cancelled, says why, and names the node`);
    if (stop !== 'deadline') {
      // Never judged, the edit is taken again by that same sync (it waited for the file's next
      // change, for good); a deadline's stop is a judgement, not tried again.
      t.match(rejected?.message, /the next `sync` takes it again/);
      t.ok(later.some((e: { kind: string; path?: string }) => e.kind === 'preparing' && e.path === 'scene.esn'), `${stop}: the later sync prepares the edit again`);
      while (s.pool!.pending === 0) await new Promise((r) => setImmediate(r));
      t.equal((await req({ op: 'cancel' })).ok?.cancelled, 1, `${stop}: and cancel stops it again`);
      await s.syncing;
    } else {
      t.notMatch(rejected?.message, /takes it again/);
      t.notOk(later.some((e: { kind: string }) => e.kind === 'preparing'), 'deadline: not prepared again');
    }
    t.equal((await req({ op: 'status' })).ok.revision, 1, `${stop}: the world was not swapped`);
    t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), saved, `${stop}: nothing was written over the saved edit`);
    t.equal(s.pool!.pending, 0, `${stop}: nothing runs on the pool any more`);
  }
  await req({ op: 'evaluate' });
  t.same(floats(await req({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } })), [2], 'the old generation runs on, with its state');
});

t.test("a saved edit the Player's watcher picks up is bounded by the session's own deadline: a runaway migration is rejected naming the node", async (t) => {
  const dir = scratchDir('entelechy-migrate-');
  const scene = SCENE.replace('8 x 4', '64 x 64');
  writeFileSync(join(dir, 'scene.esn'), scene);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, backgroundDeadline: 2000 });
  t.teardown(() => s.close());
  const req = async (o: object) => JSON.parse(await dispatch(s, JSON.stringify(o)));
  await req({ op: 'evaluate' });
  writeFileSync(join(dir, 'scene.esn'), savedUpgrade(scene, 'watched'));
  // What the Player's folder watcher calls (player/window.ts): no request, no signal of its own.
  t.ok(s.syncDisk().some((e) => e.kind === 'preparing'));
  while (s.pool!.pending === 0) await new Promise((r) => setImmediate(r));
  await s.syncing;
  const rejected = s.pending.find((e) => e.kind === 'rejected') as { reason?: string; node?: string; message?: string } | undefined;
  t.same([rejected?.reason, rejected?.node], ['deadline', 'board'], `the edit is rejected by the session's deadline, naming the node: ${JSON.stringify(rejected)}`);
  t.match(rejected?.message, /migration of node `board`/);
  t.equal(s.pool!.pending, 0, 'nothing runs on the pool any more');
  const evaluated = await req({ op: 'evaluate' });
  t.ok(evaluated.ok, 'the frame slot is free: evaluate runs');
  t.equal((await req({ op: 'status' })).ok.revision, 1, 'the world was not swapped');
});
