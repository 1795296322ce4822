// Preview before publishing in the Player (issue 21): with the page's box on, a saved edit is held
// and shown beside the running world (both at the same frame), with where it changed and how
// much; Publish makes it run, Discard keeps the running version. Debian's chromium on a real
// `entelechy-player` process; the pictures are read back from the page's own <img> elements.

import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { decodePng } from '../src/main/image.js';
import { SCREENSHOTS, canvasPixels, openPlayer, startPlayers, until } from './player-harness.js';

const { browser, player } = startPlayers(t, { rings: { example: 'rings' } });
const is = (expression: string) => new Function(`return ${expression}`) as () => boolean;
const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), timeout: 120000, fullPage: true });

/** The pixels an <img> of the preview shows, drawn onto a canvas in the page. */
async function imagePixels(page: Page, selector: string): Promise<{ width: number; height: number; rgba: Uint8Array; shown: number }> {
  await until(page, `${selector} loaded`, new Function(`const i = document.querySelector(${JSON.stringify(selector)}); return !!i && i.complete && i.naturalWidth > 0`) as () => boolean);
  const got = await page.evaluate((sel) => {
    const img = document.querySelector(sel) as HTMLImageElement;
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const context = c.getContext('2d')!;
    context.drawImage(img, 0, 0);
    return { width: c.width, height: c.height, bytes: Array.from(context.getImageData(0, 0, c.width, c.height).data), shown: img.getBoundingClientRect().width };
  }, selector);
  return { width: got.width, height: got.height, rgba: Uint8Array.from(got.bytes), shown: got.shown };
}

// The tint made red (2.0, past white) where x < 64 and y < 32: a change of 64 x 32 elements.
const TINT = 'result = vec4(src.x * (0.5 + warmth), src.y, src.z * (1.5 - warmth), src.w);';
const RED = 'result = vec4(x < 64 && y < 32 ? 2.0 : src.x * (0.5 + warmth), src.y, src.z * (1.5 - warmth), src.w);';
const NO_RED = 'result = vec4(x < 64 && y < 32 ? 0.0 : src.x * (0.5 + warmth), src.y, src.z * (1.5 - warmth), src.w);';
const inBox = (i: number) => (i >> 2) % 256 < 64 && Math.floor((i >> 2) / 256) < 32;

t.test('rings: a saved edit held, shown beside the running world with its diff, then published; a second discarded', async (t) => {
  const rings = await player('rings');
  const page = await openPlayer(browser(), rings.url);
  const kernels = join(rings.dir, 'kernels.esn');
  const original = readFileSync(kernels, 'utf8');
  t.ok(original.includes(TINT), 'the example\'s tint is the one this test edits');

  // Paused: the running world's frame stays, so the preview's "running" picture is `read`'s.
  await rings.ask({ op: 'pause', paused: true });
  await page.locator('#preview-mode').check();
  await until(page, 'the mode on at the server', () => (window as any).player.previewMode === true);
  const revision = (await rings.ask({ op: 'status' })).ok.revision;
  const read = decodePng(Buffer.from((await rings.ask({ op: 'read' })).ok.data, 'base64'));

  writeFileSync(kernels, original.replace(TINT, RED));
  await until(page, 'the held edit shown', () => (window as any).player.preview !== null, 120000);
  t.ok(await page.locator('#preview').isVisible(), 'the preview is shown');
  t.match(await page.locator('#preview-what').textContent(), /^your saved edit of kernels\.esn — not running yet; both pictures at frame \d+/);
  // Red only moves (2.0 against at most 1): green, blue and alpha are as they were.
  t.match(await page.locator('.preview-output[data-output="result"] .preview-summary').textContent(),
    /^2048 of 65536 elements changed \(3\.1 %\), within x 0–63, y 0–31; largest change per component [\d.]+, 0, 0, 0$/);
  await shot(page, 'rings-preview');

  const before = await imagePixels(page, '.preview-output[data-output="result"] img.before');
  const now = await imagePixels(page, '.preview-output[data-output="result"] img.now');
  const diff = await imagePixels(page, '.preview-output[data-output="result"] img.diff');
  t.same([before.width, before.height, now.width, now.height, diff.width, diff.height], [256, 256, 256, 256, 256, 256], 'a 256 x 256 output shown pixel for pixel');
  t.ok(before.shown > 100 && now.shown > 100, `the pictures take room on the page (${before.shown}, ${now.shown} px wide)`);
  t.same(Buffer.from(before.rgba), Buffer.from(read.rgba), 'the running picture is the running world\'s frame, byte for byte');
  let wrong = 0;
  let lit = 0;
  for (let i = 0; i < now.rgba.length; i += 4) {
    const expected = inBox(i) ? [255, before.rgba[i + 1], before.rgba[i + 2], 255] : [...before.rgba.subarray(i, i + 4)];
    if (expected.some((v, c) => v !== now.rgba[i + c])) wrong++;
    const changed = diff.rgba[i] !== 0 || diff.rgba[i + 1] !== 0 || diff.rgba[i + 2] !== 0;
    if (changed !== inBox(i)) wrong++;
    if (changed) lit++;
  }
  t.equal(wrong, 0, 'the edit\'s picture is red exactly in the box and the running one elsewhere; the diff picture lights exactly the box');
  t.equal(lit, 2048);

  // Nothing runs it yet: the running world is as it was, and agents are told it is held.
  t.equal((await rings.ask({ op: 'status' })).ok.revision, revision, 'the revision is the same');
  t.same(Buffer.from(decodePng(Buffer.from((await rings.ask({ op: 'read' })).ok.data, 'base64')).rgba), Buffer.from(read.rgba), 'the running world\'s picture is the same');
  const held = (await rings.ask({ op: 'sync' })).ok.events.find((e: any) => e.kind === 'held');
  t.same(held?.paths, ['kernels.esn'], 'sync tells agents the edit is held at the Player');

  // Publish: the edit runs (the canvas turns red in the box), agents hear `published`.
  await page.locator('#publish').click();
  await until(page, 'the preview closed as published', () => (window as any).player.previewEnded === 'published' && (window as any).player.preview === null);
  t.notOk(await page.locator('#preview').isVisible(), 'the preview is gone');
  await rings.ask({ op: 'pause', paused: false });
  await until(page, 'a frame of the new revision', is(`window.player.header.revision > ${revision}`), 60000);
  const canvas = await canvasPixels(page);
  t.same([...canvas.rgba.subarray(0, 4)].slice(0, 1), [255], 'the canvas is red at (0, 0): the edit runs');
  const published = (await rings.ask({ op: 'sync' })).ok.events.find((e: any) => e.kind === 'published' && e.paths);
  t.same(published?.paths, ['kernels.esn'], 'sync tells agents it was published');
  const running = (await rings.ask({ op: 'status' })).ok.revision;

  // A second edit, discarded: the published one keeps running; the file keeps the discarded edit.
  const ended = await page.evaluate(() => (window as any).player.preview);
  t.equal(ended, null);
  writeFileSync(kernels, original.replace(TINT, NO_RED));
  await until(page, 'the second edit held', () => (window as any).player.preview !== null, 120000);
  t.match(await page.locator('.preview-output[data-output="result"] .preview-summary').textContent(), /^2048 of 65536 elements changed/);
  await page.locator('#discard').click();
  await until(page, 'the preview closed as discarded', () => (window as any).player.previewEnded === 'discarded' && (window as any).player.preview === null);
  const frame = await page.evaluate(() => (window as any).player.frame);
  await until(page, 'a later frame', is(`window.player.frame > ${frame}`));
  t.equal((await canvasPixels(page)).rgba[0], 255, 'the canvas is still red at (0, 0): the published version runs');
  t.equal((await rings.ask({ op: 'status' })).ok.revision, running, 'no new revision');
  t.ok(readFileSync(kernels, 'utf8').includes(NO_RED), 'the file keeps the discarded edit');
  t.ok((await rings.ask({ op: 'sync' })).ok.events.some((e: any) => e.kind === 'discarded'), 'sync tells agents it was discarded');

  // A saved edit that does not check is not held: the overlay says where, as without the mode.
  writeFileSync(kernels, original.replace(TINT, 'result = vec4(src.x *, src.y, src.z, src.w);'));
  await until(page, 'the overlay', () => (window as any).player.rejection !== null, 120000);
  t.equal(await page.evaluate(() => (window as any).player.preview), null, 'nothing held');
  t.match(await page.locator('#overlay-where').textContent(), /kernels\.esn line \d+, column \d+/);
  // Mended to a new version: held, and the older save's overlay goes (it stayed beside the preview).
  writeFileSync(kernels, original.replace(TINT, NO_RED));
  await until(page, 'the mended edit held', () => (window as any).player.preview !== null, 120000);
  t.ok(await page.locator('#overlay').isHidden(), 'the overlay of the older save is gone');
  await page.locator('#discard').click();
  await until(page, 'discarded', () => (window as any).player.preview === null);
  // Saved back to exactly what runs: nothing to hold (it was held as "no element changed", to publish or discard).
  await rings.ask({ op: 'sync' }); // what was told before
  writeFileSync(kernels, original.replace(TINT, RED));
  const synced: any[] = [];
  for (let i = 0; i < 200 && !synced.some((e) => e.kind === 'published' && e.paths); i++) {
    synced.push(...(await rings.ask({ op: 'sync' })).ok.events);
    await new Promise((r) => setTimeout(r, 100));
  }
  t.notOk(synced.some((e: any) => e.kind === 'held'), 'not held');
  t.ok(synced.some((e: any) => e.kind === 'published'), 'taken as a saved edit is');
  t.equal(await page.evaluate(() => (window as any).player.preview), null, 'no preview');
  await page.close();
});
