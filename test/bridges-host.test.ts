// bridges/host against real `entelechy serve --listen` processes: every operation over TCP and
// over WebSocket, request ids, timeouts, events (published, rejected), connection errors.

import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  connect,
  connectTcp,
  connectWebSocket,
  EntelechyConnectionError,
  EntelechyError,
  EntelechyTimeoutError,
  type EntelechyClient,
  type ProtocolEvent,
  type RequestFields,
} from '../bridges/host/index.js';
import { OPERATION_NAMES } from '../src/protocol/operations.js';
import { serveExample } from './bridges-session.js';
import { ROOT } from './helpers.js';

const TIMEOUT = 60000; // the machine may be busy: generous, but a hang still fails

const transports: [string, (port: number) => Promise<EntelechyClient>][] = [
  ['tcp', (port) => connectTcp('127.0.0.1', port, { timeout: TIMEOUT })],
  ['websocket', (port) => connectWebSocket(`ws://127.0.0.1:${port}`, { timeout: TIMEOUT })],
];

for (const [kind, open] of transports) {
  t.test(`every operation of the table answers over ${kind}`, async (t) => {
    const session = await serveExample(t, 'life');
    const client = await open(session.port);
    t.teardown(() => client.close());
    const reached = new Set<string>();
    const ask = async <T>(op: string, answer: Promise<T>): Promise<T> => {
      const value = await answer;
      reached.add(op);
      return value;
    };

    const status = await ask('status', client.request('status'));
    t.equal(status.scene, 'scene.esn');
    t.same(status.outputs, ['result']);
    t.match((await ask('kernels', client.request('kernels'))).kernels, [{ id: 'life.step@2' }]);
    const kernel = await ask('kernel', client.request('kernel', { kernel: 'life.step@2' }));
    t.match(kernel.source, /^kernel life\.step@2 \{/);
    t.same((await ask('graph', client.request('graph'))).order, ['board']);
    const document = await ask('document', client.request('document'));
    t.equal(document.path, 'scene.esn');
    t.equal((await ask('history', client.request('history'))).versions.length, 1);
    t.equal((await ask('help', client.request('help', { name: 'read' }))).name, 'read');
    const composed = await ask('compose', client.request('compose', { expect: document.version, edits: [{ param: 'speed', text: 'param speed: f32 = 1.0 range 0..4;' }] }));
    t.equal(composed.written, true);
    t.match(readFileSync(join(session.dir, 'scene.esn'), 'utf8'), /param speed: f32 = 1\.0 range 0\.\.4;/);
    t.ok(Array.isArray((await ask('sync', client.request('sync'))).events));
    // The compose added a param: a replay that expects none fails from version 1 on.
    const bisected = await ask('bisect', client.request('bisect', { good: '0', bad: '1', replay: '> {"op":"graph"}\n< {"ok":{"params":[]}}\n' }));
    t.same([bisected.first_bad?.position, bisected.candidates], [1, 2], 'bisect: the compose broke the replay');
    t.equal((await ask('prepare', client.request('prepare', { source: kernel.source }))).id, 'life.step@2');
    const published = await ask('publish', client.request('publish', { source: kernel.source }));
    t.equal(published.id, 'life.step@2');
    t.same((await ask('param', client.request('param', { name: 'speed', value: 2 }))).value, 2);
    const frame = await ask('evaluate', client.request('evaluate', { time: 0.5 }));
    t.same(frame.executed, ['board']);
    t.same(frame.outputs, [{ name: 'result', width: 128, height: 128 }]);
    const png = await ask('read', client.readPng());
    t.same([...png.subarray(1, 4)], [...Buffer.from('PNG')], 'read answers a PNG');
    await ask('pin', client.request('pin', { node: 'board' }));
    await ask('write', client.request('write', { node: 'board', port: 'cells', value: 1 }));
    const cells = await client.readFloats({ node: 'board', port: 'cells' });
    t.same([cells.width, cells.height, cells.components], [128, 128, 1]);
    t.ok(cells.planes[0]!.every((v) => v === 1), 'write then read: every cell holds the value written');
    const snapshot = await ask('snapshot', client.request('snapshot', {}));
    t.type(snapshot.data, 'string');
    await ask('restore', client.request('restore', { data: snapshot.data! }));
    t.same(await ask('pause', client.request('pause', { paused: true })), { paused: true });
    t.same(await client.request('pause'), { paused: false }, 'pause without a field toggles');
    await ask('reset', client.request('reset', {}));
    const traced = await ask('trace', client.request('trace', { x: 3, y: 4 }));
    t.ok(traced.values.some((v) => v.node === 'board' && v.port === 'cells'));
    t.same((await ask('unpin', client.request('unpin', { node: 'board' }))).pins, []);
    t.equal((await ask('retire', client.request('retire', { kernel: 'life.step@2' }))).id, 'life.step@2');
    t.same(await ask('cancel', client.request('cancel')), { cancelled: 0 }, 'nothing running to cancel');
    const closed = new Promise<Error | undefined>((resolve) => client.onClose(resolve));
    t.same(await ask('quit', client.request('quit')), {});
    t.equal(await closed, undefined, 'a quit of its own is no error');
    t.ok(client.closed, 'quit ends the connection');
    await t.rejects(client.request('status'), { name: 'EntelechyConnectionError', message: /is closed; `status` was not sent/ });
    t.same([...reached].sort(), [...OPERATION_NAMES].sort(), 'all 26 operations reached');
  });
}

t.test('answers find their requests by id, also when many are in flight', async (t) => {
  const session = await serveExample(t, 'rings');
  for (const [kind, open] of transports) {
    const client = await open(session.port);
    const [status, frame, help, traced] = await Promise.all([
      client.request('status'),
      client.request('evaluate', { time: 0.25 }),
      client.request('help', { name: 'trace' }),
      client.request('trace', { x: 1, y: 2, output: 'result' }),
    ]);
    t.equal(typeof status.revision, 'number', kind);
    t.equal(frame.time, 0.25, kind);
    t.equal(help.name, 'trace', kind);
    t.same([traced.x, traced.y], [1, 2], kind);
    // An error answer rejects with the engine's message and echoes the id the client gave.
    const error = await client.send({ op: 'frobnicate' }).catch((e: unknown) => e);
    t.ok(error instanceof EntelechyError, kind);
    const e = error as EntelechyError;
    t.match(e.message, /^unknown op `frobnicate`/);
    t.equal(e.op, 'frobnicate');
    t.equal(e.id, 5, 'the fifth request of this client');
    t.same(e.data.operations, OPERATION_NAMES);
    // A field the operation does not take: the envelope's message, with fields/field/expected.
    await t.rejects(client.send({ op: 'read', colour: 'red' }), { name: 'EntelechyError', message: /`read` takes no field `colour`/ });
    await client.close();
  }
});

t.test('a request that gets no answer in time fails naming its op; later ones still match', async (t) => {
  const session = await serveExample(t, 'rings');
  const client = await connectTcp('127.0.0.1', session.port, { timeout: TIMEOUT });
  t.teardown(() => client.close());
  await client.request('status');
  session.child.kill('SIGSTOP'); // the session stops answering (really: the process is stopped)
  try {
    // The process is stopped until `finally`: the error can only be the client's own timeout.
    const error = await client.request('evaluate', { time: 1 }, { timeout: 300 }).catch((e: unknown) => e);
    t.ok(error instanceof EntelechyTimeoutError);
    t.match((error as Error).message, /^`evaluate` \(request 2\) got no answer within 300 ms/);
  } finally {
    session.child.kill('SIGCONT');
  }
  // The late answer to request 2 arrives and is dropped; request 3 gets its own.
  const status = await client.request('status');
  t.equal(status.time, 1, 'the evaluate the host gave up on still ran');
});

t.test('events reach listeners: a compose that publishes, a compose refused, saved edits published and rejected', async (t) => {
  const session = await serveExample(t, 'rings');
  const client = await connect(`ws://127.0.0.1:${session.port}`, { timeout: TIMEOUT });
  t.teardown(() => client.close());
  const seen: { event: ProtocolEvent; op: string }[] = [];
  client.on('*', (event, source) => seen.push({ event, op: source.op }));
  const published: ProtocolEvent[] = [];
  const rejected: ProtocolEvent[] = [];
  client.on('published', (e) => published.push(e));
  client.on('rejected', (e) => rejected.push(e));

  // A compose that changes a kernel: the answer carries `published` with the new generation.
  const kernels = readFileSync(join(session.dir, 'kernels.esn'), 'utf8');
  const brighter = kernels.replace('src.x * (0.5 + warmth)', 'src.x * (0.6 + warmth)');
  t.not(brighter, kernels);
  await client.request('compose', { path: 'kernels.esn', text: brighter });
  t.match(published, [{ kind: 'published', kernel: 'demo.tint@1', generation: 2 }]);
  t.ok(seen.some((s) => s.event.kind === 'scene_loaded' && s.op === 'compose'), 'every event reaches the * listener with its op');

  // A compose that does not check: an error answer, nothing written; the next sync says scene_rejected.
  const refused = await client.request('compose', { edits: [{ node: 'rings', member: 'count', text: 'count = nope;' }] }).catch((e: unknown) => e);
  t.ok(refused instanceof EntelechyError);
  t.match((refused as EntelechyError).message, /^compose refused: nothing was written/);
  t.equal((refused as EntelechyError).data.written, false);
  await client.request('sync');
  t.ok(seen.some((s) => s.event.kind === 'scene_rejected' && s.op === 'sync'));

  // Edits saved on disk: watch() polls sync, so `rejected` and `published` arrive by themselves.
  const stop = client.watch(50);
  t.teardown(stop);
  const next = (list: ProtocolEvent[], count: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no event in time; seen: ${JSON.stringify(seen.map((s) => s.event.kind))}`)), TIMEOUT);
      const poll = setInterval(() => {
        if (list.length >= count) {
          clearInterval(poll);
          clearTimeout(timer);
          resolve();
        }
      }, 20);
    });
  writeFileSync(join(session.dir, 'kernels.esn'), brighter.replace('src.y,', 'src.nope,'));
  await next(rejected, 1);
  t.match(rejected[0], { kind: 'rejected', paths: ['kernels.esn'] });
  t.match(String(rejected[0]!.message), /the saved edit does not check; the previous version keeps running/);
  writeFileSync(join(session.dir, 'kernels.esn'), kernels);
  await next(published, 2);
  t.ok(published.some((e) => Array.isArray(e.paths) && (e.paths as string[]).includes('kernels.esn')), 'the saved good version is published');
  t.ok(seen.some((s) => s.event.kind === 'preparing' && s.op === 'sync'));
  stop();
});

t.test('connection problems are clear errors', async (t) => {
  const session = await serveExample(t, 'rings');
  const client = await connect(`127.0.0.1:${session.port}`, { timeout: TIMEOUT });
  const ended = new Promise<Error | undefined>((resolve) => client.onClose(resolve));
  session.child.kill('SIGSTOP');
  const waiting = client.request('status').catch((e: unknown) => e);
  session.child.kill('SIGKILL');
  const error = await waiting;
  t.ok(error instanceof EntelechyConnectionError);
  t.match((error as Error).message, /^`status` \(request 1\) got no answer: /);
  t.match(await ended, { name: 'EntelechyConnectionError' }, 'onClose hears an error');
  t.ok(client.closed);
  // The client may see its connection close before the dying server's listener is closed (the
  // kernel closes a process's sockets one by one): wait for the exit itself.
  const child = session.child;
  if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));

  await t.rejects(connect(`127.0.0.1:${session.port}`), { name: 'EntelechyConnectionError', message: /^cannot connect to tcp:\/\/127\.0\.0\.1:\d+: connection refused/ });
  await t.rejects(connect(`ws://127.0.0.1:${session.port}`), { name: 'EntelechyConnectionError', message: /^cannot connect to ws:\/\/127\.0\.0\.1:\d+: connection refused/ });
  await t.rejects(connect('somewhere'), { name: 'EntelechyConnectionError', message: /give ws:\/\/HOST:PORT, tcp:\/\/HOST:PORT or HOST:PORT/ });
});

t.test('a session that ends under an idle client is told to onClose as an error (a host exited 0 as if it had closed it)', async (t) => {
  for (const via of ['tcp', 'ws'] as const) {
    const session = await serveExample(t, 'rings');
    const client = await connect(`${via}://127.0.0.1:${session.port}`, { timeout: TIMEOUT });
    const ended = new Promise<Error | undefined>((resolve) => client.onClose(resolve));
    session.child.kill('SIGTERM');
    t.match(await ended, { name: 'EntelechyConnectionError', message: /(closed the connection \(the session ended\?\)|reset by the session)$/ }, via);
  }
});

// Types only (never run): requests are typed from the operations table.
export function typedRequests(client: EntelechyClient): void {
  void client.request('status');
  void client.request('trace', { x: 1 });
  // @ts-expect-error trace needs x
  void client.request('trace', {});
  // @ts-expect-error trace needs its fields
  void client.request('trace');
  // @ts-expect-error read takes no field colour
  void client.request('read', { colour: 'red' });
  // @ts-expect-error format is a string
  void client.request('read', { format: 32 });
  // @ts-expect-error no such operation
  void client.request('frobnicate');
  const fields: RequestFields<'evaluate'> = { time: 1, outputs: ['result'] };
  void client.request('evaluate', fields).then((answer) => answer.frame.toFixed());
}

t.test("the README's example host program serves frames on demand and reports a rejected edit", async (t) => {
  const session = await serveExample(t, 'rings');
  const example = spawn(process.execPath, [join(ROOT, 'dist', 'bridges', 'host', 'example.js'), `ws://127.0.0.1:${session.port}`, '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => example.once('exit', () => resolve()));
  t.teardown(async () => {
    if (example.exitCode === null) example.kill();
    await exited;
  });
  let output = '';
  example.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the example did not print ${pattern} in time: ${output}`)), TIMEOUT);
      const look = () => {
        const m = pattern.exec(output);
        if (m) {
          clearTimeout(timer);
          example.stdout.off('data', onData);
          resolve(m);
        }
      };
      const onData = (d: Buffer) => {
        output += d.toString();
        look();
      };
      example.stdout.on('data', onData);
      look();
    });
  const [, httpPort] = await waitFor(/frames on http:\/\/127\.0\.0\.1:(\d+)\//);
  const frame = await fetch(`http://127.0.0.1:${httpPort}/frame?time=0.5`);
  t.equal(frame.status, 200);
  t.equal(frame.headers.get('content-type'), 'image/png');
  const png = Buffer.from(await frame.arrayBuffer());
  t.equal(png.toString('latin1', 1, 4), 'PNG');
  t.same([png.readUInt32BE(16), png.readUInt32BE(20)], [256, 256], 'the 256 x 256 frame of rings');
  const bad = await fetch(`http://127.0.0.1:${httpPort}/frame?time=soon`);
  t.equal(bad.status, 400);
  t.match(await bad.text(), /`time` of `evaluate` must be a number/);
  const kernels = join(session.dir, 'kernels.esn');
  writeFileSync(kernels, readFileSync(kernels, 'utf8').replace('src.y,', 'src.nope,'));
  await waitFor(/rejected, the previous version keeps running: the saved edit does not check/);
  t.equal((await fetch(`http://127.0.0.1:${httpPort}/frame?time=1`)).status, 200, 'frames go on with the previous version');
});
