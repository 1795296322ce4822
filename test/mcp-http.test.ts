// The MCP door over Streamable HTTP: `entelechy serve --listen` spawned for real, the SDK's own
// client on its port at /mcp (the scenario of test/mcp-scenario.ts: tools, resources and their
// notifications, prompts), the origin check the WebSocket door makes, MCP sessions of their own
// beside the protocol's TCP door on the same port, and the server ending with MCP sessions open.

import t, { type Test } from 'tap';
import http from 'node:http';
import type { Session } from '../src/main/session.js';
import { McpHttp, type McpHttpLimits } from '../src/mcp/http.js';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startPlayer } from '../src/player/start.js';
import { ROOT } from './helpers.js';
import { copyExample } from './fixtures.js';
import { mcpScenario, SLOW, type Result } from './mcp-scenario.js';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** POST an initialize to /mcp as a browser page of `origin` would. */
async function initializeFrom(port: number, origin?: string): Promise<{ status: number; body: string; session: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(origin ? { origin } : {}) },
    body: INITIALIZE,
  });
  return { status: res.status, body: await res.text(), session: res.headers.get('mcp-session-id') };
}

t.test('entelechy serve --listen: MCP over Streamable HTTP at /mcp', async (t) => {
  const dir = copyExample('rings', 'mcp-http');
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(dir, 'scene.esn'), '--listen', '127.0.0.1:0', '--workers', '1', '--allow-origin', 'http://localhost:5173'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.teardown(() => {
    if (child.exitCode === null) child.kill();
  });
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += String(d);
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(stderr);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`serve ended: ${stderr}`)));
  });

  const client = new Client({ name: 'entelechy-test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  await client.connect(transport);
  t.ok(transport.sessionId, 'an MCP session of its own');
  t.equal(client.getServerVersion()?.name, 'entelechy');

  await mcpScenario(t, client, dir);

  await t.test('origins: a foreign page is refused, the server\'s own and --allow-origin ones are not', async (t) => {
    const foreign = await initializeFrom(port, 'http://evil.example:8000');
    t.equal(foreign.status, 403);
    t.match(foreign.body, /MCP refused: origin http:\/\/evil\.example:8000 is not allowed; start the server with --allow-origin http:\/\/evil\.example:8000/);
    t.equal(foreign.session, null, 'no MCP session for it');
    const own = await initializeFrom(port, `http://127.0.0.1:${port}`);
    t.equal(own.status, 200, 'a page the server itself serves');
    t.ok(own.session);
    const allowed = await initializeFrom(port, 'http://localhost:5173');
    t.equal(allowed.status, 200, '--allow-origin');
    const none = await initializeFrom(port);
    t.equal(none.status, 200, 'no Origin: not a browser');
    const stale = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'no-such-session' }, body: INITIALIZE });
    t.equal(stale.status, 404);
    t.match(await stale.text(), /no MCP session `no-such-session` here[^"]*initialize a new one/);
  });

  await t.test('the protocol\'s TCP door on the same port sees what the MCP client did', async (t) => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('{"id":1,"op":"document"}\n'));
      let got = '';
      socket.on('data', (d) => {
        got += String(d);
        if (got.includes('\n')) {
          socket.end();
          resolve(got.trim());
        }
      });
      socket.on('error', reject);
    });
    t.match(JSON.parse(answer).ok.text, /count = 3\.0;/, 'the compose the MCP client made');
    const r = (await client.callTool({ name: 'status', arguments: {} }, undefined, SLOW)) as Result;
    t.notOk(r.isError, 'the MCP session goes on');
  });

  await t.test('an MCP session the client ends (DELETE /mcp) is gone; the others go on', async (t) => {
    const other = new Client({ name: 'entelechy-test-2', version: '1' });
    const otherTransport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    await other.connect(otherTransport);
    const id = otherTransport.sessionId!;
    t.not(id, transport.sessionId, 'a session of its own');
    await otherTransport.terminateSession();
    const gone = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    t.equal(gone.status, 404, 'the ended session is not served');
    await other.close();
    const r = (await client.callTool({ name: 'status', arguments: {} }, undefined, SLOW)) as Result;
    t.notOk(r.isError, 'the first session goes on');
  });

  await t.test('quit on stdin ends the server with MCP sessions open, status 0', async (t) => {
    child.stdin.end('{"op":"quit"}\n');
    t.equal(await exited, 0);
    t.notMatch(stderr, /internal error|\n\s+at /, 'no stack traces');
  });
  await client.close().catch(() => undefined);
});

t.test('the Player serves MCP at /mcp on its port too, on the session its window shows', async (t) => {
  const dir = copyExample('rings', 'mcp-http');
  const player = await startPlayer(join(dir, 'scene.esn'), { listen: '127.0.0.1:0', workers: 1, log: () => undefined });
  t.teardown(() => player.close());
  const client = new Client({ name: 'entelechy-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${player.url}mcp`)));
  t.teardown(() => client.close());
  const r = (await client.callTool({ name: 'param', arguments: { name: 'warmth', value: 0.25 } }, undefined, SLOW)) as Result;
  t.notOk(r.isError);
  t.same(player.session.engine.params.get('warmth'), [0.25], 'the window\'s session took it');
  const doc = await client.readResource({ uri: 'entelechy://doc/scene.esn' });
  t.match((doc.contents[0] as { text: string }).text, /node tint: demo\.tint@1/);
  const foreign = await fetch(`${player.url}mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: 'http://evil.example' }, body: INITIALIZE });
  t.equal(foreign.status, 403, 'a foreign page is refused here too');
});

/** The MCP door over HTTP on `session`, in process, on a port of its own (McpHttp as listen() routes to it); its port. */
async function mcpOverHttp(t: Test, session: Session, limits?: McpHttpLimits): Promise<number> {
  const mcp = new McpHttp(session, [], limits);
  const server = http.createServer((req, res) => void (mcp.handle(req, res) || res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  mcp.bound = { host: '127.0.0.1', port };
  t.teardown(async () => {
    await mcp.close();
    server.close();
  });
  return port;
}

t.test('sessions left unused give their place to new clients once every place is taken', async (t) => {
  const { Session } = await import('../src/main/session.js');
  const session = await Session.open(join(copyExample('rings', 'mcp-idle'), 'scene.esn'), { workers: 1 });
  t.teardown(() => session.close());
  const serve = (limits: { maxSessions: number; idleMs: number }) => mcpOverHttp(t, session, limits);
  // Places held by clients that went away without a DELETE, but not yet long unused: refused, as before.
  const busy = await serve({ maxSessions: 2, idleMs: 60_000 });
  t.equal((await initializeFrom(busy)).status, 200);
  t.equal((await initializeFrom(busy)).status, 200);
  const full = await initializeFrom(busy);
  t.equal(full.status, 503);
  t.match(full.body, /2 MCP sessions are open and in use/);
  // Unused past the limit: the one unused longest ends, and the new client is served.
  const idle = await serve({ maxSessions: 2, idleMs: 0 });
  const first = (await initializeFrom(idle)).session!;
  const second = (await initializeFrom(idle)).session!;
  const third = await initializeFrom(idle);
  t.equal(third.status, 200, 'served');
  const ask = (id: string) => fetch(`http://127.0.0.1:${idle}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
  const gone = await ask(first);
  t.equal(gone.status, 404, 'the one unused longest ended');
  t.match(await gone.text(), /unused while new clients needed its place/);
  t.equal((await ask(second)).status, 200, 'the other goes on');
});

t.test('over HTTP: a client gone before its answer stops its frame; no session but an initialize is told so; the SDK\'s own errors in plain words', async (t) => {
  const { Session } = await import('../src/main/session.js');
  const { writeFileSync } = await import('node:fs');
  const { scratchDir } = await import('./scratch.js');
  const dir = scratchDir('entelechy-mcp-gone-');
  // `i32(time)` loop repetitions an element: at time 16000000, minutes of work.
  writeFileSync(join(dir, 'scene.esn'), 'kernel t.spin@1 {\n  grants time.read;\n  out result: field2<f32>;\n  each (x, y) {\n    let s = 0.0;\n    const n = i32(time);\n    for (let i = 0; i < n; i++) s += 1.0;\n    result = s;\n  }\n}\nnode spin: t.spin@1 { size = 64 x 64; }\noutput result <- spin.result;\n');
  const session = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => session.close());
  const port = await mcpOverHttp(t, session);
  const post = (body: object, id?: string, signal?: AbortSignal) =>
    fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', signal, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(id ? { 'mcp-session-id': id } : {}) }, body: JSON.stringify(body) });

  const lost = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  t.equal(lost.status, 400);
  t.match(await lost.text(), /no `mcp-session-id` header: an MCP session begins with a POST of `initialize`/, 'it said "Server not initialized"');

  const init = await initializeFrom(port);
  const id = init.session!;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id);
  const prompt = await (await post({ jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'change-look' } }, id)).text();
  t.match(prompt, /"message":"Invalid params: prompt `change-look` needs `change` \(a string\) in `arguments`/, 'without the SDK\'s code in the message (a client added it again)');

  const stop = new AbortController();
  const call = post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'evaluate', arguments: { time: 16000000 } } }, id, stop.signal).catch((e) => e);
  while (session.evaluations.size === 0) await new Promise((r) => setTimeout(r, 20));
  stop.abort(); // the client goes away, with no notifications/cancelled and no DELETE
  await call;
  for (let i = 0; i < 600 && session.evaluations.size > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(session.evaluations.size, 0, 'its frame stopped (it ran on, and committed a frame nobody received)');
  const status = JSON.parse(await (await import('../src/protocol/dispatcher.js')).dispatch(session, '{"op":"status"}'));
  t.equal(status.ok.frame, 0, 'no frame committed');
});
