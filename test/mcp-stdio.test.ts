// `entelechy mcp` over a real stdio pipe, as a raw JSON-RPC client writes it: a message past the
// line limit is refused and the server goes on (the SDK's transport closed itself past 10 MiB and
// the server ended without a word); `cancel` is answered at once, out of turn, and stops the
// evaluation it names by its tools/call id; notifications/cancelled stops the call's evaluation
// too, and the server still ends when stdin closes (it waited for an answer never to be sent).

import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

// A frame that takes minutes (65536 elements x 10^5 steps): it is stopped, never finished.
const SLOW = `kernel slow@1 {
  out image: field2<f32>;
  each (x, y) {
    let s = 0.0;
    for (let i = 0; i < 100000; i++) { s += sin(i * 0.001 + x); }
    image = s;
  }
}
node n: slow@1 { size = 256 x 256; }
output image <- n.image;
`;

type Message = { id?: unknown; result?: any; error?: any };

function mcp(t: Test) {
  const dir = scratchDir('entelechy-mcp-stdio-');
  writeFileSync(join(dir, 'scene.esn'), SLOW);
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'mcp', join(dir, 'scene.esn'), '--workers', '1'], { cwd: ROOT });
  const messages: Message[] = [];
  let waiters: { test: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as Message;
    messages.push(m);
    waiters = waiters.filter((w) => !(w.test(m) && (w.resolve(m), true)));
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.teardown(() => void child.kill('SIGKILL'));
  const send = (m: object | string) => child.stdin.write((typeof m === 'string' ? m : JSON.stringify({ jsonrpc: '2.0', ...m })) + '\n');
  const answer = (test: (m: Message) => boolean): Promise<Message> => {
    const seen = messages.find(test);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ test, resolve }));
  };
  const call = (id: number, name: string, args: object = {}) => send({ id, method: 'tools/call', params: { name, arguments: args } });
  const start = async () => {
    send({ id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
    await answer((m) => m.id === 0);
    send({ method: 'notifications/initialized' });
  };
  return { send, answer, call, start, exited, messages, stdin: child.stdin, stderr: () => stderr };
}

t.test('a message past the line limit is refused with the limit, and the server goes on', async (t) => {
  const s = mcp(t);
  await s.start();
  // 11 MB: past the SDK transport's 10 MiB, inside the protocol's 16 MiB: answered as any call.
  s.call(1, 'help', { name: 'x'.repeat(11_000_000) });
  const eleven = await s.answer((m) => m.id === 1);
  t.ok(eleven.result?.isError, 'an 11 MB call is answered (a tool error: the name is past its own limit)');
  t.match(eleven.result?.content?.[0]?.text, /name-length/);
  s.call(2, 'help', { name: 'y'.repeat(17 * 1024 * 1024) });
  const refused = await s.answer((m) => m.id === null && m.error?.code === -32600);
  t.match(refused.error.message, /Invalid Request: the message is too long \(it was skipped up to its end\); the limit is 16777216 bytes \(line-length/);
  t.match(refused.error.data, { field: 'line', limit: 'line-length', max: 16777216 });
  s.call(3, 'status');
  const status = await s.answer((m) => m.id === 3);
  t.ok(status.result && !status.result.isError, 'the next call is answered: the server is up');
  t.notOk(s.messages.some((m) => m.id === 2), 'the skipped call has no answer of its own');
  s.stdin.end();
  t.equal(await s.exited, 0, s.stderr());
});

t.test('cancel is answered at once and stops the evaluation it names by its tools/call id', async (t) => {
  const s = mcp(t);
  await s.start();
  s.call(10, 'evaluate');
  await new Promise((r) => setTimeout(r, 1500));
  // Queued behind the evaluation, cancel was answered after its frame (minutes: the test's time would run out).
  s.call(11, 'cancel', { request: 10 });
  const cancelled = await s.answer((m) => m.id === 11);
  t.same(cancelled.result?.structuredContent, { cancelled: 1 }, JSON.stringify(cancelled));
  const evaluated = await s.answer((m) => m.id === 10);
  t.ok(evaluated.result?.isError, 'the evaluation answers a tool error');
  t.match(evaluated.result?.content?.[0]?.text, /cancel/);
  s.call(12, 'status');
  t.equal((await s.answer((m) => m.id === 12)).result?.structuredContent?.frame, 0, 'no frame was kept');
  s.stdin.end();
  t.equal(await s.exited, 0, s.stderr());
});

t.test('notifications/cancelled stops the call, which is not answered; then closing stdin ends the server', async (t) => {
  const s = mcp(t);
  await s.start();
  s.call(20, 'evaluate');
  await new Promise((r) => setTimeout(r, 1500));
  s.send({ method: 'notifications/cancelled', params: { requestId: 20, reason: 'the user stopped it' } });
  s.call(21, 'status');
  const status = await s.answer((m) => m.id === 21);
  t.equal(status.result?.structuredContent?.frame, 0, 'the frame was stopped, nothing kept');
  s.stdin.end();
  const code = await Promise.race([s.exited, new Promise((r) => setTimeout(() => r('still running 60 s after stdin closed'), 60_000))]);
  t.equal(code, 0, s.stderr());
  t.notOk(s.messages.some((m) => m.id === 20), 'the cancelled call is not answered (MCP: the client no longer waits for it)');
});
