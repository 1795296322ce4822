// Events of compose and sync: `removed` for statements and members a compose removes, `renamed`
// when a document the world runs moves on disk.

import t from 'tap';
import { cpSync, mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from '../src/index.js';
import { ROOT } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';

t.test('removed and renamed events', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-events-'));
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const req = async (o: object) => JSON.parse(await dispatch(s, JSON.stringify(o)));
  const composed = await req({ op: 'compose', edits: [{ node: 'tint', member: 'warmth', text: null }] });
  t.match(composed.ok.events, [{ kind: 'wrote' }, { kind: 'removed', node: 'tint', member: 'warmth', path: 'scene.esn' }]);
  renameSync(join(dir, 'kernels.esn'), join(dir, 'moved.esn'));
  const synced = await req({ op: 'sync' });
  t.same(synced.ok.events, [{ kind: 'renamed', from: 'kernels.esn', to: 'moved.esn' }]);
  t.same((await req({ op: 'sync' })).ok.events, [], 'reported once');
  t.ok((await req({ op: 'evaluate' })).ok, 'the running world goes on');
});
