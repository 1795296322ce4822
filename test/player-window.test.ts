// The Player's server side without a browser: the window loop serving `evaluate`, the page socket
// (pull-based binary frames), the HTTP routes, origins, and the command line's errors.

import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { decodePng } from '../src/main/image.js';
import { decodeFrame } from '../src/player/frames.js';
import { startPlayer, type Player } from '../src/player/start.js';
import { ROOT } from './helpers.js';
import { copyExample, sleep } from './player-harness.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { call } from '../src/protocol/call.js';

const life = copyExample('life');
let player: Player;

t.before(async () => {
  player = await startPlayer(join(life.dir, 'scene.esn'), { listen: '127.0.0.1:0', workers: 1, log: () => undefined });
});
t.teardown(async () => {
  await player?.close();
  life.remove();
});

const ask = async (request: object) => JSON.parse(await dispatch(player.session, JSON.stringify(request)));
// A live cell's colour, (0.95, 1, 0.85) in linear light, as the sRGB bytes every picture shows.
const ALIVE = [249, 255, 237, 255];

/** How many of the elements within 3 of (cx, cy) are live cells in a PNG of the board. */
function aliveAround(png: { width: number; rgba: Uint8Array }, cx: number, cy: number): { alive: number; cells: number } {
  let alive = 0;
  let cells = 0;
  for (let y = cy - 3; y <= cy + 3; y++)
    for (let x = cx - 3; x <= cx + 3; x++) {
      if (Math.hypot(x - cx, y - cy) >= 3) continue;
      cells++;
      const i = (y * png.width + x) * 4;
      if (ALIVE.every((v, c) => png.rgba[i + c] === v)) alive++;
    }
  return { alive, cells };
}

t.test('served from the Player, evaluate answers with the window frame: its pointer, not the request\'s', async (t) => {
  // The person holds the pointer down at (20, 20); an agent's evaluate names (100, 100).
  player.window.pointer = { x: 20, y: 20, down: true };
  const before = player.session.engine.frame;
  const answer = await ask({ op: 'evaluate', pointer: { x: 100, y: 100, down: true } });
  t.ok(answer.ok, JSON.stringify(answer.error ?? ''));
  t.ok(answer.ok.frame > before, 'a new frame');
  const read = await ask({ op: 'read' });
  t.equal(read.ok.frame, answer.ok.frame, 'read returns the frame the window made');
  const png = decodePng(Buffer.from(read.ok.data, 'base64'));
  const person = aliveAround(png, 20, 20);
  t.equal(person.alive, person.cells, 'the cells under the person\'s pointer are drawn');
  const agent = aliveAround(png, 100, 100);
  t.ok(agent.alive < agent.cells, `the request's pointer drew nothing (${agent.alive} of ${agent.cells} alive there by chance)`);
  player.window.pointer = { x: -1, y: -1, down: false };
});

/** A page's socket, as the page opens it. */
async function pageSocket(origin?: string) {
  const ws = new WebSocket(`ws://127.0.0.1:${player.listener.port}/player/socket`, origin ? { origin } : {});
  const texts: any[] = [];
  const frames: Buffer[] = [];
  ws.on('message', (data, binary) => (binary ? frames.push(data as Buffer) : texts.push(JSON.parse(data.toString()))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, texts, frames, send: (m: object) => ws.send(JSON.stringify(m)) };
}

async function until(what: string, test: () => boolean, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

t.test('a page gets one frame per request for one (frames dropped, never queued), with read\'s pixels', async (t) => {
  const page = await pageSocket();
  await until('the scene', () => page.texts.some((m) => m.type === 'scene'));
  const scene = page.texts.find((m) => m.type === 'scene');
  t.same(scene.sources.map((s: any) => s.name), ['result']);
  t.same(scene.nodes, ['board']);

  t.same((await ask({ op: 'pause', paused: true })).ok, { paused: true });
  page.send({ type: 'next' });
  await until('a frame', () => page.frames.length === 1);
  const { header, rgba } = decodeFrame(page.frames[0]!);
  const read = await ask({ op: 'read' });
  t.equal(header.frame, read.ok.frame, 'the frame the window shows is the frame read returns');
  t.same(Buffer.from(rgba), Buffer.from(decodePng(Buffer.from(read.ok.data, 'base64')).rgba), 'and its pixels are read\'s');
  const idle = await ask({ op: 'evaluate' });
  t.equal(idle.ok.frame, read.ok.frame, 'paused, evaluate answers at once with the last frame');

  await ask({ op: 'pause', paused: false });
  await sleep(600);
  t.equal(page.frames.length, 1, 'the world runs, yet a page that did not ask gets nothing more');
  page.send({ type: 'next' });
  await until('a second frame', () => page.frames.length === 2);
  t.ok(decodeFrame(page.frames[1]!).header.frame > header.frame, 'the next frame is a newer one');

  page.send({ type: 'show', source: 'nothing' });
  await until('an error', () => page.texts.some((m) => m.type === 'error'));
  t.match(page.texts.find((m) => m.type === 'error').message, /nothing to show as `nothing`/);
  // A protocol request through the page's socket is answered as any door answers it.
  page.send({ op: 'pin', node: 'board', id: 'p1' });
  await until('the pin answer', () => page.texts.some((m) => m.id === 'p1'));
  t.same(page.texts.find((m) => m.id === 'p1').ok.pins, ['board']);
  await until('the pinned ports among the sources', () => page.texts.some((m) => m.type === 'scene' && m.sources.some((s: any) => s.name === 'board.cells')));
  page.ws.close();
});

t.test('a page socket from a foreign origin is refused', async (t) => {
  await t.rejects(pageSocket('http://evil.example'), /403/);
});

t.test('HTTP: the page, its files, the web bridge; nothing outside them', async (t) => {
  const base = `http://127.0.0.1:${player.listener.port}`;
  const page = await fetch(`${base}/`);
  t.equal(page.status, 200);
  // Not to be framed by another site, whose page could lead clicks onto the Player's buttons.
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.equal(page.headers.get('content-security-policy'), "frame-ancestors 'none'");
  t.match(await page.text(), /<canvas id="canvas"/);
  t.match((await fetch(`${base}/player.js`)).headers.get('content-type'), /javascript/);
  t.match(await (await fetch(`${base}/bridges/web/`)).text(), /Entelechy web bridge/);
  t.equal((await fetch(`${base}/%2e%2e/%2e%2e/package.json`)).status, 404);
  t.equal((await fetch(`${base}/no-such-file.js`)).status, 404);
});

function runPlayer(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy-player.js'), ...args], { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

t.test('the command line: a missing scene and a bad address are one-line errors', async (t) => {
  const [missing, address] = await Promise.all([
    runPlayer(['no/such/scene.esn']),
    runPlayer([join(life.dir, 'scene.esn'), '--listen', 'http://127.0.0.1:80']),
  ]);
  t.equal(missing.code, 1);
  t.equal(missing.stderr, 'entelechy-player: cannot open `no/such/scene.esn`: no such file\n');
  t.equal(address.code, 1);
  t.match(address.stderr, /^entelechy-player: invalid --listen address "http:\/\/127.0.0.1:80": give an address, not a URL/);
  t.equal(address.stderr.trim().split('\n').length, 1, 'one line, no stack trace');
});

t.test('a rejected saved edit stays on show through a pin; a fixed one clears it', async (t) => {
  const file = join(life.dir, 'scene.esn');
  const original = readFileSync(file, 'utf8');
  const page = await pageSocket();
  writeFileSync(file, original.replace('size = 128 x 128;', 'size = 128 x 128 x;'));
  await until('the rejection', () => page.texts.some((m) => m.type === 'rejected'));
  const rejected = page.texts.find((m) => m.type === 'rejected');
  t.equal(rejected.path, 'scene.esn');
  t.equal(rejected.line, original.split('\n').findIndex((l) => l.includes('size = 128 x 128;')) + 1, 'the line of the broken edit');
  t.type(rejected.column, 'number');
  const revision = player.session.revision;
  t.same((await ask({ op: 'unpin', node: 'board' })).ok.pins, []);
  t.ok(player.session.revision > revision, 'the unpin published the world again');
  player.window.tellScene();
  t.ok(player.window.rejection, 'the rejection still shows: the documents are as they were');
  t.notOk(page.texts.some((m) => m.type === 'published'));
  writeFileSync(file, original);
  await until('the fix published', () => page.texts.some((m) => m.type === 'published'));
  t.equal(player.window.rejection, null);
  page.ws.close();
});

t.test('the command line: no scene named', async (t) => {
  const none = await runPlayer([]);
  t.equal(none.code, 1);
  t.equal(none.stderr, 'entelechy-player: name a scene: entelechy-player <scene.esn> [--listen host:port] [--serve]\n');
});

t.test('a dropped image needs the grant write needs (field.write), and names a bad image', async (t) => {
  const { Session } = await import('../src/main/session.js');
  const { dropImage } = await import('../src/player/drop.js');
  const photo = copyExample('photo');
  t.teardown(() => photo.remove());
  const bytes = readFileSync(join(photo.dir, 'photo.jpg'));
  const denied = await Session.open(join(photo.dir, 'scene.esn'), { workers: 1, grants: ['field.read', 'time.read', 'input.read'] });
  try {
    await t.rejects(dropImage(denied, { name: 'photo.jpg', bytes }), /dropping an image into input `photo` needs the grant field\.write, which this session does not hold/);
    t.ok(denied.pending.some((e) => e.kind === 'write_refused' && e.input === 'photo'), 'a write_refused event naming the input, as for `write`');
  } finally {
    await denied.close();
  }
  const granted = await Session.open(join(photo.dir, 'scene.esn'), { workers: 1 });
  try {
    await t.rejects(dropImage(granted, { name: 'notes.png', bytes: Buffer.from('not a picture') }), /cannot read `notes\.png` as an image/);
    t.same(await dropImage(granted, { name: 'photo.jpg', bytes }), { input: 'photo', width: 240, height: 160 });
    const read = JSON.parse(await dispatch(granted, JSON.stringify({ op: 'read', input: 'photo', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } })));
    t.ok(read.ok && Buffer.from(read.ok.data, 'base64').readFloatLE(0) > 0, 'the photograph is in the input');
    // A publication that leaves the input's declaration as it was keeps what was dropped into it.
    const corner = async () => {
      const r = JSON.parse(await dispatch(granted, JSON.stringify({ op: 'read', input: 'photo', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } })));
      return Buffer.from(r.ok.data, 'base64').readFloatLE(0);
    };
    const before = await corner();
    const grade = await call(granted, 'compose', { edits: [{ param: 'warmth', text: 'param warmth: f32 = 0.6 range 0..1;' }] });
    t.ok(grade.events.some((e) => e.kind === 'scene_loaded'), 'a new world is published');
    t.equal(await corner(), before, 'the dropped photograph is still in the input');
    await call(granted, 'compose', { edits: [{ input: 'photo', text: 'input photo: field2<vec4> size 120 x 80;' }] });
    t.equal(await corner(), 0, 'an input redeclared starts from its declaration');
  } finally {
    await granted.close();
  }
});

t.test('preview saved edits over the page socket: every page told, a held edit run on a fork, a stale id refused, discarded, the mode off again', async (t) => {
  const file = join(life.dir, 'scene.esn');
  const original = readFileSync(file, 'utf8');
  const a = await pageSocket();
  const b = await pageSocket();
  a.send({ type: 'preview-mode', on: true });
  await until('both pages told the mode', () => [a, b].every((p) => p.texts.some((m) => m.type === 'preview-mode' && m.on === true)));
  t.ok(player.session.holdSavedEdit, 'the session hands saved edits to the Player');
  const revision = player.session.revision;
  // A comment: a new version of the document, the same world (life has state: both sides run on forks).
  writeFileSync(file, `${original}\n// a comment\n`);
  await until('both pages shown the held edit', () => [a, b].every((p) => p.texts.some((m) => m.type === 'preview' && m.id !== null)), 60000);
  const held = a.texts.find((m) => m.type === 'preview' && m.id !== null);
  t.same(held.paths, ['scene.esn']);
  const out = held.evaluation.outputs[0];
  t.same([out.name, out.diff.changed, out.before.width, out.thumbnail.width], ['result', 0, 128, 128], 'a comment changes no element; both pictures, 128 x 128');
  t.equal(player.session.revision, revision, 'nothing is published meanwhile');
  a.send({ type: 'publish-preview', id: held.id + 1 });
  await until('the stale id refused', () => a.texts.some((m) => m.type === 'error' && /no saved edit/.test(m.message)));
  t.equal(a.texts.find((m) => m.type === 'error' && /no saved edit/.test(m.message)).message, `no saved edit ${held.id + 1} waits to publish: edit ${held.id} does`);
  b.send({ type: 'discard-preview', id: held.id });
  await until('both pages told it was discarded', () => [a, b].every((p) => p.texts.some((m) => m.type === 'preview' && m.id === null && m.why === 'discarded')));
  t.equal(player.session.revision, revision, 'discarded: the running world keeps its version');
  t.equal(player.window.preview.held, null);
  a.send({ type: 'preview-mode', on: false });
  // (A page is told the mode when it opens: off then.)
  await until('the mode off', () => b.texts.filter((m) => m.type === 'preview-mode').map((m) => m.on).join() === 'false,true,false');
  t.notOk(player.session.holdSavedEdit, 'saved edits are published again');
  writeFileSync(file, original);
  await until('the next save published', () => player.session.revision > revision, 60000);
  // Held when the mode goes off, then a newer save published at once: the held edit is over, told so
  // (it was run again beside itself: the same picture twice, "not running yet").
  a.send({ type: 'preview-mode', on: true });
  await until('the mode on', () => player.session.holdSavedEdit !== undefined);
  writeFileSync(file, `${original}
// held
`);
  await until('held again', () => player.window.preview.held !== null, 60000);
  a.send({ type: 'preview-mode', on: false });
  await until('the mode off again', () => player.session.holdSavedEdit === undefined);
  writeFileSync(file, `${original}
// newer, published at once
`);
  await until('the held edit over', () => a.texts.some((m) => m.type === 'preview' && m.id === null && m.why === 'superseded'), 60000);
  t.equal(player.window.preview.held, null);
  writeFileSync(file, original);
  a.ws.close();
  b.ws.close();
});

t.test('a document renamed or removed on disk under the Player: the page is told, as agents are', async (t) => {
  const page = await pageSocket();
  const file = join(life.dir, 'scene.esn');
  const moved = join(life.dir, 'moved.esn');
  renameSync(file, moved);
  await until('a notice of the rename', () => page.texts.some((m) => m.type === 'notice'));
  t.match(page.texts.find((m) => m.type === 'notice'), { kind: /^(renamed|removed)$/, message: /scene\.esn/ }); // removed when its text was not yet synced
  renameSync(moved, file);
  page.ws.close();
});
