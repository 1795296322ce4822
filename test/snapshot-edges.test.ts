// Snapshots off the happy path (a state scientist's probe): a snapshot too large for `restore` to
// take back inline, names other tools read, restores of what is not a snapshot (each refusal says
// what to do), a snapshot without its clock or with a state twice, and one of another session's
// scene, whose document versions this session's history does not hold.

import t, { type Test } from 'tap';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { copyExample } from './fixtures.js';

type Answer = { ok?: any; error?: any };

async function open(t: Test, size: string) {
  const dir = copyExample('life', 'snapshot-edges');
  const path = join(dir, 'scene.esn');
  writeFileSync(path, readFileSync(path, 'utf8').replace('size = 128 x 128;', `size = ${size};`));
  const s = await Session.open(path, { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  const ask = async (req: object): Promise<Answer> => JSON.parse(await dispatch(s, JSON.stringify(req)));
  t.ok((await ask({ op: 'evaluate' })).ok, 'evaluates');
  return { dir, ask };
}

t.test('a snapshot restore could not take back inline is refused, and saved by path', async (t) => {
  // 2100 x 2100 f32 cells: 23.5 MB of base64, past the 16 MiB line `restore` would have to send.
  const { dir, ask } = await open(t, '2100 x 2100');
  const inline = await ask({ op: 'snapshot' });
  t.match(inline.error, { field: 'path', limit: 'line-length', message: /^the snapshot is \d+ bytes, too many for `restore` to take back inline \(a request line holds at most 16777216 bytes\): give `path` to save it to a file under the scene's folder, e\.g\. \{"op": "snapshot", "path": "scene\.snapshot\.json"\}, and restore it by that `path`$/ });
  const saved = await ask({ op: 'snapshot', path: 'big.snapshot.json' });
  t.ok(saved.ok?.bytes > 16 * 1024 * 1024, 'saved by path');
  t.ok((await ask({ op: 'restore', path: 'big.snapshot.json' })).ok, 'and restored by path');
  t.ok(readdirSync(dir).includes('big.snapshot.json'));
});

t.test('names other tools read, what is not a snapshot, a snapshot with no clock or a state twice, and one of another scene', async (t) => {
  const { dir, ask } = await open(t, '32 x 32');
  for (const name of ['y.replay', 'x.esn', 'x.png']) {
    const a = await ask({ op: 'snapshot', path: name });
    t.match(a.error?.message, /names a (replay test|scene document|picture or video), not a snapshot \(JSON\): name it like `.\.snapshot\.json`/, name);
  }
  t.same(readdirSync(dir).filter((n) => /^[xy]\./.test(n)), [], 'none written');
  writeFileSync(join(dir, 'cut.json'), '{"format":"entelechy-sn');
  writeFileSync(join(dir, 'empty.json'), '');
  t.match((await ask({ op: 'restore', path: 'cut.json' })).error?.message, /^`cut\.json` is not JSON, so not a snapshot: nothing was restored; restore a file `snapshot` wrote \(by `path`\), or `data` as `snapshot` answered it$/);
  t.match((await ask({ op: 'restore', path: 'empty.json' })).error?.message, /^`empty\.json` is not JSON \(it is empty\)/);
  t.match((await ask({ op: 'restore', path: 'scene.esn' })).error?.message, /^`scene\.esn` is not JSON/);
  const snap = JSON.parse((await ask({ op: 'snapshot' })).ok.data);
  t.match((await ask({ op: 'restore', data: JSON.stringify({ ...snap, version: 2 }) })).error?.message, /^`data` is a snapshot of version 2; this Entelechy restores version 1: nothing was restored$/);
  const { clock: _clock, ...noClock } = snap;
  t.match((await ask({ op: 'restore', data: JSON.stringify(noClock) })).error, { field: 'clock', message: /the snapshot's `clock` is malformed: nothing was restored/ });
  t.match((await ask({ op: 'restore', data: JSON.stringify({ ...snap, state: [...snap.state, ...snap.state] }) })).error, { field: 'state', message: /is malformed/ });
  // Another session's snapshot of a 16 x 16 board: `document` cannot give its version back here.
  const other = { ...snap, documents: { 'scene.esn': '0123456789abcdef' }, state: snap.state.map((st: { size: number[] }) => ({ ...st, size: [16, 16, 1] })) };
  const a = await ask({ op: 'restore', data: JSON.stringify(other) });
  t.match(a.error?.message, /it was taken with `scene\.esn` at version 0123456789abcdef, which this session's history does not hold: compose the sizes the snapshot's state has, then restore$/);
  t.ok((await ask({ op: 'restore', data: JSON.stringify(snap) })).ok, 'the snapshot itself restores');
});

t.test('a restore says what it does not bring back: documents changed since, another scene', async (t) => {
  const { ask } = await open(t, '32 x 32');
  const snap = JSON.parse((await ask({ op: 'snapshot' })).ok.data);
  const same = await ask({ op: 'restore', data: JSON.stringify(snap) });
  t.notOk(same.ok?.note, 'taken with these very documents: nothing to say');
  const taken = snap.documents['scene.esn'];
  // A compose that changes a document but not the state's layout: the restore takes, and says so.
  const doc = (await ask({ op: 'document' })).ok.text as string;
  t.ok((await ask({ op: 'compose', text: `${doc}\n// a comment\n` })).ok);
  const after = await ask({ op: 'restore', data: JSON.stringify(snap) });
  t.ok(after.ok, 'restored');
  t.match(after.ok.note, new RegExp(`^state, params and clock were restored; the documents are not restored, and \`scene\\.esn\` is not at version ${taken} as when it was taken \\(\\{"op":"document","path":"scene\\.esn","version":"${taken}"\\} gives that text\\)$`));
  const elsewhere = await ask({ op: 'restore', data: JSON.stringify({ ...snap, scene: 'other.esn' }) });
  t.match(elsewhere.ok?.note, /it was taken of `other\.esn`, and this session runs `scene\.esn`/);
});
