// The in-process door: the package's API answers request lines and reads fields in place.

import t from 'tap';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, fieldPlane } from '../src/index.js';
import { ROOT } from './helpers.js';

t.test('request lines and fields in place, as docs/architecture.md shows', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-api-'));
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const session = await Session.open(join(dir, 'scene.esn'), { workers: 2 });
  t.teardown(() => session.close());
  const answer = JSON.parse(await session.request('{"id": 1, "op": "evaluate", "time": 0.5}'));
  t.equal(answer.id, 1);
  t.same(answer.ok.executed, ['rings', 'tint']);
  const field = session.engine.outputField('result')!;
  const red = fieldPlane(session.memory, field, 0);
  const alpha = fieldPlane(session.memory, field, 3);
  t.equal(alpha[0], 1, 'alpha is 1');
  const centre = 128 + 128 * field.stride;
  t.ok(red[centre] >= 0 && red[centre] <= 1.4, 'a red value in range');
  // The view is the field itself: the f32 read over the protocol holds the same numbers.
  const read = JSON.parse(await session.request('{"op": "read", "format": "f32", "region": {"x": 128, "y": 128, "width": 1, "height": 1}}'));
  const floats = new Float32Array(Uint8Array.from(Buffer.from(read.ok.data, 'base64')).buffer);
  t.equal(floats[0], red[centre]);
});
