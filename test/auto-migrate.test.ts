// Automatic state migrations (main/auto-migrate.ts, docs/language.md "Carrying state
// automatically"): a change of a state's size or element type carries its values exactly as the
// docs say, checked against values computed here from the docs' formulas (not by the engine's
// code); the events and a dry run's `states` say how each state was carried; a hand-written
// `migrate from` still wins; misused clauses are errors at their place; the carry works when the
// world moves to a fresh memory, and through `entelechy serve`'s stdin and TCP.

import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { decodePng } from '../src/main/image.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { serveDoors, type Ask } from './serve-process.js';
import { scratchDir } from './scratch.js';

/** A kernel holding state `s` (never changed by its body, so the state read is the carried one). */
const kernel = (id: string, state: string) => `kernel t.hold@${id} {
  grants field.write;
  state s: ${state};
  out result: field2<f32>;
  each (x, y) { result = 1.0; }
}`;
const SCENE = `${kernel('1', 'field2<f32> = 0.5')}
node a: t.hold@1 { size = 4 x 3; }
output result <- a.result;
`;

function sceneDir(text = SCENE): string {
  const dir = scratchDir('entelechy-auto-migrate-');
  writeFileSync(join(dir, 'scene.esn'), text);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Component planes: plane c, element (x, y) of a w x h field = f(c, x, y). */
type Planes = number[][];
const planes = (comps: number, w: number, h: number, f: (c: number, x: number, y: number) => number): Planes =>
  Array.from({ length: comps }, (_, c) => Array.from({ length: w * h }, (_, i) => f(c, i % w, Math.floor(i / w))));
/** Values every element of which differs: 1 + x + 10 y + 100 c. */
const distinct = (comps: number, w: number, h: number) => planes(comps, w, h, (c, x, y) => 1 + x + 10 * y + 100 * c);
const base64 = (p: Planes) => Buffer.from(new Float32Array(p.flat()).buffer).toString('base64');

async function writeState(ask: Ask, p: Planes) {
  const a = await ask({ op: 'write', node: 'a', port: 's', data: base64(p) });
  if (!a.ok) throw new Error(JSON.stringify(a.error));
}

async function readState(ask: Ask): Promise<{ width: number; height: number; planes: Planes }> {
  const a = await ask({ op: 'read', node: 'a', port: 's', format: 'f32' });
  if (!a.ok) throw new Error(JSON.stringify(a.error));
  const all = Array.from(new Float32Array(Uint8Array.from(Buffer.from(a.ok.data, 'base64')).buffer));
  const n = a.ok.width * a.ok.height * (a.ok.depth ?? 1);
  return { width: a.ok.width, height: a.ok.height, planes: Array.from({ length: all.length / n }, (_, c) => all.slice(c * n, (c + 1) * n)) };
}

// The docs' formulas, per axis, computed here in doubles.
/** Nearest: the old element under the new element's centre. */
const nearest = (i: number, from: number, to: number) => Math.floor(((i + 0.5) * from) / to);
/** Bilinear: the two old elements around the centre and the weight of the second, clamped to the edge. */
function around(i: number, from: number, to: number): [number, number, number] {
  const u = ((i + 0.5) * from) / to - 0.5;
  const i0 = Math.floor(u);
  const clamp = (k: number) => Math.min(Math.max(k, 0), from - 1);
  return [clamp(i0), clamp(i0 + 1), u - i0];
}
const lerp = (a: number, b: number, t: number) => a + (b - a) * t;

function resampled(old: Planes, ow: number, oh: number, w: number, h: number, filter: 'nearest' | 'bilinear'): Planes {
  return planes(old.length, w, h, (c, x, y) => {
    const at = (px: number, py: number) => old[c][py * ow + px];
    if (filter === 'nearest') return at(nearest(x, ow, w), nearest(y, oh, h));
    const [x0, x1, tx] = around(x, ow, w);
    const [y0, y1, ty] = around(y, oh, h);
    return lerp(lerp(at(x0, y0), at(x1, y0), tx), lerp(at(x0, y1), at(x1, y1), tx), ty);
  });
}

/** Every value within `tolerance` of the expected (0: the same f32). */
function near(t: Test, got: Planes, want: Planes, tolerance: number, what: string) {
  const f = (p: Planes) => p.map((plane) => plane.map((v) => Math.fround(v)));
  const bad = f(want).flatMap((plane, c) => plane.flatMap((v, i) => (Math.abs(v - got[c]?.[i]) <= tolerance ? [] : [`c${c}[${i}] ${got[c]?.[i]} != ${v}`])));
  t.same([got.length, bad.slice(0, 4)], [want.length, []], what);
}

const carried = (events: any[]) => events.filter((e) => e.kind === 'state_carried' || e.kind === 'state_reset' || e.kind === 'migrated');

t.test('each automatic migration carries the values the docs say, told in the events', async (t) => {
  const dir = sceneDir();
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 2 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const compose = async (edits: object[]) => {
    const a = await ask({ op: 'compose', edits });
    if (!a.ok) throw new Error(JSON.stringify(a.error));
    return carried(a.ok.events);
  };
  const size = (w: number, h: number) => ({ node: 'a', member: 'size', text: `size = ${w} x ${h};` });
  const state = (text: string) => ({ kernel: 't.hold@1', text: kernel('1', text) });

  // resized: the overlap kept, the rest the declared value (0.5).
  let old = distinct(1, 4, 3);
  await writeState(ask, old);
  t.same(await compose([size(6, 2)]), [{ kind: 'state_carried', node: 'a', port: 's', how: ['resized'], from: { size: [4, 3], type: 'f32' }, to: { size: [6, 2], type: 'f32' }, message: '`a.s` resized 4 x 3 -> 6 x 2, the overlap kept and the rest its declared value' }]);
  near(t, (await readState(ask)).planes, planes(1, 6, 2, (_, x, y) => (x < 4 ? old[0][y * 4 + x] : 0.5)), 0, 'resized 4 x 3 -> 6 x 2');

  // A clause added, the layout as it was: kept, nothing told.
  t.same((await compose([state('field2<f32> = 0.5 resample nearest')])).map((e) => [e.kind, e.how, e.message]), [['state_carried', ['kept'], '`a.s` kept as it was']], 'a state kept as it was is told so');
  old = distinct(1, 6, 2);
  await writeState(ask, old);
  const n = await compose([size(3, 5)]);
  t.same(n.map((e) => [e.how, e.filter]), [[['resampled'], 'nearest']]);
  near(t, (await readState(ask)).planes, resampled(old, 6, 2, 3, 5, 'nearest'), 0, 'resampled nearest 6 x 2 -> 3 x 5');

  await compose([state('field2<f32> = 0.5 resample bilinear')]);
  old = distinct(1, 3, 5);
  await writeState(ask, old);
  await compose([size(8, 4)]);
  near(t, (await readState(ask)).planes, resampled(old, 3, 5, 8, 4, 'bilinear'), 1e-4, 'resampled bilinear 3 x 5 -> 8 x 4 (up and down)');
  old = (await readState(ask)).planes;
  await compose([size(5, 3)]);
  near(t, (await readState(ask)).planes, resampled(old, 8, 4, 5, 3, 'bilinear'), 1e-4, 'resampled bilinear 8 x 4 -> 5 x 3');

  // widened: f32 -> vec3, the rest of the declared value (7, 8, 9).
  old = distinct(1, 5, 3);
  await writeState(ask, old);
  t.same((await compose([state('field2<vec3> = vec3(7, 8, 9)')])).map((e) => [e.kind, e.how, e.from.type, e.to.type]), [['state_carried', ['widened'], 'f32', 'vec3']]);
  near(t, (await readState(ask)).planes, [old[0], old[0].map(() => 8), old[0].map(() => 9)], 0, 'widened f32 -> vec3');

  // A narrowing not declared: reset, saying why.
  const reset = await compose([state('field2<vec2> = vec2(3, 4)')]);
  t.same(reset.map((e) => [e.kind, e.how, e.reason]), [['state_reset', ['reset'], 'narrowing not declared']]);
  t.match(reset[0].message, /add `narrow`/);
  near(t, (await readState(ask)).planes, planes(2, 5, 3, (c) => [3, 4][c]), 0, 'reset to its declared value');

  // resized and widened at once: vec2 -> a struct whose first member is vec2, 5 x 3 -> 4 x 4.
  old = distinct(2, 5, 3);
  await writeState(ask, old);
  const both = await compose([{ struct: 'P', text: 'struct P { v: vec2; m: f32; }' }, state('field2<P> = 6.0'), size(4, 4)]);
  t.same(both.map((e) => [e.how, e.to.type]), [[['resized', 'widened'], 'P']]);
  near(t, (await readState(ask)).planes, planes(3, 4, 4, (c, x, y) => (c < 2 && y < 3 ? old[c][y * 5 + x] : 6)), 0, 'resized and widened vec2 -> P');

  // narrowed, declared: P -> vec2 keeps .v.
  old = distinct(3, 4, 4);
  await writeState(ask, old);
  t.same((await compose([state('field2<vec2> = vec2(0, 0) narrow')])).map((e) => e.how), [['narrowed']]);
  near(t, (await readState(ask)).planes, old.slice(0, 2), 0, 'narrowed P -> vec2');

  // copied: another kernel, the same layout.
  old = distinct(2, 4, 4);
  await writeState(ask, old);
  const copied = await compose([{ kernel: 't.hold@2', text: kernel('2', 'field2<vec2> = vec2(0, 0)') }, { node: 'a', text: 'node a: t.hold@2 { size = 4 x 4; }' }]);
  t.same(copied.map((e) => e.how), [['copied']]);
  near(t, (await readState(ask)).planes, old, 0, 'copied');

  // Another type change: reset.
  const other = await compose([{ kernel: 't.hold@2', text: kernel('2', 'field2<i32> = 2') }]);
  t.same(other.map((e) => [e.kind, e.reason]), [['state_reset', 'type changed']]);
  t.match(other[0].message, /from vec2 to i32.*migrate from t\.hold@2/);

  // A hand-written `migrate from` wins over the automatic resize.
  const written = kernel('3', 'field2<f32> = 0.0 resample nearest').replace('each (x, y)', 'migrate from t.hold@2 { s = 42.0 + x; }\n  each (x, y)');
  const migrated = await compose([{ kernel: 't.hold@3', text: written }, { node: 'a', text: 'node a: t.hold@3 { size = 3 x 2; }' }]);
  t.same(migrated.map((e) => [e.kind, e.how, e.migration]), [['migrated', ['migrate from'], 't.hold@2 -> t.hold@3']]);
  near(t, (await readState(ask)).planes, planes(1, 3, 2, (_, x) => 42 + x), 0, 'the migration\'s values');
});

t.test('a misused clause is an error at its place', async (t) => {
  const dir = sceneDir();
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const refused = async (state: string) => {
    const a = await ask({ op: 'compose', edits: [{ kernel: 't.hold@1', text: kernel('1', state) }] });
    t.ok(a.error, `refused: ${state}`);
    return a.error;
  };
  const text = readFileSync(join(dir, 'scene.esn'), 'utf8');
  const place = (e: any) => [e.diagnostics?.[0]?.line, e.diagnostics?.[0]?.column];
  const bilinear = await refused('field2<i32> = 0 resample bilinear');
  t.match(bilinear.message, /`resample bilinear` blends neighbouring values, and `s` \(i32\) has i32 components: write `resample nearest`/);
  t.same(place(bilinear), [3, 'state s: field2<i32> = 0 '.length + 3], 'line and column of the clause');
  const filter = await refused('field2<f32> = 0.0 resample cubic');
  t.match(filter.message, /`resample` takes a filter: `nearest` or `bilinear`, found `cubic`/);
  t.same(place(filter), [3, 'state s: field2<f32> = 0.0 resample '.length + 3], 'at the filter');
  const twice = await refused('field2<f32> = 0.0 narrow narrow');
  t.match(twice.message, /says `narrow` twice/);
  const onIn = await ask({ op: 'compose', edits: [{ kernel: 't.hold@1', text: kernel('1', 'field2<f32> = 0.0').replace('grants', 'in k: f32 = 1.0 narrow;\n  grants') }] });
  t.match(onIn.error?.message, /`narrow` says how a state is carried to a new layout; `k` is an `in` port/);
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), text, 'nothing written');
});

/** A dry run's `values` (read's f32 answer) as planes. */
function floats(v: { data: string; width: number; height: number; components: number } | undefined): Planes {
  if (!v) return [];
  const all = Array.from(new Float32Array(Uint8Array.from(Buffer.from(v.data, 'base64')).buffer));
  return Array.from({ length: v.components }, (_, c) => all.slice(c * v.width * v.height, (c + 1) * v.width * v.height));
}

/** The digest the dry run gives a state: sha256 of its elements packed as f32 (or i32), component-major. */
const digest = (p: Planes) => createHash('sha256').update(new Uint8Array(new Float32Array(p.flat()).buffer)).digest('hex').slice(0, 16);

t.test('a dry run shows each state as the change would carry it, and changes nothing', async (t) => {
  const dir = sceneDir(SCENE.replace("state s: field2<f32> = 0.5", 'state s: field2<f32> = 0.5 resample nearest'));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const old = distinct(1, 4, 3);
  await writeState(ask, old);
  const before = JSON.stringify([await readState(ask), (await ask({ op: 'status' })).ok.revision, readFileSync(join(dir, 'scene.esn'), 'utf8')]);

  const dry = await ask({ op: 'compose', edits: [{ node: 'a', member: 'size', text: 'size = 8 x 6;' }], dry_run: true, evaluate: { frames: 0, png: true } });
  t.ok(dry.ok, JSON.stringify(dry.error));
  t.same(carried(dry.ok.events).map((e) => e.how), [['resampled']], 'the events it would tell');
  const [st] = dry.ok.evaluation.states;
  t.same([st.node, st.port, st.how, st.type, st.width, st.height], ['a', 's', ['resampled'], 'f32', 8, 6]);
  t.equal(st.digest, digest(resampled(old, 4, 3, 8, 6, 'nearest')), 'the digest of the values computed here');
  const thumb = decodePng(Buffer.from(st.thumbnail.data, 'base64'));
  t.same([thumb.width, thumb.height, decodePng(Buffer.from(st.png.data, 'base64')).width], [8, 6, 8], 'its thumbnail and full picture');
  t.notOk(st.values, 'values only when asked');

  // The values read back, as `read` answers f32, against the resampling computed here.
  const want = resampled(old, 4, 3, 8, 6, 'nearest');
  const edit = [{ node: 'a', member: 'size', text: 'size = 8 x 6;' }];
  const whole = (await ask({ op: 'compose', edits: edit, dry_run: true, evaluate: { frames: 0, values: true } })).ok?.evaluation.states[0].values;
  t.same([whole?.format, whole?.width, whole?.height, whole?.components], ['f32', 8, 6, 1], 'the whole state\'s values: f32, its size and components');
  near(t, floats(whole), want, 0, 'the values are the resampled ones, exactly');
  const part = (await ask({ op: 'compose', edits: edit, dry_run: true, evaluate: { frames: 0, values: { region: { x: 5, y: 2, width: 3, height: 4 }, states: ['a.s'] } } })).ok?.evaluation.states[0].values;
  t.same([part?.width, part?.height], [3, 4], 'a region of it');
  near(t, floats(part), planes(1, 3, 4, (_, x, y) => want[0][(y + 2) * 8 + x + 5]), 0, 'the region\'s values, exactly');
  const refused = async (values: unknown, re: RegExp) => {
    const e = (await ask({ op: 'compose', edits: edit, dry_run: true, evaluate: { frames: 0, values } })).error;
    t.match([e?.field, e?.message], ['evaluate', re], e?.message);
  };
  await refused({ region: { x: 6, y: 0, width: 3, height: 1 } }, /the state a\.s: evaluate\.values\.region \{x: 6, y: 0, width: 3, height: 1\} is not inside the 8 x 6 field/);
  await refused({ states: ['a.t'] }, /names `a\.t`, not a state of the changed scene; its states: a\.s/);
  await refused({ region: { x: -1 } }, /`evaluate\.values\.region\.x` must be an integer of at least 0/);
  await refused({ area: 1 }, /`evaluate\.values` has no member `area`/);
  await refused(3, /`evaluate\.values` is true .* or \{region\?, states\?\}/);
  const kept = await ask({ op: 'compose', edits: [{ node: 'a', member: 'size', text: 'size = 4 x 3;' }], dry_run: true, evaluate: { frames: 1 } });
  t.same(kept.ok.evaluation.states.map((x: any) => [x.how, x.digest]), [[['kept'], digest(old)]], 'a state kept is listed as kept, with the digest of its values');
  t.equal(JSON.stringify([await readState(ask), (await ask({ op: 'status' })).ok.revision, readFileSync(join(dir, 'scene.esn'), 'utf8')]), before, 'state, revision and document as before');

  // The change made: the state is what the dry run showed.
  await ask({ op: 'compose', edits: [{ node: 'a', member: 'size', text: 'size = 8 x 6;' }] });
  t.equal(digest((await readState(ask)).planes), st.digest, 'the carried state has the digest the dry run answered');
});

t.test('a dry run\'s thumbnail of a migrated state averages its light, as an output\'s does', async (t) => {
  const dir = sceneDir();
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  // A black and white checker, 4 x 3, resized to 4 x 4 (the new row its declared 0.5), shown 2 x 2:
  // every 2 x 2 block's light averages 0.5, byte 188. Averaging the bytes would give 128 for the
  // checker's blocks (0 and 255) and 158 for the bottom ones.
  await writeState(ask, planes(1, 4, 3, (_, x, y) => (x + y) % 2));
  const dry = await ask({ op: 'compose', edits: [{ node: 'a', member: 'size', text: 'size = 4 x 4;' }], dry_run: true, evaluate: { frames: 0, thumbnail: 2 } });
  const st = dry.ok?.evaluation.states[0];
  t.same(st?.how, ['resized'], JSON.stringify(dry.error));
  const thumb = decodePng(Buffer.from(st.thumbnail.data, 'base64'));
  t.same([thumb.width, thumb.height, [...thumb.rgba]], [2, 2, Array.from({ length: 4 }, () => [188, 188, 188, 255]).flat()], 'every pixel the light\'s average, byte 188');
});

t.test('a world moving to a fresh memory carries its state from the old one', async (t) => {
  // 5000 x 5000: the state twice and the out, 300 MB: past RENEW_ABOVE (256 MiB); 8 x 8 needs far less.
  const dir = sceneDir(SCENE.replace('4 x 3', '5000 x 5000'));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const corner = distinct(1, 8, 8);
  t.ok((await ask({ op: 'write', node: 'a', port: 's', region: { x: 0, y: 0, width: 8, height: 8 }, data: base64(corner) })).ok);
  const bytes = (await ask({ op: 'status' })).ok.memory.bytes;
  const a = await ask({ op: 'compose', edits: [{ node: 'a', member: 'size', text: 'size = 8 x 8;' }] });
  t.same(carried(a.ok.events).map((e) => e.how), [['resized']]);
  t.ok((await ask({ op: 'status' })).ok.memory.bytes < bytes / 4, 'the world moved to a smaller memory');
  near(t, (await readState(ask)).planes, corner, 0, 'the overlap came across');
});

t.test('through entelechy serve: stdin and TCP', async (t) => {
  const dir = sceneDir();
  const { stdin, tcp } = await serveDoors(t, dir);
  let size = [4, 3];
  for (const [door, ask] of [['stdin', stdin], ['tcp', tcp]] as const) {
    const old = distinct(1, size[0], size[1]);
    await writeState(ask, old);
    const next = door === 'stdin' ? [6, 2] : [3, 5];
    const edits = [{ node: 'a', member: 'size', text: `size = ${next[0]} x ${next[1]};` }];
    const want = planes(1, next[0], next[1], (_, x, y) => (x < size[0] && y < size[1] ? old[0][y * size[0] + x] : 0.5));
    const dry = await ask({ op: 'compose', edits, dry_run: true, evaluate: { frames: 0, values: true } });
    t.same([dry.ok?.evaluation.states[0].how, dry.ok?.evaluation.states[0].digest], [['resized'], digest(want)], `${door}: the dry run shows the carried state`);
    near(t, floats(dry.ok?.evaluation.states[0].values), want, 0, `${door}: and its values, read back`);
    const a = await ask({ op: 'compose', edits });
    t.same(carried(a.ok.events).map((e) => [e.kind, e.how]), [['state_carried', ['resized']]], `${door}: the change tells it`);
    near(t, (await readState(ask)).planes, want, 0, `${door}: the values`);
    size = next;
  }
});

t.test('in 3-D: resampled along each of the three axes (trilinear: x, then y, then z)', async (t) => {
  const kernel3 = (clause: string) => `kernel t.vol@1 {
  grants field.write;
  state s: field3<f32> = 0.0 ${clause};
  out result: field3<f32>;
  each (x, y, z) { result = 1.0; }
}`;
  const dir = sceneDir(`${kernel3('resample bilinear')}\nnode a: t.vol@1 { size = 2 x 3 x 2; }\noutput result <- a.result;\n`);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 2 });
  t.teardown(() => s.close());
  const ask: Ask = async (req) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  /** Values of a w x h x d field: 1 + x + 10 y + 100 z, as one plane [z][y][x]. */
  const volume = (w: number, h: number, d: number) => [Array.from({ length: w * h * d }, (_, i) => 1 + (i % w) + 10 * (Math.floor(i / w) % h) + 100 * Math.floor(i / (w * h)))];
  const expect = (old: number[], [ow, oh, od]: number[], [w, h, d]: number[], filter: 'nearest' | 'bilinear') =>
    Array.from({ length: w * h * d }, (_, i) => {
      const [x, y, z] = [i % w, Math.floor(i / w) % h, Math.floor(i / (w * h))];
      const at = (px: number, py: number, pz: number) => old[(pz * oh + py) * ow + px];
      if (filter === 'nearest') return at(nearest(x, ow, w), nearest(y, oh, h), nearest(z, od, d));
      const [x0, x1, tx] = around(x, ow, w);
      const [y0, y1, ty] = around(y, oh, h);
      const [z0, z1, tz] = around(z, od, d);
      const plane = (pz: number) => lerp(lerp(at(x0, y0, pz), at(x1, y0, pz), tx), lerp(at(x0, y1, pz), at(x1, y1, pz), tx), ty);
      return lerp(plane(z0), plane(z1), tz);
    });
  const change = async (size: number[], filter: 'nearest' | 'bilinear') => {
    const now = (await readState(ask)).planes[0];
    const before = (await ask({ op: 'graph' })).ok.nodes[0].size as number[];
    const a = await ask({ op: 'compose', edits: [{ node: 'a', member: 'size', text: `size = ${size.join(' x ')};` }] });
    t.same(carried(a.ok.events).map((e) => [e.how, e.filter, e.to.size]), [[['resampled'], filter, size]]);
    near(t, (await readState(ask)).planes, [expect(now, before, size, filter)], filter === 'bilinear' ? 1e-3 : 0, `${filter} ${before.join(' x ')} -> ${size.join(' x ')}`);
  };
  await writeState(ask, volume(2, 3, 2));
  await change([5, 2, 3], 'bilinear');
  await ask({ op: 'compose', edits: [{ kernel: 't.vol@1', text: kernel3('resample nearest') }] });
  await writeState(ask, volume(5, 2, 3));
  await change([2, 5, 2], 'nearest');

  // A dry run's values of a box of the 3-D state: its slices in increasing z, and their number.
  const now = (await readState(ask)).planes[0];
  const kept = [{ kernel: 't.vol@1', text: kernel3('resample nearest') + ' ' }];
  const box = (await ask({ op: 'compose', edits: kept, dry_run: true, evaluate: { frames: 0, values: { region: { x: 1, y: 2, z: 0, width: 1, height: 3, depth: 2 } } } })).ok?.evaluation.states[0].values;
  t.same([box?.width, box?.height, box?.depth], [1, 3, 2], 'a box of a 3-D state answers its depth');
  const want = [0, 1].flatMap((z) => [2, 3, 4].map((y) => now[(z * 5 + y) * 2 + 1]));
  t.same(Array.from(new Float32Array(Uint8Array.from(Buffer.from(box?.data ?? '', 'base64')).buffer)), want, 'and every slice of it');
});
