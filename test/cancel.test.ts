// Time is a resource: kernel code that is not provably short runs off the coordinator (even with
// --workers 1), so other connections are answered while it runs; and every evaluation can be
// stopped (a `cancel` request, a `deadline`, its connection closing, a change swapping the
// world), leaving state, clock and frame counter as they were. Real sessions, real sockets.
//
// The long frame is `i32(time)` loop repetitions per element on 64 x 64 elements: with time
// 16000000 about 65 billion, minutes of work; if anything here waited for it, the test would
// time out rather than pass.

import t, { type Test } from 'tap';
import net from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { Lines } from './fixtures.js';
import { doorHandler, isCancel } from '../src/cli/serve.js';
import { Session } from '../src/main/session.js';
import { listen } from '../src/protocol/listen.js';
import { loadScene } from '../src/ir/check/scene.js';
import { exampleScene } from './helpers.js';
import { provablyShort, workBound, SHORT_WORK } from '../src/main/work.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { scratchDir } from './scratch.js';
import { bandRowsFor } from '../src/workers/pool.js';

const kernel = (body: string) => `kernel t.spin@1 {
  grants time.read, field.write;
  state count: field2<f32> = 0.0;
  out result: field2<f32>;
  each (x, y) {
    let s = 0.0;
    ${body}
    count = count + 1.0;
    result = s + count;
  }
}
`;
const LOOP = 'const n = i32(time); for (let i = 0; i < n; i++) s += 1.0;';
const scene = (size: string) => `use "kernels.esn";\nnode spin: t.spin@1 { size = ${size}; }\noutput result <- spin.result;\n`;
const LONG = 16000000;

function folder(size = '64 x 64'): string {
  const dir = scratchDir('entelechy-cancel-');
  writeFileSync(join(dir, 'kernels.esn'), kernel(LOOP));
  writeFileSync(join(dir, 'scene.esn'), scene(size));
  return dir;
}

interface Client {
  send(request: object): void;
  next(): Promise<Record<string, any>>;
  close(): void;
}

function tcp(port: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      const lines = new Lines(socket);
      resolve({
        send: (r) => socket.write(JSON.stringify(r) + '\n'),
        next: async () => JSON.parse((await lines.next())!),
        close: () => socket.destroy(),
      });
    });
    socket.on('error', reject);
  });
}

function websocket(port: number): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  const queue: string[] = [];
  const waiters: ((s: string) => void)[] = [];
  ws.on('message', (m) => {
    const w = waiters.shift();
    if (w) w(m.toString());
    else queue.push(m.toString());
  });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        send: (r) => ws.send(JSON.stringify(r)),
        next: async () => JSON.parse(queue.length ? queue.shift()! : await new Promise<string>((r) => waiters.push(r))),
        close: () => ws.close(),
      }),
    );
  });
}

async function open(t: Test, size?: string) {
  const session = await Session.open(join(folder(size), 'scene.esn'), { workers: 1 });
  t.equal(session.refused, null, 'the scene checks');
  const listener = await listen('127.0.0.1:0', doorHandler(session), { log: () => {} });
  t.teardown(async () => {
    await listener.close();
    await session.close();
  });
  return { session, port: listener.port };
}

/** Until a request's long frame is running on the pool (explicit synchronisation, no timings). */
async function untilRunning(session: Session): Promise<void> {
  while (!(session.evaluations.size > 0 && session.pool!.pending > 0)) await tick();
}

async function untilNoEvaluation(session: Session): Promise<void> {
  while (session.evaluations.size > 0) await tick();
}

/** The frame counter, and the state `count` at (0, 0): what a stopped frame must leave as it was. */
async function world(c: Client): Promise<{ frame: number; count: number }> {
  c.send({ id: 'status', op: 'status' });
  const status = await c.next();
  c.send({ id: 'count', op: 'read', node: 'spin', port: 'count', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } });
  const read = await c.next();
  return { frame: status.ok.frame, count: f32(read.ok.data) };
}

t.test('a long frame runs off the coordinator: another connection is answered meanwhile; cancel stops it and changes nothing', async (t) => {
  const { session, port } = await open(t);
  const a = await tcp(port);
  const b = await tcp(port);
  a.send({ id: 1, op: 'evaluate', time: 3 });
  t.equal((await a.next()).ok.frame, 1, 'a short frame runs');
  const before = await world(b);
  t.same(before, { frame: 1, count: 1 });

  a.send({ id: 'long', op: 'evaluate', time: LONG });
  await untilRunning(session);
  b.send({ id: 's', op: 'status' });
  t.equal((await b.next()).id, 's', 'status on another connection is answered while the long frame runs');
  t.equal(session.evaluations.size, 1, 'the long frame still runs');
  // From another connection: it reaches nothing, and says why (it answered 0 without a word).
  b.send({ id: 'x', op: 'cancel', request: 'long' });
  const across = await b.next();
  t.match(across, { id: 'x', ok: { cancelled: 0, note: /^request "long" runs on another connection: a cancel stops only its own connection's evaluations/ } });
  b.send({ id: 'y', op: 'cancel' });
  t.match(await b.next(), { id: 'y', ok: { cancelled: 0, note: /^an evaluation of another connection runs: a cancel stops only its own connection's evaluations/ } });
  t.equal(session.evaluations.size, 1, 'and the long frame runs on');

  // Out of turn: the cancel is answered although the connection's evaluate has not been.
  a.send({ id: 'c', op: 'cancel' });
  const first = await a.next();
  t.same(first, { id: 'c', ok: { cancelled: 1 } }, 'cancel answered first, one evaluation stopped');
  const stopped = await a.next();
  t.equal(stopped.id, 'long');
  t.match(stopped.error, { cancelled: true, reason: 'cancel', frame: 1 }, 'the evaluate says it was cancelled, and why');
  t.match(stopped.error.message, /^cancelled: .*cancel.*frame 1/);
  t.same(await world(b), before, 'state and frame counter as before the frame');
  t.equal(session.pool!.threads, 1, 'the ended worker was replaced');

  a.send({ id: 2, op: 'evaluate', time: 3 });
  const next = await a.next();
  t.equal(next.ok?.frame, 2, 'the next evaluate works');
  t.equal(next.ok.placements[0].tiles, 64 / bandRowsFor(64), 'in bands on the pool: a loop is not provably short');
  t.same(await world(b), { frame: 2, count: 2 });
  a.send({ id: 'none', op: 'cancel' });
  t.same(await a.next(), { id: 'none', ok: { cancelled: 0 } }, 'nothing to cancel');
});

t.test('a deadline stops the evaluation; a read waiting behind it stops at its own', async (t) => {
  const { session, port } = await open(t);
  const a = await tcp(port);
  const b = await tcp(port);
  a.send({ id: 1, op: 'evaluate', time: 3 });
  await a.next();
  const before = await world(b);

  a.send({ id: 'long', op: 'evaluate', time: LONG, deadline: 200 });
  await untilRunning(session);
  b.send({ id: 'r', op: 'read', format: 'f32', deadline: 50 });
  const read = await b.next();
  t.match(read, { id: 'r', error: { cancelled: true, reason: 'deadline' } }, 'the read waiting for the frame stops at its deadline');
  const stopped = await a.next();
  t.match(stopped, { id: 'long', error: { cancelled: true, reason: 'deadline' } });
  t.match(stopped.error.message, /deadline of 200 ms/);
  t.same(await world(b), before, 'state and frame counter as before the frame');

  a.send({ id: 'bad', op: 'evaluate', deadline: 0 });
  t.match(await a.next(), { id: 'bad', error: { field: 'deadline', message: /above 0/ } }, 'a deadline of 0 is refused');
  a.send({ id: 'bad2', op: 'restore', path: 'x.json', deadline: 0 });
  t.match(await a.next(), { id: 'bad2', error: { field: 'deadline', message: /^`deadline` is the milliseconds `restore` may take, a number above 0/ } }, 'told as the request\'s (it said "the evaluation")');
  a.send({ id: 2, op: 'evaluate', time: 3, deadline: 60000 });
  t.equal((await a.next()).ok?.frame, before.frame + 1, 'a frame within its deadline commits');
});

t.test('a deadline counts the wait behind the connection\'s own earlier request', async (t) => {
  const { session, port } = await open(t);
  const a = await tcp(port);
  // The long frame first, then (on the same connection) one with a deadline: it waited behind the
  // long one and only then began counting. Now it is past its deadline when its turn comes.
  a.send({ id: 'long', op: 'evaluate', time: LONG });
  a.send({ id: 'short', op: 'evaluate', time: 3, deadline: 300 });
  await untilRunning(session);
  await new Promise((r) => setTimeout(r, 600));
  a.send({ id: 'c', op: 'cancel', request: 'long' });
  t.match(await a.next(), { id: 'c', ok: { cancelled: 1 } });
  t.match(await a.next(), { id: 'long', error: { cancelled: true, reason: 'cancel' } });
  const late = await a.next();
  t.match(late, { id: 'short', error: { cancelled: true, reason: 'deadline' } }, 'stopped at its deadline, counted from its arrival');
  t.match(late.error.message, /its deadline of 300 ms passed \(\d+ ms of it waiting for the requests before it on its connection\); nothing of it was kept/);
  a.send({ id: 'then', op: 'evaluate', time: 3, deadline: 60000 });
  t.ok((await a.next()).ok, 'the next one runs');
});

t.test('closing the connection stops its evaluation: TCP and WebSocket', async (t) => {
  const { session, port } = await open(t);
  const b = await tcp(port);
  b.send({ id: 1, op: 'evaluate', time: 3 });
  await b.next();
  const before = await world(b);
  for (const door of [tcp, websocket]) {
    const a = await door(port);
    a.send({ id: 'long', op: 'evaluate', time: LONG });
    await untilRunning(session);
    a.close();
    await untilNoEvaluation(session);
    t.same(await world(b), before, `${door.name}: closed mid-frame, state and frame counter as before`);
  }
  b.send({ id: 2, op: 'evaluate', time: 3 });
  t.equal((await b.next()).ok?.frame, before.frame + 1, 'the session goes on');
});

t.test('a change that swaps the world stops the old world\'s frame: evaluate and read do not wait for it', async (t) => {
  const { session, port } = await open(t, '512 x 512');
  const a = await tcp(port);
  const b = await tcp(port);
  a.send({ id: 'long', op: 'evaluate', time: LONG });
  await untilRunning(session);
  b.send({ id: 'fix', op: 'compose', path: 'kernels.esn', text: kernel('s = 2.0;') });
  t.match(await b.next(), { id: 'fix', ok: { written: true } }, 'the fix lands while the old frame runs');
  const stopped = await a.next();
  t.match(stopped, { id: 'long', error: { cancelled: true, reason: 'changed' } }, 'the old world\'s frame was stopped');
  b.send({ id: 2, op: 'evaluate', time: LONG });
  t.equal((await b.next()).ok?.frame, 1, 'the new world evaluates (the stopped frame counted nothing)');
  b.send({ id: 'r', op: 'read', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } });
  const read = await b.next();
  t.equal(f32(read.ok.data), 3, 'and reads the new kernel\'s result');
});

t.test('the coordinator runs only provably short groups', async (t) => {
  const groups = (text: string) => sceneGroups(loadScene('scene.esn', { read: (p) => ({ 'scene.esn': scene('64 x 64'), 'kernels.esn': text })[p] }), [], true);
  const [loop] = groups(kernel(LOOP));
  t.notOk(provablyShort(loop.ir, 64 * 64), 'a loop may repeat up to its fuel: not short');
  const [straight] = groups(kernel('s = 2.0;'));
  t.ok(provablyShort(straight.ir, 64 * 64), 'straight-line code on a small domain is short');
  t.notOk(provablyShort(straight.ir, 1 << 30), 'but not on any domain');
  for (const g of sceneGroups(exampleScene('rings'), [], true))
    t.ok(workBound(g.ir, 256 * 256) < SHORT_WORK / 4, `rings at 256 x 256 is well within the bound (${workBound(g.ir, 256 * 256)})`);
  t.ok(isCancel('{"op": "cancel"}') && !isCancel('{"op": "evaluate", "x": "cancel"}'), 'the doors tell a cancel line');
});

function f32(base64: string): number {
  return new Float32Array(Uint8Array.from(Buffer.from(base64, 'base64')).buffer)[0];
}
