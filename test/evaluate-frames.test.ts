// `evaluate` with `frames`: several frames in one request, each committed as it ends. A state
// that counts frames shows how many ran; a cancel in the middle keeps the frames already done,
// and the count and the frame counter agree (no frame half-committed).

import t from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { counterScene } from './fixtures.js';
import { scratchDir } from './scratch.js';

const SCENE = counterScene('count', '64 x 64');

let dir = '';
let s: Session;
t.before(async () => {
  dir = scratchDir('entelechy-frames-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
});
t.teardown(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const agent = { kind: 'test', id: 1 };
const other = { kind: 'test', id: 2 };
const ask = async (req: object, conn = agent): Promise<{ ok?: any; error?: any }> => JSON.parse(await dispatch(s, JSON.stringify(req), conn));
const counted = async () => {
  const a = await ask({ op: 'read', format: 'f32', region: { x: 0, y: 0, width: 1, height: 1 } }, other);
  return new Float32Array(new Uint8Array(Buffer.from(a.ok.data, 'base64')).buffer)[0];
};

t.test('frames: N runs N frames, state advancing each, and answers the last', async (t) => {
  const start = (await ask({ op: 'status' })).ok.frame;
  const a = await ask({ op: 'evaluate', frames: 5 });
  t.equal(a.ok?.frames_run, 5, 'frames_run says how many ran');
  t.equal(await counted(), 5, 'the state counted five frames');
  const after = (await ask({ op: 'status' })).ok.frame;
  t.equal(after - start, 5, 'the frame counter moved by five');
  t.equal(a.ok.frame, after, 'the answer is the last frame');
  const one = await ask({ op: 'evaluate' });
  t.equal(one.ok?.frames_run, undefined, 'without frames, no frames_run');
  t.equal(await counted(), 6, 'and one frame more');
});

t.test('frames is refused past its limit, below 1 and with profile; nothing runs', async (t) => {
  const before = await counted();
  for (const [req, what] of [
    [{ op: 'evaluate', frames: 0 }, 'at least 1'],
    [{ op: 'evaluate', frames: 10001 }, '10000'],
    [{ op: 'evaluate', frames: 3, profile: true }, 'profile'],
  ] as const) {
    const a = await ask(req);
    t.equal(a.error?.field, 'frames', `${JSON.stringify(req)} refused, naming frames`);
    t.match(a.error?.message, what, 'saying why');
  }
  t.equal(await counted(), before, 'no frame ran');
});

t.test('a cancel in the middle keeps the frames done; the count and the frame counter agree', async (t) => {
  const start = { state: await counted(), frame: (await ask({ op: 'status' }, other)).ok.frame };
  const running = ask({ op: 'evaluate', frames: 10000 });
  // Wait (by frames, not time) until some frames have run, then cancel from the same connection.
  while ((await ask({ op: 'status' }, other)).ok.frame < start.frame + 3) await new Promise((r) => setImmediate(r));
  t.equal((await ask({ op: 'cancel' })).ok?.cancelled, 1, 'cancel finds the evaluation');
  const a = await running;
  t.equal(a.error?.cancelled, true, 'the evaluation answers that it was cancelled');
  const ran = (await ask({ op: 'status' }, other)).ok.frame - start.frame;
  t.ok(ran >= 3 && ran < 10000, `some frames ran and were kept (${ran})`);
  t.equal(await counted(), start.state + ran, 'the state counted exactly the frames the counter shows');
  t.equal(a.error?.frames_kept, ran, 'the answer counts the frames kept');
  t.match(a.error?.message, new RegExp(`^cancelled: .*; ${ran} of its 10000 frames ran and were kept, each whole; the one it was running was not`), 'and says so: not "nothing of it was kept"');
});

t.test('a kernel that reads `frame` runs at every frame, the time fixed: each frame number is new (it answered idle, frame unmoved)', async (t) => {
  const d = scratchDir('entelechy-frames-');
  writeFileSync(join(d, 'scene.esn'), `kernel t.count@1 {\n  grants time.read;\n  out r: field2<f32>;\n  each (x, y) { r = f32(frame); }\n}\nnode c: t.count@1 { size = 8 x 8; }\noutput r <- c.r;\n`);
  const w = await Session.open(join(d, 'scene.esn'), { workers: 1 });
  t.teardown(() => w.close());
  const req = async (o: object) => JSON.parse(await dispatch(w, JSON.stringify(o)));
  const first = (await req({ op: 'evaluate' })).ok;
  const again = (await req({ op: 'evaluate' })).ok;
  t.same([first.frame, again.frame, again.executed], [1, 2, ['c']], 'the second evaluate ran: frame 2');
  t.notOk(again.events.some((e: { kind: string }) => e.kind === 'idle'));
  const many = (await req({ op: 'evaluate', frames: 3 })).ok;
  t.same([many.frames_run, many.frame], [3, 5]);
  t.equal((await req({ op: 'trace', x: 0, y: 0 })).ok.values[0].value, 4, 'the kernel saw the frame number of the last frame (0-based)');
});

t.test('frames where only the first runs something (a fixed time, no state): the answer is of the frame that ran, not idle', async (t) => {
  // It answered executed [], an idle event and frames_run 3, as if the new time had changed nothing.
  const d = scratchDir('entelechy-frames-');
  writeFileSync(join(d, 'scene.esn'), `kernel t.wave@1 {\n  grants time.read;\n  out r: field2<f32>;\n  each (x, y) { r = sin(time + x); }\n}\nnode wave: t.wave@1 { size = 8 x 8; }\noutput r <- wave.r;\n`);
  const w = await Session.open(join(d, 'scene.esn'), { workers: 1 });
  t.teardown(() => w.close());
  const req = async (o: object) => JSON.parse(await dispatch(w, JSON.stringify(o)));
  await req({ op: 'evaluate', time: 0.25 });
  const a = (await req({ op: 'evaluate', frames: 3, time: 0.6 })).ok;
  t.same([a.executed, a.reused, a.frames_run, a.time], [['wave'], [], 1, 0.6]);
  t.notOk(a.events.some((e: { kind: string }) => e.kind === 'idle'), 'no idle event: a frame ran');
  const again = (await req({ op: 'evaluate', frames: 2, time: 0.6 })).ok;
  t.same([again.executed, again.frames_run], [[], 0], 'nothing to run: none ran');
  t.ok(again.events.some((e: { kind: string }) => e.kind === 'idle'), 'and idle says why');
});
