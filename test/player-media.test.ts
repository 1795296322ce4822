// The Player's pictures in and video out, in a real browser (Debian's chromium, playwright-core)
// on real `entelechy-player` processes: Record/Stop writes a video (read back with ffprobe), and
// an image dropped on the page (a real drop event carrying a PNG file) fills an input.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { decodePng } from '../src/main/image.js';
import { BYTE_TO_LINEAR } from '../src/main/srgb.js';
import { ROOT } from './helpers.js';
import { canvasPixels, frameOf, openPlayer, startPlayers, until } from './player-harness.js';

const PHOTO = join(ROOT, 'examples', 'photo', 'photo.jpg');
const { browser, player } = startPlayers(t, { rings: { example: 'rings' }, photo: { example: 'photo', args: ['--input', `photo=${PHOTO}`] } });
/** The f32 values of base64 data (a Buffer may sit inside a larger pool: copy its own bytes). */
const f32s = (data: string) => {
  const b = Buffer.from(data, 'base64');
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
};
const is = (expression: string) => new Function(`return ${expression}`) as () => boolean;

/** ffprobe's account of a video's first stream: frames decoded and size. */
function probe(file: string) {
  const r = spawnSync('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames,width,height,codec_name', '-of', 'json', file], { encoding: 'utf8' });
  const s = JSON.parse(r.stdout).streams[0];
  return { frames: Number(s.nb_read_frames), width: s.width as number, height: s.height as number, codec: s.codec_name as string };
}

t.test('rings: Record, then Stop, writes what the canvas shows to a video under the scene\'s folder', async (t) => {
  const rings = await player('rings');
  const page = await openPlayer(browser(), rings.url);
  await page.click('#record');
  const recording = await until(page, 'the recording to start', () => (window as any).player.recording);
  t.match(recording.file, /^recordings\/scene-result-.*\.mp4$/, 'named under recordings/ in the scene\'s folder');
  t.equal(await page.locator('#record').textContent(), 'stop', 'the button now stops');
  // Frames counted, not seconds: twenty drawn while recording.
  const from = await frameOf(page);
  await until(page, 'twenty frames while recording', is(`window.player.frame > ${from + 20}`), 60000);
  await page.click('#record');
  const done = await until(page, 'the video saved', () => (window as any).player.recorded, 60000);
  t.equal(done.file, recording.file);
  t.equal(done.path, join(rings.dir, recording.file), 'the page is told the full path');
  t.match(await page.locator('#recording').textContent(), new RegExp(`saved .*${recording.file.replace(/[.]/g, '\\.')}`), 'and shows it');
  t.ok(existsSync(done.path) && statSync(done.path).size > 0, 'the video is on disk');
  const video = probe(done.path);
  t.equal(video.codec, 'h264');
  t.same([video.width, video.height], [256, 256], 'the size of the field shown');
  t.ok(video.frames > 0, `ffprobe decodes ${video.frames} frames`);
  t.equal(video.frames, done.frames, 'every frame the page was told of');
  t.equal(await page.locator('#record').textContent(), 'record');
  await page.close();
});

/** A 240 x 160 PNG (the photo input's size: nothing is resized) with a gradient and a red square. */
async function testPng(): Promise<{ png: Buffer; rgba: Uint8Array }> {
  const width = 240, height = 160;
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const square = x >= 100 && x < 140 && y >= 60 && y < 100;
      rgba.set(square ? [255, 0, 0, 255] : [x, (y * 255) / 159, 128, 255], i);
    }
  const png = await sharp(Buffer.from(rgba), { raw: { width, height, channels: 4 } }).png().toBuffer();
  return { png, rgba };
}

/** Drop a file on the page's canvas as a person would: a drop event whose DataTransfer holds it. */
async function dropFile(page: Page, name: string, bytes: Buffer): Promise<void> {
  await page.evaluate(({ name, data }) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([new Uint8Array(data)], name, { type: 'image/png' }));
    const target = document.getElementById('stage')!;
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, { name, data: [...bytes] });
}

t.test('photo: a PNG dropped on the canvas fills the input, sRGB-decoded as --input does; the page shows it as read does', async (t) => {
  const photo = await player('photo');
  const page = await openPlayer(browser(), photo.url);
  // Started with --input photo=photo.jpg: the photograph is there before anything is dropped.
  const started = decodePng(Buffer.from((await photo.ask({ op: 'read', input: 'photo' })).ok.data, 'base64'));
  const jpeg = await sharp(PHOTO).ensureAlpha().raw().toBuffer();
  t.ok(started.width === 240 && Buffer.from(started.rgba).equals(jpeg), '--input put the photograph in, as sharp decodes it');
  const { png, rgba } = await testPng();
  await dropFile(page, 'gradient.png', png);
  const dropped = await until(page, 'the drop taken', () => (window as any).player.dropped);
  t.same(dropped, { type: 'dropped', file: 'gradient.png', input: 'photo', width: 240, height: 160 }, 'the only input takes it');

  // The input's values, read back: each colour the linear value of its sRGB byte, alpha byte / 255.
  const read = await photo.ask({ op: 'read', input: 'photo', format: 'f32' });
  t.ok(read.ok, `read answered: ${JSON.stringify(read.error ?? '')}`);
  t.same([read.ok.width, read.ok.height, read.ok.components], [240, 160, 4]);
  const values = f32s(read.ok.data);
  const n = 240 * 160;
  let wrong = 0;
  for (let i = 0; i < n; i++)
    for (let c = 0; c < 4; c++) {
      const want = c < 3 ? BYTE_TO_LINEAR[rgba[i * 4 + c]!]! : rgba[i * 4 + 3]! / 255;
      if (values[c * n + i] !== Math.fround(want)) wrong++;
    }
  t.equal(wrong, 0, 'every value is the linear value of the dropped pixel');
  t.equal(values[2 * n + 80 * 240 + 120], 0, 'the red square has no blue');

  // The page shows the input (`input:photo`): its pixels equal read's PNG, and the dropped picture.
  await page.selectOption('#source', 'input:photo');
  await until(page, 'a frame of the input', () => (window as any).player.header?.output === 'input:photo');
  const shown = await canvasPixels(page);
  const readPng = decodePng(Buffer.from((await photo.ask({ op: 'read', input: 'photo' })).ok.data, 'base64'));
  let differ = 0, differDropped = 0;
  for (let i = 0; i < rgba.length; i++) {
    if (shown.rgba[i] !== readPng.rgba[i]) differ++;
    if (shown.rgba[i] !== rgba[i]) differDropped++;
  }
  t.equal(differ, 0, 'the canvas equals read\'s PNG of the input byte for byte');
  t.equal(differDropped, 0, 'which is the dropped picture (sRGB decoded, then encoded again)');
  await page.selectOption('#source', 'result');
  await page.close();
});

t.test('photo: with two inputs a drop must say which; the chosen one takes it', async (t) => {
  const photo = await player('photo');
  const page = await openPlayer(browser(), photo.url);
  const file = join(photo.dir, 'scene.esn');
  const original = readFileSync(file, 'utf8');
  const revision = await page.evaluate(() => (window as any).player.scene.revision as number);
  writeFileSync(file, original.replace('param exposure', 'input mask: field2<f32> size 240 x 160;\nparam exposure'));
  await until(page, 'the scene with two inputs', is(`window.player.scene.revision > ${revision} && window.player.scene.inputs.length === 2`));
  t.notOk(await page.locator('#drop-into-label').isHidden(), 'the page offers "drop into"');
  const { png } = await testPng();
  await dropFile(page, 'gradient.png', png);
  const refused = await until(page, 'the drop refused', () => (window as any).player.dropRefused);
  t.match(refused.message, /2 inputs \(photo, mask\): choose the one that takes the image under "drop into"/, 'the person is told to choose');
  t.match(await page.locator('#status').textContent(), /gradient\.png was not taken/, 'and sees it');

  await page.selectOption('#drop-into', 'mask');
  await page.evaluate(() => ((window as any).player.dropped = null));
  await dropFile(page, 'gradient.png', png);
  const dropped = await until(page, 'the drop taken', () => (window as any).player.dropped);
  t.equal(dropped.input, 'mask');
  // One component: the linear luminance of the pixel (Rec. 709 weights): the red square's is 0.2126.
  const read = await photo.ask({ op: 'read', input: 'mask', format: 'f32', region: { x: 120, y: 80, width: 1, height: 1 } });
  t.ok(Math.abs(f32s(read.ok.data)[0]! - 0.2126) < 1e-6, 'the mask holds the luminance of red');
  writeFileSync(file, original);
  await page.close();
});
