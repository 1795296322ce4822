// State migrations: a changed state layout is carried by `migrate from`; a failing migration
// rejects the publication, names node, port and migration, and the old generation keeps running.

import t from 'tap';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from '../src/index.js';
import { COUNT_STEP_V1, COUNT_STEP_V2 } from './fixtures.js';

const SCENE = `${COUNT_STEP_V1}

node board: count.step@1 { size = 8 x 4; }
output result <- board.result;
`;

const V2 = COUNT_STEP_V2;

const V3 = `kernel count.step@3 {
  grants field.write;
  state cells: field2<f32> = 0.0;
  out result: field2<f32>;
  each (x, y) { result = cells; }
  migrate from count.step@2 { let k = 0; while (old.cells.x > 0.0) { k++; } cells = k; }
}`;

t.test('migrate from carries state across a layout change; a failing one changes nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-migrate-'));
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const req = async (o: object) => JSON.parse(await s.request(JSON.stringify(o)));
  const floats = (a: { ok: { data: string } }) => Array.from(new Float32Array(Uint8Array.from(Buffer.from(a.ok.data, 'base64')).buffer));
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

  const bad = await req({ op: 'compose', edits: [{ kernel: 'count.step@3', text: V3 }, { node: 'board', text: 'node board: count.step@3 { size = 8 x 4; }' }] });
  t.ok(bad.error, 'the publication is rejected');
  t.same([bad.error.node, bad.error.port, bad.error.migration], ['board', 'cells', 'count.step@2 -> count.step@3']);
  t.match(bad.error.message, /ran out of fuel/);
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), text, 'nothing was written');
  await req({ op: 'evaluate' });
  t.same(floats(await req({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 2, height: 1 } })), [222, 223], 'the old generation keeps running with its state');
  const k = await req({ op: 'kernels' });
  t.same(k.ok.kernels.map((x: { id: string }) => x.id).sort(), ['count.step@1', 'count.step@2']);
});
