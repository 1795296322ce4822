// The in-process door: the package's API answers request lines and reads fields in place.

import t from 'tap';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, CallError, Session, fieldPlane } from '../src/index.js';
import { ROOT } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

t.test('request lines and fields in place, as docs/architecture.md shows', async (t) => {
  const dir = scratchDir('entelechy-api-');
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const session = await Session.open(join(dir, 'scene.esn'), { workers: 2 });
  t.teardown(() => session.close());
  const answer = JSON.parse(await dispatch(session, '{"id": 1, "op": "evaluate", "time": 0.5}'));
  t.equal(answer.id, 1);
  t.same(answer.ok.executed, ['rings', 'tint']);
  const field = session.engine.outputField('result')!;
  const red = fieldPlane(session.memory, field, 0);
  const alpha = fieldPlane(session.memory, field, 3);
  t.equal(alpha[0], 1, 'alpha is 1');
  const centre = 128 + 128 * field.stride;
  t.ok(red[centre] >= 0 && red[centre] <= 1.4, 'a red value in range');
  // The view is the field itself: the f32 read over the protocol holds the same numbers.
  const read = JSON.parse(await dispatch(session, '{"op": "read", "format": "f32", "region": {"x": 128, "y": 128, "width": 1, "height": 1}}'));
  const floats = new Float32Array(Uint8Array.from(Buffer.from(read.ok.data, 'base64')).buffer);
  t.equal(floats[0], red[centre]);
});

t.test('typed calls: call(session, op, fields) answers ok typed from the operations table, errors as CallError', async (t) => {
  const dir = scratchDir('entelechy-api-');
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const session = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => session.close());
  const evaluated = await call(session, 'evaluate', { time: 0.5 });
  // Typed: `executed` is a string[] to the compiler, not any.
  const executed: string[] = evaluated.executed;
  t.same(executed, ['rings', 'tint']);
  const status = await call(session, 'status');
  t.equal(status.frame, evaluated.frame, 'an operation without required fields takes none');
  const read = await call(session, 'read', { format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } });
  t.same([read.width, read.height, read.format], [1, 1, 'f32']);
  const set = await call(session, 'param', { name: 'warmth', value: 0.25 });
  t.ok(set, 'param answers');
  // An error answer rejects with the protocol's error, its fields kept (here: the range).
  const refused = await call(session, 'param', { name: 'warmth', value: 7 }).then(() => undefined, (e: unknown) => e);
  t.ok(refused instanceof CallError, 'a CallError');
  t.equal((refused as CallError).op, 'param');
  t.match((refused as CallError).message, /warmth/);
  t.equal((refused as CallError).data.field, 'value');
  if (process.env.NEVER) {
    // Compile-time checks (tsc fails the build if these are accepted): a field of the wrong type, a missing required field, an unknown operation.
    // @ts-expect-error time is a number
    await call(session, 'evaluate', { time: 'soon' });
    // @ts-expect-error param needs name
    await call(session, 'param', { value: 1 });
    // @ts-expect-error no such operation
    await call(session, 'evaluat');
  }
});

t.test('a host program: JSON.stringify(session), dispatch of an object, a folder, close() during a frame and requests after it', async (t) => {
  const dir = scratchDir('entelechy-api-');
  cpSync(join(ROOT, 'examples', 'mandelbrot'), dir, { recursive: true });
  await t.rejects(Session.open(dir), { message: /is a folder: name the scene document in it, e.g. .*scene\.esn/ });
  // A file that is no scene: the session took it for one, and a compose replaced its bytes.
  writeFileSync(join(dir, 'notes.txt'), 'my notes\n');
  await t.rejects(Session.open(join(dir, 'notes.txt')), { message: /`.*notes\.txt` is not a scene: a scene is a \.esn document, e\.g\. .*scene\.esn; name one/ });
  t.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'my notes\n');
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  // Without Session.toJSON the walk reached the compile worker's proxy, and its answer ended the process.
  t.same(JSON.parse(JSON.stringify(s)), { scene: join(dir, 'scene.esn'), loaded: true, revision: 1, closed: false });
  await new Promise((r) => setTimeout(r, 200));
  t.match(JSON.parse(await dispatch(s, { op: 'status' } as never)), { error: { field: 'line', message: /^dispatch takes a request line, a JSON text/ } });
  // A frame of several seconds (the whole set, 4096 x 4096, on one worker): close() stops it.
  await call(s, 'param', { name: 'zoom', value: 1 });
  t.match(JSON.parse(await dispatch(s, JSON.stringify({ op: 'compose', edits: [{ node: 'fractal', member: 'size', text: 'size = 4096 x 4096;' }] }))), { ok: { written: true } });
  const frame = dispatch(s, '{"id": 1, "op": "evaluate"}');
  await new Promise((r) => setTimeout(r, 300));
  await s.close();
  // Cancelled, not run to its end (it answered an internal error after the whole frame before).
  t.match(JSON.parse(await frame), { id: 1, error: { cancelled: true, reason: 'closed', message: /^cancelled: the session was closed/ } }, 'close() stopped the frame');
  for (const line of ['{"id":7,"op":"status"}', '{"op":"evaluate"}', '{"op":"param","name":"zoom","value":2}'])
    t.match(JSON.parse(await dispatch(s, line)), { error: { closed: true, message: /^the session is closed/ } }, line);
  t.equal(JSON.parse(await dispatch(s, '{"id":7,"op":"status"}')).id, 7, 'with its id');
  t.equal(JSON.parse(JSON.stringify(s)).closed, true);
});
