// `entelechy serve` through its real doors: a spawned process with stdin/stdout, and --listen
// serving a TCP client and a WebSocket client on the same port at once. (The in-process door,
// dispatch(session, line), is covered by protocol.test.ts.)

import t from 'tap';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { ROOT } from './helpers.js';
import { copyExample, Lines } from './fixtures.js';

interface Server {
  child: ChildProcessWithoutNullStreams;
  out: Lines;
  port: number;
  exit: Promise<number | null>;
  stderr: () => string;
}

/** Spawn `entelechy serve` on a copy of an example; resolves once it listens (when asked to). */
async function startServer(name: string, listen = true): Promise<Server & { dir: string }> {
  const dir = copyExample(name, 'serve');
  const args = [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(dir, 'scene.esn'), '--workers', '1', ...(listen ? ['--listen', '127.0.0.1:0'] : [])];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let err = '';
  const port = new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d.toString();
      const m = /listening on (\S+):(\d+)/.exec(err);
      if (m) resolve(Number(m[2]));
    });
    void exit.then((code) => reject(new Error(`serve exited (${code}) before listening: ${err}`)));
  });
  if (!listen) port.catch(() => undefined);
  t.teardown(() => {
    if (child.exitCode === null) child.kill();
  });
  const out = new Lines(child.stdout);
  return { child, out, port: listen ? await port : 0, exit, stderr: () => err, dir };
}

async function ask(send: (line: string) => void, lines: Lines, req: object): Promise<any> {
  send(JSON.stringify(req));
  const line = await lines.next();
  if (line === undefined) throw new Error(`no answer to ${JSON.stringify(req)}`);
  return JSON.parse(line);
}

/** A TCP client speaking JSON lines. */
async function tcpClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const lines = new Lines(socket);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, lines, closed, ask: (req: object) => ask((l) => socket.write(l + '\n'), lines, req) };
}

/** A WebSocket client: one request a message, one answer a message. */
async function wsClient(port: number) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const queue: string[] = [];
  const waiters: ((s: string) => void)[] = [];
  ws.on('message', (data) => {
    const s = data.toString();
    const w = waiters.shift();
    if (w) w(s);
    else queue.push(s);
  });
  const next = (): Promise<string> =>
    queue.length
      ? Promise.resolve(queue.shift()!)
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("no WebSocket message in time")), 90000);
          waiters.push((s) => {
            clearTimeout(timer);
            resolve(s);
          });
        });
  return {
    ws,
    ask: async (req: object) => {
      ws.send(JSON.stringify(req));
      return JSON.parse(await next());
    },
  };
}

t.test('stdin: lines answered in order; quit ends the process with 0', async (t) => {
  const s = await startServer('rings', false);
  const send = (l: string) => s.child.stdin.write(l + '\n');
  // Several lines at once: the answers come back in order.
  send('{"id":1,"op":"status"}');
  send('{"id":2,"op":"param","name":"warmth","value":0.9}');
  send('{"id":3,"op":"evaluate","time":0.5}');
  send('not json');
  send('{"id":5,"op":"frobnicate"}');
  const answers = [];
  for (let i = 0; i < 5; i++) answers.push(JSON.parse((await s.out.next())!));
  t.same(answers.map((a) => a.id), [1, 2, 3, undefined, 5]);
  t.equal(answers[0].ok.scene, 'scene.esn');
  t.same(answers[1].ok, { events: [], name: 'warmth', value: 0.9 });
  t.same(answers[2].ok.executed, ['rings', 'tint']);
  t.equal(answers[3].error.line, 1);
  t.ok(answers[4].error.operations);
  const q = await ask(send, s.out, { id: 6, op: 'quit' });
  t.same(q, { id: 6, ok: {} });
  t.equal(await s.exit, 0, 'exit code 0');
  t.equal(await s.out.next(), undefined, 'nothing after quit');
});

t.test('TCP and WebSocket on one port; compose during evaluations; quit ends one connection', async (t) => {
  const s = await startServer('rings');
  t.ok(s.port > 0, `listening on port ${s.port}`);
  const tcp = await tcpClient(s.port);
  const ws = await wsClient(s.port);

  const a = await tcp.ask({ id: 't1', op: 'status' });
  const b = await ws.ask({ id: 'w1', op: 'status' });
  t.equal(a.id, 't1');
  t.equal(b.id, 'w1');
  t.equal(a.ok.revision, b.ok.revision, 'one session behind both doors');

  // Several lines on one TCP write: answered in order.
  tcp.socket.write('{"id":1,"op":"pause","paused":false}\n{"id":2,"op":"help","name":"sin"}\n{"id":3,"op":"status"}\n');
  t.same([JSON.parse((await tcp.lines.next())!).id, JSON.parse((await tcp.lines.next())!).id, JSON.parse((await tcp.lines.next())!).id], [1, 2, 3]);

  // The WebSocket evaluates in a loop while TCP composes: both answered, evaluate keeps answering.
  let composing = true;
  let during = 0;
  let total = 0;
  let warm!: () => void;
  const warmed = new Promise<void>((r) => (warm = r));
  const loop = (async () => {
    for (let i = 0; composing || i < 3; i++) {
      const e = await ws.ask({ id: i, op: 'evaluate', time: i * 0.01 });
      if (!e.ok) throw new Error(`evaluate failed: ${JSON.stringify(e)}`);
      total++;
      if (composing && i > 0) during++;
      warm();
    }
  })();
  // The compose starts once the loop's first frame (the slowest: the pool's first run) is answered.
  await warmed;
  const c = await tcp.ask({ id: 'c', op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 12.0;' }] });
  composing = false;
  await loop;
  t.equal(c.ok?.written, true, 'compose answered');
  t.ok(total >= 3, `evaluate answered ${total} times`);
  t.ok(during >= 1, `evaluate answered while the compose ran (${during} times)`);
  t.match(readFileSync(join(s.dir, 'scene.esn'), 'utf8'), /count = 12\.0;/);
  const g = await ws.ask({ op: 'graph' });
  t.same(g.ok.nodes[0].members, { count: [12] }, 'the WebSocket sees the compose');

  // quit on TCP ends that connection only.
  const q = await tcp.ask({ id: 'q', op: 'quit' });
  t.same(q, { id: 'q', ok: {} });
  await tcp.closed;
  t.pass('the TCP connection closed');
  const still = await ws.ask({ id: 'after', op: 'status' });
  t.equal(still.id, 'after');
  t.ok(still.ok, 'the WebSocket still answers');
  const tcp2 = await tcpClient(s.port);
  t.ok((await tcp2.ask({ op: 'status' })).ok, 'a new TCP connection is served');
  tcp2.socket.destroy();

  // quit on the WebSocket closes it; the process (stdin open) goes on until stdin quits.
  const wq = await ws.ask({ op: 'quit' });
  t.same(wq, { ok: {} });
  await new Promise<void>((resolve) => (ws.ws.readyState === WebSocket.CLOSED ? resolve() : ws.ws.once('close', () => resolve())));
  const sq = await ask((l) => s.child.stdin.write(l + '\n'), s.out, { op: 'quit' });
  t.same(sq, { ok: {} });
  t.equal(await s.exit, 0, 'quit on stdin ends the process');
});
