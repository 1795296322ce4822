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
  // An answer that never comes fails the test (after a bound, not a measurement) instead of holding it until tap's own timeout.
  const answer = (test: (m: Message) => boolean): Promise<Message> => {
    const seen = messages.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer ${test} within 120 s; the messages: ${JSON.stringify(messages).slice(0, 2000)}`)), 120_000);
      timer.unref();
      waiters.push({ test, resolve: (m: Message) => (clearTimeout(timer), resolve(m)) });
    });
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
  // Its id is echoed (read from its first bytes): a client waiting on it had waited for ever.
  const refused = await s.answer((m) => m.id === 2 && m.error?.code === -32600);
  t.match(refused.error.message, /Invalid Request: the message is too long \(it was skipped up to its end\); the limit is 16777216 bytes \(line-length/);
  t.match(refused.error.data, { field: 'line', limit: 'line-length', max: 16777216 });
  s.call(3, 'status');
  const status = await s.answer((m) => m.id === 3);
  t.ok(status.result && !status.result.isError, 'the next call is answered: the server is up');
  t.equal(s.messages.filter((m) => m.id === 2).length, 1, 'the skipped call has one answer: the refusal');
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

t.test('an evaluation waiting its turn is cancelled too: by `cancel` naming it or not, and by notifications/cancelled', async (t) => {
  const s = mcp(t);
  await s.start();
  s.call(30, 'evaluate');
  s.call(31, 'evaluate', { time: 1 }); // waits for 30
  s.call(32, 'trace', { x: 0, y: 0 }); // waits too
  s.call(33, 'evaluate', { time: 2 }); // and this one
  await new Promise((r) => setTimeout(r, 1500));
  s.send({ method: 'notifications/cancelled', params: { requestId: 33, reason: 'no longer wanted' } });
  s.call(34, 'cancel', { request: 31 });
  t.same((await s.answer((m) => m.id === 34)).result?.structuredContent, { cancelled: 1 }, 'the waiting call it names counts');
  s.call(35, 'cancel');
  t.same((await s.answer((m) => m.id === 35)).result?.structuredContent, { cancelled: 2 }, 'the running frame and the waiting trace (31 was cancelled already)');
  for (const id of [30, 31, 32]) {
    const a = await s.answer((m) => m.id === id);
    t.ok(a.result?.isError, `${id}: a tool error`);
    t.equal(a.result?.structuredContent?.error?.cancelled, true, `${id}: cancelled (${a.result?.content?.[0]?.text})`);
  }
  t.match((await s.answer((m) => m.id === 31)).result?.content?.[0]?.text, /it never ran/);
  s.call(36, 'status');
  t.equal((await s.answer((m) => m.id === 36)).result?.structuredContent?.frame, 0, 'no frame was kept: not the running one, and none of those that waited ran');
  t.notOk(s.messages.some((m) => m.id === 33), 'the call cancelled by notification is not answered');
  s.stdin.end();
  t.equal(await s.exited, 0, s.stderr());
});

t.test('a malformed tools/call or subscribe says what is wrong, once, and the server goes on', async (t) => {
  const s = mcp(t);
  await s.start();
  s.send({ id: 40, method: 'tools/call', params: { arguments: {} } });
  s.send({ id: 41, method: 'tools/call', params: { name: 'status', arguments: 5 } });
  s.send({ id: 42, method: 'resources/subscribe', params: { uri: 'entelechy://doc/nope.esn' } });
  s.send({ id: 43, method: 'resources/subscribe', params: { uri: 'https://example.com/x' } });
  const error = async (id: number) => (await s.answer((m) => m.id === id)).error;
  t.match(await error(40), { code: -32602, message: /^tools\/call needs `name`/ }, 'no name');
  t.match(await error(41), { code: -32602, message: /^the arguments of `status` must be an object of its fields \(got 5\)/ }, 'arguments not an object');
  t.match(await error(42), { code: -32602, message: /^no document `nope\.esn`.*resources\/list names the documents/ }, 'a document that is not there');
  t.match(await error(43), { code: -32602, message: /^`https:\/\/example\.com\/x` is not a resource of this server/ }, 'not ours');
  s.call(44, 'statuss');
  const unknown = (await s.answer((m) => m.id === 44)).result;
  t.equal(unknown?.isError, true, 'an unknown tool is a tool error');
  t.match(unknown?.structuredContent?.error?.message, /did you mean `status`\?/);
  s.call(45, 'param', { name: 'x', value: 'hot' });
  const typed = (await s.answer((m) => m.id === 45)).result;
  t.equal(typed?.structuredContent?.error?.field, 'value', 'a refused argument has the error\'s members as structured content');
  t.match(typed?.content?.[0]?.text, /^`value` of `param` must be a number/, 'in the protocol\'s words, with nothing before them');
  s.call(46, 'status');
  t.equal((await s.answer((m) => m.id === 46)).result?.structuredContent?.frame, 0, 'the server goes on');
  s.stdin.end();
  t.equal(await s.exited, 0, s.stderr());
});

t.test('the lifecycle: requests before initialize are refused (ping is not), and initialize comes once', async (t) => {
  const s = mcp(t);
  s.send({ id: 1, method: 'tools/list' });
  s.call(2, 'status');
  s.send({ id: 3, method: 'ping' });
  t.match(await s.answer((m) => m.id === 1), { error: { code: -32002, message: /^Server not initialized: send `initialize` first, then `tools\/list`/ } });
  t.match(await s.answer((m) => m.id === 2), { error: { code: -32002 } }, 'a tool call too: it ran on a session whose capabilities were never agreed');
  t.same((await s.answer((m) => m.id === 3)).result, {}, 'ping is answered at any time');
  await s.start();
  s.send({ id: 4, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'again', version: '1' } } });
  t.match(await s.answer((m) => m.id === 4), { error: { code: -32600, message: /the session is initialized already/ } });
  s.call(5, 'status');
  t.notOk((await s.answer((m) => m.id === 5)).error, 'and after initialize, calls are served');
  // A prompt's missing argument, in words (it said "MCP error -32602: ... Invalid input: expected string, received undefined at change").
  s.send({ id: 6, method: 'prompts/get', params: { name: 'change-look' } });
  t.same((await s.answer((m) => m.id === 6)).error, { code: -32602, message: "Invalid params: prompt `change-look` needs `change` (a string) in `arguments`; prompts/list names each prompt's arguments" });
});
