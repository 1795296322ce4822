// render --shard I/N: the shards of a range together write exactly the unsharded render's files,
// byte for byte (a stateful scene's too: each shard runs from frame 0); the index and count come
// from a Kubernetes Indexed Job's or a Slurm array's environment; a re-run skips whole files.

import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseShard, shardFrames } from '../src/main/shard.js';
import { ROOT } from './helpers.js';
import { SLOW_SCENE } from './fixtures.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const CACHE = scratchDir('entelechy-cache-');

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}

const lines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l));

/** Every file of a folder, by name. */
function files(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).sort().map((n) => [n, readFileSync(join(dir, n))]));
}

function sameFolders(t: Test, a: string, b: string, what: string) {
  const [fa, fb] = [files(a), files(b)];
  t.same([...fa.keys()], [...fb.keys()], `${what}: the same files`);
  t.ok([...fa].every(([n, bytes]) => bytes.equals(fb.get(n)!)), `${what}: every file byte for byte`);
}

t.test('shards are contiguous runs that cover the range once', async (t) => {
  for (const [first, last, count] of [[0, 9, 3], [5, 6, 4], [0, 239, 7], [3, 3, 1]]) {
    const got: number[] = [];
    for (let index = 0; index < count; index++) {
      const s = shardFrames({ first, last }, { index, count });
      for (let f = s.first; f <= s.last; f++) got.push(f);
    }
    t.same(got, Array.from({ length: last - first + 1 }, (_, i) => first + i), `${first}:${last} in ${count}`);
  }
});

t.test('--shard reads the index (and count) from the scheduler\'s environment', async (t) => {
  t.same(parseShard('2/5', {}), { index: 2, count: 5 });
  t.same(parseShard('auto/4', { JOB_COMPLETION_INDEX: '3' }), { index: 3, count: 4 }, 'Kubernetes Indexed Job');
  t.same(parseShard('auto', { SLURM_ARRAY_TASK_ID: '7', SLURM_ARRAY_TASK_MIN: '5', SLURM_ARRAY_TASK_COUNT: '3' }), { index: 2, count: 3 }, 'a Slurm array counted from its min');
  t.same(parseShard('auto/3', { SLURM_ARRAY_TASK_ID: '0' }), { index: 0, count: 3 });
  t.throws(() => parseShard('auto', { JOB_COMPLETION_INDEX: '0' }), /does not put its count in the environment: give --shard auto\/N/);
  t.throws(() => parseShard('auto/3', {}), /neither JOB_COMPLETION_INDEX .* nor SLURM_ARRAY_TASK_ID/);
  t.throws(() => parseShard('3/3', {}), /index 3 is not below the count 3/);
  t.throws(() => parseShard('1-3', {}), /--shard takes INDEX\/COUNT/);
  t.throws(() => parseShard('auto/2', { JOB_COMPLETION_INDEX: 'x' }), /JOB_COMPLETION_INDEX is `x`, not a whole number/);
});

t.test('the union of 3 shards is the unsharded render, stateless and stateful', async (t) => {
  const frameScene = join(scratchDir('entelechy-shard-'), 'frames.esn');
  writeFileSync(frameScene, SLOW_SCENE);
  // rings: time only; frames.esn: the frame number; life: state.
  for (const [scene, size] of [['examples/rings/scene.esn', '64x48'], [frameScene, '8x8'], ['examples/life/scene.esn', '48x40']]) {
    const dir = scratchDir('entelechy-shard-');
    const base = ['render', scene, '--size', size, '--frames', '0:7', '--workers', '1', '--json'];
    const whole = cli([...base, '-o', join(dir, 'whole', '%04d.png')]);
    t.equal(whole.status, 0, whole.ended);
    const written: number[][] = [];
    for (let i = 0; i < 3; i++) {
      // Slurm numbers this array 1-3: the index is counted from SLURM_ARRAY_TASK_MIN.
      const r = cli([...base, '-o', join(dir, 'shards', '%04d.png'), '--shard', 'auto'], { SLURM_ARRAY_TASK_ID: String(i + 1), SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '3' });
      t.equal(r.status, 0, r.ended);
      written.push(lines(r.stdout).filter((l) => 'frame' in l).map((l) => l.frame));
    }
    t.same(written, [[0, 1], [2, 3, 4], [5, 6, 7]], `${scene}: each shard wrote its own run`);
    sameFolders(t, join(dir, 'whole'), join(dir, 'shards'), scene);
  }
});

t.test('a re-run skips whole files and renders the missing and the cut ones again', async (t) => {
  const dir = scratchDir('entelechy-shard-');
  const out = join(dir, 'out');
  const base = ['render', 'examples/life/scene.esn', '--size', '48x40', '--frames', '0:5', '--workers', '1', '--json', '-o', join(out, '%04d.png'), '--shard'];
  const first = cli([...base, 'auto/2'], { JOB_COMPLETION_INDEX: '1' });
  t.equal(first.status, 0, first.ended);
  t.match(first.stderr, /note: the scene has state, made frame by frame: shard 1\/2 runs frames 0-2 too, to write 3-5/, 'said with --json too');
  t.same(lines(first.stdout).filter((l) => 'frame' in l).map((l) => l.frame), [3, 4, 5]);
  const before = files(out);
  rmSync(join(out, '0004.png'));
  truncateSync(join(out, '0005.png'), 100); // as a copy cut short would leave it
  writeFileSync(join(out, '0003.png.part'), 'someone else\'s');
  const again = cli([...base, '1/2']);
  t.equal(again.status, 0, again.ended);
  const seen = lines(again.stdout);
  t.same(seen.filter((l) => 'frame' in l).map((l) => [l.frame, Boolean(l.skipped)]), [[3, true], [4, false], [5, false]], 'the whole one skipped, the others rendered');
  t.equal(seen.at(-1).skipped, 1);
  rmSync(join(out, '0003.png.part'));
  const after = files(out);
  t.ok([...before].every(([n, b]) => b.equals(after.get(n)!)), 'the same bytes as the first run (life ran from frame 0 to remake 4 and 5)');
  const done = cli([...base, '1/2']);
  t.same(lines(done.stdout).filter((l) => 'frame' in l).map((l) => l.skipped), [true, true, true], 'all there: nothing rendered');
  const forced = cli([...base, '1/2', '--overwrite']);
  t.same(lines(forced.stdout).filter((l) => 'frame' in l).map((l) => Boolean(l.skipped)), [false, false, false], '--overwrite renders them again');
  // A frame damaged since (bytes flipped inside its image data, its length kept) was kept as done.
  const damaged = readFileSync(join(out, '0004.png'));
  const idat = damaged.indexOf('IDAT', 0, 'latin1');
  for (let i = idat + 8; i < idat + 28; i++) damaged[i] ^= 0xff;
  writeFileSync(join(out, '0004.png'), damaged);
  const mended = cli([...base, '1/2']);
  t.same(lines(mended.stdout).filter((l) => 'frame' in l).map((l) => [l.frame, Boolean(l.skipped)]), [[3, true], [4, false], [5, true]], 'the damaged one rendered again');
  t.ok(readFileSync(join(out, '0004.png')).equals(before.get('0004.png')!), 'and whole again');
});

t.test('--shard needs --frames and numbered files', async (t) => {
  const a = cli(['render', 'examples/rings/scene.esn', '--shard', '0/2']);
  t.equal(a.status, 1);
  t.match(a.stderr, /--shard splits a range of frames: give --frames FIRST:LAST too/);
  const b = cli(['render', 'examples/rings/scene.esn', '--frames', '0:3', '--shard', '0/2', '-o', 'x.mp4']);
  t.equal(b.status, 1);
  t.match(b.stderr, /--shard writes numbered images: give -o out\/%04d\.png/);
  t.notMatch(a.stderr + b.stderr, /internal error|at .*\.js/);
});
