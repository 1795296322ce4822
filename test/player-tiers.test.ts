// The Player shows which tier runs each kernel (issue 17): the timings table names each group's
// tier, and a line says when a change went live on the fast tier, when the optimised one arrived,
// or that its compile was given up. Debian's chromium on real `entelechy-player` processes.

import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openPlayer, startPlayers, until } from './player-harness.js';

const { browser, player } = startPlayers(t, {
  // A budget no machine reaches: the optimised tier arrives.
  // The disk cache off: an optimised module there would run at once, with no tier to wait for.
  optimised: { example: 'mandelbrot', args: ['--optimise-budget', '600000'], env: { ENTELECHY_CACHE_DIR: 'off' } },
  // 1 ms: no optimised compile fits; the fast tier keeps running.
  fast: { example: 'mandelbrot', args: ['--optimise-budget', '1'], env: { ENTELECHY_CACHE_DIR: 'off' } },
});

/** The tier the timings table shows for a node. */
const tierOf = (node: string) => `[...document.querySelectorAll('#timings tr')].find((r) => r.cells[0].textContent === '${node}')?.cells[1].textContent`;

t.test('mandelbrot: the optimised tier arrives and the table says so; an edit goes live on the fast tier and is optimised again', async (t) => {
  const p = await player('optimised');
  const page = await openPlayer(browser(), p.url);
  // A loaded machine may take minutes to load binaryen on the optimiser's worker and compile.
  await until(page, 'the optimised tier told', () => (window as any).player.tierEvents.some((e: any) => e.event === 'optimised'), 300000);
  await until(page, 'a frame on the optimised tier in the table', new Function(`return ${tierOf('fractal')} === 'optimised'`) as () => boolean);
  const told = await page.evaluate(() => (window as any).player.tierEvents.find((e: any) => e.event === 'optimised'));
  t.same(told.nodes, ['fractal']);
  t.type(told.compile_ms, 'number');
  t.match(await page.locator('#tier-status').textContent(), /^optimised tier running for fractal \(compiled in \d+ ms\)$/);

  // An edit: live on the fast tier first, then the optimised tier again (the page is told).
  const before = await page.evaluate(() => (window as any).player.tierEvents.length);
  const text = readFileSync(join(p.dir, 'scene.esn'), 'utf8');
  const kernel = text.slice(text.indexOf('kernel fractal'), text.indexOf('\nnode')).trim();
  const composed = await p.ask({ op: 'compose', edits: [{ kernel: 'fractal.mandelbrot@1', text: kernel.replace('<= 16.0', '<= 15.0') }] });
  t.ok(composed.ok, JSON.stringify(composed.error ?? ''));
  await until(page, 'the edit optimised', new Function(`return window.player.tierEvents.slice(${before}).some((e) => e.event === 'optimised')`) as () => boolean, 300000);
  const after = await page.evaluate((n) => (window as any).player.tierEvents.slice(n), before);
  // (compose answers its own `published` events; the page hears the optimiser's)
  t.same(after.map((e: any) => [e.event, e.tier]).at(-1), ['optimised', 'optimised'], 'the edit optimised, told to the page');
  t.equal(composed.ok.events.find((e: any) => e.kind === 'published')?.tier, 'fast', 'the edit went live on the fast tier');
  await page.close();
});

t.test('mandelbrot with a 1 ms budget: the table shows the fast tier, and the line says the optimised compile was given up', async (t) => {
  const p = await player('fast');
  const page = await openPlayer(browser(), p.url);
  await until(page, 'the abandoned compile told', () => (window as any).player.tierEvents.some((e: any) => e.event === 'optimise_abandoned'), 300000);
  t.match(await page.locator('#tier-status').textContent(), /^optimised compile of fractal past its 1 ms budget: the fast tier keeps running$/);
  const frame = await page.evaluate(() => (window as any).player.frame);
  await until(page, 'a later frame', new Function(`return window.player.frame > ${frame}`) as () => boolean);
  t.equal(await page.evaluate(new Function(`return ${tierOf('fractal')}`) as () => string), 'fast', 'the table names the fast tier');
  await page.close();
});
