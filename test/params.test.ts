// Params from the command line (`--param NAME=VALUE` on render, serve, mcp and entelechy-player)
// and param declarations the checker refuses: one rule (src/ir/check/params.ts) for every door;
// a running value a changed declaration no longer allows is fitted to it (param_fitted).

import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { decodePng } from '../src/main/image.js';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { copyExample } from './fixtures.js';
import { ROOT, sameBytes, textScene } from './helpers.js';
import { scratchDir } from './scratch.js';

const CACHE = scratchDir('entelechy-cache-');
const RINGS = 'examples/rings/scene.esn';

function run(bin: string, args: string[], input = '') {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', bin), ...args], { cwd: ROOT, input, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}
const cli = (args: string[], input = '') => run('entelechy.js', args, input);

/** The answers of a `serve` session given these lines on stdin. */
function served(args: string[], lines: object[]) {
  const r = cli(['serve', ...args, '--workers', '1'], lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return { ...r, answers: r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

t.test('the checker refuses a param value its own range, type or arity refuses, at its place, with a fix', async (t) => {
  const cases: [string, RegExp, string][] = [
    ['param warmth: f32 = 1.5 range 0..1;', /^the value of param `warmth`, 1\.5, does not fit: `warmth` keeps to 0\.\.1 \(its range\)/, 'param warmth: f32 = 1.0 range 0..1;'],
    ['param n: i32 = 2.5;', /`n` is an i32: give an integer/, 'param n: i32 = 3;'],
    ['param on: bool = 2;', /`on` is a bool: give 0 or 1/, 'param on: bool = true;'],
    ['param r: f32 = 0.5 range 1..0;', /the range of param `r` is reversed: 1\.\.0 holds no value/, 'param r: f32 = 0.5 range 0..1;'],
    ['param z: vec2 range 1..2;', /param `z` has no value, and the one it starts with, vec2\(0\.0, 0\.0\), does not fit/, 'param z: vec2 = vec2(1.0, 1.0) range 1..2;'],
    // An i32 holds -2^31..2^31-1: 1e30 would be f32 digits a kernel reads as something else.
    ['param big: i32 = 1e30;', /`big` is an i32: give an integer from -2147483648 to 2147483647/, 'param big: i32 = 2147483647;'],
  ];
  for (const [line, message, fixed] of cases) {
    const scene = textScene({ 'scene.esn': `// a scene\n${line}\n` });
    t.equal(scene.diagnostics.length, 1, line);
    const d = scene.diagnostics[0];
    t.match(d.message, message, line);
    t.equal(d.line, 2);
    t.equal(d.column, line.indexOf(line.includes('range 1..0') ? 'range' : line.includes('vec2 range') ? 'z' : '=') + (line.includes('range 1..0') || line.includes('vec2 range') ? 1 : 3), `${line}: the column of the part to mend`);
    t.equal(d.fix?.text, fixed, `${line}: the fix`);
    t.same(textScene({ 'scene.esn': `// a scene\n${fixed}\n` }).diagnostics, [], `${fixed} checks clean`);
  }
  t.same(textScene({ 'scene.esn': 'param ok: f32 = 1 range 0..1;\nparam b: bool = true;\nparam n: i32 = -3 range -5..5;\n' }).diagnostics, [], 'values that fit pass');
});

t.test('a param whose declaration fails is told once: the nodes naming it say nothing more', async (t) => {
  const kernel = 'kernel k@1 {\n  in gain: f32;\n  out image: field2<f32>;\n  each (x, y) { image = gain; }\n}\n';
  const scene = textScene({ 'scene.esn': `param gain: f32 = 1e39;\n${kernel}node a: k@1 { size = 4 x 4; gain = gain; }\nnode b: k@1 { size = 4 x 4; gain = gain; }\noutput image <- a.image;\n` });
  t.equal(scene.diagnostics.length, 1, scene.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join('\n'));
  t.match(scene.diagnostics[0], { line: 1, message: /param `gain` is 1e\+39, past f32's range/ });
  const typo = textScene({ 'scene.esn': `param gain: f32 = 1.0;\n${kernel}node a: k@1 { size = 4 x 4; gain = gian; }\noutput image <- a.image;\n` });
  t.match(typo.diagnostics, [{ message: /`gian` is not a param of the scene; did you mean `gain`\?/ }], 'a name no declaration has is still told');
});

t.test('check prints the declaration error with its fix; render refuses the scene', async (t) => {
  const dir = scratchDir('entelechy-params-');
  const scene = readFileSync(join(ROOT, RINGS), 'utf8').replace('param warmth: f32 = 0.5', 'param warmth: f32 = 1.5');
  writeFileSync(join(dir, 'scene.esn'), scene);
  copyFileSync(join(ROOT, 'examples/rings/kernels.esn'), join(dir, 'kernels.esn'));
  const r = cli(['check', join(dir, 'scene.esn')]);
  t.equal(r.status, 1);
  const line = scene.split('\n').findIndex((l) => l.startsWith('param warmth')) + 1;
  t.match(r.stdout, `scene.esn:${line}:21: error: the value of param \`warmth\`, 1.5, does not fit`);
  t.match(r.stdout, '\n  fix: param warmth: f32 = 1.0 range 0..1;\n');
  const rendered = cli(['render', join(dir, 'scene.esn'), '-o', join(dir, 'x.png')]);
  t.equal(rendered.status, 1, 'a scene whose param does not fit is not rendered');
  t.match(rendered.stderr, /has 1 error: nothing rendered/);
});

t.test('render --param sets a param for the render; a vector takes its components separated by commas', async (t) => {
  const dir = scratchDir('entelechy-params-');
  const png = (name: string, args: string[]) => {
    const r = cli(['render', ...args, '--size', '64x64', '-o', join(dir, name)]);
    t.equal(r.status, 0, r.ended);
    return decodePng(readFileSync(join(dir, name))).rgba;
  };
  const plain = png('plain.png', [RINGS]);
  t.ok(sameBytes(png('same.png', [RINGS, '--param', 'warmth=0.5']), plain), 'the default value gives the same picture');
  const warm = png('warm.png', [RINGS, '--param', 'warmth=1']);
  t.notOk(sameBytes(warm, plain), 'another value, another picture');
  t.ok(sameBytes(png('last.png', [RINGS, '--param', 'warmth=0.2', '--param', 'warmth=1']), warm), 'repeated: the last one holds');
  const centre = png('m0.png', ['examples/mandelbrot/scene.esn']);
  t.notOk(sameBytes(png('m1.png', ['examples/mandelbrot/scene.esn', '--param', 'center=-0.5,0.2']), centre), 'a vec2 from 2 components');
});

t.test('--param refuses what the param operation refuses, with the same message', async (t) => {
  const cases: [string, object][] = [
    ['warmth=1.5', { name: 'warmth', value: 1.5 }],
    ['warm=1', { name: 'warm', value: 1 }],
    ['warmth=1,2', { name: 'warmth', value: [1, 2] }],
  ];
  const answers = served([RINGS], cases.map(([, f]) => ({ op: 'param', ...f }))).answers;
  for (const [i, [text]] of cases.entries()) {
    const r = cli(['render', RINGS, '--param', text, '-o', join(tmpdir(), 'never.png')]);
    t.equal(r.status, 1, text);
    t.equal(r.stderr, `entelechy: --param ${text}: ${answers[i].error.message}\n`, `${text}: the protocol's words (${answers[i].error.message})`);
  }
  // The protocol's envelope refuses a string before the operation sees it; a command line's
  // words are all text, and the rule says what the param takes.
  t.match(cli(['render', RINGS, '--param', 'warmth=abc']).stderr, /--param warmth=abc: `warmth` is an f32: give 1 finite number; got "abc"/);
  const m = cli(['render', 'examples/mandelbrot/scene.esn', '--param', 'center=1,2,3']);
  t.match(m.stderr, /--param center=1,2,3: `center` is a vec2: give 2 finite numbers, or one for all of them; got \[1,2,3\]/);
  const bad = cli(['render', RINGS, '--param', 'warmth']);
  t.match(bad.stderr, /--param takes NAME=VALUE, e\.g\. --param warmth=0\.8/);
  // Node's Number() read hex and binary.
  t.match(cli(['render', RINGS, '--param', 'warmth=0x1']).stderr, /--param warmth=0x1: `warmth` is an f32: give 1 finite number; got "0x1"/);
  // Past f32's range the kernel saw infinity; the param operation refused it.
  t.match(cli(['render', 'examples/mandelbrot/scene.esn', '--param', 'center=1e39,0']).stderr, /--param center=1e39,0: `center` is a vec2: give 2 numbers within f32's range \(±3\.4e38\), which a kernel can hold; got \[1e\+39,0\]/);
});

t.test('serve and entelechy-player start with the params given', async (t) => {
  const s = served([RINGS, '--param', 'warmth=0.25'], [{ op: 'status' }]);
  t.same(s.answers[0].ok?.params, { warmth: [0.25] }, s.ended);
  const refused = cli(['serve', RINGS, '--param', 'warmth=7', '--workers', '1'], '');
  t.equal(refused.status, 1);
  t.match(refused.stderr, /--param warmth=7: `warmth` keeps to 0\.\.1/);

  const p = run('entelechy-player.js', [RINGS, '--listen', '127.0.0.1:0', '--serve', '--workers', '1', '--param', 'warmth=0.75'], JSON.stringify({ op: 'status' }) + '\n' + JSON.stringify({ op: 'quit' }) + '\n');
  const status = JSON.parse(p.stdout.trim().split('\n')[0]);
  t.same(status.ok?.params, { warmth: [0.75] }, p.ended);
});

t.test('entelechy mcp starts with the params given', async (t) => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, 'bin', 'entelechy.js'), 'mcp', RINGS, '--workers', '1', '--param', 'warmth=0.125'], cwd: ROOT, stderr: 'pipe', env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } as Record<string, string> });
  const client = new Client({ name: 'entelechy-test', version: '1' });
  await client.connect(transport);
  try {
    const status = (await client.callTool({ name: 'status', arguments: {} }, undefined, { timeout: 300_000 })) as { structuredContent?: { params?: unknown } };
    t.same(status.structuredContent?.params, { warmth: [0.125] });
  } finally {
    await client.close();
  }
});

/** A session on a copy of rings, and its requests answered through the protocol. */
async function session(t2: Test) {
  const dir = copyExample('rings', 'params');
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t2.teardown(() => s.close());
  const ask = async (req: object): Promise<any> => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const ok = async (req: object): Promise<any> => {
    const a = await ask(req);
    if (!('ok' in a)) t2.fail(`${JSON.stringify(req)} answered ${JSON.stringify(a.error)}`);
    return a.ok;
  };
  /** The param events of a saved edit picked up by sync (it may compile first: then sync again). */
  const synced = async () => {
    const events = (await ok({ op: 'sync' })).events;
    await s.syncing;
    return [...events, ...(await ok({ op: 'sync' })).events].filter((e: any) => e.kind.startsWith('param_'));
  };
  return { s, dir, ask, ok, synced };
}

t.test("a running value its changed declaration no longer allows is fitted to it, and told", async (t) => {
  const { dir, ok, synced } = await session(t);
  const warmth = async () => (await ok({ op: 'status' })).params.warmth;
  await ok({ op: 'param', name: 'warmth', value: 0.9 });
  const narrowed = await ok({ op: 'compose', edits: [{ param: 'warmth', text: 'param warmth: f32 = 0.5 range 0..0.5;' }] });
  const events = narrowed.events.filter((e: any) => e.kind.startsWith('param_'));
  t.same(events.map((e: any) => ({ ...e, message: undefined })), [{ kind: 'param_fitted', param: 'warmth', value: 0.5, from: 0.9, message: undefined }]);
  t.match(events[0].message, /was 0\.9, which its new declaration does not allow: `warmth` keeps to 0\.\.0\.5 \(its range\); it is now 0\.5/);
  t.same(await warmth(), [0.5], 'clamped into the new range');
  const snapshot = await ok({ op: 'snapshot' });
  await ok({ op: 'restore', data: snapshot.data });
  t.same(await warmth(), [0.5], "the session's own snapshot restores");

  // A saved edit makes it an i32 with a new default: rounded, with the request that applies the default.
  await ok({ op: 'param', name: 'warmth', value: 0.4 });
  const scene = join(dir, 'scene.esn');
  writeFileSync(scene, readFileSync(scene, 'utf8').replace('param warmth: f32 = 0.5 range 0..0.5;', 'param warmth: i32 = 1 range 0..1;'));
  const saved = await synced();
  t.same(saved.map((e: any) => ({ ...e, message: undefined })), [{ kind: 'param_fitted', param: 'warmth', value: 0, from: 0.4, default: 1, request: { op: 'param', name: 'warmth', value: 1 }, message: undefined }]);
  t.same(await warmth(), [0], 'rounded to the nearest integer');

  const same = await ok({ op: 'compose', edits: [{ param: 'warmth', text: 'param warmth: i32 = 1 range 0..5;' }] });
  t.same(same.events.filter((e: any) => e.kind === 'param_fitted'), [], 'a value that still fits is carried untold');
  t.same(await warmth(), [0]);
});

t.test('a read after a param change says its frame was made with the older value, until a frame runs', async (t) => {
  const { ok } = await session(t);
  await ok({ op: 'evaluate' });
  t.notOk((await ok({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } })).note, 'fresh: no note');
  await ok({ op: 'param', name: 'warmth', value: 0.9 });
  const stale = await ok({ op: 'read', region: { x: 0, y: 0, width: 2, height: 2 } });
  t.equal(stale.frame, 1);
  t.match(stale.note, /^frame 1 was computed before `warmth` changed: this is what it made with the older value; evaluate to see the new/);
  t.match((await ok({ op: 'read', format: 'f32' })).note, /`warmth` changed/, 'as f32 too');
  // Set back to what the frame ran with: nothing differs.
  await ok({ op: 'param', name: 'warmth', value: 0.5 });
  t.notOk((await ok({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } })).note, 'the frame\'s own value again');
  await ok({ op: 'param', name: 'warmth', value: 0.9 });
  await ok({ op: 'evaluate' });
  t.notOk((await ok({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } })).note, 'after a frame: no note');
});
