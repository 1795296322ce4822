// bridges/host in a real browser (Debian's chromium): the compiled client modules, loaded as ES
// modules by a page an integrator serves (allowed with `serve --allow-origin`), connect over the
// browser's WebSocket to a real `entelechy serve --listen` and get the answers a TCP client gets.

import t from 'tap';
import { readFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connectTcp } from '../bridges/host/index.js';
import { serveExample } from './bridges-session.js';
import { ROOT } from './helpers.js';
import { launchChromium } from './player-harness.js';

const HOST_MODULES = join(ROOT, 'dist', 'bridges', 'host');

t.test('the host client runs in a browser over its WebSocket', async (t) => {
  // A page server of the integrator's own (a real loopback HTTP server) hands the browser a page
  // and the client's compiled modules; the session lets that origin open WebSockets.
  const pages = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>host client</title>');
    const name = path.slice('/host/'.length);
    const file = join(HOST_MODULES, name);
    if (!path.startsWith('/host/') || !/^[a-z-]+\.js$/.test(name) || !existsSync(file)) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => pages.close(() => resolve())));
  const pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;

  const session = await serveExample(t, 'rings', 120000, ['--allow-origin', pageOrigin]);
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(`${pageOrigin}/`);

  const seen = await page.evaluate(async (url) => {
    const host = await import('/host/index.js' as string);
    const client = await host.connectWebSocket(url, { timeout: 60000 });
    const events: string[] = [];
    client.on('*', (e: { kind: string }) => events.push(e.kind));
    Object.assign(window, { client, events });
    const status = await client.request('status');
    await client.request('param', { name: 'warmth', value: 0.25 });
    const frame = await client.request('evaluate', { time: 1.5 });
    const field = await client.readFloats();
    let sum = 0;
    for (const plane of field.planes as Float32Array[]) for (const v of plane) sum += v;
    let error: { name: string; message: string; fix?: unknown } | undefined;
    try {
      await client.request('param', { name: 'warmt', value: 1 });
    } catch (e) {
      const err = e as { name: string; message: string; data?: { fix?: unknown } };
      error = { name: err.name, message: err.message, fix: err.data?.fix };
    }
    return { outputs: status.outputs, frame: frame.frame, width: field.width, height: field.height, planes: field.planes.length, sum, error, isBrowser: typeof window !== 'undefined' };
  }, `ws://127.0.0.1:${session.port}`);

  t.ok(seen.isBrowser, 'ran in the page');
  t.ok(Array.isArray(seen.outputs) && seen.outputs.length > 0, 'status lists the outputs');
  t.equal(seen.width, 256);
  t.equal(seen.height, 256);
  t.equal(seen.planes, 4, 'an RGBA output reads as four planes');
  t.equal(seen.error?.name, 'EntelechyError', 'an error answer is raised as EntelechyError');
  t.match(seen.error?.message ?? '', /warmt/, 'naming the unknown param');

  // The same field read by a Node client over TCP (no evaluate in between: the same frame).
  const node = await connectTcp('127.0.0.1', session.port, { timeout: 60000 });
  t.teardown(() => node.close());
  const field = await node.readFloats();
  let sum = 0;
  for (const plane of field.planes) for (const v of plane) sum += v;
  t.equal(sum, seen.sum, 'the browser read the same floats as a TCP client');

  const events = await page.evaluate(async () => {
    const { client, events } = window as unknown as { client: any; events: string[] };
    const doc = await client.request('document');
    await client.request('compose', { text: doc.text + '\n// composed from a browser\n' });
    client.close();
    return events;
  });
  t.ok(events.includes('wrote'), `compose's events reach the listener (${events.join(', ')})`);
  t.match(readFileSync(join(session.dir, 'scene.esn'), 'utf8'), /composed from a browser/, 'the compose was written');
});
