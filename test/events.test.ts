// Events of compose and sync: `removed` for statements and members a compose removes, `renamed`
// when a document the world runs moves on disk.

import t, { type Test } from 'tap';
import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/index.js';
import { ROOT } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

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
