// The protocol's doors, with an echo handler: stdin/stdout through PassThrough streams, and one
// --listen port serving raw TCP JSON lines, WebSocket and HTTP side by side. Order per
// connection, quit closing only its connection, events, origin checks, and clients that send
// garbage, disconnect mid-line, never read or reset leaving the server serving the others.

import t, { type Test } from 'tap';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { Lines } from './fixtures.js';
import {
  serveStdio,
  LineSplitter,
  parseListen,
  listen,
  sniff,
  type Connection,
  type LineHandler,
  type Listener,
  type ListenOptions,
} from '../src/protocol/transports.js';

/** Connections the echo handler has seen, by id (to send events to). */
const seen = new Map<number, Connection>();

/**
 * `quit` answers and closes; `slow:N x` answers after N ms; `throw` throws; `none` answers
 * nothing; `event` answers, then sends an event line; anything else is echoed.
 */
const echo: LineHandler = async (line, conn) => {
  seen.set(conn.id, conn);
  const answer = JSON.stringify({ echo: line, conn: conn.kind });
  if (line === 'quit') return { answer, close: true };
  if (line === 'throw') throw new Error('boom');
  if (line.includes('"throw"')) throw new Error('boom');
  if (line === 'none') return undefined;
  const slow = /^slow:(\d+)/.exec(line);
  if (slow) await delay(Number(slow[1]));
  const big = /^big:(\d+)$/.exec(line);
  if (big) {
    setImmediate(() => conn.send(JSON.stringify({ event: 'after big' })));
    return { answer: JSON.stringify({ pad: 'z'.repeat(Number(big[1])) }) };
  }
  if (line === 'event') setTimeout(() => conn.send(JSON.stringify({ event: 'tick', conn: conn.id })), 5);
  return { answer };
};

const echoed = (line: string, kind: string) => JSON.stringify({ echo: line, conn: kind });

// ---------------------------------------------------------------------------------------------
// stdin
// ---------------------------------------------------------------------------------------------

t.test('stdin: answers in request order, blank lines skipped, \\r\\n stripped, quit ends', async (t) => {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines = new Lines(output);
  const served = serveStdio(echo, input, output);
  input.write('slow:40 a\n\n   \r\nb\r\n');
  input.write('slow:10 c\nnone\nd');
  input.write('\nquit\nafter\n');
  t.same(await lines.take(5), [
    echoed('slow:40 a', 'stdin'),
    echoed('b', 'stdin'),
    echoed('slow:10 c', 'stdin'),
    echoed('d', 'stdin'),
    echoed('quit', 'stdin'),
  ]);
  await served;
  await delay(30);
  t.equal(lines['lines'].length, 0, 'nothing answered after quit');
});

t.test('stdin: end of input answers what is queued (a last line without newline too)', async (t) => {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines = new Lines(output);
  const served = serveStdio(echo, input, output);
  input.end('slow:20 one\ntwo');
  await served;
  t.same(await lines.take(2), [echoed('slow:20 one', 'stdin'), echoed('two', 'stdin')]);
});

t.test('stdin: over-long lines, handler exceptions and UTF-8 split across chunks', async (t) => {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines = new Lines(output);
  const served = serveStdio(echo, input, output, { maxLineBytes: 1000 });
  input.write('x'.repeat(600));
  input.write('x'.repeat(600)); // now over the limit, without a newline yet
  input.write('x'.repeat(5000) + '\nok\n');
  input.write('{"id":7,"op":"throw"}\n');
  const snow = Buffer.from('é☃\n');
  input.write(snow.subarray(0, 2));
  input.write(snow.subarray(2));
  const [big, ok, thrown, utf] = await lines.take(4);
  // Answered as every limit is (docs/protocol.md#limits): field, limit and max beside the message.
  t.same(Object.keys(JSON.parse(big!).error), ['field', 'limit', 'max', 'message']);
  t.match(JSON.parse(big!), { error: { field: 'line', limit: 'line-length', max: 1000, message: /^the request line is too long \(it was skipped up to its end\); the limit is 1000 bytes .*: send less at once/ } });
  t.equal(ok, echoed('ok', 'stdin'));
  t.same(JSON.parse(thrown!), { id: 7, error: { message: 'internal error: boom' } });
  t.equal(utf, echoed('é☃', 'stdin'));
  // Its first bytes give its id and op: a client waiting on the id waited for ever, and the advice
  // (write by region) did not fit a restore.
  input.write('{"id":"R1","op":"restore","data":"' + 'A'.repeat(2000) + '"}\n');
  input.write(' { "op" : "compose", "id": 12, "text": "' + 'k'.repeat(2000) + '"}\n');
  const [restore, compose] = (await lines.take(2)).map((l) => JSON.parse(l!));
  t.match(restore, { id: 'R1', error: { field: 'line', max: 1000, message: /^the `restore` request line is too long \(it was skipped up to its end\); the limit is 1000 bytes .*: restore a large snapshot from a file: `snapshot` with `path`, then `restore` with that `path`$/ } });
  t.match(compose, { id: 12, error: { message: /^the `compose` request line is too long .*: compose a large document by `edits`/ } });
  input.end();
  await served;
});

t.test('stdin and tcp: a UTF-8 byte order mark before the first line is skipped, not refused as JSON', async (t) => {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines = new Lines(output);
  const served = serveStdio(echo, input, output);
  input.end('\uFEFFone\ntwo\n');
  await served;
  t.same(await lines.take(2), [echoed('one', 'stdin'), echoed('two', 'stdin')]);
  const split: string[] = [];
  const splitter = new LineSplitter(1000, (line) => split.push(line), () => {});
  const bom = Buffer.from('\uFEFF{"op":"status"}\n\uFEFFx\n');
  splitter.push(bom.subarray(0, 2)); // the mark split over packets, as TCP may
  splitter.push(bom.subarray(2));
  t.same(split, ['{"op":"status"}', '\uFEFFx'], 'only before the first line: a later one is the line\'s own');
});

t.test('stdin: a failing output ends the door instead of crashing', async (t) => {
  const input = new PassThrough();
  const output = new PassThrough();
  const served = serveStdio(echo, input, output);
  output.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  input.write('a\n');
  await served;
  t.pass('resolved');
});

// ---------------------------------------------------------------------------------------------
// --listen addresses
// ---------------------------------------------------------------------------------------------

t.test('parseListen', async (t) => {
  t.same(parseListen('127.0.0.1:7788'), { host: '127.0.0.1', port: 7788 });
  t.same(parseListen(':9000'), { host: '127.0.0.1', port: 9000 });
  t.same(parseListen('9000'), { host: '127.0.0.1', port: 9000 });
  t.same(parseListen('0'), { host: '127.0.0.1', port: 0 });
  t.same(parseListen('localhost'), { host: 'localhost', port: 7788 });
  t.same(parseListen('0.0.0.0:80'), { host: '0.0.0.0', port: 80 });
  t.same(parseListen('[::1]:7788'), { host: '::1', port: 7788 });
  t.same(parseListen('[::]'), { host: '::', port: 7788 });
  t.same(parseListen(''), { host: '127.0.0.1', port: 7788 });
  t.same(parseListen('my-host.example:1'), { host: 'my-host.example', port: 1 });
  for (const bad of ['70000', 'host:abc', 'host:', '::1', '::1:7788', '[::1', '[nope]:1', 'http://x:1', 'a b:1', 'h_st:1', '1.2.3.4:-1'])
    t.throws(() => parseListen(bad), { message: /invalid --listen address/ }, bad);
});

t.test('sniff', async (t) => {
  t.equal(sniff(Buffer.from('GET / HTTP/1.1\r\n')), 'http');
  t.equal(sniff(Buffer.from('OPTIONS * HTTP/1.1')), 'http');
  t.equal(sniff(Buffer.from('GE')), 'more');
  t.equal(sniff(Buffer.from('{"op":"status"}\n')), 'lines');
  t.equal(sniff(Buffer.from('GETX / HTTP/1.1')), 'lines');
  t.equal(sniff(Buffer.from('quit\n')), 'lines');
  t.equal(sniff(Buffer.from([0, 255, 13, 10])), 'lines');
});

// ---------------------------------------------------------------------------------------------
// One port: TCP, WebSocket, HTTP
// ---------------------------------------------------------------------------------------------

async function start(t: Test, options: ListenOptions = {}): Promise<{ listener: Listener; logs: string[] }> {
  const logs: string[] = [];
  const listener = await listen('127.0.0.1:0', echo, {
    log: (l) => logs.push(l),
    http: (req, res) => {
      if (req.url !== '/hello') return false;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello page');
      return true;
    },
    ...options,
  });
  t.teardown(() => listener.close());
  return { listener, logs };
}

function tcp(port: number): Promise<{ socket: net.Socket; lines: Lines }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve({ socket, lines: new Lines(socket) }));
    socket.on('error', reject);
  });
}

function closedOf(socket: net.Socket): Promise<void> {
  return new Promise((r) => (socket.destroyed ? r() : socket.once('close', () => r())));
}

async function wsOpen(port: number, origin?: string): Promise<{ ws: WebSocket; lines: () => Promise<string> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, origin ? { origin } : {});
  const queue: string[] = [];
  const waiters: ((s: string) => void)[] = [];
  ws.on('message', (m) => {
    const s = m.toString();
    const w = waiters.shift();
    if (w) w(s);
    else queue.push(s);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = () =>
    queue.length ? Promise.resolve(queue.shift()!) : new Promise<string>((r) => waiters.push(r));
  return { ws, lines: next };
}

t.test('listen: port 0 logs the port it got', async (t) => {
  const { listener, logs } = await start(t);
  t.equal(listener.host, '127.0.0.1');
  t.ok(listener.port > 0);
  t.same(logs, [`listening on 127.0.0.1:${listener.port}`]);
  t.match(logs[0], /^listening on 127\.0\.0\.1:\d+$/);
});

t.test('listen: an address that is not loopback is warned of: no password guards it', async (t) => {
  const logs: string[] = [];
  const listener = await listen('0.0.0.0:0', echo, { log: (l) => logs.push(l) });
  t.teardown(() => listener.close());
  t.equal(logs[0], `listening on 0.0.0.0:${listener.port}`);
  t.match(logs[1], new RegExp(`^warning: 0\\.0\\.0\\.0:${listener.port} is not loopback: whoever can reach this machine on port ${listener.port} may use every operation .* with no password; listen on 127\\.0\\.0\\.1 unless the network is yours`));
  const { isLoopback } = await import('../src/protocol/address.js');
  t.same(['127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost'].filter((h) => !isLoopback(h)), []);
  t.same(['0.0.0.0', '::', '192.0.2.2', '10.0.0.1', '::ffff:10.0.0.1'].filter(isLoopback), []);
});

t.test('listen: a busy port is a clear error', async (t) => {
  const { listener } = await start(t);
  await t.rejects(listen({ host: '127.0.0.1', port: listener.port }, echo, { log: () => {} }), {
    message: /cannot listen on 127\.0\.0\.1:\d+: the address is in use \(EADDRINUSE\)/,
  });
});

t.test('tcp: lines in one packet, a line over packets, two clients, quit closes only one', async (t) => {
  const { listener } = await start(t);
  const a = await tcp(listener.port);
  const b = await tcp(listener.port);
  a.socket.write('slow:30 a1\na2\r\n\na3\n');
  t.same(await a.lines.take(3), [echoed('slow:30 a1', 'tcp'), echoed('a2', 'tcp'), echoed('a3', 'tcp')]);
  b.socket.write('{"op":');
  await delay(20);
  b.socket.write('"status"}');
  await delay(20);
  b.socket.write('\n');
  t.equal(await b.lines.next(), echoed('{"op":"status"}', 'tcp'));
  t.equal(listener.connections(), 2);
  a.socket.write('quit\na-after-quit\n');
  t.equal(await a.lines.next(), echoed('quit', 'tcp'));
  t.equal(await a.lines.next(), undefined, 'a ended after its quit answer');
  await closedOf(a.socket);
  b.socket.write('still\n');
  t.equal(await b.lines.next(), echoed('still', 'tcp'), 'b still served');
  t.equal(listener.connections(), 1);
  b.socket.end();
  await closedOf(b.socket);
});

t.test('tcp: events via send, half-close still answered, handler errors answered', async (t) => {
  const { listener } = await start(t);
  const c = await tcp(listener.port);
  c.socket.write('event\n');
  t.equal(await c.lines.next(), echoed('event', 'tcp'));
  t.match(JSON.parse((await c.lines.next())!), { event: 'tick' });
  c.socket.write('throw\n');
  t.same(JSON.parse((await c.lines.next())!), { error: { message: 'internal error: boom' } });
  c.socket.end('slow:20 last');
  t.equal(await c.lines.next(), echoed('slow:20 last', 'tcp'), 'answered after the client half-closed');
  t.equal(await c.lines.next(), undefined);
});

t.test('tcp: a GET split over packets is still HTTP; HTTP via options.http and 404', async (t) => {
  const { listener } = await start(t);
  const hello = await fetch(`http://127.0.0.1:${listener.port}/hello`);
  t.equal(hello.status, 200);
  t.equal(await hello.text(), 'hello page');
  const missing = await fetch(`http://127.0.0.1:${listener.port}/nope`);
  t.equal(missing.status, 404);
  t.match(await missing.text(), /not found/);
  const { socket } = await tcp(listener.port);
  let got = '';
  socket.on('data', (d) => (got += d.toString()));
  socket.write('GE');
  await delay(20);
  socket.end('T /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  await closedOf(socket);
  t.match(got, /^HTTP\/1\.1 200 OK[\s\S]*hello page/);
  const plain = await listen('127.0.0.1:0', echo, { log: () => {} });
  t.teardown(() => plain.close());
  t.equal((await fetch(`http://127.0.0.1:${plain.port}/`)).status, 404, 'no http handler: 404');
});

t.test('websocket: messages, events, quit, on the same port as tcp', async (t) => {
  const { listener } = await start(t);
  const other = await tcp(listener.port);
  const { ws, lines } = await wsOpen(listener.port);
  ws.send('slow:30 w1');
  ws.send('w2');
  t.equal(await lines(), echoed('slow:30 w1', 'websocket'));
  t.equal(await lines(), echoed('w2', 'websocket'));
  ws.send('event');
  t.equal(await lines(), echoed('event', 'websocket'));
  t.match(JSON.parse(await lines()), { event: 'tick' });
  t.equal(listener.connections(), 1, 'the tcp client has not spoken yet, so it is not a connection');
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  ws.send('quit');
  t.equal(await lines(), echoed('quit', 'websocket'));
  t.equal(await closed, 1000);
  other.socket.write('tcp still\n');
  t.equal(await other.lines.next(), echoed('tcp still', 'tcp'));
  other.socket.destroy();
});

t.test('websocket: foreign origins refused with 403, loopback and allowed origins accepted', async (t) => {
  const { listener, logs } = await start(t, { allowedOrigins: ['http://localhost:5173'] });
  const port = listener.port;
  const refused = await new Promise<number>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { origin: 'http://evil.example' });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('error', () => {});
    ws.on('open', () => resolve(101));
  });
  t.equal(refused, 403);
  t.match(logs.join('\n'), /refused WebSocket from origin http:\/\/evil\.example/);
  const rebound = await new Promise<number>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { origin: `http://attacker.example:${port}` });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('error', () => {});
    ws.on('open', () => resolve(101));
  });
  t.equal(rebound, 403, 'a DNS-rebound page on our port is still foreign');
  for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`, 'http://localhost:5173']) {
    const { ws, lines } = await wsOpen(port, origin);
    ws.send('hi');
    t.equal(await lines(), echoed('hi', 'websocket'), origin);
    ws.close();
  }
});

t.test('websocket: a message of several lines is several requests; one past the line limit is answered with the limit, a blank one with an error; the 403 names --allow-origin', async (t) => {
  const { listener } = await start(t, { maxLineBytes: 64 * 1024 });
  const { ws, lines } = await wsOpen(listener.port);
  ws.send('m1\nm2\r\n');
  t.equal(await lines(), echoed('m1', 'websocket'));
  t.equal(await lines(), echoed('m2', 'websocket'));
  ws.send('x'.repeat(64 * 1024 + 1));
  t.match(JSON.parse(await lines()), { error: { limit: 'line-length', max: 64 * 1024 } }, 'answered, not closed (1009)');
  ws.send('after');
  t.equal(await lines(), echoed('after', 'websocket'), 'the connection goes on');
  for (const blank of ['', ' \r\n\t'])
    t.match(JSON.parse(await (ws.send(blank), lines())), { error: { message: /^an empty message holds no request: send one JSON object per message/ } }, `a blank message ${JSON.stringify(blank)} is answered (a client waits for an answer to each message)`);
  ws.send('last');
  t.equal(await lines(), echoed('last', 'websocket'));
  ws.close();
  const body = await new Promise<string>((resolve) => {
    const refused = new WebSocket(`ws://127.0.0.1:${listener.port}/`, { origin: 'http://evil.example' });
    refused.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      const done = () => {
        resolve(text);
        refused.terminate(); // else its socket stays, and the listener's close waits for it
      };
      res.on('end', done);
      res.on('close', done);
    });
    refused.on('error', (e) => resolve(String(e)));
  });
  t.match(body, /origin http:\/\/evil\.example is not allowed; start the server with --allow-origin http:\/\/evil\.example/);
});

t.test('garbage, half lines, resets and huge lines leave the server serving', async (t) => {
  const { listener } = await start(t, { maxLineBytes: 64 * 1024 });
  const port = listener.port;
  const good = await tcp(port);

  const garbage = await tcp(port);
  garbage.socket.write(Buffer.from([0, 1, 2, 255, 254, 10, 0xc3, 10]));
  const [g1, g2] = await garbage.lines.take(2);
  t.ok(g1 && g2, 'garbage lines are answered (the session refuses them as JSON)');
  garbage.socket.destroy();

  const half = await tcp(port);
  half.socket.write('{"op":"sta');
  await delay(10);
  half.socket.destroy();

  const reset = await tcp(port);
  reset.socket.write('slow:50 x\n');
  await delay(10);
  reset.socket.resetAndDestroy();

  const huge = await tcp(port);
  huge.socket.write(Buffer.alloc(200 * 1024, 'a'));
  huge.socket.write('\nafter huge\n');
  t.match(JSON.parse((await huge.lines.next())!), { error: { field: 'line', limit: 'line-length', max: 65536, message: /too long/ } });
  t.equal(await huge.lines.next(), echoed('after huge', 'tcp'));

  const hugeWs = await wsOpen(port);
  hugeWs.ws.send('b'.repeat(100 * 1024));
  t.match(JSON.parse(await hugeWs.lines()), { error: { field: 'line', limit: 'line-length', max: 65536 } }, 'an over-long WebSocket message is answered with the limit, as a TCP line is');
  const wsClosed = new Promise<number>((r) => hugeWs.ws.once('close', (code) => r(code)));
  hugeWs.ws.send('b'.repeat(4 * 64 * 1024 + 1));
  t.equal(await wsClosed, 1009, 'one past 4 times the limit closes that WebSocket unread (1009)');

  const badHttp = await tcp(port);
  let badAnswer = '';
  badHttp.socket.on('data', (d) => (badAnswer += d.toString()));
  badHttp.socket.write('GET \x00\x01 nonsense\r\n\r\n');
  await closedOf(badHttp.socket);
  t.match(badAnswer, /^HTTP\/1\.1 400/);

  const silent = await tcp(port);
  silent.socket.end();
  await closedOf(silent.socket);

  good.socket.write('still here\n');
  t.equal(await good.lines.next(), echoed('still here', 'tcp'));
  const { ws, lines } = await wsOpen(port);
  ws.send('ws too');
  t.equal(await lines(), echoed('ws too', 'websocket'));
  ws.close();
  t.equal((await fetch(`http://127.0.0.1:${port}/hello`)).status, 200);
});

t.test('a client that never reads is dropped once its unread output passes the bound', async (t) => {
  const { listener, logs } = await start(t, { maxBufferedBytes: 256 * 1024 });
  const port = listener.port;
  const lazy = await tcp(port);
  lazy.socket.write('lazy\n');
  t.equal(await lazy.lines.next(), echoed('lazy', 'tcp'));
  lazy.socket.pause();
  const conn = [...seen.values()].filter((c) => c.kind === 'tcp').pop()!;
  const before = listener.connections();
  const event = JSON.stringify({ event: 'x'.repeat(64 * 1024) });
  let sent = 0;
  while (listener.connections() === before && sent < 256 * 1024 * 1024) {
    conn.send(event);
    sent += event.length;
    if (sent % (4 * 1024 * 1024) < event.length) await delay(1);
  }
  t.equal(listener.connections(), before - 1, 'dropped');
  t.ok(sent < 256 * 1024 * 1024, `dropped after ${sent} bytes`);
  t.match(logs.join('\n'), /tcp connection \d+ dropped/);
  const other = await tcp(port);
  other.socket.write('fine\n');
  t.equal(await other.lines.next(), echoed('fine', 'tcp'));
  other.socket.destroy();
  lazy.socket.destroy();
});

t.test('a big answer being read does not get its client dropped by the next event', async (t) => {
  const { listener } = await start(t, { maxBufferedBytes: 64 * 1024 });
  const c = await tcp(listener.port);
  c.socket.pause(); // reading it later: the answer is still buffered when the event comes
  c.socket.write('big:12000000\n');
  await delay(150);
  c.socket.resume();
  const answer = await c.lines.next(5000);
  t.equal(answer?.length, 12000000 + '{"pad":""}'.length);
  t.same(JSON.parse((await c.lines.next())!), { event: 'after big' });
  c.socket.write('more\n');
  t.equal(await c.lines.next(), echoed('more', 'tcp'));
  c.socket.destroy();
});

t.test('a client that sends but never reads only stalls itself', async (t) => {
  const { listener } = await start(t);
  const port = listener.port;
  const hog = await tcp(port);
  hog.socket.pause();
  const big = JSON.stringify({ pad: 'y'.repeat(256 * 1024) });
  for (let i = 0; i < 100; i++) hog.socket.write(big + '\n');
  await delay(100);
  const other = await tcp(port);
  other.socket.write('served\n');
  t.equal(await other.lines.next(), echoed('served', 'tcp'));
  other.socket.destroy();
  hog.socket.destroy();
});

t.test('close() stops listening and ends every connection', async (t) => {
  const listener = await listen('127.0.0.1:0', echo, { log: () => {} });
  const c = await tcp(listener.port);
  c.socket.write('hi\n');
  t.equal(await c.lines.next(), echoed('hi', 'tcp'));
  const { ws } = await wsOpen(listener.port);
  const wsClosed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  const idle = await tcp(listener.port);
  await listener.close();
  await closedOf(c.socket);
  await closedOf(idle.socket);
  t.equal(await wsClosed, 1001);
  t.equal(listener.connections(), 0);
  await t.rejects(tcp(listener.port), { code: 'ECONNREFUSED' });
});
