// render --farm for what cannot be split into independent frames, with real processes (a
// redis-server of this test's own, `entelechy farm worker`s, ffmpeg): a scene with state runs in
// order on one worker; --input images (one still, or a file per frame) travel with the jobs; a
// video gets the farm's frames in order. Each is the local render's output, byte for byte.

import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { entelechy, localRender, startFarm, type Proc } from './farm-processes.js';
import { scratchDir } from './scratch.js';

const { redis, workers } = await startFarm(t);

async function farmRender(args: string[]): Promise<Proc> {
  const p = entelechy(['render', ...args, '--farm', redis.url, '--json']);
  await p.exited;
  return p;
}

function sameFiles(a: string, b: string): boolean {
  const [na, nb] = [readdirSync(a).sort(), readdirSync(b).sort()];
  return na.length > 0 && na.join() === nb.join() && na.every((n) => readFileSync(join(a, n)).equals(readFileSync(join(b, n))));
}

const doneLines = (render: string) => workers.map((w) => w.lines.filter((l) => l.render === render && l.done));

t.test('a scene with state: its frames run in order from frame 0 on one worker, the local render\'s frames', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  const args = ['examples/life/scene.esn', '--size', '48x48', '--frames', '4:11'];
  localRender([...args, '-o', join(dir, 'local', '%04d.png')]);
  const farm = await farmRender([...args, '-o', join(dir, 'farm', '%04d.png')]);
  t.equal(farm.child.exitCode, 0, farm.stderr);
  t.same(farm.lines[0].sequence, { first: 4, last: 11, frames: 8 }, 'submitted as one sequence of 8 frames');
  t.same(farm.lines.filter((l) => 'frame' in l).map((l) => l.frame).sort((a, b) => a - b), [4, 5, 6, 7, 8, 9, 10, 11], 'each frame written once');
  t.ok(sameFiles(join(dir, 'local'), join(dir, 'farm')), 'frames 4-11 are the local render\'s, byte for byte (each made from the state of the one before)');
  const done = doneLines(farm.lines[0].submitted);
  t.same(done.map((d) => d.length).sort(), [0, 1], 'one job, on one of the two workers');
});

t.test('--input images travel with the jobs: a still image and a file per frame', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  // A sequence of images to feed in: frames of another scene.
  localRender(['examples/rings/scene.esn', '--size', '40x30', '--frames', '0:5', '-o', join(dir, 'in', '%04d.png')]);
  const sequence = ['examples/photo/scene.esn', '--frames', '0:5', '--input', `photo=${join(dir, 'in', '%04d.png')}`];
  localRender([...sequence, '-o', join(dir, 'seq-local', '%04d.png')]);
  const seq = await farmRender([...sequence, '-o', join(dir, 'seq-farm', '%04d.png')]);
  t.equal(seq.child.exitCode, 0, seq.stderr);
  t.ok(sameFiles(join(dir, 'seq-local'), join(dir, 'seq-farm')), 'a file per frame: the local render\'s frames, byte for byte');

  const still = ['examples/photo/scene.esn', '--frames', '0:2', '--param', 'exposure=1', '--input', 'photo=examples/photo/photo.jpg'];
  localRender([...still, '-o', join(dir, 'still-local', '%04d.png')]);
  const one = await farmRender([...still, '-o', join(dir, 'still-farm', '%04d.png')]);
  t.equal(one.child.exitCode, 0, one.stderr);
  t.ok(sameFiles(join(dir, 'still-local'), join(dir, 'still-farm')), 'a still image: the local render\'s frames, byte for byte');

  const missing = await farmRender(['examples/photo/scene.esn', '--frames', '0:7', '--input', `photo=${join(dir, 'in', '%04d.png')}`, '-o', join(dir, 'x', '%04d.png')]);
  t.equal(missing.child.exitCode, 1);
  t.match(missing.stderr, /frame 6's image `.*0006\.png` is not there \(the render's frames are 0 to 7\)/, 'a missing file of the sequence: named, with its frame');
  t.notMatch(missing.stderr, /at .*\.js:\d+/, 'no stack trace');
  t.same(missing.lines.filter((l) => l.submitted), [], 'nothing submitted');
});

t.test('a video from the farm\'s frames, in order: the local render\'s video, byte for byte', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  const args = ['examples/rings/scene.esn', '--size', '64x48', '--frames', '0:11'];
  localRender([...args, '-o', join(dir, 'local.mp4')]);
  const farm = await farmRender([...args, '-o', join(dir, 'farm.mp4')]);
  t.equal(farm.child.exitCode, 0, farm.stderr);
  t.same(farm.lines.filter((l) => 'frame' in l && !l.skipped).map((l) => l.frame), [...Array(12).keys()], 'frames handed to ffmpeg in order, whatever order the workers finished them');
  t.ok(readFileSync(join(dir, 'farm.mp4')).equals(readFileSync(join(dir, 'local.mp4'))), 'the same video file');
  t.same(readdirSync(dir).sort(), ['farm.mp4', 'local.mp4'], 'no temporary file left');

  // A stateful scene's video: its sequence, into ffmpeg.
  const life = ['examples/life/scene.esn', '--size', '48x48', '--frames', '0:9'];
  localRender([...life, '-o', join(dir, 'life-local.gif')]);
  const lifeFarm = await farmRender([...life, '-o', join(dir, 'life-farm.gif')]);
  t.equal(lifeFarm.child.exitCode, 0, lifeFarm.stderr);
  t.ok(readFileSync(join(dir, 'life-farm.gif')).equals(readFileSync(join(dir, 'life-local.gif'))), 'life as a GIF: the local render\'s file');
});
