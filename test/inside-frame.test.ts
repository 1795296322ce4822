// Looking inside a frame through the protocol (dispatch): `evaluate` with `profile` times every
// node on its own on an unfused copy, leaving the running world (state, clock, frame counter,
// outputs) as it was; `trace` answers, beside what each node computed, what it read at the
// element: its in fields, the state it started from, its params and values, and the uniforms.

import t, { type Test } from 'tap';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { copyExample } from './fixtures.js';

async function open(name: string): Promise<Session> {
  const s = await Session.open(join(copyExample(name, 'inside'), 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  return s;
}

async function ok(t2: Test, s: Session, req: object): Promise<any> {
  const a = JSON.parse(await dispatch(s, JSON.stringify(req)));
  if (!('ok' in a)) t2.fail(`${JSON.stringify(req)} answered ${JSON.stringify(a.error)}`);
  return a.ok;
}

const f32 = async (t2: Test, s: Session, req: object = {}) => (await ok(t2, s, { op: 'read', format: 'f32', ...req })).data as string;

t.test('profile: a timing per node, the slowest named; the world does not move', async (t) => {
  const R = await open('rings');
  const fused = await ok(t, R, { op: 'evaluate', time: 0.25 });
  t.same(fused.timings.map((x: any) => x.fused), [['rings', 'tint']], 'precondition: fused, one time for both nodes');
  const before = { status: await ok(t, R, { op: 'status' }), data: await f32(t, R) };

  const p = await ok(t, R, { op: 'evaluate', time: 0.75, profile: true });
  t.equal(p.profiled, true);
  t.same(p.timings.map((x: any) => x.node), ['rings', 'tint'], 'one timing per node, in evaluation order');
  t.ok(p.timings.every((x: any) => x.fused === undefined && typeof x.millis === 'number' && x.millis >= 0), 'no fused groups');
  const slowest = p.timings.reduce((a: any, b: any) => (b.millis > a.millis ? b : a));
  t.same(p.slowest, { node: slowest.node, millis: slowest.millis }, 'the slowest of them');
  t.same(p.executed, ['rings', 'tint']);
  t.same(p.placements.map((x: any) => x.fused), [['rings'], ['tint']], 'each node placed alone');
  t.equal(p.frame, 2, 'the next frame was profiled');
  t.equal(p.time, 0.75);

  const after = await ok(t, R, { op: 'status' });
  t.equal(after.frame, before.status.frame, 'the frame counter is as it was');
  t.equal(after.time, before.status.time, 'the clock is as it was');
  t.equal(await f32(t, R), before.data, 'the output is as the last frame left it');
  t.equal((await ok(t, R, { op: 'evaluate', time: 0.5 })).frame, 2, 'the next real frame is frame 2');
});

t.test('profile leaves state as it was: the next frame computes what it would have', async (t) => {
  const L = await open('life');
  const M = await open('life');
  for (const s of [L, M]) await ok(t, s, { op: 'evaluate' });
  const cells = await f32(t, L, { node: 'board', port: 'cells' });
  const p = await ok(t, L, { op: 'evaluate', profile: true, pointer: { x: 20, y: 20, down: true } });
  t.same(p.timings.map((x: any) => x.node), ['board']);
  t.equal(await f32(t, L, { node: 'board', port: 'cells' }), cells, 'the state is as the last frame left it');
  t.equal((await ok(t, L, { op: 'status' })).frame, 1);
  for (const s of [L, M]) await ok(t, s, { op: 'evaluate' });
  t.equal(await f32(t, L, { node: 'board', port: 'cells' }), await f32(t, M, { node: 'board', port: 'cells' }), 'the next generation is the one a session that never profiled computes');
});

t.test('trace answers what each node read at the element', async (t) => {
  const R = await open('rings');
  await ok(t, R, { op: 'param', name: 'warmth', value: 0.3 });
  await ok(t, R, { op: 'evaluate', time: 0.5 });
  const tr = await ok(t, R, { op: 'trace', x: 10, y: 20 });
  const rings = tr.values.find((v: any) => v.node === 'rings').value;
  const reads = (node: string) => tr.reads.filter((r: any) => r.node === node).map((r: any) => [r.name, r.kind, r.from, r.value]);
  t.same(reads('rings'), [['count', 'value', undefined, 8], ['time', 'uniform', undefined, 0.5]], 'rings: its document value and the time');
  t.same(reads('tint'), [['src', 'field', 'rings.result', rings], ['warmth', 'param', 'warmth', 0.3]], 'tint: the field it read (rings\' output there) and its param');

  const L = await open('life');
  await ok(t, L, { op: 'evaluate' });
  const cells = await f32(t, L, { node: 'board', port: 'cells', region: { x: 5, y: 6, width: 1, height: 1 } });
  const started = Buffer.from(cells, 'base64').readFloatLE(0);
  await ok(t, L, { op: 'evaluate', pointer: { x: 40, y: 41, down: true } });
  const board = (await ok(t, L, { op: 'trace', x: 5, y: 6 })).reads.map((r: any) => [r.name, r.kind, r.value]);
  const C = await open('castle');
  await ok(t, C, { op: 'evaluate' });
  const traced = await ok(t, C, { op: 'trace', x: 160, y: 120, output: 'image' });
  t.match(traced, { z: 0, note: /^no `z` given: the 3-D fields \(`build`\) are traced at z = 0; give `z` for another slice$/ }, 'castle: a scene of 2-D and 3-D fields traced without z says which slice (it named none)');
  const view = traced.reads.filter((r: any) => r.node === 'view');
  const voxels = view.find((r: any) => r.name === 'voxels');
  t.same([voxels?.kind, voxels?.from, voxels?.value], ['field', 'build.voxels', undefined], 'castle: the 3-D field the 2-D view gathers from is listed, without a value at the element');
  t.match(voxels?.note, /outside it.*\.at/, 'with a note saying why, and how it is read');
  t.same(board, [['cells', 'state', started], ['frame', 'uniform', 1], ['pointer.x', 'uniform', 40], ['pointer.y', 'uniform', 41], ['pointer.down', 'uniform', 1]], 'life: the state the frame started from, the frame number and the pointer');
});
