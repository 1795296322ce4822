// The MCP door: the tool schemas against the operations table (and against what the session
// accepts), the door in process (errors, images, a refused scene), then `entelechy mcp` spawned for
// real and driven by the SDK's own client over stdio through test/mcp-scenario.ts (tools, resources
// and their notifications, prompts), and the stdio door's own ways: its stdout, logs, endings.

import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PNG } from 'pngjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Session } from '../src/main/session.js';
import { OPERATIONS, OPERATION_NAMES } from '../src/protocol/operations.js';
import { McpDoor } from '../src/mcp/server.js';
import { PROMPTS } from '../src/mcp/prompts.js';
import { ROOT } from './helpers.js';
import { copyExample } from './fixtures.js';
import { images, mcpScenario, SLOW, texts, type Result } from './mcp-scenario.js';
import { dispatch } from '../src/protocol/dispatcher.js';

const ajv = new AjvJsonSchemaValidator();

/** A door on `session` (or one still opening) and the SDK's client on it, in process. */
async function inProcess(t: Test, session: Session | Promise<Session>, options = {}): Promise<{ door: McpDoor; client: Client }> {
  const door = new McpDoor(session, options);
  const client = new Client({ name: 'entelechy-test', version: '1' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([door.server.connect(a), client.connect(b)]);
  t.teardown(async () => {
    door.close();
    await client.close();
  });
  return { door, client };
}

// ---------------------------------------------------------------------------------------------
// The schemas: made from the table, and agreeing with what the session accepts.

/** The tools as a client lists them (no session needed: they come from the table). */
async function listed(t: Test) {
  const never = new Promise<Session>(() => undefined);
  const { client } = await inProcess(t, never);
  return (await client.listTools()).tools;
}

t.test('one tool per operation, its schemas, description and annotations from the table', async (t) => {
  const list = await listed(t);
  t.same(list.map((x) => x.name), OPERATION_NAMES, 'the operations, in the table\'s order');
  t.equal(list.length, 26);
  for (const op of OPERATIONS) {
    const tool = list.find((x) => x.name === op.name)!;
    const props = tool.inputSchema.properties as Record<string, any>;
    t.same(Object.keys(props ?? {}), op.fields.map((f) => f.name), `${op.name}: a property per field`);
    t.same(tool.inputSchema.required ?? [], op.fields.filter((f) => f.required).map((f) => f.name), `${op.name}: the required fields`);
    t.equal((tool.inputSchema as any).additionalProperties, false, `${op.name}: no other fields`);
    for (const f of op.fields) t.equal(props[f.name].description, f.meaning, `${op.name}.${f.name}: the meaning`);
    t.ok(tool.description!.startsWith(op.summary), `${op.name}: the summary`);
    t.ok(tool.description!.includes(op.answer.replace(/\.$/, '')), `${op.name}: what it answers`);
    t.equal(tool.annotations?.readOnlyHint, op.effect === 'read');
    t.equal(tool.annotations?.destructiveHint, op.effect === 'destroy');
    t.equal(tool.annotations?.idempotentHint, op.idempotent);
    t.equal(tool.outputSchema?.type, 'object', `${op.name}: an output schema`);
    for (const key of Object.keys(op.returns)) t.ok(op.answer.includes(key) || ['memory', 'inputs', 'depth', 'components', 'x', 'y', 'z'].includes(key), `${op.name}: \`${key}\` is in what the table says it answers`);
  }
});

// Requests the session answers with `ok` (from the examples' replays and the protocol tests).
const GOOD: [string, Record<string, unknown>][] = [
  ['status', {}],
  ['kernel', { kernel: 'demo.tint@1' }],
  ['document', { path: 'kernels.esn' }],
  ['compose', { edits: [{ node: 'rings', member: 'count', text: 'count = 12.0;' }] }],
  ['compose', { documents: [{ path: 'more.esn', text: '// more' }] }],
  ['param', { name: 'warmth', value: 0.9 }],
  ['param', { name: 'tint', value: [1, 0.5, 0.25] }],
  ['evaluate', { time: 0.5, outputs: ['result'], pointer: { x: 3, y: 4, down: true }, keys: ['a'] }],
  ['read', { output: 'result', format: 'f32', region: { x: 0, y: 0, width: 8, height: 8 } }],
  ['write', { node: 'board', port: 'cells', value: [1, 0] }],
  ['pause', { paused: true }],
  ['trace', { x: 1, y: 2 }],
  ['publish', { source: 'kernel a.b@1 {}', expect: 2 }],
];

t.test('the schemas accept what the session accepts', async (t) => {
  const replays = readdirSync(join(ROOT, 'examples')).flatMap((name) =>
    readdirSync(join(ROOT, 'examples', name))
      .filter((f) => f.endsWith('.replay'))
      .flatMap((f) => readFileSync(join(ROOT, 'examples', name, f), 'utf8').split('\n'))
      .filter((l) => l.startsWith('> '))
      .map((l) => JSON.parse(l.slice(2)) as Record<string, unknown>),
  );
  t.ok(replays.length > 10, 'the examples\' replay requests');
  const requests: [string, Record<string, unknown>][] = [...GOOD, ...replays.map(({ id: _id, op, ...fields }): [string, Record<string, unknown>] => [String(op), fields])];
  const list = await listed(t);
  for (const [op, fields] of requests) {
    const v = ajv.getValidator(list.find((x) => x.name === op)!.inputSchema as object)(fields);
    t.ok(v.valid, `${op} ${JSON.stringify(fields).slice(0, 80)}: ${v.errorMessage ?? 'valid'}`);
  }
});

/** A value of another type than the field's (undefined where every value is one). */
function wrong(type: string): unknown {
  return ({ string: 42, number: 'x', integer: 1.5, boolean: 'yes', object: [1], array: { a: 1 }, 'string|null': 7, 'number|array': 'x' } as Record<string, unknown>)[type];
}

// The in-process tests on examples/rings share one session, in this order (the first reads before any frame).
let rings: Promise<Session> | undefined;
const ringsSession = (): Promise<Session> => (rings ??= Session.open(join(copyExample('rings', 'mcp'), 'scene.esn'), { workers: 1 }));
t.teardown(async () => {
  if (rings) await (await rings).close();
});

t.test('in process: an error that a call mends says which, on its own line', async (t) => {
  const session = await ringsSession();
  const door = new McpDoor(session);
  t.teardown(() => door.close());
  const r = (await door.call('read', {})) as Result;
  t.equal(r.isError, true);
  t.match(texts(r)[0], /holds nothing computed yet[^\n]*\nrequest: \{"op":"evaluate"\}$/);
  t.same(r.structuredContent.error.request, { op: 'evaluate' });
  await door.call('evaluate', {});
  t.notOk(((await door.call('read', {})) as Result).isError, 'after the call it names, the read answers');
  // A kernel with two mistakes: each on a line of its own (the text named the first and "and 1 more").
  const two = (await door.call('prepare', { source: 'kernel demo.tint@1 {\n  in src: field2<vec4>;\n  out result: field2<vec4>;\n  each (x, y) {\n    const a = src.q;\n    result = vec4(foo(1.0));\n  }\n}\n' })) as Result;
  t.equal(two.isError, true);
  t.match(texts(two)[0], /\n\(protocol demo\.tint@1\):5:19: `\.q` is not a swizzle[^\n]*\n\(protocol demo\.tint@1\):6:19: unknown function `foo`/);
});

t.test('in process: a wrong type is refused by the schema in the words the protocol uses for the same request', async (t) => {
  const session = await ringsSession();
  const { client } = await inProcess(t, session, { maxImagePixels: 100 });
  const list = (await client.listTools()).tools;
  let checked = 0;
  for (const op of OPERATIONS) {
    for (const f of op.fields) {
      const value = wrong(f.type);
      if (value === undefined) continue;
      const args = { ...Object.fromEntries(op.fields.filter((g) => g.required && g.name !== f.name).map((g) => [g.name, goodValue(g.type)])), [f.name]: value };
      const schema = ajv.getValidator(list.find((x) => x.name === op.name)!.inputSchema as object)(args);
      t.notOk(schema.valid, `${op.name}.${f.name} = ${JSON.stringify(value)}: the listed schema refuses it`);
      const r = (await client.callTool({ name: op.name, arguments: args }, undefined, SLOW)) as Result;
      t.equal(r.isError, true, `${op.name}.${f.name}: a tool error`);
      const protocol = JSON.parse(await dispatch(session, JSON.stringify({ op: op.name, ...args })));
      t.equal(protocol.error.field, f.name, `${op.name}.${f.name}: the protocol refuses it too`);
      t.ok(texts(r)[0]!.includes(protocol.error.message), `${op.name}.${f.name}: in the same words (${texts(r)[0]})`);
      checked++;
    }
  }
  const missing = (await client.callTool({ name: 'kernel', arguments: {} })) as Result;
  t.match(texts(missing)[0], /`kernel` needs `kernel` \(a string\): the kernel id/, 'a missing field');
  const extra = (await client.callTool({ name: 'status', arguments: { id: 7 } })) as Result;
  t.match(texts(extra)[0], /`status` takes no field `id`; it takes no fields/, 'the envelope\'s fields are not arguments');
  const near = (await client.callTool({ name: 'read', arguments: { fromat: 'png' } })) as Result;
  t.match(texts(near)[0], /`read` takes no field `fromat`; did you mean `format`\?/, 'a near name');
  t.ok(checked > 30, `${checked} fields checked`);

  // The image cap of evaluate: a larger output is named, not attached; read still answers it.
  const e = (await client.callTool({ name: 'evaluate', arguments: { time: 0 } }, undefined, SLOW)) as Result;
  t.notOk(e.isError);
  t.equal(images(e).length, 0, 'no image past maxImagePixels');
  t.match(texts(e).join('\n'), /larger than 100 pixels: no image attached; `read` it, or part of it with `region`/);
  const r = (await client.callTool({ name: 'read', arguments: { region: { x: 0, y: 0, width: 8, height: 4 } } }, undefined, SLOW)) as Result;
  const png = PNG.sync.read(Buffer.from(images(r)[0]!.data, 'base64'));
  t.same([png.width, png.height], [8, 4], 'read answers the region it was asked for');
});

t.test('in process: evaluate on a scene with a 3-D output says why there is no picture of it', async (t) => {
  const dir = copyExample('castle', 'mcp');
  const session = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => session.close());
  const door = new McpDoor(session);
  t.teardown(() => door.close());
  const composed = await door.call('compose', { edits: [{ output: 'voxels', text: 'output voxels <- build.voxels;' }] });
  t.notOk(composed.isError, JSON.stringify(composed.content).slice(0, 300));
  const e = (await door.call('evaluate', { outputs: ['image', 'voxels'] })) as Result;
  t.notOk(e.isError, 'the evaluation itself answers');
  t.same(e.structuredContent.outputs.map((o: any) => o.name), ['image', 'voxels']);
  t.equal(images(e).length, 1, 'a picture of the 2-D output');
  t.match(texts(e).join('\n'), /output `voxels`: no image: `voxels` is a 3-D field: an image needs a 2-D one/);
});

t.test('in process: an answer too large for a client is a tool error saying how to ask for less; the session goes on', async (t) => {
  // 1024 x 1024 x vec4 as f32: 16 MiB of floats, 21 MiB of base64. The SDK's stdio client closes
  // the connection past 10 MiB and ends the server (a 512 x 512 read did that).
  const dir = copyExample('rings', 'mcp-large');
  writeFileSync(join(dir, 'scene.esn'), readFileSync(join(dir, 'scene.esn'), 'utf8').replace('size = 256 x 256;', 'size = 1024 x 1024;'));
  const session = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => session.close());
  const { client } = await inProcess(t, session);
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, SLOW)) as Result;
  t.notOk((await call('evaluate')).isError);
  const whole = await call('read', { format: 'f32' });
  t.equal(whole.isError, true);
  t.match(whole.structuredContent.error.message, /^the answer of `read` would be 2\d\.\d MiB, more than the 8\.0 MiB an MCP client takes in one message .*: read part of it with `region` \(about \d+ x \d+ fits\)\. Nothing changed\./);
  t.ok(Buffer.byteLength(JSON.stringify(whole)) < 4096, 'and the refusal itself is small');
  // A region that fits: its floats once, in the structured content; the text names them (a model would read 1.4 MB of base64).
  const part = await call('read', { format: 'f32', region: { x: 0, y: 0, width: 256, height: 256 } });
  t.notOk(part.isError, texts(part)[0]?.slice(0, 200));
  t.equal(Buffer.from(part.structuredContent.data, 'base64').length, 256 * 256 * 4 * 4);
  t.notMatch(texts(part).join(''), part.structuredContent.data.slice(0, 64), 'the floats are not in the text');
  t.match(texts(part)[0], /base64 data, little-endian f32 values .* are in the structured content's `data`/);
  const small = await call('read', { format: 'f32', region: { x: 0, y: 0, width: 4, height: 4 } });
  t.match(texts(small)[0], small.structuredContent.data, 'a few floats stay in the text too');
  t.equal((await call('status')).isError, undefined, 'the session answers on');
});

t.test('in process: evaluate attaches the pictures that fit one answer and names the others', async (t) => {
  const session = await ringsSession();
  const { client } = await inProcess(t, session, { maxResultBytes: 40_000 });
  const r = (await client.callTool({ name: 'evaluate', arguments: { outputs: ['result'] } }, undefined, SLOW)) as Result;
  t.notOk(r.isError);
  t.equal(images(r).length, 0);
  t.match(texts(r).join('\n'), /output `result` \(256 x 256\): no image attached: its 0\.\d MiB of PNG would take this answer past what an MCP client takes in one message; `read` it on its own, or part of it with `region`/);
});

t.test('in process: a session that did not open answers tool errors, not crashes', async (t) => {
  const failed = Promise.reject(new Error('the compile worker did not start'));
  failed.catch(() => undefined);
  const { client } = await inProcess(t, failed);
  t.equal((await client.listTools()).tools.length, OPERATION_NAMES.length, 'the tools are there without a session');
  const r = (await client.callTool({ name: 'status', arguments: {} }, undefined, SLOW)) as Result;
  t.equal(r.isError, true);
  t.same(r.structuredContent.error, { message: 'internal error in `status`: the compile worker did not start', internal: true });
});

t.test('in process: every operation answers through its tool, its structured content fitting its output schema', async (t) => {
  const session = await ringsSession();
  const { client } = await inProcess(t, session);
  const list = (await client.listTools()).tools;
  const called = new Set<string>();
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args }, undefined, SLOW)) as Result;
    t.notOk(r.isError, `${name} ${JSON.stringify(args).slice(0, 60)}: ${texts(r)[0]?.slice(0, 300)}`);
    const out = ajv.getValidator(list.find((x) => x.name === name)!.outputSchema as object)(r.structuredContent);
    t.ok(out.valid, `${name}: the answer fits the listed output schema (${out.errorMessage ?? 'valid'})`);
    called.add(name);
    return r.structuredContent;
  };
  await call('status');
  await call('kernels');
  const tint = await call('kernel', { kernel: 'demo.tint@1' });
  await call('graph');
  await call('document', { path: 'kernels.esn' });
  await call('history');
  await call('compose', { edits: [{ node: 'rings', member: 'count', text: 'count = 6.0;' }] });
  await call('sync');
  const bisected = await call('bisect', { good: '0', bad: 'running', replay: '> {"op":"graph"}\n< {"ok":{"nodes":[{"members":{"count":[8]}},{}]}}\n' });
  t.equal(bisected.first_bad.position, 1, 'bisect: the compose broke the replay');
  await call('prepare', { source: tint.source });
  await call('publish', { source: tint.source });
  await call('retire', { kernel: 'demo.tint@1' });
  await call('param', { name: 'warmth', value: 0.7 });
  await call('evaluate', { time: 0.25 });
  await call('read', { output: 'result' });
  await call('read', { format: 'f32', region: { x: 0, y: 0, width: 2, height: 2 } });
  const snap = await call('snapshot');
  await call('snapshot', { path: 'saved.snapshot.json' });
  await call('restore', { data: snap.data });
  await call('pause', { paused: true });
  await call('pause', { paused: false });
  await call('reset');
  await call('help');
  await call('help', { name: 'evaluate' });
  await call('trace', { x: 3, y: 4 });
  await call('pin', { node: 'rings' });
  await call('unpin', { node: 'rings' });
  await call('cancel');
  // write needs state or an input: the life example has a board.
  const lifeDir = copyExample('life', 'mcp');
  const life = await Session.open(join(lifeDir, 'scene.esn'), { workers: 1 });
  t.teardown(() => life.close());
  const lifeDoor = await inProcess(t, life);
  const w = (await lifeDoor.client.callTool({ name: 'write', arguments: { node: 'board', port: 'cells', value: [1] } }, undefined, SLOW)) as Result;
  t.notOk(w.isError, texts(w)[0]);
  called.add('write');
  await call('quit');
  t.same(OPERATION_NAMES.filter((n) => !called.has(n)), [], 'every operation called');
});

t.test('in process: evaluate on a scene that does not check is a tool error saying how to mend it', async (t) => {
  const dir = copyExample('rings', 'mcp');
  const scenePath = join(dir, 'scene.esn');
  writeFileSync(scenePath, readFileSync(scenePath, 'utf8').replace('warmth = warmth;', 'warmth = warmt;'));
  const session = await Session.open(scenePath, { workers: 1 });
  t.teardown(() => session.close());
  const { client } = await inProcess(t, session);
  const r = (await client.callTool({ name: 'evaluate', arguments: {} }, undefined, SLOW)) as Result;
  t.equal(r.isError, true, 'not a frame of nothing');
  t.match(texts(r)[0], /the scene is refused, so there is nothing to evaluate: .*warmt/);
  t.match(texts(r)[0], /Mend it with `compose`/);
  t.equal(r.structuredContent.error.refused, true);
  t.same(r.structuredContent.error.request, { op: 'document', path: 'scene.esn' });
  const status = JSON.parse(await dispatch(session, '{"op":"status"}')).ok;
  t.equal(status.frame, 0, 'nothing was evaluated');
  // Mended, it evaluates.
  const mended = (await client.callTool({ name: 'compose', arguments: { edits: [{ node: 'tint', member: 'warmth', text: 'warmth = warmth;' }] } }, undefined, SLOW)) as Result;
  t.notOk(mended.isError, texts(mended)[0]);
  const e = (await client.callTool({ name: 'evaluate', arguments: {} }, undefined, SLOW)) as Result;
  t.notOk(e.isError);
  t.equal(images(e).length, 1);
});

t.test('the prompts name only tools there are', async (t) => {
  let named = 0;
  for (const [name, prompt] of Object.entries(PROMPTS)) {
    const text = (prompt.text as (a: Record<string, string>) => string)({});
    for (const m of text.matchAll(/`([a-z]+)`/g)) {
      if (['edits', 'text', 'expect', 'documents', 'fix', 'unrun', 'refused', 'written', 'field'].includes(m[1]!)) continue;
      t.ok(OPERATION_NAMES.includes(m[1]!), `${name}: \`${m[1]}\` is a tool`);
      named++;
    }
  }
  t.ok(named > 15, `${named} tool names`);
});

function goodValue(type: string): unknown {
  return ({ string: 'x', number: 1, integer: 1, boolean: true, object: {}, array: [], 'string|null': null, 'number|array': 1 } as Record<string, unknown>)[type] ?? null;
}

// ---------------------------------------------------------------------------------------------
// `entelechy mcp` spawned, driven by the SDK's client over stdio.

t.test('entelechy mcp end to end with the SDK client', async (t) => {
  const dir = copyExample('rings', 'mcp');
  const scenePath = join(dir, 'scene.esn');
  const original = readFileSync(scenePath, 'utf8');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, 'bin', 'entelechy.js'), 'mcp', scenePath, '--workers', '1'],
    cwd: ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += String(d)));
  const client = new Client({ name: 'entelechy-test', version: '1' });
  // Anything on stdout that is not a JSON-RPC message would surface here.
  const transportErrors: Error[] = [];
  client.onerror = (e) => transportErrors.push(e);
  const logged: { level: string; logger?: string; data: any }[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logged.push(n.params);
  });
  await client.connect(transport);
  let closed = false;
  t.teardown(async () => {
    if (!closed) await client.close();
  });
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, SLOW)) as Result;

  t.equal(client.getServerVersion()?.name, 'entelechy');
  t.match(client.getInstructions(), /`status`/);

  await t.test('status', async (t) => {
    const r = await call('status');
    t.notOk(r.isError);
    t.equal(r.structuredContent.scene, 'scene.esn');
    t.equal(r.structuredContent.loaded, true);
    t.same(r.structuredContent.outputs, ['result']);
    t.same(JSON.parse(texts(r)[0]!), r.structuredContent, 'the text is the same answer');
  });

  // The plain protocol on another copy of the scene: what `read` answers there.
  const plainDir = copyExample('rings', 'mcp');
  const plain = await Session.open(join(plainDir, 'scene.esn'), { workers: 1 });
  t.teardown(() => plain.close());
  const plainPng = async (req: object) => {
    const a = JSON.parse(await dispatch(plain, JSON.stringify(req)));
    if (!a.ok) throw new Error(JSON.stringify(a.error));
    return PNG.sync.read(Buffer.from(a.ok.data, 'base64'));
  };

  let before: PNG;
  await t.test('evaluate: the report and the picture of the first output', async (t) => {
    const r = await call('evaluate', { time: 0.5 });
    t.notOk(r.isError);
    t.same(r.structuredContent.executed, ['rings', 'tint']);
    t.same(r.structuredContent.outputs, [{ name: 'result', width: 256, height: 256 }]);
    const [image] = images(r);
    t.ok(image, 'an image');
    t.equal(image!.mimeType, 'image/png');
    const png = PNG.sync.read(Buffer.from(image!.data, 'base64'));
    t.same([png.width, png.height], [256, 256]);
    t.ok(texts(r).some((x) => /output `result`, frame 1 \(256 x 256\)/.test(x)), 'the image is named');
    before = png;
  });

  await t.test('read: the PNG as image content, equal to the plain protocol\'s read', async (t) => {
    const r = await call('read', { output: 'result' });
    t.notOk(r.isError);
    t.equal(images(r).length, 1);
    const png = PNG.sync.read(Buffer.from(images(r)[0]!.data, 'base64'));
    t.same([png.width, png.height], [256, 256]);
    t.same(r.structuredContent, { format: 'png', frame: 1, height: 256, name: 'result', width: 256 }, 'the answer but its base64');
    t.same(JSON.parse(texts(r)[0]!.split('\n')[0]!), r.structuredContent);
    t.ok(texts(r)[0]!.length < 300, 'no base64 in the text');
    await dispatch(plain, JSON.stringify({ op: 'evaluate', time: 0.5 }));
    const expected = await plainPng({ op: 'read', output: 'result' });
    t.ok(png.data.equals(expected.data), 'every pixel as the plain protocol reads it');
    t.ok(png.data.equals(before.data), 'the picture evaluate showed');
    // Some pixels by hand: the rings vary, and alpha is opaque.
    const px = (x: number, y: number) => [...png.data.subarray(4 * (y * 256 + x), 4 * (y * 256 + x) + 4)];
    t.equal(px(128, 128)[3], 255);
    t.not(px(128, 128).join(), px(128 + 12, 128).join(), 'the rings vary');

    const f = await call('read', { format: 'f32', region: { x: 0, y: 0, width: 4, height: 2 } });
    t.equal(images(f).length, 0, 'f32: no image');
    t.equal(Buffer.from(f.structuredContent.data, 'base64').length, 4 * 2 * 4 * 4, 'f32: the floats (4 x 2, four components) in the answer');
  });

  await t.test('compose: an edit that publishes', async (t) => {
    const r = await call('compose', { edits: [{ node: 'rings', member: 'count', text: 'count = 3.0;' }] });
    t.notOk(r.isError, texts(r)[0]);
    t.equal(r.structuredContent.written, true);
    t.ok(r.structuredContent.events.some((e: any) => e.kind === 'scene_loaded'), 'a new revision runs');
    t.equal(readFileSync(scenePath, 'utf8'), original.replace('count = 8.0;', 'count = 3.0;'), 'written on disk');
    const loaded = r.structuredContent.events.find((e: any) => e.kind === 'scene_loaded');
    t.same(logged.find((l) => l.data.kind === 'scene_loaded'), { level: 'info', logger: 'entelechy', data: loaded }, 'the events as log messages too');
    const e = await call('evaluate', { time: 0.5 });
    const png = PNG.sync.read(Buffer.from(images(e)[0]!.data, 'base64'));
    t.notOk(png.data.equals(before.data), 'the picture changed');
    await dispatch(plain, JSON.stringify({ op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 3.0;' }] }));
    await dispatch(plain, JSON.stringify({ op: 'evaluate', time: 0.5 }));
    t.ok(png.data.equals((await plainPng({ op: 'read' })).data), 'as the plain protocol makes it');
  });

  await t.test('compose: a bad edit is a tool error with its fix, line and column', async (t) => {
    const onDisk = readFileSync(scenePath, 'utf8');
    const r = await call('compose', { edits: [{ node: 'tint', member: 'warmth', text: 'warmth = warmt;' }] });
    t.equal(r.isError, true);
    const error = r.structuredContent.error;
    t.match(error.message, /nothing was written/);
    t.same(error.fix, { node: 'tint', member: 'warmth', text: 'warmth = warmth;' });
    t.equal(error.line, onDisk.split('\n').findIndex((l) => l.includes('warmth = warmth;')) + 1);
    t.equal(error.column, 12);
    t.equal(error.written, false);
    const [message, json] = texts(r);
    t.match(message, /warmt/);
    t.match(message, /\nfix: \{"member":"warmth","node":"tint","text":"warmth = warmth;"\}/, 'the fix in the text a model reads');
    t.same(JSON.parse(json!), { error }, 'the whole error as JSON');
    t.equal(readFileSync(scenePath, 'utf8'), onDisk, 'nothing written');
    const mended = await call('compose', { edits: [error.fix] });
    t.notOk(mended.isError, 'the fix, handed back, is accepted');
  });

  await t.test('errors of the operations keep their data', async (t) => {
    const param = await call('param', { name: 'count', value: 3 });
    t.same(param.structuredContent.error.fix, { node: 'rings', member: 'count', text: 'count = 3;' }, 'a fix for another tool');
    const noOutput = await call('evaluate', { outputs: ['nope'] });
    t.equal(noOutput.isError, true);
    t.equal(noOutput.structuredContent.error.field, 'outputs');
    const unknown = await call('statsu');
    t.equal(unknown.isError, true, 'a tool that is not there');
    t.match(unknown.structuredContent.error.message, /^no tool `statsu` \(did you mean `status`\?\); tools\/list names them all: status, /, 'in a tool\'s words');
  });

  await t.test('the server ends when the client closes stdin, with status 0', async (t) => {
    t.same(transportErrors, [], 'stdout carried nothing but JSON-RPC');
    // Closing stdin by hand (the SDK's close would SIGTERM a server still ending after 2 s, and
    // this test is about the server ending on its own).
    const child = (transport as unknown as { _process: ChildProcess })._process;
    const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
    child.stdin!.end();
    const late = new Promise<string>((resolve) => setTimeout(() => resolve('still running after 90 s'), 90_000).unref());
    t.same(await Promise.race([exited, late]), [0, null], 'exited with status 0, not by a signal');
    await client.close();
    closed = true;
    t.notMatch(stderr, /internal error|at .*\.js:\d+/, 'no stack traces on stderr');
  });
});

t.test('entelechy mcp over stdio: tools, resources and their notifications, prompts', async (t) => {
  const dir = copyExample('rings', 'mcp');
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, 'bin', 'entelechy.js'), 'mcp', join(dir, 'scene.esn'), '--workers', '1'], cwd: ROOT, stderr: 'pipe' });
  const client = new Client({ name: 'entelechy-test', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  await mcpScenario(t, client, dir);
});

t.test('a scene that is not there yet: compose writes it; quit answers, then the server ends', async (t) => {
  const dir = copyExample('rings', 'mcp');
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, 'bin', 'entelechy.js'), 'mcp', join(dir, 'new.esn'), '--workers', '1'], cwd: ROOT, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += String(d)));
  const client = new Client({ name: 'entelechy-test', version: '1' });
  await client.connect(transport);
  const pid = transport.pid!;
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, SLOW)) as Result;
  const before = await call('status');
  t.match(before.structuredContent.refused?.message, /new\.esn/, 'status says the scene is refused');
  const scene = 'use "kernels.esn";\nnode rings: demo.rings@1 {\n  size = 16 x 8;\n}\noutput result <- rings.result;\n';
  const composed = await call('compose', { text: scene });
  t.notOk(composed.isError, texts(composed)[0]);
  t.equal(readFileSync(join(dir, 'new.esn'), 'utf8'), scene);
  const after = await call('status');
  t.equal(after.structuredContent.refused, null);
  t.same(after.structuredContent.outputs, ['result']);
  const e = await call('evaluate');
  const png = PNG.sync.read(Buffer.from(images(e)[0]!.data, 'base64'));
  t.same([png.width, png.height], [16, 8]);
  t.match(stderr, /the session runs; mend the scene with compose/);

  const r = await call('quit');
  t.notOk(r.isError);
  t.same(r.structuredContent, {});
  t.ok(await waitGone(pid, 120_000), 'the process ended');
  await client.close();
});

/** `entelechy mcp ARGS` that is expected to end on its own: its status, stdout and stderr. */
async function runMcp(args: string[], input?: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'mcp', ...args], { cwd: ROOT });
  if (input !== undefined) child.stdin.end(input);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, out, err };
}

t.test('a client that writes its requests and closes stdin at once gets every answer; a line that is no JSON-RPC gets its error', async (t) => {
  // The end of stdin ended the server at once: the tool call still running was never answered,
  // and a line that was not JSON was not answered at all.
  const lines = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'printf', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    'garbage',
    { a: 1 },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'evaluate', arguments: {} } },
  ];
  const r = await runMcp([join(copyExample('rings', 'mcp'), 'scene.esn'), '--workers', '1'], lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  t.equal(r.code, 0, r.err);
  const answers = r.out.trim().split('\n').map((l) => JSON.parse(l));
  t.ok(answers.find((a) => a.id === 1)?.result?.protocolVersion, 'initialize answered');
  const call = answers.find((a) => a.id === 2);
  t.ok(call?.result && !call.result.isError, `the evaluate call answered: ${JSON.stringify(call).slice(0, 200)}`);
  t.same(answers.filter((a) => a.id === null).map((a) => a.error.code), [-32700, -32600], 'parse error, then invalid request');
});

t.test('a line that is no JSON-RPC message is answered with its id where it has one, and what is wrong with it', async (t) => {
  // Each of these was answered with id null (a client waiting on its id waited for ever) and one
  // message for all; params the SDK checks itself came back as an internal error holding zod's dump.
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'printf', version: '1' } } };
  let deep: unknown = 1;
  for (let i = 0; i < 40; i++) deep = [deep];
  const lines = [
    JSON.stringify(init),
    '\ufeff' + JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    JSON.stringify({ jsonrpc: '1.0', id: 3, method: 'ping' }),
    JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping', params: [1, 2] }),
    JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping', extra: 'member' }),
    JSON.stringify([{ jsonrpc: '2.0', id: 6, method: 'ping' }]),
    JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'cancel', arguments: { request: deep } } }),
    JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'resources/read', params: {} }),
    JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'resources/read', params: { uri: 'not a uri' } }),
    JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'ping' }),
  ];
  const r = await runMcp([join(copyExample('rings', 'mcp'), 'scene.esn'), '--workers', '1'], lines.join('\n') + '\n');
  t.equal(r.code, 0, r.err);
  const answers = r.out.trim().split('\n').map((l) => JSON.parse(l));
  const error = (id: number | null) => answers.find((a) => a.id === id)?.error ?? {};
  t.same(answers.find((a) => a.id === 2)?.result, {}, 'a leading byte order mark is skipped');
  t.match(error(3), { code: -32600, message: /Invalid Request: `jsonrpc` must be "2\.0" \(got "1\.0"\)/ });
  t.match(error(4), { code: -32600, message: /`params` must be an object of named params \(got an array\)/ });
  t.match(error(5), { code: -32600, message: /`extra` is not a member of a JSON-RPC message/ });
  t.match(error(null), { code: -32600, message: /a batch \(a JSON array of messages\) is not taken: send each message on a line of its own/ });
  t.match(error(7), { code: -32600, message: /nests arrays and objects deeper than that/ });
  t.match(error(8), { code: -32602, message: /^Invalid params: `params\.uri`: .*; the MCP specification lists each method's params$/ });
  t.match(error(9), { code: -32602, message: /`uri` is not a URI; resources\/list names the resources/ });
  t.same(answers.find((a) => a.id === 10)?.result, {}, 'the server goes on');
  for (const a of answers) t.notMatch(JSON.stringify(a), /internal error|Maximum call stack|"expected":/, `${a.id}: nothing internal`);
});

t.test('a call after quit is refused, not run: the server is ending', async (t) => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'printf', version: '1' } } };
  const lines = [init, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'quit', arguments: {} } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'status', arguments: {} } }];
  const r = await runMcp([join(copyExample('rings', 'mcp'), 'scene.esn'), '--workers', '1'], lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  t.equal(r.code, 0, r.err);
  const answers = r.out.trim().split('\n').map((l) => JSON.parse(l));
  t.notOk(answers.find((a) => a.id === 2)?.result?.isError, 'quit answered');
  const after = answers.find((a) => a.id === 3)?.result;
  t.ok(after?.isError, 'the call after quit is a tool error');
  t.match(after?.content?.[0]?.text, /the server is ending: `quit` came before this call/);
});

t.test('mistakes in the command: a message, status 1, nothing on stdout', async (t) => {
  const folder = await runMcp([join(tmpdir(), 'entelechy-no-such-folder', 'scene.esn')]);
  t.equal(folder.code, 1);
  t.match(folder.err, /entelechy: cannot open `.*scene\.esn`: no such folder/);
  t.notMatch(folder.err, /internal error|\n\s+at /);
  t.equal(folder.out, '', 'nothing on stdout');
  // A client's `initialize` was answered before the bad grant ended the server.
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'printf', version: '1' } } };
  const grant = await runMcp([join(ROOT, 'examples', 'rings', 'scene.esn'), '--grant', 'field.raed', '--workers', '1'], JSON.stringify(init) + '\n');
  t.equal(grant.code, 1);
  t.match(grant.err, /entelechy: `field\.raed` is not a grant; the grants are field\.read/);
  t.notMatch(grant.err, /internal error|\n\s+at /);
  t.equal(grant.out, '', 'refused before initialize is answered');
  // A photograph as SCENE: the session took it for its scene, and one compose replaced its bytes.
  // A folder: `initialize` was answered, then the server ended.
  const photo = join(copyExample('photo', 'mcp-photo'), 'photo.jpg');
  const bytes = readFileSync(photo);
  for (const [scene, why] of [[photo, /entelechy: `.*photo\.jpg` is not a scene: a scene is a \.esn document, e\.g\. .*scene\.esn/], [dirname(photo), /entelechy: `.*` is a folder: name the scene document in it, e\.g\. .*scene\.esn/]] as const) {
    const r = await runMcp([scene, '--workers', '1'], JSON.stringify(init) + '\n');
    t.equal(r.code, 1, String(scene));
    t.match(r.err, why);
    t.equal(r.out, '', 'refused before initialize is answered');
  }
  t.ok(readFileSync(photo).equals(bytes), 'the photograph is as it was');
  // `--grant` alone granted everything.
  const none = await runMcp([join(ROOT, 'examples', 'rings', 'scene.esn'), '--workers', '1', '--grant']);
  t.equal(none.code, 1);
  t.match(none.err, /entelechy: --grant names no grant: give the ones to grant \(of field\.read, field\.write, time\.read, input\.read\), or leave --grant out/);
  t.equal(none.out, '', 'nothing on stdout');
  // A --param the scene refuses: `initialize` was answered, then the server ended.
  for (const [param, why] of [['warmth=7', /entelechy: --param warmth=7: `warmth` keeps to 0\.\.1 \(its range\); got 7/], ['nope=1', /entelechy: --param nope=1: `nope` is not a param the scene declares; its params: warmth/]] as const) {
    const r = await runMcp([join(ROOT, 'examples', 'rings', 'scene.esn'), '--workers', '1', '--param', param], JSON.stringify(init) + '\n');
    t.equal(r.code, 1, param);
    t.match(r.err, why);
    t.equal(r.out, '', 'refused before initialize is answered');
  }
});

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
