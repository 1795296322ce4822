// The Player in a real browser: Debian's chromium (playwright-core) on a real `entelechy-player`
// process. Screenshots of each state go to test/out/player/.

import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { decodePng } from '../src/main/image.js';
import { spawn } from 'node:child_process';
import { ROOT } from './helpers.js';
import { SCREENSHOTS, canvasPixels, copyExample, frameOf, openPlayer, startPlayers, until } from './player-harness.js';

const { browser, player } = startPlayers(t, { rings: { example: 'rings' }, life: { example: 'life' } });
const is = (expression: string) => new Function(`return ${expression}`) as () => boolean;

// Generous: on a machine shared by many jobs a screenshot can take tens of seconds.
const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), timeout: 120000 });

/** Sums of the red and blue bytes of pixels. */
function redBlue(rgba: Uint8Array): { red: number; blue: number } {
  let red = 0;
  let blue = 0;
  for (let i = 0; i < rgba.length; i += 4) {
    red += rgba[i]!;
    blue += rgba[i + 2]!;
  }
  return { red, blue };
}

t.test('rings: the page shows frames whose pixels are what `read` returns; a slider changes the image', async (t) => {
  const rings = await player('rings');
  const page = await openPlayer(browser(), rings.url);
  await until(page, 'several frames drawn', () => (window as any).player.framesDrawn >= 5);
  await shot(page, 'rings-live');

  // Pause (an agent on stdin), so the frame the window shows stays; then read it.
  t.same((await rings.ask({ op: 'pause', paused: true })).ok, { paused: true });
  const read = await rings.ask({ op: 'read' });
  t.ok(read.ok, `read answered: ${JSON.stringify(read.error ?? '')}`);
  await until(page, `the page shows frame ${read.ok.frame}`, is(`window.player.frame === ${read.ok.frame}`));
  const png = decodePng(Buffer.from(read.ok.data, 'base64'));
  const canvas = await canvasPixels(page);
  t.equal(canvas.frame, read.ok.frame, 'the same frame');
  t.equal(canvas.width, png.width);
  t.equal(canvas.height, png.height);
  let differing = 0;
  for (let i = 0; i < png.rgba.length; i++) if (png.rgba[i] !== canvas.rgba[i]) differing++;
  t.equal(differing, 0, 'every byte of the canvas equals the PNG of `read`');
  t.ok(redBlue(canvas.rgba).red > 0, 'the image is not black');
  await rings.ask({ op: 'pause', paused: false });

  // The warmth slider: 0 makes blue outweigh red (tint: red x 0.5, blue x 1.5); 1 the other way.
  const slider = page.locator('.param[data-param="warmth"] input[type=range]');
  await slider.fill('0');
  await until(page, 'the session to take warmth 0', () => (window as any).player.scene?.params[0]?.value[0] === 0);
  let from = await frameOf(page);
  await until(page, 'a frame after the change', is(`window.player.frame > ${from + 1}`));
  const cold = redBlue((await canvasPixels(page)).rgba);
  await shot(page, 'rings-warmth-0');
  await slider.fill('1');
  await until(page, 'the session to take warmth 1', () => (window as any).player.scene?.params[0]?.value[0] === 1);
  from = await frameOf(page);
  await until(page, 'a frame after the change', is(`window.player.frame > ${from + 1}`));
  const warm = redBlue((await canvasPixels(page)).rgba);
  await shot(page, 'rings-warmth-1');
  t.ok(cold.blue > cold.red, `warmth 0: blue (${cold.blue}) outweighs red (${cold.red})`);
  t.ok(warm.red > warm.blue, `warmth 1: red (${warm.red}) outweighs blue (${warm.blue})`);
  const status = await rings.ask({ op: 'status' });
  t.ok(JSON.stringify(status.ok).includes('warmth'), 'status names the param');
  await page.close();
});

/** The colour life.step gives a live cell: vec4(0.95, 1.0, 0.85, 1.0). */
// A live cell's colour, (0.95, 1, 0.85) in linear light, as the sRGB bytes every picture shows.
const ALIVE = [249, 255, 237, 255];

t.test('life: pointer strokes draw live cells where the pointer is', async (t) => {
  const life = await player('life');
  const page = await openPlayer(browser(), life.url);
  const box = (await page.locator('#canvas').boundingBox())!;
  const size = 128;
  // A stroke from the left to the right third of the board, held down at its end.
  const at = (ex: number, ey: number) => ({ x: box.x + ((ex + 0.5) / size) * box.width, y: box.y + ((ey + 0.5) / size) * box.height });
  const start = at(20, 40);
  const end = at(100, 90);
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  for (let i = 1; i <= 16; i++) {
    const before = await frameOf(page);
    await page.mouse.move(start.x + ((end.x - start.x) * i) / 16, start.y + ((end.y - start.y) * i) / 16);
    await until(page, 'a frame made after the move', is(`window.player.frame > ${before}`));
  }
  const from = await frameOf(page);
  await until(page, 'frames made with the pointer held at the end', is(`window.player.frame > ${from + 2}`));
  await shot(page, 'life-stroke');
  const read = await life.ask({ op: 'read' });
  const png = decodePng(Buffer.from(read.ok.data, 'base64'));
  t.equal(png.width, size);
  // Every element within 3 of the pointer (the kernel draws within 4) is alive.
  let dead = 0;
  let cells = 0;
  for (let y = 87; y <= 93; y++)
    for (let x = 97; x <= 103; x++) {
      if (Math.hypot(x - 100, y - 90) >= 3) continue;
      cells++;
      const i = (y * size + x) * 4;
      if (ALIVE.some((v, c) => png.rgba[i + c] !== v)) dead++;
    }
  t.ok(cells > 20);
  t.equal(dead, 0, `the ${cells} cells under the pointer (element 100, 90) are alive`);
  // And the page shows them too.
  const canvas = await canvasPixels(page);
  const i = (90 * size + 100) * 4;
  t.same([...canvas.rgba.subarray(i, i + 4)], ALIVE, 'the canvas shows a live cell under the pointer');
  await page.mouse.up();
  await page.close();
});

t.test('life: a rejected edit on disk shows the overlay while frames go on; a fixed edit clears it', async (t) => {
  const life = await player('life');
  const page = await openPlayer(browser(), life.url);
  const file = join(life.dir, 'scene.esn');
  const original = readFileSync(file, 'utf8');
  writeFileSync(file, original.replace('(cells > 0.5 && n == 2)', '(cellz > 0.5 && n == 2)'));
  await until(page, 'the overlay', () => !(document.getElementById('overlay') as HTMLElement).hidden);
  const where = await page.locator('#overlay-where').textContent();
  const message = await page.locator('#overlay-message').textContent();
  t.match(where, /scene\.esn line 13, column 28/, 'the overlay names the line and column');
  t.match(message, /unknown name `cellz`/, 'and the message');
  const from = await frameOf(page);
  await until(page, 'frames still coming under the overlay', is(`window.player.frame > ${from + 3}`));
  t.notOk(await page.locator('#overlay').isHidden(), 'the overlay stays while the old version runs');
  await shot(page, 'life-rejected');

  // A fixed version (live cells drawn red now) is published: the overlay goes.
  const revision = await page.evaluate(() => (window as any).player.scene.revision as number);
  writeFileSync(file, original.replace('result = vec4(next * 0.95, next * age, 0.25 + 0.6 * next, 1.0);', 'result = vec4(next, 0.1 * next, 0.25, 1.0);'));
  await until(page, 'the overlay to go', () => (document.getElementById('overlay') as HTMLElement).hidden);
  await until(page, 'the new revision', is(`window.player.scene.revision > ${revision}`));
  const after = await frameOf(page);
  await until(page, 'frames of the new version', is(`window.player.frame > ${after + 1}`));
  const canvas = await canvasPixels(page);
  let red = 0;
  for (let i = 0; i < canvas.rgba.length; i += 4) if (canvas.rgba[i] === 255 && canvas.rgba[i + 1] === 89) red++; // (1, 0.1) in linear light, sRGB-encoded
  t.ok(red > 100, `the fixed version runs: ${red} red live cells`);
  await shot(page, 'life-fixed');
  await page.close();
});

t.test('rings in an ordinary 1280 x 720 window: a rejection and a failed frame show in view, with where; mended, the failure goes; an empty param box sends nothing', async (t) => {
  const rings = await player('rings');
  const page = await openPlayer(browser(), rings.url);
  await page.setViewportSize({ width: 1280, height: 720 });
  const file = join(rings.dir, 'kernels.esn');
  const original = readFileSync(file, 'utf8');
  const inView = async () => {
    const box = await page.locator('#overlay').boundingBox();
    return box !== null && box.y >= 0 && box.y + box.height <= 720;
  };
  writeFileSync(file, original.replace('src.x * (0.5 + warmth)', 'src.x * (0.5 + warmht)'));
  await until(page, 'the overlay', () => !(document.getElementById('overlay') as HTMLElement).hidden);
  t.ok(await inView(), 'the rejection is inside the window (it was below the fold, at the canvas\'s bottom)');
  t.match(await page.locator('#overlay-title').textContent(), /change rejected/);
  // A change that checks but whose frames run out of fuel: shown as a failure, where its node is.
  writeFileSync(file, original.replace('src.x * (0.5 + warmth)', 'src.x * (0.5 + warmth + spin())').replace(/^/, 'fn spin(): f32 { let i = 0.0; while (i >= 0.0) { i = i + 1.0; } return i; }\n'));
  await until(page, 'the failure', () => /a frame failed/.test(document.getElementById('overlay-title')!.textContent!) && !(document.getElementById('overlay') as HTMLElement).hidden, 180000);
  t.match(await page.locator('#overlay-message').textContent(), /node `tint` ran out of fuel/);
  t.match(await page.locator('#overlay-where').textContent(), /^kernels\.esn line 1, column \d+$/, 'where the loop is (in the fn the node calls), not the node');
  t.ok(await inView());
  // Failing the same way every tick, it is told once (it had been told at every tick, and tried at the frame rate).
  const told = await page.evaluate(() => (window as any).player.failuresTold);
  await page.waitForTimeout(3000);
  t.ok((await page.evaluate(() => (window as any).player.failuresTold)) - told <= 1, 'the same failure is not told again and again');
  await shot(page, 'rings-frame-failed');
  writeFileSync(file, original);
  await until(page, 'the failure to go once frames run', () => (document.getElementById('overlay') as HTMLElement).hidden, 180000);
  // The number box of warmth, emptied: it was sent as 0.
  const box = page.locator('.param[data-param="warmth"] input[type=number]');
  const before = await page.evaluate(() => (window as any).player.scene.params.find((p: any) => p.name === 'warmth').value[0]);
  await box.fill('');
  await box.press('Enter');
  await until(page, 'the box shows the value again', () => (document.querySelector('.param[data-param="warmth"] input[type=number]') as HTMLInputElement).value !== '');
  t.equal(Number(await box.inputValue()), before, 'the box shows the value the world has');
  await box.fill('7');
  await box.press('Enter');
  await until(page, 'the refusal', () => /keeps to 0\.\.1/.test(document.getElementById('status')!.textContent!));
  await until(page, 'the refused 7 replaced', () => (document.querySelector('.param[data-param="warmth"] input[type=number]') as HTMLInputElement).value !== '7');
  t.equal(Number(await box.inputValue()), before, 'a refused value does not stay in the box');
  await page.close();
});

t.test('life: pause stops the frame counter, play resumes it', async (t) => {
  const life = await player('life');
  const page = await openPlayer(browser(), life.url);
  // The tests after this one share the session: whatever fails here, it is left running.
  t.teardown(() => life.ask({ op: 'pause', paused: false }).then(() => undefined, () => undefined));
  await page.click('#play-pause');
  await until(page, 'the session paused', () => (window as any).player.scene?.paused === true);
  t.equal(await page.locator('#play-pause').textContent(), 'play');
  // Paused, the session runs no frame: evaluate answers with nothing executed and the frame
  // counter (the session's, and the one the page shows) stands still across them.
  const st = (await life.ask({ op: 'status' })).ok;
  t.same(st.paused, true, 'the session says paused');
  for (let i = 0; i < 3; i++) t.same((await life.ask({ op: 'evaluate' })).ok.executed, [], `evaluate ${i + 1} while paused runs nothing`);
  t.equal((await life.ask({ op: 'status' })).ok.frame, st.frame, 'the counter stands still while paused');
  await until(page, 'the page to show the paused frame', is(`Number(document.getElementById('frame').textContent) === ${st.frame}`));
  const paused = await page.locator('#frame').textContent();
  await shot(page, 'life-paused');
  // Step: one frame, then the world stands still again.
  t.equal(await page.locator('#step').isDisabled(), false, 'step is offered while paused');
  await page.click('#step');
  await until(page, 'one frame more', is(`Number(document.getElementById('frame').textContent) === ${st.frame + 1}`));
  t.equal((await life.ask({ op: 'status' })).ok.frame, st.frame + 1, 'the session ran one frame');
  t.equal((await life.ask({ op: 'status' })).ok.paused, true, 'and is still paused');
  await page.click('#play-pause');
  await until(page, 'the counter to move again', is(`Number(document.getElementById('frame').textContent) > ${Number(paused) + 3}`));
  t.equal(await page.locator('#play-pause').textContent(), 'pause');
  t.equal(await page.locator('#step').isDisabled(), true, 'step is not offered while playing');
  await page.close();
});

t.test('rings: the canvas fits the window whole, narrow or short, the status line in sight', async (t) => {
  const rings = await player('rings');
  const page = await openPlayer(browser(), rings.url);
  for (const [width, height] of [[300, 900], [1200, 800], [1900, 300]]) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(200);
    const canvas = (await page.locator('#canvas').boundingBox())!;
    const status = (await page.locator('#status').boundingBox())!;
    t.ok(canvas.width >= 64 && canvas.height >= 64, `${width} x ${height}: the picture is shown (${canvas.width} x ${canvas.height})`);
    t.ok(canvas.x + canvas.width <= width + 1, `${width} x ${height}: within the window's width`);
    t.ok(Math.abs(canvas.width - canvas.height) <= 1, `${width} x ${height}: its aspect kept`);
    if (height >= 800) t.ok(status.y + status.height <= height, `${width} x ${height}: the status line is in sight (at ${status.y})`);
    else t.ok(canvas.y + canvas.height <= height, `${width} x ${height}: the picture within the window's height`);
  }
  await page.close();
});

t.test('a Player stopped and started again on its address: the page reconnects by itself (it said "reload to reconnect")', async (t) => {
  const { dir, remove } = copyExample('rings');
  t.teardown(remove);
  const start = (listen: string) =>
    new Promise<{ url: string; stop: () => Promise<void> }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy-player.js'), join(dir, 'scene.esn'), '--listen', listen, '--workers', '1'], { cwd: ROOT });
      const exited = new Promise((r) => child.on('exit', r));
      let said = '';
      const timer = setTimeout(() => reject(new Error(`the Player did not start in 60 s: ${said}`)), 60000);
      // Without --serve the Player prints its address on stdout.
      for (const stream of [child.stdout, child.stderr])
        stream.on('data', (d) => {
          said += d;
          const m = /player at (http:\/\/\S+)/.exec(said);
          if (m) clearTimeout(timer), resolve({ url: m[1]!, stop: async () => void (child.kill('SIGTERM'), await exited) });
        });
      void exited.then(() => reject(new Error(`the Player ended: ${said}`)));
      t.teardown(() => child.kill('SIGKILL'));
    });
  const first = await start('127.0.0.1:0');
  const page = await openPlayer(browser(), first.url);
  await first.stop();
  await until(page, 'told it is disconnected', () => (window as any).player.connected === false && /reconnecting/.test(document.getElementById('connection')!.textContent!));
  await start(new URL(first.url).host);
  await until(page, 'live again, with frames', () => (window as any).player?.connected === true && (window as any).player.framesDrawn > 0, 60000);
  t.equal(await page.locator('#connection').textContent(), 'live');
  await page.close();
});

t.test('life: two pages watch one session and share its frames', async (t) => {
  const life = await player('life');
  const [a, b] = await Promise.all([openPlayer(browser(), life.url), openPlayer(browser(), life.url)]);
  await Promise.all([a, b].map((p) => p.evaluate(() => ((window as any).player.seen = []))));
  // Frames counted, not seconds: wait until each page has drawn five.
  await Promise.all([a, b].map((p) => until(p, 'five frames drawn', () => (window as any).player.seen.length >= 5)));
  const seen = await Promise.all([a, b].map((p) => p.evaluate(() => (window as any).player.seen as number[])));
  t.ok(seen[0]!.length >= 5 && seen[1]!.length >= 5, `both pages draw frames (${seen[0]!.length} and ${seen[1]!.length})`);
  const shared = seen[0]!.filter((f) => seen[1]!.includes(f));
  t.ok(shared.length > 0, `the pages show the same frames of one world (${shared.length} in common)`);
  for (const s of seen) t.ok(s.every((f, i) => i === 0 || f > s[i - 1]!), 'each page sees frames in order, none twice');
  await shot(a, 'life-two-pages-a');
  await shot(b, 'life-two-pages-b');
  await Promise.all([a.close(), b.close()]);
});

t.test('bridges/web: the WebSocket client page sends status and read and shows the image', async (t) => {
  const life = await player('life');
  const page = await browser().newPage({ viewport: { width: 1000, height: 800 } });
  page.setDefaultTimeout(120000);
  await page.goto(`${life.url}bridges/web/`);
  await until(page, 'connected', () => document.getElementById('state')!.textContent === 'connected');
  await page.click('button[data-request=\'{"op":"status"}\']');
  await until(page, 'the status answer', () => Array.from(document.querySelectorAll('#log li.answer')).some((li) => li.textContent!.includes('"ok"')));
  await page.click('button[data-request=\'{"op":"read"}\']');
  const width = await until(page, 'the image of read', () => (document.querySelector('#log img') as HTMLImageElement | null)?.naturalWidth);
  t.equal(width, 128, 'the image of `read` is the 128 x 128 board');
  await shot(page, 'bridge-web');
  // Nothing listens there: the close that follows the error keeps the error's words.
  await page.fill('#address', 'ws://127.0.0.1:1/');
  await page.click('#connect');
  const state = await until(page, 'the connection refused', () => document.getElementById('state')!.textContent!.startsWith('could not connect') && document.getElementById('state')!.textContent);
  t.match(state, /^could not connect \(is the session listening\? is this origin allowed\? `--allow-origin` names it\)$/);
  await page.close();
});

t.test('life: a pinned node\'s state can be shown instead of the output', async (t) => {
  const life = await player('life');
  const page = await openPlayer(browser(), life.url);
  await page.check('#nodes input[data-node="board"]');
  await until(page, 'board.cells among the sources', () => Array.from((document.getElementById('source') as HTMLSelectElement).options).some((o) => o.value === 'board.cells'));
  await page.selectOption('#source', 'board.cells');
  await until(page, 'a frame of board.cells', () => (window as any).player.header?.output === 'board.cells');
  const from = await frameOf(page);
  await until(page, 'another frame of it', is(`window.player.frame > ${from}`));
  const canvas = await canvasPixels(page);
  let live = 0;
  let gray = true;
  for (let i = 0; i < canvas.rgba.length; i += 4) {
    if (canvas.rgba[i] !== canvas.rgba[i + 1] || canvas.rgba[i] !== canvas.rgba[i + 2]) gray = false;
    if (canvas.rgba[i] === 255) live++;
  }
  t.ok(gray, 'one component: shown as gray');
  t.ok(live > 50, `live cells are white (${live})`);
  await shot(page, 'life-pinned-cells');
  await page.uncheck('#nodes input[data-node="board"]');
  await until(page, 'back to the output once the pin goes', () => (window as any).player.header?.output === 'result');
  await page.close();
});

t.test('keys: a saved scene that reads keys swaps in live, and held keys reach its kernel', async (t) => {
  const life = await player('life');
  const page = await openPlayer(browser(), life.url);
  const revision = await page.evaluate(() => (window as any).player.scene.revision as number);
  writeFileSync(join(life.dir, 'scene.esn'), [
    'kernel demo.keys@1 {',
    '  grants input.read;',
    '  out result: field2<vec4>;',
    '  each (x, y) {',
    '    const left = x < width / 2;',
    '    result = vec4((keys.a && left) ? 1.0 : 0.0, (keys.space && !left) ? 1.0 : 0.0, 0.0, 1.0);',
    '  }',
    '}',
    'node k: demo.keys@1 { size = 32 x 32; }',
    'output result <- k.result;',
    '',
  ].join('\n'));
  await until(page, 'the keys scene running', is(`window.player.scene.revision > ${revision} && window.player.header.width === 32`));
  const pixel = async (x: number) => {
    const c = await canvasPixels(page);
    return [...c.rgba.subarray((16 * 32 + x) * 4, (16 * 32 + x) * 4 + 3)];
  };
  t.same(await pixel(4), [0, 0, 0], 'no key held: black');
  await page.locator('#canvas').focus();
  await page.keyboard.down('a');
  await page.keyboard.down(' ');
  await until(page, 'a frame with the keys held', () => {
    const c = document.getElementById('canvas') as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    return d[(16 * 32 + 4) * 4] === 255 && d[(16 * 32 + 28) * 4 + 1] === 255;
  });
  t.same(await pixel(4), [255, 0, 0], '`a` held: the left half red');
  t.same(await pixel(28), [0, 255, 0], 'space held: the right half green');
  await shot(page, 'keys-held');
  await page.keyboard.up('a');
  await page.keyboard.up(' ');
  await until(page, 'black again', () => {
    const c = document.getElementById('canvas') as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    return d[(16 * 32 + 4) * 4] === 0 && d[(16 * 32 + 28) * 4 + 1] === 0;
  });
  t.pass('released: black');
  await page.close();
});
