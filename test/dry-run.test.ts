// Dry runs (main/fork.ts, protocol/handlers/speculate.ts): `publish` and `compose` with
// `"dry_run": true` and `prepare` with `evaluate` answer what the change would do (the pictures,
// the diff against the running world's same frames, the timings, the events) and change nothing:
// the documents' bytes, the history, the generations, the state, the clock, the frame counter
// and the revision are as before, in process, through `entelechy serve` (stdin and TCP) and
// through `entelechy mcp`. The fork is faithful: its picture is the one the change then makes.

import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Session } from '../src/main/session.js';
import { decodePng } from '../src/main/image.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { ROOT } from './helpers.js';
import { serveDoors, type Ask } from './serve-process.js';
import { scratchDir } from './scratch.js';

// A stateful kernel (the state tells whether a fork's frames leaked into the world) whose out
// the changes below alter in a known box: x > 40 and y < 10 of a 64 x 32 field.
const kernel = (blue: string) => `kernel t.glow@1 {
  grants time.read, field.write;
  state total: field2<f32> = 0.0;
  out result: field2<vec4>;
  each (x, y) {
    total = total + 0.125;
    result = vec4(total, x / 64.0, ${blue}, 1.0);
  }
}`;
const BEFORE = kernel('0.0');
const AFTER = kernel('x > 40 && y < 10 ? 1.0 : 0.0');
const SCENE = `${BEFORE}
node a: t.glow@1 { size = 64 x 32; }
output result <- a.result;
`;
const BOX = { x: 41, y: 0, width: 23, height: 10 };

function sceneDir(): string {
  const dir = scratchDir('entelechy-dry-run-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}


/** Everything a dry run must leave as it was, as one string. */
async function fingerprint(ask: Ask, dir: string): Promise<string> {
  const status = (await ask({ op: 'status' })).ok;
  const kernels = (await ask({ op: 'kernels' })).ok.kernels.map((k: any) => [k.id, k.generation, k.origin]);
  const snapshot = JSON.parse((await ask({ op: 'snapshot' })).ok.data);
  const history = (await ask({ op: 'history' })).ok.versions.map((v: any) => v.version);
  return JSON.stringify({ frame: status.frame, time: status.time, revision: status.revision, kernels, state: snapshot.state, published: snapshot.kernels, history, bytes: readFileSync(join(dir, 'scene.esn'), 'utf8') });
}

const png = (data: string) => decodePng(Buffer.from(data, 'base64'));

t.test('in process: the answer judges the change, and nothing changes', async (t) => {
  const dir = sceneDir();
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  for (let i = 0; i < 2; i++) t.ok((await ask({ op: 'evaluate' })).ok, 'a frame runs');
  const before = await fingerprint(ask, dir);

  const dry = await ask({ op: 'publish', source: AFTER, dry_run: true, evaluate: { frames: 2, png: true } });
  t.ok(dry.ok, JSON.stringify(dry.error));
  const ev = dry.ok.evaluation;
  t.equal(dry.ok.dry_run, true);
  t.equal(dry.ok.generation, 2, 'the generation it would be');
  t.same(dry.ok.events.map((e: any) => [e.kind, e.kernel, e.generation]), [['state_carried', undefined, undefined], ['published', 't.glow@1', 2]], 'the events it would tell: the state kept, the kernel published');
  t.equal(ev.frames, 2);
  t.equal(ev.frame, 4, 'the forks ran frames 3 and 4 from the world at frame 2');
  const out = ev.outputs[0];
  t.same([out.name, out.width, out.height], ['result', 64, 32]);
  t.same(out.diff.box, BOX, 'the box of the change');
  t.equal(out.diff.changed, BOX.width * BOX.height, 'every element of the box changed, none outside');
  t.same(out.diff.max, [0, 0, 1, 0], 'only blue changed, by 1');
  t.equal(out.diff.mean[2], (BOX.width * BOX.height) / (64 * 32), 'the mean difference of blue');
  const thumb = png(out.thumbnail.data);
  t.same([thumb.width, thumb.height, out.thumbnail.width], [64, 32, 64], 'a 64 x 32 output is its own thumbnail (never enlarged)');
  const diff = png(out.diff.png.data);
  const lit = (x: number, y: number) => diff.rgba[(y * 64 + x) * 4] > 0;
  t.ok(lit(41, 0) && lit(63, 9), 'the diff picture shows the box');
  t.notOk(lit(40, 0) || lit(41, 10), 'and nothing outside it');
  t.same(ev.timings.map((x: any) => [x.node, typeof x.before, typeof x.now]), [['a', 'number', 'number']], 'timings of both, per node');
  t.equal(await fingerprint(ask, dir), before, 'publish dry run: documents, history, generations, state, clock, frame counter and revision as before');

  // A larger thumbnail is never larger than the picture; a smaller one keeps its shape.
  const small = await ask({ op: 'prepare', source: AFTER, evaluate: { thumbnail: 16 } });
  t.same([small.ok.id, small.ok.evaluation.outputs[0].thumbnail.width, small.ok.evaluation.outputs[0].thumbnail.height], ['t.glow@1', 16, 8], 'prepare with evaluate: a 16 x 8 thumbnail');
  t.same([png(small.ok.evaluation.outputs[0].diff.image.data).width], [16], 'the diff picture at the thumbnail size');

  const composed = await ask({ op: 'compose', edits: [{ kernel: 't.glow@1', text: AFTER }], dry_run: true, evaluate: {} });
  t.ok(composed.ok, JSON.stringify(composed.error));
  t.same([composed.ok.written, composed.ok.dry_run, composed.ok.evaluation.outputs[0].diff.changed], [false, true, 230], 'compose dry run: nothing written, the same change seen');
  const resized = await ask({ op: 'compose', edits: [{ node: 'a', member: 'size', text: 'size = 32 x 32;' }], dry_run: true, evaluate: { frames: 0 } });
  t.same(resized.ok.events.map((e: any) => [e.kind, e.node, e.how]), [['state_carried', 'a', ['resized']]], 'how it would carry the state, told');
  t.same(resized.ok.evaluation.states.map((x: any) => [x.node, x.port, x.how, x.width, x.height]), [['a', 'total', ['resized'], 32, 32]], 'and the state as it would be');
  t.same(resized.ok.evaluation.outputs, [], 'no frames: no pictures');
  t.equal(await fingerprint(ask, dir), before, 'compose and prepare dry runs: nothing changed');

  // An `expect` is checked as the change would check it.
  const staleCompose = await ask({ op: 'compose', text: SCENE, expect: 'ffffffffffffffff', dry_run: true, evaluate: {} });
  const staleReal = await ask({ op: 'compose', text: SCENE, expect: 'ffffffffffffffff' });
  t.equal(staleCompose.error?.message, staleReal.error?.message, 'a stale document version: refused as the compose itself is');
  const stalePublish = await ask({ op: 'publish', source: AFTER, expect: 7, dry_run: true });
  t.match(stalePublish.error?.message, /registry holds g1/, 'a stale generation: refused');
  t.match((await ask({ op: 'publish', source: AFTER, evaluate: {} })).error?.message, /dry_run/, '`evaluate` without dry_run says to add it');
  t.match((await ask({ op: 'publish', source: AFTER, dry_run: true, evaluate: { outputs: ['nope'] } })).error?.message, /`nope`, not an output/);
  t.match((await ask({ op: 'publish', source: AFTER, dry_run: true, evaluate: { frames: 101 } })).error?.field, 'evaluate');
  t.equal(await fingerprint(ask, dir), before, 'refused dry runs: nothing changed');

  // Faithful: the change, made, then its two frames, shows what the dry run showed.
  t.ok((await ask({ op: 'publish', source: AFTER })).ok, 'the change is made');
  for (let i = 0; i < 2; i++) await ask({ op: 'evaluate' });
  const real = await ask({ op: 'read' });
  t.same(png(real.ok.data).rgba, png(out.png.data).rgba, 'the running world now shows the dry run\'s picture');
});

t.test('a stateless world whose next frame would repeat its last: its fields are read as they are, with the same diff', async (t) => {
  // No state: the frame is a function of the clock (and params, inputs, pointer, keys).
  const plain = (blue: string) => `kernel t.plain@1 {
  grants time.read;
  out result: field2<vec4>;
  each (x, y) { result = vec4(x / 64.0, time, ${blue}, 1.0); }
}
node a: t.plain@1 { size = 64 x 32; }
output result <- a.result;
`;
  const dir = scratchDir('entelechy-dry-run-plain-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'scene.esn'), plain('0.0'));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const last = (await ask({ op: 'evaluate', time: 0.25 })).ok.timings[0].millis;
  const same = (await ask({ op: 'compose', text: `${plain('0.0')}// the same\n`, dry_run: true, evaluate: {} })).ok.evaluation;
  t.equal(same.outputs[0].diff.changed, 0, 'the same scene: the running picture is the change\'s');
  t.equal(same.timings[0].before, Math.round(last * 1000) / 1000, 'the running side is the last frame\'s (its timing), no frame of it ran');
  const red = (await ask({ op: 'compose', text: plain('x > 40 && y < 10 ? 1.0 : 0.0'), dry_run: true, evaluate: { frames: 3 } })).ok.evaluation;
  t.same([red.outputs[0].diff.changed, red.outputs[0].diff.box], [230, BOX], 'a change: its box against the running picture');
  t.equal(red.timings[0].before, Math.round(last * 3 * 1000) / 1000, 'three frames: the last frame\'s timing three times');
  // Another clock: the running world's frames would not repeat its last; a fork of it runs them.
  const later = (await ask({ op: 'compose', text: plain('x > 40 && y < 10 ? 1.0 : 0.0'), dry_run: true, evaluate: { time: 0.5 } })).ok.evaluation;
  t.same([later.time, later.outputs[0].diff.changed, later.outputs[0].diff.box], [0.5, 230, BOX], 'at t = 0.5 the same change');
  t.equal(later.outputs[0].diff.max[1], 0, 'green (the clock) is the same on both sides: both ran at 0.5');
});

t.test('evaluate with `thumbnail` answers one per output', async (t) => {
  const dir = sceneDir();
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const a = await ask({ op: 'evaluate', thumbnail: 32 });
  const thumb = a.ok.outputs[0].thumbnail;
  t.same([thumb.width, thumb.height], [32, 16]);
  t.same([png(thumb.data).width, png(thumb.data).height], [32, 16], 'the PNG is that size');
  t.notOk((await ask({ op: 'evaluate' })).ok.outputs[0].thumbnail, 'none unless asked');
  t.equal((await ask({ op: 'evaluate', thumbnail: 0 })).error?.field, 'thumbnail');
});

t.test('through entelechy serve: stdin and TCP', async (t) => {
  const dir = sceneDir();
  const { stdin, tcp } = await serveDoors(t, dir);
  t.ok((await stdin({ op: 'evaluate' })).ok, 'a frame runs');
  const before = await fingerprint(stdin, dir);
  for (const [door, ask] of [['stdin', stdin], ['tcp', tcp]] as const) {
    const dry = await ask({ op: 'publish', source: AFTER, dry_run: true, evaluate: {} });
    t.same(dry.ok?.evaluation.outputs[0].diff.box, BOX, `${door}: publish dry run answers the change`);
    const composed = await ask({ op: 'compose', edits: [{ kernel: 't.glow@1', text: AFTER }], dry_run: true, evaluate: { frames: 3 } });
    t.equal(composed.ok?.evaluation.outputs[0].diff.changed, 230, `${door}: compose dry run too`);
    t.equal(await fingerprint(ask, dir), before, `${door}: nothing changed`);
  }
});

t.test('through entelechy mcp: the pictures are image content, nothing changes', async (t) => {
  const dir = sceneDir();
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, 'bin', 'entelechy.js'), 'mcp', join(dir, 'scene.esn'), '--workers', '1'], cwd: ROOT, stderr: 'pipe' });
  const client = new Client({ name: 'entelechy-test', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as any;
  const ask: Ask = async ({ op, ...args }) => {
    const r = await call(String(op), args);
    return r.isError ? { error: r.structuredContent?.error } : { ok: r.structuredContent };
  };
  t.notOk((await call('evaluate')).isError, 'a frame runs');
  const before = await fingerprint(ask, dir);
  const r = await call('compose', { edits: [{ kernel: 't.glow@1', text: AFTER }], dry_run: true, evaluate: {} });
  t.notOk(r.isError, JSON.stringify(r.content?.[0]));
  const pictures = r.content.filter((c: any) => c.type === 'image');
  t.equal(pictures.length, 3, 'the thumbnail, the diff picture and the state\'s thumbnail, as images');
  t.same(pictures.map((p: any) => [p.mimeType, png(p.data).width]), [['image/png', 64], ['image/png', 64], ['image/png', 64]]);
  t.equal(r.structuredContent.evaluation.states[0].thumbnail.image, 3, 'the state\'s picture numbered too');
  const valued = await call('compose', { edits: [{ kernel: 't.glow@1', text: AFTER }], dry_run: true, evaluate: { frames: 0, values: true } });
  const v = valued.structuredContent?.evaluation.states[0].values;
  t.same([v?.format, typeof v?.data, Buffer.from(v?.data ?? '', 'base64').length], ['f32', 'string', v?.width * v?.height * v?.components * 4], 'a state\'s values come through MCP as `read` answers f32, not as an image');
  const out = r.structuredContent.evaluation.outputs[0];
  t.same([[out.thumbnail.image, out.diff.image.image].sort(), out.diff.changed], [[1, 2], 230], 'the answer numbers the images; no base64 in it');
  const labels = r.content.filter((c: any) => c.type === 'text').map((c: any) => c.text).join('\n');
  t.match(labels, /output `result`: thumbnail \(64 x 32\)/, 'a line names the thumbnail');
  t.match(labels, /output `result`, diff: where it changed/, 'and the diff picture');
  t.match(labels, /state `a.total` after the change: thumbnail \(64 x 32\)/, 'and the state\'s');
  t.notMatch(r.content[0].text, /iVBOR/, 'the text holds no PNG');
  const thumbs = await call('evaluate', { thumbnail: 32 });
  t.same(thumbs.content.filter((c: any) => c.type === 'image').map((p: any) => png(p.data).width), [32], 'evaluate with thumbnail: the thumbnail as an image');
  const after = await fingerprint(ask, dir);
  t.equal(JSON.parse(after).frame, JSON.parse(before).frame + 1, 'only the evaluate ran a frame');
  t.same({ ...JSON.parse(after), frame: 0, state: 0, time: 0 }, { ...JSON.parse(before), frame: 0, state: 0, time: 0 }, 'documents, history, generations and revision as before');
});

t.test('a dry run of a change that mends a failing world: the change\'s frames run, the failure said', async (t) => {
  const { hangsAtFrame } = await import('./fixtures.js');
  const dir = scratchDir('entelechy-dry-run-');
  writeFileSync(join(dir, 'scene.esn'), hangsAtFrame(0));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  t.match((await ask({ op: 'evaluate' })).error, { node: 'hang' }, 'the running world\'s frame runs out of fuel');
  // It answered the running world's failure: a fix could not be tried before it was made.
  const fix = hangsAtFrame(0).replace('while (frame == 0) { k++; }', 'k = 3;');
  const a = await ask({ op: 'compose', text: fix, dry_run: true, evaluate: {} });
  t.ok(a.ok, JSON.stringify(a.error));
  t.match(a.ok.evaluation.note, /^the running world's own frame fails \(.*fuel.*\): the change's frames ran, with no frame of the running world to compare them with$/);
  const out = a.ok.evaluation.outputs[0];
  t.ok(out.thumbnail, 'the change\'s picture');
  t.same(out.diff, { note: 'the running world\'s frame fails: no diff' });
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), hangsAtFrame(0), 'nothing written');
});

t.test('a dry run says the saved edit on disk it would take in (its diff showed that edit as the compose\'s)', async (t) => {
  const { copyExample } = await import('./fixtures.js');
  const dir = copyExample('rings', 'dry-run-unsynced');
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const saved = readFileSync(join(dir, 'scene.esn'), 'utf8').replace('count = 8.0;', 'count = 3.0;');
  t.not(saved, readFileSync(join(dir, 'scene.esn'), 'utf8'), 'an edit to save');
  writeFileSync(join(dir, 'scene.esn'), saved); // not synced
  const a = await ask({ op: 'compose', edits: [{ param: 'warmth', text: 'param warmth: f32 = 0.7 range 0..1;' }], dry_run: true });
  t.ok(a.ok, JSON.stringify(a.error));
  t.match(a.ok.note, /^`scene\.esn` on disk holds an edit this session has not synced \(version [0-9a-f]{16}\): the edits apply to it, so the compose takes it in too, and this dry run ran with it$/);
  const whole = await ask({ op: 'compose', text: saved.replace('count = 3.0;', 'count = 5.0;'), dry_run: true });
  t.match(whole.ok?.note, /the compose's text replaces it \(history keeps it\)/);
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), saved, 'nothing written');
});
