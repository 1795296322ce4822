// The agent protocol end to end, in process (dispatch): every operation with its answer's
// fields, the error forms the seed shows, the authority rules (a rejected change leaves the running
// version alive, a failed frame commits nothing) and a fuzz of malformed lines. Every session runs
// on a copy of an example folder in a temp dir: compose and sync write files.

import t, { type Test } from 'tap';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PNG } from 'pngjs';
import { Session, type SessionOptions } from '../src/main/session.js';
import { versionOf } from '../src/main/documents.js';
import { OPERATION_NAMES } from '../src/protocol/operations.js';
import { copyExample } from './fixtures.js';
import { dispatch } from '../src/protocol/dispatcher.js';

type Answer = { id?: unknown; ok?: any; error?: any };

async function open(name: string, options: SessionOptions = { workers: 1 }): Promise<{ s: Session; dir: string }> {
  const dir = copyExample(name, 'protocol');
  const s = await Session.open(join(dir, 'scene.esn'), options);
  t.teardown(() => s.close());
  return { s, dir };
}

/** One request (an object or a raw line) and its parsed answer. */
async function ask(s: Session, req: object | string): Promise<Answer> {
  const line = await dispatch(s, typeof req === 'string' ? req : JSON.stringify(req));
  t.notOk(line.includes('\n'), 'an answer is one line');
  return JSON.parse(line);
}

/** The answer's ok, failing the test (with the error) when it is an error. */
async function ok(t2: Test, s: Session, req: object): Promise<any> {
  const a = await ask(s, req);
  if (!('ok' in a)) t2.fail(`${JSON.stringify(req).slice(0, 200)} answered ${JSON.stringify(a.error).slice(0, 400)}`);
  return a.ok;
}

async function err(t2: Test, s: Session, req: object | string): Promise<any> {
  const a = await ask(s, req);
  if (!('error' in a)) t2.fail(`${JSON.stringify(req).slice(0, 200)} should fail, answered ${JSON.stringify(a.ok).slice(0, 300)}`);
  return a.error ?? {};
}

/** An output's (or pinned port's) field as raw f32, base64. */
async function f32(t2: Test, s: Session, req: object = {}): Promise<string> {
  return (await ok(t2, s, { op: 'read', format: 'f32', ...req })).data;
}

/** Compare two (long) base64 fields without printing them. */
function sameData(t2: Test, a: string, b: string, what: string, equal = true): void {
  const at = [...a].findIndex((c, i) => c !== b[i]);
  if ((a === b) === equal) t2.pass(what);
  else t2.fail(`${what}: ${equal ? `they differ (lengths ${a.length}, ${b.length}; first at ${at})` : 'they are the same'}`);
}

const TINT = (body: string) =>
  `kernel demo.tint@1 {\n  in src: field2<vec4>;\n  in warmth: f32 = 0.5;\n  out result: field2<vec4>;\n  each (x, y) {\n    ${body}\n  }\n}`;

const LIFE_LOOP = `kernel life.step@2 {
  grants field.read, field.write, input.read, time.read;
  state cells: field2<f32> = 0.0;
  out result: field2<vec4>;
  each (x, y) {
    let n = 0.0;
    while (n > -1.0) { n = n + 1.0; }
    cells = n;
    result = vec4(n);
  }
}`;

// ---------------------------------------------------------------------------------------------
// The rings scene: inspect, help, param, evaluate, read, pin, trace, pause, kernels, errors.

const rings = await open('rings');
const R = rings.s;

t.test('status answers the fields the seed lists', async (t) => {
  const st = await ok(t, R, { id: 1, op: 'status' });
  for (const k of ['backend', 'frame', 'fusion', 'grants', 'kernels', 'loaded', 'natives', 'nodes', 'refused', 'revision', 'scene', 'versions', 'time', 'paused', 'outputs', 'params', 'pins', 'workers'])
    t.ok(k in st, `status has ${k}`);
  t.equal(st.scene, 'scene.esn');
  t.equal(st.kernels, 2);
  t.equal(st.nodes, 2);
  t.equal(st.loaded, true);
  t.equal(st.refused, null);
  t.equal(st.frame, 0);
  t.equal(st.fusion, true);
  t.same(st.grants, ['field.read', 'field.write', 'time.read', 'input.read']);
  t.same(st.outputs, ['result']);
  t.same(st.params, { warmth: [0.5] });
  t.same(Object.keys(st.versions).sort(), ['api', 'entelechy', 'ir', 'language', 'package']);
  t.equal(typeof st.revision, 'number');
  // The seed's answer: id first, then ok; keys in order.
  const line = await dispatch(R, '{"id":1,"op":"status"}');
  t.match(line, /^\{"id":1,"ok":\{"backend":/);
});

t.test('kernels, kernel, graph', async (t) => {
  const { kernels } = await ok(t, R, { op: 'kernels' });
  t.same(kernels.map((k: any) => k.id), ['demo.rings@1', 'demo.tint@1']);
  const tint = kernels.find((k: any) => k.id === 'demo.tint@1');
  t.equal(tint.generation, 1);
  t.equal(tint.origin, 'kernels.esn');
  t.same(tint.ports.map((p: any) => `${p.kind} ${p.name}: ${p.type}`), ['in src: field2<vec4>', 'in warmth: f32', 'out result: field2<vec4>']);
  t.same(kernels[0].grants, ['time.read']);

  const k = await ok(t, R, { op: 'kernel', kernel: 'demo.rings@1' });
  t.equal(k.id, 'demo.rings@1');
  t.equal(k.origin, 'kernels.esn');
  t.equal(k.generation, 1);
  t.match(k.source, /^kernel demo\.rings@1 \{/);
  t.match(k.source, /result = vec4\(v, 0\.8 \* v, 0\.6 \* v, 1\.0\);/);
  t.same(k.state, []);
  const missing = await err(t, R, { op: 'kernel', kernel: 'demo.nope@1' });
  t.same(missing.kernels, ['demo.rings@1', 'demo.tint@1']);

  const g = await ok(t, R, { op: 'graph' });
  t.same(g.order, ['rings', 'tint']);
  t.same(g.nodes.map((n: any) => [n.name, n.kernel]), [['rings', 'demo.rings@1'], ['tint', 'demo.tint@1']]);
  t.same(g.nodes[0].members, { count: [8] });
  t.same(g.nodes[0].size, [256, 256]);
  t.same(g.nodes[1].members, { warmth: { param: 'warmth' } });
  t.same(g.nodes[1].edges, { src: 'rings.result' });
  t.same(g.outputs, [{ name: 'result', node: 'tint', port: 'result' }]);
  t.same(g.params[0], { name: 'warmth', type: 'f32', value: [0.5], default: [0.5], range: [0, 1] });
  t.same(g.groups, [['rings', 'tint']]);
});

t.test('document: text, version and statements with line/column', async (t) => {
  const d = await ok(t, R, { op: 'document' });
  const onDisk = readFileSync(join(rings.dir, 'scene.esn'), 'utf8');
  t.equal(d.path, 'scene.esn');
  t.equal(d.text, onDisk);
  t.equal(d.version, versionOf(onDisk));
  t.same(d.statements, [
    { kind: 'use', name: 'kernels.esn', line: 2, column: 1 },
    { kind: 'param', name: 'warmth', line: 4, column: 1 },
    { kind: 'node', name: 'rings', line: 6, column: 1 },
    { kind: 'node', name: 'tint', line: 11, column: 1 },
    { kind: 'output', name: 'result', line: 16, column: 1 },
  ]);
  const k = await ok(t, R, { op: 'document', path: 'kernels.esn' });
  t.same(k.statements.map((s: any) => [s.kind, s.name, s.line]), [['kernel', 'demo.rings@1', 3], ['kernel', 'demo.tint@1', 14]]);
  const none = await err(t, R, { op: 'document', path: 'nope.esn' });
  t.equal(none.field, 'path');
  // A path that may not be read is refused as that, not as absent (it said "no document").
  t.match((await err(t, R, { op: 'document', path: '../secret.txt' })).message, /^`\.\.\/secret\.txt` uses `\.\.`; documents are read and written only under the scene's folder/);
  t.match((await err(t, R, { op: 'document', path: '/etc/passwd' })).message, /is an absolute path/);
  t.match((await err(t, R, { op: 'restore', path: '../x.json' })).message, /snapshots are read and written only under the scene's folder/);
  t.match((await err(t, R, { op: 'snapshot', path: 'sub/' })).message, /^`sub\/` ends with a slash, so it names a folder, not a snapshot/);
  t.match((await err(t, R, { op: 'read', file: 'x.png\u0000' })).message, /holds a NUL character/);
  const h = await ok(t, R, { op: 'history' });
  t.equal(h.path, 'scene.esn');
  t.same(h.versions.map((v: any) => v.origin), ['load']);
  t.equal(h.versions[0].version, d.version);
  t.equal(h.versions[0].bytes, Buffer.byteLength(onDisk));
});

t.test('help: an op, a builtin, a type, a grant, an event, the index, an unknown name', async (t) => {
  const op = await ok(t, R, { op: 'help', name: 'compose' });
  t.equal(op.kind, 'operation');
  t.equal(op.group, 'Structure');
  t.same(op.fields.map((f: any) => f.name), ['text', 'edits', 'documents', 'path', 'expect', 'deadline', 'dry_run', 'evaluate']);
  const sin = await ok(t, R, { op: 'help', name: 'sin' });
  t.equal(sin.kind, 'builtin');
  t.match(sin.signature, /sin/);
  const vec4 = await ok(t, R, { op: 'help', name: 'vec4' });
  t.ok(vec4.entries.some((e: any) => e.kind === 'type'), 'vec4 is a type');
  t.ok(vec4.entries.some((e: any) => e.kind === 'builtin'), 'and a builtin');
  const f32t = await ok(t, R, { op: 'help', name: 'f32' });
  t.ok((f32t.entries ?? [f32t]).some((e: any) => e.kind === 'type'), 'f32 is a type');
  const grant = await ok(t, R, { op: 'help', name: 'field.write' });
  t.equal(grant.kind, 'grant');
  const ev = await ok(t, R, { op: 'help', name: 'preparing' });
  t.equal(ev.kind, 'event');
  const index = await ok(t, R, { op: 'help' });
  t.same(index.index.operation, OPERATION_NAMES);
  t.ok(index.index.grant.includes('field.write'));
  t.ok(index.index.event.includes('published'));
  // The seed's own example, the doors, the protocol's fields and the session's packages.
  const window = await ok(t, R, { op: 'help', name: 'window' });
  t.equal(window.kind, 'door');
  t.match(window.open, /entelechy-player/);
  t.same(index.index.door, ['stdin', 'tcp', 'websocket', 'in-process', 'mcp', 'window']);
  const expect = await ok(t, R, { op: 'help', name: 'expect' });
  t.equal(expect.kind, 'field');
  t.same(expect.takes.map((f: any) => f.op), ['compose', 'publish', 'retire']);
  const pkg = await ok(t, R, { op: 'help', name: 'demo' });
  t.same([pkg.kind, pkg.kernels], ['package', ['demo.rings@1', 'demo.tint@1']]);
  const unknown = await err(t, R, { op: 'help', name: 'composee' });
  t.ok(unknown.similar.includes('compose'), 'similar names the near one');
  t.match(unknown.message, /similar: compose/);
});

t.test('param: sets, refuses with what to do next', async (t) => {
  const a = await ask(R, { id: 3, op: 'param', name: 'warmth', value: 0.9 });
  t.same(a, { id: 3, ok: { events: [], name: 'warmth', value: 0.9 } });
  t.same((await ok(t, R, { op: 'status' })).params, { warmth: [0.9] });

  // The seed's step 6, verbatim.
  const line = await dispatch(R, '{"id":6,"op":"param","name":"count","value":3}');
  t.match(line, /^\{"error":\{.*\},"id":6\}$/, 'error before id');
  const e = JSON.parse(line).error;
  t.equal(
    e.message,
    '`count` is not a param the scene declares; node `rings` sets its own `count`, which is the document\'s: change it there (over the protocol, `compose` with `edits`, node `rings`, member `count`), or declare a `param` there for the node to name',
  );
  t.same(e.fix, { node: 'rings', member: 'count', text: 'count = 3;' });

  const range = await err(t, R, { op: 'param', name: 'warmth', value: 2 });
  t.equal(range.field, 'value');
  t.equal(range.expected, '0..1');
  t.match(range.message, /0\.\.1/);
  const wrong = await err(t, R, { op: 'param', name: 'warmth', value: 'hot' });
  t.same(wrong.fields, ['name', 'value']);
  t.equal(wrong.field, 'value');
  t.equal(wrong.expected, 'number|array');
  const arity = await err(t, R, { op: 'param', name: 'warmth', value: [0.1, 0.2] });
  t.same(arity.fields, ['name', 'value']);
  t.equal(arity.field, 'value');
  const near = await err(t, R, { op: 'param', name: 'warmt', value: 0.1 });
  t.match(near.message, /did you mean `warmth`/);
  t.same((await ok(t, R, { op: 'status' })).params, { warmth: [0.9] }, 'refusals changed nothing');
  // A snapshot's params answer to the same rules as the param operation.
  const snap = JSON.parse((await ok(t, R, { op: 'snapshot' })).data);
  for (const [value, why] of [[[5], /`warmth` keeps to 0\.\.1 \(its range\)/], [[0.1, 0.2], /give 1 finite number/], ['hot', /not a list of numbers/]] as const) {
    const refused = await err(t, R, { op: 'restore', data: JSON.stringify({ ...snap, params: { warmth: value } }) });
    t.match(refused.message, why);
    t.match(refused.message, /nothing was restored/);
  }
  t.same((await ok(t, R, { op: 'status' })).params, { warmth: [0.9] }, 'refused restores changed nothing');
  await ok(t, R, { op: 'param', name: 'warmth', value: 0.5 });
});

t.test('evaluate: executed, outputs, placements, timings', async (t) => {
  const e = await ok(t, R, { id: 4, op: 'evaluate', time: 0 });
  t.same(e.executed, ['rings', 'tint']);
  t.same(e.outputs, [{ name: 'result', width: 256, height: 256 }]);
  t.same(e.placements.map((p: any) => p.node), ['rings', 'tint']);
  for (const p of e.placements) t.equal(p.backend, 'jit');
  t.ok(e.timings.length >= 1);
  for (const tm of e.timings) {
    t.type(tm.millis, 'number');
    t.type(tm.node, 'string');
  }
  t.equal(e.frame, 1);
  t.equal(e.time, 0);
  const only = await err(t, R, { op: 'evaluate', outputs: ['nope'] });
  t.equal(only.field, 'outputs');
});

t.test('read: png, f32, region', async (t) => {
  const png = await ok(t, R, { id: 5, op: 'read', output: 'result' });
  t.equal(png.format, 'png');
  const image = PNG.sync.read(Buffer.from(png.data, 'base64'));
  t.equal(image.width, 256);
  t.equal(image.height, 256);
  t.same([png.width, png.height, png.name], [256, 256, 'result']);
  const dflt = await ok(t, R, { op: 'read' });
  sameData(t, dflt.data, png.data, 'the default output is the first');

  const raw = await ok(t, R, { op: 'read', format: 'f32' });
  const bytes = Buffer.from(raw.data, 'base64');
  t.equal(bytes.length, 256 * 256 * 4 * 4, 'w*h*comps*4 bytes');
  t.equal(raw.components, 4);
  const planes = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const w = planes.subarray(3 * 256 * 256);
  t.ok(w.every((v) => v === 1), 'alpha plane is 1');

  const part = await ok(t, R, { op: 'read', format: 'f32', region: { x: 10, y: 20, width: 3, height: 2 } });
  t.same([part.width, part.height], [3, 2]);
  const pb = Buffer.from(part.data, 'base64');
  t.equal(pb.length, 3 * 2 * 4 * 4);
  const pf = new Float32Array(pb.buffer, pb.byteOffset, pb.length / 4);
  for (let c = 0; c < 4; c++)
    for (let y = 0; y < 2; y++)
      for (let x = 0; x < 3; x++) t.equal(pf[c * 6 + y * 3 + x], planes[c * 65536 + (20 + y) * 256 + 10 + x], `region element c${c} (${x},${y})`);
  const ppng = await ok(t, R, { op: 'read', region: { x: 0, y: 0, width: 5, height: 7 } });
  const pimg = PNG.sync.read(Buffer.from(ppng.data, 'base64'));
  t.same([pimg.width, pimg.height], [5, 7]);
  const outside = await err(t, R, { op: 'read', region: { x: 250, y: 0, width: 10, height: 1 } });
  t.equal(outside.field, 'region');
  const badFormat = await err(t, R, { op: 'read', format: 'jpeg' });
  t.equal(badFormat.field, 'format');
});

t.test('read a node not pinned answers how to pin; pin, read, unpin', async (t) => {
  const e = await err(t, R, { op: 'read', node: 'rings', port: 'result' });
  t.match(e.message, /pin/);
  t.same(e.request, { op: 'pin', node: 'rings' }, 'the request that mends it (a fix is only ever a compose item)');
  t.equal(e.fix, undefined);
  const pinned = await ok(t, R, e.request);
  t.same(pinned.pins, ['rings']);
  t.same((await ok(t, R, { op: 'status' })).pins, ['rings']);
  const notYet = await err(t, R, { op: 'read', node: 'rings', port: 'result', format: 'f32' });
  t.match(notYet.message, /holds nothing computed yet.*Evaluate first/, 'pinned, it is kept from the next frame on: not zeros labelled as a frame');
  t.same(notYet.request, { op: 'evaluate' });
  await ok(t, R, { op: 'evaluate', time: 0 });
  const r = await ok(t, R, { op: 'read', node: 'rings', port: 'result', format: 'f32' });
  t.equal(r.name, 'rings.result');
  t.equal(Buffer.from(r.data, 'base64').length, 256 * 256 * 16);
  // unpin checks the port as pin does (a port the node lacks unpinned it).
  const wrongPort = await err(t, R, { op: 'unpin', node: 'rings', port: 'nosuch' });
  t.equal(wrongPort.field, 'port');
  t.match(wrongPort.message, /node `rings` has no out or state port `nosuch`/);
  t.same((await ok(t, R, { op: 'status' })).pins, ['rings'], 'still pinned');
  const un = await ok(t, R, { op: 'unpin', node: 'rings', port: 'result' });
  t.same(un.pins, []);
  const again = await err(t, R, { op: 'unpin', node: 'rings' });
  t.equal(again.field, 'node');
  const noNode = await err(t, R, { op: 'pin', node: 'nope' });
  t.equal(noNode.field, 'node');
});

t.test('trace: rings at the centre', async (t) => {
  await ok(t, R, { op: 'evaluate', time: 0 });
  const tr = await ok(t, R, { op: 'trace', x: 128, y: 128 });
  t.equal(tr.x, 128);
  t.equal(tr.y, 128);
  const rv = tr.values.find((v: any) => v.node === 'rings' && v.port === 'result');
  const tv = tr.values.find((v: any) => v.node === 'tint' && v.port === 'result');
  t.ok(rv && tv, 'a value for each node and port');
  const px = (128 + 0.5) / 256 - 0.5;
  const v = 0.5 + 0.5 * Math.sin(Math.hypot(px, px) * 8 * 2 * Math.PI);
  t.ok(Math.abs(rv.value[0] - v) < 1e-4, `rings.result.x at the centre is ${v} (got ${rv.value[0]})`);
  t.ok(Math.abs(rv.value[1] - 0.8 * v) < 1e-4);
  t.equal(rv.value[3], 1);
  t.ok(Math.abs(tv.value[0] - v * 1.0) < 1e-4, 'tint at warmth 0.5');
  t.ok(Math.abs(tv.value[2] - 0.6 * v) < 1e-4);
  const byOutput = await ok(t, R, { op: 'trace', x: 128, y: 128, output: 'result' });
  t.same(byOutput.values.map((v: any) => v.node), ['rings', 'tint'], 'the nodes the output needs');
  const noOutput = await err(t, R, { op: 'trace', x: 1, output: 'nope' });
  t.equal(noOutput.field, 'output');
  const out = await err(t, R, { op: 'trace', x: 9999 });
  t.equal(out.field, 'x');
});

t.test('trace replays the last frame: what it computed, from the state it started from, with its pointer', async (t) => {
  const { s: L } = await open('life');
  t.teardown(() => L.close());
  const cell = async (x: number, y: number) => {
    const bytes = Buffer.from(await f32(t, L, { node: 'board', port: 'cells', region: { x, y, width: 1, height: 1 } }), 'base64');
    return new Float32Array(bytes.buffer, bytes.byteOffset, 1)[0];
  };
  const before = await ok(t, L, { op: 'trace', x: 3, y: 0 });
  t.equal(before.frame, 1, 'before any frame: the first one');
  await ok(t, L, { op: 'evaluate' });
  await ok(t, L, { op: 'evaluate' });
  for (const [x, y] of [[3, 0], [5, 7], [64, 64], [100, 20]]) {
    const tr = await ok(t, L, { op: 'trace', x, y });
    t.equal(tr.frame, 2, 'the frame it replays');
    t.equal(tr.values.find((v: any) => v.port === 'cells').value, await cell(x, y), `cells at (${x}, ${y}) as the frame left them`);
  }
  // The pointer drew live cells in the frame: the replay draws them too.
  await ok(t, L, { op: 'evaluate', pointer: { x: 10, y: 10, down: true } });
  t.equal(await cell(10, 10), 1);
  const drawn = await ok(t, L, { op: 'trace', x: 10, y: 10 });
  t.same(drawn.values.map((v: any) => [v.port, v.value]), [['cells', 1], ['result', [0.949999988079071, 1, 0.8500000238418579, 1]]]);
  t.equal(drawn.frame, 3);
  // Tracing twice replays the same frame; the world is untouched.
  t.same((await ok(t, L, { op: 'trace', x: 10, y: 10 })).values, drawn.values);
  t.equal((await ok(t, L, { op: 'status' })).frame, 3);
});

t.test('pause: evaluate while paused runs nothing', async (t) => {
  const before = await ok(t, R, { op: 'status' });
  t.same(await ok(t, R, { op: 'pause', paused: true }), { paused: true });
  const e = await ok(t, R, { op: 'evaluate', time: 5 });
  t.same(e.executed, []);
  t.same(e.timings, []);
  t.ok(e.events.some((ev: any) => ev.kind === 'idle'), 'an idle event says why');
  const during = await ok(t, R, { op: 'status' });
  t.equal(during.frame, before.frame);
  t.equal(during.time, before.time);
  t.equal(during.paused, true);
  t.same(await ok(t, R, { op: 'pause' }), { paused: false }, 'no field toggles');
  const after = await ok(t, R, { op: 'evaluate', time: 5 });
  t.same(after.executed, ['rings', 'tint']);
});

t.test('pause while frames run: the frame running commits first, then the counter stands still', async (t) => {
  // Life has state, so each of a long run of frames runs (none is a cached repeat); a pause
  // arriving while one of them runs takes effect after it.
  const { s } = await open('life');
  const running = ask(s, { op: 'evaluate', frames: 400 });
  for (let i = 0; (await ok(t, s, { op: 'status' })).frame < 3; i++) {
    if (i > 20000) throw new Error('the run of frames did not start');
    await delay(1);
  }
  t.same(await ok(t, s, { op: 'pause', paused: true }), { paused: true });
  const paused = await ok(t, s, { op: 'status' });
  t.equal(paused.paused, true);
  const answer = await running;
  t.ok('ok' in answer, 'the run of frames answers (its frames after the pause ran nothing)');
  t.ok(paused.frame < 400, `the pause stopped the run (at frame ${paused.frame})`);
  t.equal(answer.ok.frame, paused.frame, 'the run ends on the frame the pause stopped at');
  for (let i = 0; i < 3; i++) await ok(t, s, { op: 'evaluate' });
  t.equal((await ok(t, s, { op: 'status' })).frame, paused.frame, 'the counter stands still once the pause is answered');
  t.same(await ok(t, s, { op: 'pause', paused: false }), { paused: false });
  t.equal((await ok(t, s, { op: 'evaluate' })).frame, paused.frame + 1, 'resumed, the next frame runs');
});

t.test('pause toggles: the last request wins, even before the first took effect', async (t) => {
  const { s } = await open('life');
  // A frame holds the slot, so the first toggle's pause is still to come when the second arrives.
  const hold = s.frame(() => delay(150));
  const first = s.pause();
  const second = s.pause();
  await hold;
  t.same(await Promise.all([first, second]), [false, false], 'two toggles at once leave the session running');
  t.equal((await ok(t, s, { op: 'status' })).paused, false);
  t.same(await ok(t, s, { op: 'pause' }), { paused: true }, 'a third toggle pauses');
  // A pause whose turn comes after a resume does nothing.
  t.same(await ok(t, s, { op: 'pause', paused: false }), { paused: false });
  const hold2 = s.frame(() => delay(150));
  const pausing = s.pause(true);
  t.equal(await s.pause(false), false, 'the resume answers at once');
  await hold2;
  t.equal(await pausing, false, 'the pause before it, now its turn came, answers running');
  t.equal(s.paused, false);
  t.same(await ok(t, s, { op: 'pause' }), { paused: true }, 'and a toggle after them pauses');
  t.same(await ok(t, s, { op: 'pause', paused: false }), { paused: false });
  // A pause cancelled before its turn: the next toggle goes by what is (running), unless a pause
  // asked after the cancelled one is still to come.
  const hold3 = s.frame(() => delay(150));
  const cancel = new AbortController();
  const cancelled = s.pause(true, cancel.signal).then(() => 'answered', () => 'refused');
  cancel.abort();
  await hold3;
  t.equal(await cancelled, 'refused', 'the cancelled pause is refused');
  t.equal(s.paused, false, 'and paused nothing');
  t.same(await ok(t, s, { op: 'pause' }), { paused: true }, 'a toggle after it pauses');
  t.same(await ok(t, s, { op: 'pause', paused: false }), { paused: false });
  const hold4 = s.frame(() => delay(150));
  const cancel2 = new AbortController();
  const cancelled2 = s.pause(true, cancel2.signal).catch(() => 'refused');
  const later = s.pause(true);
  cancel2.abort();
  await hold4;
  t.equal(await cancelled2, 'refused');
  t.equal(await later, true, 'the pause asked after the cancelled one still pauses');
  t.same(await ok(t, s, { op: 'pause', paused: false }), { paused: false });
});

t.test('prepare, publish, stale expect, rejected kernel, retire', async (t) => {
  const st0 = await ok(t, R, { op: 'status' });
  const kernels0 = await ok(t, R, { op: 'kernels' });
  const p = await ok(t, R, { op: 'prepare', source: TINT('result = vec4(src.x, src.x, src.x, 1.0);') });
  t.equal(p.id, 'demo.tint@1');
  t.same(p.ports.map((x: any) => x.name), ['src', 'warmth', 'result']);
  t.same(p.grants, []);
  const extra = await ok(t, R, { op: 'prepare', source: 'kernel demo.extra@1 { out result: field2<vec4>; each (x, y) { result = vec4(1.0); } }' });
  t.equal(extra.id, 'demo.extra@1');
  const bad = await err(t, R, { op: 'prepare', source: TINT('result = nothing;') });
  t.type(bad.line, 'number');
  t.type(bad.column, 'number');
  t.same(await ok(t, R, { op: 'kernels' }), kernels0, 'prepare changes nothing');
  t.equal((await ok(t, R, { op: 'status' })).revision, st0.revision);

  await ok(t, R, { op: 'evaluate', time: 1 });
  const original = await f32(t, R);
  const g2 = await ask(R, { id: 1, op: 'publish', source: TINT('result = vec4(src.x, src.x, src.x, 1.0);') });
  t.same([g2.id, g2.ok.id, g2.ok.generation], [1, 'demo.tint@1', 2]);
  const g3 = await ok(t, R, { op: 'publish', source: TINT('result = vec4(src.y, src.y, src.y, 1.0);'), expect: 2 });
  t.same([g3.id, g3.generation], ['demo.tint@1', 3]);
  const stale = await ask(R, { id: 2, op: 'publish', source: TINT('result = src;'), expect: 2 });
  t.equal(stale.error.message, 'cannot replace demo.tint@1: `expect` is 2, but the registry holds g3 (from protocol; its source is this error\'s `source`): send it again with "expect": 3');
  t.same(Object.keys(stale), ['error', 'id']);
  // retire says retire (it said "cannot replace").
  t.match((await ask(R, { op: 'retire', kernel: 'demo.tint@1', expect: 1 })).error.message, /^cannot retire demo\.tint@1: `expect` is 1, but the registry holds g3/);
  const k = await ok(t, R, { op: 'kernel', kernel: 'demo.tint@1' });
  t.same([k.generation, k.origin], [3, 'protocol']);
  t.match(k.source, /src\.y, src\.y/);

  await ok(t, R, { op: 'evaluate', time: 1 });
  const grey = await f32(t, R);
  sameData(t, grey, original, 'the published kernel runs', false);
  const rejected = await err(t, R, { op: 'publish', source: TINT('result = vec4(nothing);') });
  t.match(rejected.message, /does not check/);
  t.equal((await ok(t, R, { op: 'kernel', kernel: 'demo.tint@1' })).generation, 3, 'the registry still holds g3');
  const e = await ok(t, R, { op: 'evaluate', time: 1.5 });
  t.same(e.executed, ['rings', 'tint'], 'evaluate runs the previous generation');
  await ok(t, R, { op: 'evaluate', time: 1 });
  sameData(t, await f32(t, R), grey, 'the output is the previous generation\'s');

  const r = await ok(t, R, { op: 'retire', kernel: 'demo.tint@1' });
  t.equal(r.id, 'demo.tint@1');
  t.ok(r.generation > 3);
  t.same(r.events.slice(0, 2).map((e: any) => [e.kind, e.kernel, e.origin]), [['retired', 'demo.tint@1', undefined], ['published', 'demo.tint@1', 'kernels.esn']], 'the protocol kernel withdrawn, the document\'s published again');
  t.match(r.events[0].message, /^the generation \d+ of `demo\.tint@1` published over the protocol gave way to the one `kernels\.esn` declares/, 'the retired event says what gave way to what');
  const back = await ok(t, R, { op: 'kernel', kernel: 'demo.tint@1' });
  t.equal(back.origin, 'kernels.esn', 'the document version runs again');
  await ok(t, R, { op: 'evaluate', time: 1.25 });
  await ok(t, R, { op: 'evaluate', time: 1 });
  sameData(t, await f32(t, R), original, 'the document version\'s output');
  const notProtocol = await err(t, R, { op: 'retire', kernel: 'demo.tint@1' });
  t.match(notProtocol.message, /kernels\.esn/);
});

t.test('error forms: unknown op, bad JSON, fields, ids', async (t) => {
  const line = await dispatch(R, '{"id":10,"op":"frobnicate"}');
  t.match(line, /^\{"error":.*,"id":10\}$/);
  const e = JSON.parse(line).error;
  t.equal(
    e.message,
    'unknown op `frobnicate`; the operations are status, kernels, kernel, graph, document, history, bisect, compose, sync, prepare, publish, retire, param, evaluate, read, write, snapshot, restore, pause, reset, help, trace, pin, unpin, cancel, quit',
  );
  t.same(e.operations, OPERATION_NAMES);
  t.equal(OPERATION_NAMES.length, 26);

  const json = await err(t, R, '{"id": 1, "op": "status",}');
  t.equal(json.line, 1);
  t.type(json.column, 'number');
  t.ok(json.column >= 20 && json.column <= 26, `column near the trailing comma (${json.column})`);
  t.match(json.message, /line 1, column/);
  const token = await err(t, R, '{"a":{}, "op": tru}');
  t.same([token.line, token.column], [1, 19], 'the column of the bad token, not of its first look-alike');
  const after = await err(t, R, '{"op":"status"} {');
  t.same([after.line, after.column], [1, 17]);
  t.notMatch(after.message, /position/);
  const cut = await err(t, R, '{"op": "status"');
  t.equal(cut.line, 1);
  t.equal(cut.column, 16);

  const extra = await err(t, R, { op: 'evaluate', tmie: 1 });
  t.same(extra.fields, ['time', 'outputs', 'pointer', 'keys', 'deadline', 'profile', 'frames', 'thumbnail']);
  t.equal(extra.field, 'tmie');
  t.equal(extra.expected, 'time');
  const type = await err(t, R, { op: 'evaluate', time: 'now' });
  t.same([type.field, type.expected], ['time', 'number']);
  t.same(type.fields, ['time', 'outputs', 'pointer', 'keys', 'deadline', 'profile', 'frames', 'thumbnail']);
  const missing = await err(t, R, { op: 'kernel' });
  t.same([missing.field, missing.expected], ['kernel', 'string']);
  t.same(missing.fields, ['kernel']);
  const noOp = await err(t, R, { id: 'x' });
  t.equal(noOp.field, 'op');

  t.same(await ask(R, { id: 'abc', op: 'pause', paused: false }), { id: 'abc', ok: { paused: false } });
  t.same(await ask(R, { id: 7.5, op: 'pause', paused: false }), { id: 7.5, ok: { paused: false } });
  const errId = await ask(R, { id: 'e1', op: 'nope' });
  t.equal(errId.id, 'e1');
  t.same(Object.keys(errId), ['error', 'id']);
  t.same(await ask(R, { op: 'pause', paused: false }), { ok: { paused: false } }, 'no id, none echoed');
});

t.test('quit answers {}', async (t) => {
  t.same(await ask(R, { id: 9, op: 'quit' }), { id: 9, ok: {} });
});

t.test('fuzz: 300 random and malformed lines each get one answer', async (t) => {
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const values = (): unknown => pick<() => unknown>([
    () => Math.floor(rand() * 1000) - 500, () => rand() * 10 - 5, () => 'x'.repeat(Math.floor(rand() * 5)), () => null, () => true,
    () => [1, 'a', null], () => ['result'], () => [0.5, 2], () => ({ x: rand() * 300, y: -1 }), () => ({ x: 'a', down: 1 }), () => ({ x: 1.5, width: 0 }), () => 'result', () => 'rings', () => 'demo.tint@1', () => -0, () => 1e308, () => '',
  ])();
  const fieldNames = ['name', 'value', 'time', 'x', 'y', 'z', 'node', 'port', 'output', 'outputs', 'keys', 'pointer', 'format', 'region', 'kernel', 'source', 'paused', 'path', 'data', 'expect', 'version', 'bogus'];
  const safeOps = OPERATION_NAMES.filter((o) => o !== 'compose'); // the scene's documents stay as they are
  const lines: string[] = [];
  for (let i = 0; i < 300; i++) {
    const kind = i % 4;
    if (kind === 0) lines.push(Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 40) }, () => Math.floor(rand() * 256))).toString('latin1').replace(/[\r\n]/g, ' '));
    else if (kind === 1) lines.push(JSON.stringify(values()));
    else if (kind === 2) {
      const req: Record<string, unknown> = { op: pick([...safeOps, 'frob', '', 'STATUS']) };
      if (rand() < 0.5) req.id = pick<unknown>([i, `s${i}`, null, [1], { a: 1 }]);
      const n = Math.floor(rand() * 4);
      for (let j = 0; j < n; j++) req[pick(fieldNames)] = values();
      lines.push(JSON.stringify(req));
    } else {
      const good = JSON.stringify({ id: i, op: pick(safeOps), time: rand() });
      const cut = Math.floor(rand() * good.length);
      lines.push(pick([good.slice(0, cut), good.slice(cut), good + '}', good.replace(':', ''), `[${good}]`, `${good} ${good}`]));
    }
  }
  let answered = 0;
  for (const line of lines) {
    const answer = await dispatch(R, line);
    let parsed: Answer | undefined;
    try {
      parsed = JSON.parse(answer);
    } catch {
      t.fail(`answer is not JSON for ${JSON.stringify(line)}: ${answer}`);
      continue;
    }
    if (answer.includes('\n')) t.fail(`more than one line for ${JSON.stringify(line)}`);
    if (!parsed || typeof parsed !== 'object' || ('ok' in parsed) === ('error' in parsed)) t.fail(`answer has neither or both of ok and error: ${answer}`);
    else if (parsed.error && parsed.error.internal) t.fail(`internal error for ${JSON.stringify(line)}: ${parsed.error.message}`);
    else answered++;
  }
  t.equal(answered, 300, 'every line got one answer with ok or error');
  const st = await ok(t, R, { op: 'status' });
  t.equal(st.loaded, true, 'status still works');
  const keys = await err(t, R, { op: 'evaluate', keys: [1] });
  t.same([keys.field, keys.expected], ['keys', 'array of strings']);
  const pointer = await err(t, R, { op: 'evaluate', pointer: { x: 'left' } });
  t.equal(pointer.field, 'pointer');
  const e = await ok(t, R, { op: 'evaluate', time: 0.25 });
  t.same(e.outputs, [{ name: 'result', width: 256, height: 256 }], 'and evaluate');
});

// ---------------------------------------------------------------------------------------------
// compose and sync, on their own copy of rings.

t.test('compose and sync', async (t) => {
  const { s: C, dir } = await open('rings');
  const scenePath = join(dir, 'scene.esn');
  const kernelsPath = join(dir, 'kernels.esn');
  const original = readFileSync(scenePath, 'utf8');
  const originalKernels = readFileSync(kernelsPath, 'utf8');
  const read = (p: string) => readFileSync(join(dir, p), 'utf8');

  await t.test('edits: only the edited bytes change, comments kept', async (t) => {
    const a = await ask(C, { id: 8, op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 12.0;' }] });
    t.equal(a.id, 8);
    t.same(Object.keys(a.ok), ['events', 'path', 'version', 'written']);
    t.equal(a.ok.path, 'scene.esn');
    t.equal(a.ok.written, true);
    t.ok(a.ok.events.some((e: any) => e.kind === 'scene_loaded'));
    const now = read('scene.esn');
    t.equal(now, original.replace('count = 8.0;', 'count = 12.0;'), 'byte-exact');
    t.equal(a.ok.version, versionOf(now));
    t.same((await ok(t, C, { op: 'graph' })).nodes[0].members, { count: [12] });
    const h = await ok(t, C, { op: 'history' });
    t.same(h.versions.map((v: any) => v.origin), ['load', 'compose']);
    // the param error's fix, handed back to compose
    const fix = (await err(t, C, { op: 'param', name: 'count', value: 3 })).fix;
    await ok(t, C, { op: 'compose', edits: [fix] });
    t.equal(read('scene.esn'), original.replace('count = 8.0;', 'count = 3;'));
  });

  await t.test('text: the whole document', async (t) => {
    const text = original.replace('size = 256 x 256;', 'size = 64 x 32;  ');
    const a = await ok(t, C, { op: 'compose', text });
    t.equal(read('scene.esn'), text);
    t.equal(a.version, versionOf(text));
    const e = await ok(t, C, { op: 'evaluate', time: 0 });
    t.same(e.outputs, [{ name: 'result', width: 64, height: 32 }]);
    t.equal((await ok(t, C, { op: 'document' })).text, text);
  });

  await t.test('rollback: composing an old text', async (t) => {
    await ok(t, C, { op: 'compose', text: original });
    t.equal(read('scene.esn'), original);
    const h = await ok(t, C, { op: 'history' });
    t.equal(h.versions.at(-1).origin, 'rollback');
    t.equal(h.versions.at(-1).version, versionOf(original));
    const old = await ok(t, C, { op: 'document', version: h.versions[1].version });
    t.equal(old.text, original.replace('count = 8.0;', 'count = 12.0;'), 'document reads an earlier version');
    // Its first 4 or more characters, as bisect takes them (it said there was no such version).
    t.equal((await ok(t, C, { op: 'document', version: h.versions[1].version.slice(0, 6).toUpperCase() })).text, old.text, 'a digest\'s beginning');
    t.match((await err(t, C, { op: 'document', version: h.versions[1].version.slice(0, 3) })).message, /has no version/, 'three characters are too few');
  });

  await t.test('text over a saved edit not yet synced: the edit is kept in history, and the answer names it', async (t) => {
    // It was written over and lost: history held only the load and the compose.
    const saved = `${original}// a comment saved in the editor, not synced\n`;
    writeFileSync(scenePath, saved);
    const a = await ok(t, C, { op: 'compose', text: original.replace('count = 8.0;', 'count = 7.0;') });
    const wrote = a.events.find((e: any) => e.kind === 'wrote');
    t.same([wrote.path, wrote.replaced], ['scene.esn', versionOf(saved)], 'the answer names the version it wrote over');
    const h = await ok(t, C, { op: 'history' });
    t.same(h.versions.slice(-2).map((v: any) => [v.version, v.origin]), [[versionOf(saved), 'disk'], [a.version, 'compose']]);
    t.equal((await ok(t, C, { op: 'document', version: versionOf(saved) })).text, saved, 'document gives it back');
    // A text the session has seen (the usual case) is not named.
    const again = await ok(t, C, { op: 'compose', text: original });
    t.equal(again.events.find((e: any) => e.kind === 'wrote').replaced, undefined);
    // Edits over such a saved edit are applied to it: it is not written over but goes live with them.
    const edited = `${original}// another comment, saved, not synced\n`;
    writeFileSync(scenePath, edited);
    const b = await ok(t, C, { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 7.0;' }] });
    const merged = b.events.find((e: any) => e.kind === 'wrote');
    t.same([merged.replaced, merged.included], [undefined, versionOf(edited)], 'named as included, not as written over');
    t.ok(read('scene.esn').includes('// another comment, saved, not synced') && read('scene.esn').includes('count = 7.0;'), 'both are in the document');
    t.same((await ok(t, C, { op: 'history' })).versions.slice(-2).map((v: any) => [v.version, v.origin]), [[versionOf(edited), 'disk'], [b.version, 'compose']], 'history keeps the saved edit too');
    await ok(t, C, { op: 'compose', text: original });
  });

  await t.test('a compose refused for a saved edit of another document says so, and what to do', async (t) => {
    writeFileSync(kernelsPath, originalKernels.replace('src.x * (0.5 + warmth)', 'src.x * (0.5 + warmht)'));
    const e = await err(t, C, { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 9.0;' }] });
    t.match(e.message, /^compose refused: nothing was written: kernels\.esn:\d+:\d+: unknown name `warmht`/);
    t.match(e.message, /`kernels\.esn` holds a saved edit the world does not run, .*: mend or revert `kernels\.esn`, or compose it too\)$/);
    t.equal(read('scene.esn'), original, 'nothing was written');
    writeFileSync(kernelsPath, originalKernels);
    // A mistake in the composed document itself says nothing of the kind.
    const own = await err(t, C, { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = nope;' }] });
    t.notMatch(own.message, /saved edit/);
    // Edits of a document whose saved edit (not yet synced) is broken: the edit is named, with a way out.
    const broken = original.replace('count = 8.0;', 'count = 9.0 ');
    writeFileSync(scenePath, broken);
    // Looked at first (history then knows the saved version): the hint was dropped.
    await ok(t, C, { op: 'history', path: 'scene.esn' });
    const blamed = await err(t, C, { op: 'compose', edits: [{ param: 'warmth', text: 'param warmth: f32 = 0.7 range 0..1;' }] });
    t.match(blamed.message, new RegExp(`\\(\`scene\\.esn\` holds a saved edit not yet synced, version ${versionOf(broken)}, and the edits were applied to it: the error may be in that edit; mend it on disk, or compose the whole \`text\` with "expect": "${versionOf(broken)}" to replace it\\)$`));
    t.equal(read('scene.esn'), broken, 'nothing was written');
    await ok(t, C, { op: 'compose', text: original, expect: versionOf(broken) });
  });

  await t.test('nothing to change: no write, no new revision', async (t) => {
    const before = (await ok(t, C, { op: 'status' })).revision;
    const h = (await ok(t, C, { op: 'history' })).versions.length;
    for (const req of [{ op: 'compose', edits: [] }, { op: 'compose', text: original }, { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 8.0;' }] }]) {
      const a = await ok(t, C, req);
      t.equal(a.written, false, `${JSON.stringify(req).slice(0, 40)}: not written`);
      t.equal(a.version, versionOf(original));
      t.same(a.events.map((e: any) => e.kind), ['idle']);
      t.match(a.events[0].reason, /nothing was written or reloaded/);
    }
    t.equal((await ok(t, C, { op: 'status' })).revision, before, 'the same revision runs');
    t.equal((await ok(t, C, { op: 'history' })).versions.length, h, 'no version added');
    t.equal(read('scene.esn'), original);
  });

  await t.test('edits that would drop one another are refused: two of one member or statement, text beside edits', async (t) => {
    const count = (n: number) => ({ node: 'rings', member: 'count', text: `count = ${n}.0;` });
    const cases: [object, RegExp][] = [
      [{ edits: [count(12), count(13)] }, /edit 1 changes member `count` of node `rings`, as edit 0 does: give one edit for it/],
      [{ edits: [{ node: 'x', text: 'node x: demo.rings@1 { size = 4 x 4; }' }, { node: 'x', text: 'node x: demo.rings@1 { size = 8 x 8; }' }] }, /edit 1 changes node `x`, as edit 0 does/],
      [{ edits: [count(12), { node: 'rings', text: 'node rings: demo.rings@1 { size = 8 x 8; count = 2.0; }' }] }, /edit 1 changes node `rings`, as edit 0 does/],
      [{ edits: [count(12)], text: original }, /give `text` \(the whole document\) or `edits`, not both/],
      [{ documents: [{ path: 'scene.esn', text: original, edits: [count(12)] }] }, /not both \(documents\[0\]\)/],
    ];
    for (const [fields, why] of cases) t.match((await err(t, C, { op: 'compose', ...fields })).message, why);
    t.equal(read('scene.esn'), original, 'nothing was written');
    // Two members of one node are two edits still.
    await ok(t, C, { op: 'compose', edits: [count(12), { node: 'rings', member: 'size', text: 'size = 64 x 64;' }] });
    t.equal(read('scene.esn'), original.replace('count = 8.0;', 'count = 12.0;').replace('size = 256 x 256;', 'size = 64 x 64;'));
    await ok(t, C, { op: 'compose', text: original });
  });

  await t.test('documents whose node runs a kernel only the protocol published are refused, with the kernel as the fix', async (t) => {
    const source = 'kernel demo.only@1 { out result: field2<vec4>; each (x, y) { result = vec4(0.5); } }';
    await ok(t, C, { op: 'publish', source });
    const edits = [{ node: 'extra', text: 'node extra: demo.only@1 { size = 8 x 8; }' }, { output: 'ex', text: 'output ex <- extra.result;' }];
    const e = await err(t, C, { op: 'compose', edits });
    t.match(e.message, /node `extra` runs `demo.only@1`, which only the protocol published: the documents written would not load on their own/);
    t.same([e.node, e.kernel, e.written], ['extra', 'demo.only@1', false]);
    t.same(e.fix, { kernel: 'demo.only@1', text: source });
    t.equal(read('scene.esn'), original, 'nothing was written');
    await ok(t, C, { op: 'compose', edits: [...edits, e.fix] });
    t.equal((await ok(t, C, { op: 'kernel', kernel: 'demo.only@1' })).origin, 'scene.esn', 'the kernel is the document\'s now');
    await ok(t, C, { op: 'compose', text: original });
  });

  await t.test('a pinned node a compose removes takes its pin with it, told', async (t) => {
    await ok(t, C, { op: 'pin', node: 'tint' });
    const a = await ok(t, C, { op: 'compose', edits: [{ node: 'tint', text: null }, { output: 'result', text: 'output result <- rings.result;' }] });
    t.match(a.events.find((e: any) => e.kind === 'unpinned'), { node: 'tint' });
    t.same((await ok(t, C, { op: 'status' })).pins, [], 'no pin of a node that is gone');
    await ok(t, C, { op: 'compose', text: original });
    t.same((await ok(t, C, { op: 'status' })).pins, [], 'a node of that name again is not pinned by itself');
  });

  await t.test('a file of the folder that is no document: compose and snapshot refuse to replace it', async (t) => {
    const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    writeFileSync(join(dir, 'photo.jpg'), bytes);
    writeFileSync(join(dir, 'own.replay'), '{"op":"status"}\n');
    const c = await err(t, C, { op: 'compose', path: 'photo.jpg', text: '// hello\n' });
    t.match(c.message, /not one of its documents: compose writes documents \(\.esn\) and replay tests/);
    t.equal(c.path, 'photo.jpg');
    t.match((await err(t, C, { op: 'document', path: 'photo.jpg' })).message, /^`photo\.jpg` is a file of the scene's folder but not a document: `document` reads documents/, 'nor does document read it as text');
    for (const path of ['photo.jpg', 'own.replay']) {
      const e = await err(t, C, { op: 'snapshot', path });
      t.match(e.message, /holds something other than a snapshot; a snapshot would replace it/);
    }
    t.same(readFileSync(join(dir, 'photo.jpg')), bytes, 'the photograph as it was');
    t.equal(read('own.replay'), '{"op":"status"}\n', 'the replay as it was');
    // A snapshot replaces a snapshot; compose writes a replay test.
    await ok(t, C, { op: 'snapshot', path: 'kept.snapshot.json' });
    await ok(t, C, { op: 'snapshot', path: 'kept.snapshot.json' });
    // A replay test `entelechy test` could not read is refused where it goes wrong, and nothing written.
    const unreadable = await err(t, C, { op: 'compose', path: 'own.replay', text: '> {"op":"graph"}\ngarbage\n' });
    t.match(unreadable.message, /^own\.replay:2:1: a line starts with `>` \(a request\)[^]*; nothing was written: a replay test is written only when `entelechy test` can read it/);
    t.same([unreadable.line, unreadable.column, unreadable.written], [2, 1, false]);
    t.equal(read('own.replay'), '{"op":"status"}\n', 'the replay as it was');
    // Nor one `entelechy test` would refuse to run: no request, a scene that is not there.
    t.match((await err(t, C, { op: 'compose', path: 'empty.replay', text: '# nothing yet\n' })).message, /^empty\.replay: the replay has no requests/);
    t.match((await err(t, C, { op: 'compose', path: 'far.replay', text: '@scene nothere.esn\n> {"op":"status"}\n' })).message, /^far\.replay:1: @scene names `nothere\.esn`, but there is no such file beside the replay \(in its folder\)/);
    t.match((await err(t, C, { op: 'compose', path: 'deep/x.replay', text: '> {"op":"status"}\n' })).message, /^deep\/x\.replay: no scene\.esn beside the replay/);
    for (const f of ['empty.replay', 'far.replay', 'deep']) t.notOk(existsSync(join(dir, f)), `${f}: nothing written`);
    await ok(t, C, { op: 'compose', path: 'own.replay', text: '> {"op":"graph"}\n' });
    t.equal(read('own.replay'), '> {"op":"graph"}\n');
    // Its versions are kept, the one it replaced too: `document` gives it back.
    const kept = (await ok(t, C, { op: 'history', path: 'own.replay' })).versions;
    t.same(kept.map((v: any) => v.origin), ['disk', 'compose']);
    t.equal((await ok(t, C, { op: 'document', path: 'own.replay', version: kept[0].version })).text, '{"op":"status"}\n');
    for (const f of ['photo.jpg', 'own.replay', 'kept.snapshot.json']) rmSync(join(dir, f));
  });

  await t.test('a new file compose may write: a document or a replay, not hidden, and a document no `use` reaches must parse', async (t) => {
    const script = await err(t, C, { op: 'compose', path: 'run.sh', text: '#!/bin/sh\necho hi\n' });
    t.match(script.message, /^`run\.sh` is not a document: compose writes documents \(\.esn\) and replay tests \(\.replay\); name it NAME\.esn/);
    t.same([script.field, script.expected], ['path', 'NAME.esn or NAME.replay']);
    const hook = await err(t, C, { op: 'compose', path: '.git/hooks/pre-commit.esn', text: '// x\n' });
    t.match(hook.message, /^`\.git\/hooks\/pre-commit\.esn` is under `\.git`, a hidden name/);
    const broken = await err(t, C, { op: 'compose', path: 'notes.esn', text: 'this is not esn {{{' });
    t.match(broken.message, /^compose refused: nothing was written: `notes\.esn` \(no `use` of the scene reaches it yet\) does not parse: notes\.esn:1:1: unknown statement `this`/);
    t.same([broken.path, broken.line, broken.column, broken.written], ['notes.esn', 1, 1, false]);
    for (const f of ['run.sh', '.git', 'notes.esn']) t.notOk(existsSync(join(dir, f)), `${f}: nothing written`);
    const fine = await ok(t, C, { op: 'compose', path: 'notes.esn', text: 'fn half(a: f32): f32 { return a * 0.5; }\n' });
    t.equal(fine.written, true, 'a document that parses is written, for a later `use`');
    rmSync(join(dir, 'notes.esn'));
  });

  await t.test('path: another document', async (t) => {
    const kernel = 'kernel demo.extra@1 {\n  out result: field2<vec4>;\n  each (x, y) {\n    result = vec4(0.5);\n  }\n}';
    const a = await ok(t, C, { op: 'compose', path: 'kernels.esn', edits: [{ kernel: 'demo.extra@1', text: kernel }] });
    t.equal(a.path, 'kernels.esn');
    const now = read('kernels.esn');
    t.ok(now.startsWith(originalKernels.trimEnd()), 'what was there is unchanged');
    t.ok(now.includes(kernel));
    t.equal(read('scene.esn'), original, 'the scene is untouched');
    const k = await ok(t, C, { op: 'kernel', kernel: 'demo.extra@1' });
    t.equal(k.origin, 'kernels.esn');
    const h = await ok(t, C, { op: 'history', path: 'kernels.esn' });
    t.same(h.versions.map((v: any) => v.origin), ['load', 'compose']);
  });

  await t.test('edits without a path: in the document that declares what they name', async (t) => {
    const before = read('kernels.esn');
    const tint = /kernel demo\.tint@1 \{[\s\S]*?\n\}/.exec(before)![0];
    const a = await ok(t, C, { op: 'compose', edits: [{ kernel: 'demo.tint@1', text: tint.replace('src.y,', 'src.y * 0.5,') }] });
    t.equal(a.path, 'kernels.esn', 'the kernel is edited where it is declared');
    t.equal(read('kernels.esn'), before.replace('src.y,', 'src.y * 0.5,'));
    t.equal(read('scene.esn'), original, 'the scene is untouched');
    // A statement of kernels.esn beside a new one: which document is meant is not guessed.
    const mixed = await err(t, C, { op: 'compose', edits: [{ kernel: 'demo.tint@1', text: tint }, { node: 'extra', text: 'node extra: demo.tint@1 { src <- rings.result; }' }] });
    t.match(mixed.message, /edits\[0\] names a statement of `kernels.esn`.*"path": "kernels.esn"/);
    t.equal(read('kernels.esn'), before.replace('src.y,', 'src.y * 0.5,'), 'nothing written');
    await ok(t, C, { op: 'compose', path: 'kernels.esn', edits: [{ kernel: 'demo.tint@1', text: tint }] });
    t.equal(read('kernels.esn'), before);
  });

  await t.test('documents: all written, or none', async (t) => {
    const flat = 'kernel demo.flat@1 {\n  out result: field2<vec4>;\n  each (x, y) {\n    result = vec4(0.25, 0.5, 0.75, 1.0);\n  }\n}\n';
    const a = await ok(t, C, {
      op: 'compose',
      documents: [
        { path: 'more.esn', text: flat },
        { path: 'scene.esn', edits: [{ use: 'more.esn', text: 'use "more.esn";' }, { node: 'flat', text: 'node flat: demo.flat@1 {\n  size = 16 x 16;\n}' }, { output: 'flat', text: 'output flat <- flat.result;' }] },
      ],
    });
    t.equal(a.written, true);
    t.equal(read('more.esn'), flat);
    const scene = read('scene.esn');
    t.match(scene, /use "more\.esn";/);
    t.match(scene, /output flat <- flat\.result;/);
    t.ok(scene.includes('// examples/rings: concentric rings, warmed by a tint node.'), 'comments kept');
    const e = await ok(t, C, { op: 'evaluate', time: 0 });
    t.same(e.outputs.map((o: any) => o.name), ['result', 'flat']);
    const tr = await ok(t, C, { op: 'trace', x: 1, y: 1, output: 'flat' });
    t.same(tr.values, [{ node: 'flat', port: 'result', value: [0.25, 0.5, 0.75, 1] }], 'trace of one output: its nodes only');

    // one failing document: nothing is written
    const sceneBefore = read('scene.esn');
    const kernelsBefore = read('kernels.esn');
    const moreBefore = read('more.esn');
    const bad = await err(t, C, {
      op: 'compose',
      documents: [
        { path: 'more.esn', text: flat.replace('0.25', '0.125') },
        { path: 'kernels.esn', text: kernelsBefore + '\n// a comment\n' },
        { path: 'scene.esn', edits: [{ node: 'flat', member: 'size', text: 'size = lots;' }] },
      ],
    });
    t.equal(bad.written, false);
    t.type(bad.line, 'number');
    t.same([read('scene.esn'), read('kernels.esn'), read('more.esn')], [sceneBefore, kernelsBefore, moreBefore], 'every file as it was');
    const staleItem = await err(t, C, {
      op: 'compose',
      documents: [{ path: 'more.esn', text: flat.replace('0.25', '0.125') }, { path: 'scene.esn', expect: versionOf(original), edits: [{ node: 'flat', member: 'size', text: 'size = 8 x 8;' }] }],
    });
    t.equal(staleItem.version, versionOf(sceneBefore), 'a stale item answers its current version');
    const loose = await err(t, C, { op: 'compose', expect: versionOf(sceneBefore), documents: [{ path: 'more.esn', text: flat }] });
    t.equal(loose.field, 'expect', 'expect beside documents is refused, not ignored');
    t.same([read('scene.esn'), read('more.esn')], [sceneBefore, moreBefore], 'nothing written');
    const outside = await err(t, C, {
      op: 'compose',
      documents: [{ path: 'more.esn', text: flat.replace('0.25', '0.125') }, { path: '../escape.esn', text: '// no' }],
    });
    t.ok(outside.message);
    t.equal(read('more.esn'), moreBefore, 'a path outside the folder writes nothing either');
    t.notOk(existsSync(join(dir, '..', 'escape.esn')));
  });

  await t.test('expect: a stale version answers the current one and writes nothing', async (t) => {
    const before = read('scene.esn');
    const doc = await ok(t, C, { op: 'document' });
    const stale = await err(t, C, { op: 'compose', expect: versionOf(original), edits: [{ node: 'rings', member: 'count', text: 'count = 2.0;' }] });
    t.equal(stale.version, doc.version, 'answers the current version');
    t.equal(read('scene.esn'), before, 'nothing written');
    const fresh = await ok(t, C, { op: 'compose', expect: doc.version, edits: [{ node: 'rings', member: 'count', text: 'count = 2.0;' }] });
    t.equal(read('scene.esn'), before.replace('count = 8.0;', 'count = 2.0;'));
    t.equal(fresh.version, versionOf(read('scene.esn')));
  });

  await t.test('a compose that does not check writes nothing and says why', async (t) => {
    const before = read('scene.esn');
    const revision = (await ok(t, C, { op: 'status' })).revision;
    const e = await err(t, C, { op: 'compose', edits: [{ node: 'tint', member: 'warmth', text: 'warmth = warmt;' }] });
    t.equal(e.written, false);
    t.match(e.message, /nothing was written/);
    t.equal(e.path, 'scene.esn');
    const line = before.split('\n').findIndex((l) => l.includes('warmth = warmth;')) + 1;
    t.equal(e.line, line);
    t.equal(e.column, 12);
    t.same(e.fix, { node: 'tint', member: 'warmth', text: 'warmth = warmth;' });
    t.equal(read('scene.esn'), before);
    t.equal((await ok(t, C, { op: 'status' })).revision, revision, 'the running world is unchanged');
    // The fix is what was there: nothing to write.
    const mended = await ok(t, C, { op: 'compose', edits: [e.fix] });
    t.equal(mended.written, false);
    t.same(mended.events.map((x: any) => x.kind), ['idle']);
    t.equal(read('scene.esn'), before, 'the fix is what was there');
    const nothing = await err(t, C, { op: 'compose' });
    t.equal(nothing.field, 'text');
  });

  await t.test('sync: preparing, then published; rejected keeps the previous version; fixed publishes', async (t) => {
    const pollSync = async (kind: string): Promise<any[]> => {
      const all: any[] = [];
      for (let i = 0; i < 50; i++) {
        const { events } = await ok(t, C, { op: 'sync' });
        all.push(...events);
        if (all.some((e) => e.kind === kind)) return all;
        await delay(50);
      }
      t.fail(`no ${kind} event after polling sync: ${JSON.stringify(all)}`);
      return all;
    };
    await ok(t, C, { op: 'sync' }); // drain events of the compose refusals
    t.same((await ok(t, C, { op: 'sync' })).events, [], 'nothing changed on disk');

    const text = read('scene.esn');
    writeFileSync(scenePath, text.replace(/count = [0-9.]+;/, 'count = 5.0;'));
    const first = await ok(t, C, { op: 'sync' });
    t.same(first.events.map((e: any) => e.kind), ['preparing']);
    t.equal(first.events[0].path, 'scene.esn');
    const later = await pollSync('published');
    t.notOk(later.some((e) => e.kind === 'rejected'));
    t.same((await ok(t, C, { op: 'graph' })).nodes[0].members, { count: [5] });
    const h = await ok(t, C, { op: 'history' });
    t.equal(h.versions.at(-1).origin, 'disk');
    await ok(t, C, { op: 'evaluate', time: 0.5 });
    const good = await f32(t, C);

    writeFileSync(scenePath, read('scene.esn').replace('count = 5.0;', 'count = ;'));
    t.same((await ok(t, C, { op: 'sync' })).events.map((e: any) => e.kind), ['preparing']);
    const rejected = (await pollSync('rejected')).find((e) => e.kind === 'rejected');
    t.match(rejected.message, /previous version keeps running/);
    t.type(rejected.line, 'number');
    const st = await ok(t, C, { op: 'status' });
    t.equal(st.loaded, true, 'the previous version is loaded and running');
    t.match(st.refused.message, /does not check/);
    await ok(t, C, { op: 'evaluate', time: 0.75 });
    const e = await ok(t, C, { op: 'evaluate', time: 0.5 });
    t.same([e.executed, e.reused], [['rings', 'tint'], ['flat']], 'evaluate runs the previous version (flat reads no clock: kept)');
    sameData(t, await f32(t, C), good, 'with the previous output');
    // The protocol's own changes still check against the running version, not the broken file.
    await ok(t, C, { op: 'prepare', source: TINT('result = src;') });

    writeFileSync(scenePath, read('scene.esn').replace('count = ;', 'count = 6.0;'));
    t.same((await ok(t, C, { op: 'sync' })).events.map((e: any) => e.kind), ['preparing']);
    await pollSync('published');
    t.same((await ok(t, C, { op: 'graph' })).nodes[0].members, { count: [6] });
    const fixed = await ok(t, C, { op: 'status' });
    t.equal(fixed.refused, null);
    t.equal(fixed.loaded, true);
  });
});

// ---------------------------------------------------------------------------------------------
// The life scene: write, reset, snapshot/restore, a failed evaluation, grants.

t.test('life: write, reset, snapshot/restore, a failed frame', async (t) => {
  const { s: L } = await open('life');
  const cells = (req: object = {}) => f32(t, L, { node: 'board', port: 'cells', ...req });
  const decode = (b64: string) => {
    const b = Buffer.from(b64, 'base64');
    return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  };
  const evalAt = async (time: number, extra: object = {}) => ok(t, L, { op: 'evaluate', time, ...extra });

  await t.test('write into state', async (t) => {
    await evalAt(0);
    const w = await ok(t, L, { op: 'write', node: 'board', port: 'cells', value: 1, region: { x: 2, y: 3, width: 2, height: 1 } });
    t.same(w.events, [{ kind: 'wrote', field: 'board.cells' }]);
    const part = decode(await cells({ region: { x: 1, y: 3, width: 4, height: 1 } }));
    t.equal(part[1], 1);
    t.equal(part[2], 1);
    const data = Buffer.from(new Float32Array([0, 1, 0, 1]).buffer).toString('base64');
    await ok(t, L, { op: 'write', node: 'board', data, region: { x: 0, y: 0, width: 2, height: 2 } });
    t.same([...decode(await cells({ region: { x: 0, y: 0, width: 2, height: 2 } }))], [0, 1, 0, 1]);
    const wrongSize = await err(t, L, { op: 'write', node: 'board', data: Buffer.from(new Float32Array(3).buffer).toString('base64'), region: { x: 0, y: 0, width: 2, height: 2 } });
    t.equal(wrongSize.field, 'data');
    // A region member that is none (`widht`), or `z` of this 2-D field, is refused: ignored, it would write or read whole rows.
    t.match(await err(t, L, { op: 'write', node: 'board', value: 1, region: { x: 0, y: 0, widht: 1, height: 1 } }), { field: 'region', message: '`region` takes no member `widht`; did you mean `width`?' });
    t.match(await err(t, L, { op: 'read', node: 'board', port: 'cells', format: 'f32', region: { x: 0, y: 0, widht: 1, height: 1 } }), { field: 'region', message: /did you mean `width`\?$/ });
    t.match(await err(t, L, { op: 'read', node: 'board', port: 'cells', format: 'f32', region: { z: 0, width: 1, height: 1 } }), { field: 'region', expected: '{x, y, width, height}', message: /takes no `z` here: the 128 x 128 field is 2-D.*drop `z`/ });
    t.match(await err(t, L, { op: 'write', node: 'board', value: 1, region: { z: 0 } }), { field: 'region', message: /field is 2-D/ });
    t.same([...decode(await cells({ region: { x: 0, y: 0, width: 2, height: 2 } }))], [0, 1, 0, 1], 'nothing of the refused writes was stored');
    // Data that is not base64 is said to be so, not measured in the bytes Buffer.from makes of it.
    for (const data of ['not base64!!', 'AAAAAA=', 'AA=A'])
      t.match(await err(t, L, { op: 'write', node: 'board', data }), { field: 'data', expected: 'base64', message: /^`data` is not base64/ }, data);
    const noPort = await err(t, L, { op: 'write', node: 'board', port: 'result', value: 1 });
    t.equal(noPort.field, 'port');
    const after = await evalAt(0.1, { pointer: { x: 64, y: 64, down: true } });
    t.same(after.executed, ['board']);
    const centre = decode(await cells({ region: { x: 64, y: 64, width: 1, height: 1 } }));
    t.equal(centre[0], 1, 'the pointer drew a live cell');
  });

  await t.test('reset', async (t) => {
    t.match(await err(t, L, { op: 'reset', node: 'nope' }), { field: 'node', message: 'no node `nope`; the nodes: board' });
    const r = await ok(t, L, { op: 'reset', node: 'board' });
    t.same(r.events, [{ kind: 'state_reset', node: 'board', port: 'cells', reason: 'reset' }]);
    t.ok(decode(await cells()).every((v) => v === 0), 'state back to its declared value');
    t.ok((await ok(t, L, { op: 'read', format: 'f32' })).data, "one node's reset keeps the clock: the last frame's output stays readable");
    const all = await ok(t, L, { op: 'reset' });
    t.same(all.events, [{ kind: 'state_reset', node: 'board', port: 'cells', reason: 'reset' }]);
    const st = await ok(t, L, { op: 'status' });
    t.same([st.frame, st.time], [0, 0], 'clock to zero');
    // The last frame's picture was read after the reset as frame 0's.
    t.match(await err(t, L, { op: 'read', format: 'f32' }), { message: /holds nothing computed yet/ });
  });

  await t.test('snapshot then restore gives identical fields', async (t) => {
    for (let i = 0; i < 3; i++) await evalAt(i * 0.1);
    const snap = await ok(t, L, { op: 'snapshot' });
    t.type(snap.data, 'string');
    t.equal(snap.bytes, Buffer.byteLength(snap.data));
    const before = await cells();
    const frameBefore = (await ok(t, L, { op: 'status' })).frame;
    const next = await evalAt(0.3);
    const nextOut = await f32(t, L);
    for (let i = 0; i < 4; i++) await evalAt(1 + i);
    sameData(t, await cells(), before, 'the world moved on', false);
    const r = await ok(t, L, { op: 'restore', data: snap.data });
    const carried = (r.events as { kind: string; how?: string[]; message?: string }[]).filter((e) => e.kind === 'state_carried');
    t.ok(carried.length > 0, 'the restored state is told');
    t.ok(
      carried.every((e) => e.how?.join() === 'restored' && /restored from the snapshot/.test(e.message ?? '')),
      `told as restored from the snapshot, not as kept as it was: ${JSON.stringify(carried)}`,
    );
    sameData(t, await cells(), before, 'state identical');
    t.equal((await ok(t, L, { op: 'status' })).frame, frameBefore, 'frame identical');
    const again = await evalAt(0.3);
    t.equal(again.frame, next.frame);
    sameData(t, await f32(t, L), nextOut, 'the next frame identical');

    const toFile = await ok(t, L, { op: 'snapshot', path: 'saved.snapshot' });
    t.equal(toFile.path, 'saved.snapshot');
    const saved = await cells();
    await evalAt(9);
    await ok(t, L, { op: 'restore', path: 'saved.snapshot' });
    sameData(t, await cells(), saved, 'restored from a file');

    // Snapshots hold the elements packed; those written before (no `packed`) held the memory's
    // rows padded to 4 elements, and still restore.
    const doc = JSON.parse(snap.data);
    const st = doc.state.find((e: { key: string }) => e.key === 'board.cells');
    const [w, h] = st.size;
    t.ok(st.packed, 'state is packed');
    t.equal(Buffer.from(st.data, 'base64').length, w * h * 4, 'packed: width x height elements');
    const stride = Math.ceil(w / 4) * 4;
    const packed = Buffer.from(st.data, 'base64');
    const padded = Buffer.alloc(stride * h * 4);
    for (let y = 0; y < h; y++) packed.copy(padded, y * stride * 4, y * w * 4, (y + 1) * w * 4);
    const legacy = { ...doc, state: doc.state.map((e: { key: string }) => e === st ? { key: st.key, comps: st.comps, size: st.size, data: padded.toString('base64') } : e) };
    await evalAt(7);
    await ok(t, L, { op: 'restore', data: JSON.stringify(legacy) });
    sameData(t, await cells(), before, 'a snapshot in the padded form restores');
  });

  await t.test('a snapshot of another layout names the document version it was taken with, and that way back works', async (t) => {
    await evalAt(0.1);
    const snap = (await ok(t, L, { op: 'snapshot' })).data;
    t.ok(JSON.parse(snap).documents?.['scene.esn'], 'the snapshot holds the version of each document');
    const taken = (await ok(t, L, { op: 'document' })).version;
    await ok(t, L, { op: 'compose', edits: [{ node: 'board', member: 'size', text: 'size = 64 x 64;' }] });
    const e = await err(t, L, { op: 'restore', data: snap });
    t.match(e.message, new RegExp(`^the snapshot's \`board\.cells\` is 128 x 128 x 1, the running one 64 x 64 x 1: nothing was restored .*; it was taken with \`scene\.esn\` at version ${taken}: \\{"op":"document","path":"scene\.esn","version":"${taken}"\\} gives that text`));
    const back = await ok(t, L, { op: 'document', path: 'scene.esn', version: taken });
    await ok(t, L, { op: 'compose', text: back.text });
    await ok(t, L, { op: 'restore', data: snap });
    t.equal((await ok(t, L, { op: 'status' })).frame, JSON.parse(snap).clock.frame, 'restored, once the layout is back');
  });

  await t.test('restore of garbage leaves the world as it was', async (t) => {
    await evalAt(2);
    // A kernel published over the protocol: a restore that fails must not drop it.
    const source = (await ok(t, L, { op: 'kernel', kernel: 'life.step@2' })).source;
    const pub = await ok(t, L, { op: 'publish', source: `${source}\n// republished` });
    const before = await cells();
    const st = await ok(t, L, { op: 'status' });
    const kernelsBefore = await ok(t, L, { op: 'kernels' });
    // Well-formed, but its state does not fit (cut short, another size or components, no such
    // state), its clock moved on: refused whole (a restore put the clock and kept the old state).
    const real = JSON.parse((await ok(t, L, { op: 'snapshot' })).data);
    real.clock.frame += 5;
    const board = real.state.find((e: { key: string }) => e.key === 'board.cells');
    const misfits = [{ ...board, data: board.data.slice(0, 100) }, { ...board, size: [board.size[0] * 2, board.size[1], 1] }, { ...board, comps: ['r', 'g'] }, { ...board, key: 'ghost.cells' }];
    for (const [i, why] of [/holds \d+ bytes/, /is \d+ x \d+ x 1, the running one/, /has components r, g/, /no state `ghost.cells`/].entries()) {
      t.match((await err(t, L, { op: 'restore', data: JSON.stringify({ ...real, state: [misfits[i]] }) })).message, why);
    }
    for (const data of [
      ...misfits.map((m) => JSON.stringify({ ...real, state: [m] })),
      '{"format":"entelechy-snapshot","version":1,"state":[{"key":"board.cells"}]}',
      '{"format":"entelechy-snapshot","version":1,"state":[{"key":"board.cells","comps":["f32"],"data":7}]}',
      '{"format":"entelechy-snapshot","version":1,"state":[],"clock":{"time":"noon","frame":1}}',
      '{"format":"entelechy-snapshot","version":1,"state":[],"published":"kernel"}',
      '{"format":"entelechy-snapshot","version":1,"state":[],"params":{"x":["a"]}}',
      'garbage', '{"format":"entelechy-snapshot","version":1}', '{"format":"entelechy-snapshot","version":1,"state":[],"published":{"x.y@1":"kernel x.y@1 { nope }"}}', '{"format":"entelechy-snapshot","version":1,"state":[],"params":{"nope":[1]}}']) {
      const e = await err(t, L, { op: 'restore', data });
      t.match(e.message, /nothing was restored/);
    }
    await err(t, L, { op: 'restore', path: 'nope.snapshot' });
    await err(t, L, { op: 'restore' });
    sameData(t, await cells(), before, 'state as it was');
    const after = await ok(t, L, { op: 'status' });
    t.same([after.frame, after.time, after.revision, after.kernels], [st.frame, st.time, st.revision, st.kernels]);
    t.same(await ok(t, L, { op: 'kernels' }), kernelsBefore, 'the registry as it was');
    const k = await ok(t, L, { op: 'kernel', kernel: 'life.step@2' });
    t.same([k.origin, k.generation], ['protocol', pub.generation], 'the published kernel still runs');
    await ok(t, L, { op: 'retire', kernel: 'life.step@2' });
  });

  await t.test('a snapshot holding the state of a node that no longer runs asks for its pin', async (t) => {
    await ok(t, L, { op: 'compose', edits: [{ node: 'other', text: 'node other: life.step@2 { size = 8 x 8; }' }] });
    await ok(t, L, { op: 'pin', node: 'other' });
    await evalAt(1);
    const snap = (await ok(t, L, { op: 'snapshot' })).data;
    t.ok(JSON.parse(snap).state.some((e: { key: string }) => e.key === 'other.cells'), 'precondition: the pinned node\'s state is in the snapshot');
    await ok(t, L, { op: 'unpin', node: 'other' });
    const e = await err(t, L, { op: 'restore', data: snap });
    t.match(e.message, /node `other` does not run now \(no output or pin needs it\), so its state `other.cells` is not held: `pin` it, then restore: nothing was restored/);
    await ok(t, L, { op: 'pin', node: 'other' });
    await ok(t, L, { op: 'restore', data: snap });
    await ok(t, L, { op: 'unpin', node: 'other' });
    await ok(t, L, { op: 'compose', edits: [{ node: 'other', text: null }] });
  });

  await t.test('a failed evaluation names its node and commits nothing', async (t) => {
    await evalAt(3);
    const before = await cells();
    const st = await ok(t, L, { op: 'status' });
    const p = await ok(t, L, { op: 'publish', source: LIFE_LOOP });
    t.equal(p.id, 'life.step@2');
    sameData(t, await cells(), before, 'publishing carried the state');
    const notYet = await err(t, L, { op: 'read', format: 'f32' });
    t.same(notYet.request, { op: 'evaluate' }, 'the published version has computed no output yet: evaluate first');
    const e = await ask(L, { id: 'loop', op: 'evaluate', time: 4 });
    t.ok(e.error, 'the frame fails');
    t.equal(e.error.node, 'board');
    t.match(e.error.message, /board/);
    t.same(Object.keys(e), ['error', 'id']);
    const after = await ok(t, L, { op: 'status' });
    t.equal(after.frame, st.frame, 'frame unchanged');
    t.equal(after.time, st.time, 'clock unchanged');
    sameData(t, await cells(), before, 'state unchanged');
    t.same((await err(t, L, { op: 'read', format: 'f32' })).request, { op: 'evaluate' }, 'and no output: the failed frame computed nothing');
    await ok(t, L, { op: 'retire', kernel: 'life.step@2' });
    const ran = await evalAt(4);
    t.equal(ran.frame, st.frame + 1, 'the document kernel runs on');
  });

  await t.test('pause before any frame runs nothing', async (t) => {
    const { s: P } = await open('life');
    await ok(t, P, { op: 'pause', paused: true });
    const e = await ok(t, P, { op: 'evaluate', time: 1 });
    t.same(e.executed, []);
    t.equal((await ok(t, P, { op: 'status' })).frame, 0);
  });
});

// `write` under reduced grants: test/grants.test.ts (on a scene that loads without field.write).

t.test('the pool: a frame split over workers, and a failed one naming its node', async (t) => {
  const dir = copyExample('rings', 'protocol');
  const scenePath = join(dir, 'scene.esn');
  writeFileSync(scenePath, readFileSync(scenePath, 'utf8').replace('size = 256 x 256;', 'size = 512 x 512;'));
  const s = await Session.open(scenePath, { workers: 2 });
  t.teardown(() => s.close());
  const e = await ok(t, s, { op: 'evaluate', time: 0 });
  t.same(e.outputs, [{ name: 'result', width: 512, height: 512 }]);
  t.ok(e.placements.every((p: any) => p.workers === 2 && p.tiles > 1), 'placed on both workers, in tiles');
  const out = await f32(t, s);
  await ok(t, s, { op: 'publish', source: TINT('let n = 0.0;\n    while (n > -1.0) { n = n + 1.0; }\n    result = vec4(n);') });
  const failed = await err(t, s, { op: 'evaluate', time: 2 });
  t.equal(failed.node, 'tint');
  const tintLine = readFileSync(scenePath, 'utf8').split('\n').findIndex((l) => l.startsWith('node tint')) + 1;
  t.same([failed.path, failed.line, failed.column], ['scene.esn', tintLine, 1], 'where the node is declared');
  t.match(failed.message, /`tint`/);
  const st = await ok(t, s, { op: 'status' });
  t.same([st.frame, st.time], [1, 0], 'frame and clock unchanged');
  await ok(t, s, { op: 'retire', kernel: 'demo.tint@1' });
  const again = await ok(t, s, { op: 'evaluate', time: 0.5 });
  t.equal(again.frame, 2);
  await ok(t, s, { op: 'evaluate', time: 0 });
  sameData(t, await f32(t, s), out, 'the document kernel runs again, the same output');
});

t.test('reset of a node that has no state is refused, naming the nodes that have (it told state_reset)', async (t) => {
  const { s } = await open('rings');
  const e = await err(t, s, { op: 'reset', node: 'tint' });
  t.match(e, { field: 'node', node: 'tint', message: 'node `tint` has no state to reset (demo.tint@1 declares no `state` port); the nodes with state: none; `reset` without `node` resets every state and the clock' });
});
