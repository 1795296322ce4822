// `read` with `file` through the protocol (dispatch): the PNG is written under the scene's folder
// (whole or not at all), and the answer says where, how many bytes, and each channel's min, max
// and mean instead of the base64; a path outside the folder, a name not ending in .png or a
// format other than png is refused with nothing written.

import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { copyExample } from './fixtures.js';
import { can, immutable } from './disk.js';
import { summarise } from '../src/main/image-out.js';

const dir = copyExample('rings', 'read-file');
const R = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
t.teardown(() => R.close());

async function ask(req: object): Promise<any> {
  return JSON.parse(await dispatch(R, JSON.stringify(req)));
}
async function ok(t2: Test, req: object): Promise<any> {
  const a = await ask(req);
  if (!('ok' in a)) t2.fail(`${JSON.stringify(req)} answered ${JSON.stringify(a.error)}`);
  return a.ok;
}

/** Every file under the folder (temporary ones included), relative. */
const files = (d = dir, under = ''): string[] =>
  readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? files(join(d, n), `${under}${n}/`) : [`${under}${n}`])).sort();

await ok(t, { op: 'evaluate', time: 0.25 });

t.test('the PNG is written under the folder; the answer has its path, bytes and a summary, not the data', async (t) => {
  const a = await ok(t, { op: 'read', file: 'out/zoomed.png' });
  t.equal(a.path, 'out/zoomed.png');
  t.equal(a.data, undefined, 'no base64');
  const bytes = readFileSync(join(dir, 'out/zoomed.png'));
  t.equal(a.bytes, bytes.length);
  const png = PNG.sync.read(bytes);
  t.same([png.width, png.height, a.width, a.height, a.format], [256, 256, 256, 256, 'png']);
  t.same(bytes, Buffer.from((await ok(t, { op: 'read' })).data, 'base64'), 'the same PNG a read answers');

  // The summary is of the field's floats: the same as computed from an f32 read.
  const f = Buffer.from((await ok(t, { op: 'read', format: 'f32' })).data, 'base64');
  const floats = new Float32Array(f.buffer, f.byteOffset, f.length / 4);
  const n = 256 * 256;
  t.equal(a.summary.length, 4, 'a summary per channel');
  for (let c = 0; c < 4; c++) {
    const plane = floats.subarray(c * n, (c + 1) * n);
    const mean = plane.reduce((s, v) => s + v, 0) / n;
    t.same(a.summary[c], { channel: c, min: Math.min(...plane), max: Math.max(...plane), mean }, `channel ${c}`);
  }
  t.ok(a.summary[0].min < a.summary[0].max, 'the rings vary');
  t.same(a.summary[3], { channel: 3, min: 1, max: 1, mean: 1 }, 'alpha is one throughout');
});

t.test('a region, and the file replaced whole', async (t) => {
  const a = await ok(t, { op: 'read', file: 'out/zoomed.png', region: { x: 10, y: 20, width: 30, height: 40 } });
  const png = PNG.sync.read(readFileSync(join(dir, 'out/zoomed.png')));
  t.same([png.width, png.height, a.width, a.height], [30, 40, 30, 40]);
});

t.test('refused: outside the folder, not a .png, not png; nothing written', async (t) => {
  const before = files();
  for (const [file, why] of [['../escape.png', /not under the scene's folder/], ['/tmp/abs.png', /not under the scene's folder/], ['picture.jpg', /name the file with \.png, like `picture\.png`/]] as const) {
    const a = await ask({ op: 'read', file });
    t.equal(a.error?.field, 'file', `${file} refused`);
    t.match(a.error?.message, why);
    t.notMatch(a.error?.message, dir, 'no machine path');
  }
  const f32 = await ask({ op: 'read', file: 'x.png', format: 'f32' });
  t.equal(f32.error?.field, 'format');
  t.same(files(), before, 'nothing was written');
  t.notOk(existsSync(join(dir, '..', 'escape.png')));
});

t.test('a write the file system refuses leaves the file as it was, nothing half-written', { skip: can.immutable }, async (t) => {
  await ok(t, { op: 'read', file: 'kept/frame.png' });
  const kept = readFileSync(join(dir, 'kept/frame.png'));
  await ok(t, { op: 'param', name: 'warmth', value: 0.9 });
  await ok(t, { op: 'evaluate', time: 0.25 });
  const before = files();
  const undo = immutable(t, join(dir, 'kept'));
  const a = await ask({ op: 'read', file: 'kept/frame.png' });
  undo();
  t.match(a.error?.message, /^writing `kept\/frame\.png` failed: .*nothing was written/);
  t.equal(a.error?.code, 'EPERM');
  t.same(files(), before, 'no temporary file left');
  t.same(readFileSync(join(dir, 'kept/frame.png')), kept, 'the file is the one written before');
  await ok(t, { op: 'read', file: 'kept/frame.png' });
  t.notSame(readFileSync(join(dir, 'kept/frame.png')), kept, 'once it can, the new frame is written');
});

t.test('the summary is over the finite values, and counts the NaNs and infinities left out', async (t) => {
  // One infinity made min, max and mean all infinite, which JSON answers as null, with no count.
  const [mixed, none, clean] = summarise([new Float32Array([1, NaN, Infinity, -Infinity, 3]), new Float32Array([Infinity, NaN]), new Float32Array([2, 4])]);
  t.same(mixed, { channel: 0, min: 1, max: 3, mean: 2, nan: 1, infinite: 2 });
  t.same(JSON.parse(JSON.stringify(none)), { channel: 1, min: null, max: null, mean: null, nan: 1, infinite: 1 }, 'no finite value: null, and the counts say why');
  t.same(clean, { channel: 2, min: 2, max: 4, mean: 3 }, 'no count when every value is finite');
});
