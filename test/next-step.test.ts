// Answers that carry the next step, through the protocol (dispatch): `history` marks the version
// running and the one on disk; a `compose` or `publish` refused for a stale `expect` carries the
// current text or source with its version or generation; a `compose` that changes a param's
// declared default moves the running value with it when it still held the old default, and
// otherwise says in an event that it is kept, with the `param` request that applies the new one.

import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { versionOf } from '../src/main/documents.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { copyExample, counterScene } from './fixtures.js';

async function open(): Promise<{ s: Session; dir: string }> {
  const dir = copyExample('rings', 'next-step');
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  return { s, dir };
}
async function ask(s: Session, req: object): Promise<any> {
  return JSON.parse(await dispatch(s, JSON.stringify(req)));
}
async function ok(t2: Test, s: Session, req: object): Promise<any> {
  const a = await ask(s, req);
  if (!('ok' in a)) t2.fail(`${JSON.stringify(req)} answered ${JSON.stringify(a.error)}`);
  return a.ok;
}
const warmthDefault = (v: number) => ({ op: 'compose', edits: [{ param: 'warmth', text: `param warmth: f32 = ${v} range 0..1;` }] });
const warmth = async (t2: Test, s: Session) => (await ok(t2, s, { op: 'status' })).params.warmth;

t.test('history marks the running version and the one on disk', async (t) => {
  const { s, dir } = await open();
  const loaded = versionOf(readFileSync(join(dir, 'scene.esn'), 'utf8'));
  let h = await ok(t, s, { op: 'history' });
  t.same([h.running, h.disk], [loaded, loaded]);
  t.same(h.versions.map((v: any) => [v.origin, v.running, v.disk]), [['load', true, true]]);

  const composed = (await ok(t, s, warmthDefault(0.7))).version;
  h = await ok(t, s, { op: 'history' });
  t.same([h.running, h.disk], [composed, composed]);
  t.same(h.versions.map((v: any) => [v.version, v.running, v.disk]), [[loaded, undefined, undefined], [composed, true, true]], 'the composed version runs and is on disk; the loaded one neither');

  // Saved on disk, not yet picked up: the disk holds a version the world does not run.
  const saved = readFileSync(join(dir, 'scene.esn'), 'utf8').replace('count = 8.0;', 'count = 3.0;');
  writeFileSync(join(dir, 'scene.esn'), saved);
  h = await ok(t, s, { op: 'history' });
  t.same([h.running, h.disk], [composed, versionOf(saved)], 'running and disk differ');
  t.same(h.versions.map((v: any) => [v.running, v.disk]), [[undefined, undefined], [true, undefined]]);
});

t.test('history names a kernel of the document that runs a generation published over it', async (t) => {
  const { s } = await open();
  t.equal((await ok(t, s, { op: 'history', path: 'kernels.esn' })).published, undefined, 'precondition: every kernel runs as kernels.esn declares it');
  const tint = await ok(t, s, { op: 'kernel', kernel: 'demo.tint@1' });
  const grey = tint.source.replace(/result = [^;]*;/, 'result = vec4(0.5, 0.5, 0.5, 1.0);');
  t.not(grey, tint.source, 'precondition: the source changed');
  await ok(t, s, { op: 'publish', source: grey, expect: 1 });
  const h = await ok(t, s, { op: 'history', path: 'kernels.esn' });
  t.same(h.published, [{ kernel: 'demo.tint@1', generation: 2, origin: 'protocol' }], 'tint runs generation 2, published over the protocol');
  t.equal(h.running, h.disk, 'while the document itself runs as on disk');
  await ok(t, s, { op: 'retire', kernel: 'demo.tint@1' });
  t.equal((await ok(t, s, { op: 'history', path: 'kernels.esn' })).published, undefined, 'retired: the document\'s kernel runs again');
});

t.test('a stale expect carries the current text or source', async (t) => {
  const { s, dir } = await open();
  const text = readFileSync(join(dir, 'scene.esn'), 'utf8');
  await ok(t, s, warmthDefault(0.6));
  const now = readFileSync(join(dir, 'scene.esn'), 'utf8');
  const stale = (await ask(s, { op: 'compose', expect: versionOf(text), text })).error;
  t.same([stale.version, stale.expected, stale.text], [versionOf(now), versionOf(text), now], 'compose: the version and text on disk');
  t.match(stale.message, /its current text is this error's `text`/);
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), now, 'nothing written');
  await ok(t, s, { op: 'compose', expect: stale.version, text: stale.text.replace('0.6', '0.4') });

  const kernel = await ok(t, s, { op: 'kernel', kernel: 'demo.tint@1' });
  const refused = (await ask(s, { op: 'publish', source: kernel.source, expect: 7 })).error;
  t.same([refused.kernel, refused.generation, refused.expected, refused.origin, refused.source], ['demo.tint@1', 1, 7, 'kernels.esn', kernel.source], 'publish: the generation, origin and source held');
  t.match(refused.message, /send it again with "expect": 1/);
  t.equal((await ok(t, s, { op: 'publish', source: refused.source.replace('0.5 + warmth', '0.25 + warmth'), expect: refused.generation })).generation, 2);
});

t.test("a param's new default moves a running value that held the old one, and is told when it does not", async (t) => {
  const { s } = await open();
  t.same(await warmth(t, s), [0.5]);
  const moved = await ok(t, s, warmthDefault(0.7));
  t.same(moved.events.filter((e: any) => e.kind.startsWith('param_')), [{ kind: 'param_moved', param: 'warmth', value: 0.7, from: 0.5 }]);
  t.same(await warmth(t, s), [0.7], 'the running value followed the default');

  await ok(t, s, { op: 'param', name: 'warmth', value: 0.2 });
  const kept = await ok(t, s, warmthDefault(0.9));
  const events = kept.events.filter((e: any) => e.kind.startsWith('param_'));
  t.equal(events.length, 1);
  t.same({ ...events[0], message: undefined }, { kind: 'param_kept', param: 'warmth', value: 0.2, default: 0.9, message: undefined, request: { op: 'param', name: 'warmth', value: 0.9 } });
  t.match(events[0].message, /keeps its running value 0\.2/);
  t.same(await warmth(t, s), [0.2], 'a value set with param is kept');
  await ok(t, s, events[0].request);
  t.same(await warmth(t, s), [0.9], "the event's request applies the new default");

  const other = await ok(t, s, { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 5.0;' }] });
  t.same(other.events.filter((e: any) => e.kind.startsWith('param_')), [], 'no param event when no default changed');
  t.same(await warmth(t, s), [0.9]);
});

t.test('a write into a state before the first frame is what frame 0 starts from, every bit kept', async (t) => {
  const dir = copyExample('rings', 'next-step');
  writeFileSync(join(dir, 'scene.esn'), counterScene('counter', '4 x 2'));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const bits = new Uint32Array([0x40000000, 0x7fa00001, 0x41200000, 0xffc12345, 0, 0x3f800000, 0x7f800000, 0xc0400000]); // 2, sNaN, 10, -qNaN:payload, 0, 1, +Inf, -3
  await ok(t, s, { op: 'write', node: 'counter', port: 'n', data: Buffer.from(bits.buffer).toString('base64') });
  const state = Buffer.from((await ok(t, s, { op: 'read', node: 'counter', port: 'n', format: 'f32' })).data, 'base64');
  t.same([...new Uint32Array(state.buffer, state.byteOffset, 8)], [...bits], 'the state holds every bit written');
  t.equal((await ok(t, s, { op: 'evaluate' })).frame, 1);
  const out = Buffer.from((await ok(t, s, { op: 'read', format: 'f32' })).data, 'base64');
  const result = [...new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + 32))];
  t.same([result[0], result[2], result[4], result[5], result[6], result[7]], [3, 11, 1, 2, Infinity, -2], 'frame 0 added one to what was written');
  t.ok(Number.isNaN(result[1]) && Number.isNaN(result[3]), 'NaN stays NaN');
});
