// The farm under faults, with real processes: a worker SIGKILLed mid-frame (BullMQ's stalled-job
// check gives the frame to another worker) and Redis restarted mid-render (empty, as without
// persistence: everyone reconnects and the submitter adds its unwritten frames again). Either
// way the frames are the local render's, byte for byte.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE, entelechy, redisInstalled, RedisServer, SLOW_SCENE, startWorker, stopWorker } from './farm-processes.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

if (!redisInstalled()) throw new Error('these tests need redis-server (Debian\'s redis-server package; .ci/run installs it)');

/** A local render into `dir`, which also leaves the scene's modules in the test's cache. */
function localRender(args: string[], dir: string) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'render', ...args, '--workers', '1', '-o', join(dir, '%04d.png')], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  if (r.status !== 0) throw new Error(r.stderr);
}

function sameFiles(a: string, b: string): boolean {
  const [na, nb] = [readdirSync(a).sort(), readdirSync(b).sort()];
  return na.length > 0 && na.join() === nb.join() && na.every((n) => readFileSync(join(a, n)).equals(readFileSync(join(b, n))));
}

t.test('a worker SIGKILLed mid-frame: another worker renders the frame after the stall check', async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.stop());
  const dir = scratchDir('entelechy-farm-');
  writeFileSync(join(dir, 'slow.esn'), SLOW_SCENE);
  // Frames of a second or so, evaluated off the worker's event loop, which keeps renewing a lock
  // of 1.5 s until it is killed.
  const args = [join(dir, 'slow.esn'), '--size', '48x48', '--frames', '0:1'];
  localRender(args, join(dir, 'local'));
  const stall = ['--stall-ms', '1500'];
  const doomed = await startWorker(redis.url, stall);
  const farm = entelechy(['render', ...args, '--farm', redis.url, '--json', '-o', join(dir, 'farm', '%04d.png')]);
  const started = await doomed.line((l) => l.started);
  doomed.kill('SIGKILL');
  await doomed.exited;
  t.notOk(doomed.lines.some((l) => l.done), 'killed before it finished a frame');
  const rescuer = await startWorker(redis.url, stall);
  t.teardown(() => stopWorker(rescuer));
  t.same(await farm.exited, { code: 0, signal: null }, farm.stderr);
  t.ok(farm.lines.some((l) => l.frame === started.frame && l.stalled), `frame ${started.frame} was reported stalled`);
  t.ok(rescuer.lines.some((l) => l.done === started.started), 'and rendered by the other worker');
  t.ok(sameFiles(join(dir, 'local'), join(dir, 'farm')), 'the frames are the local render\'s, byte for byte');
});

t.test('Redis restarted (empty) mid-render: everyone reconnects and the render completes', async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.stop());
  const dir = scratchDir('entelechy-farm-');
  writeFileSync(join(dir, 'slow.esn'), SLOW_SCENE);
  const args = [join(dir, 'slow.esn'), '--size', '20x20', '--frames', '0:11'];
  localRender(args, join(dir, 'local'));
  const worker = await startWorker(redis.url);
  t.teardown(() => stopWorker(worker));
  const farm = entelechy(['render', ...args, '--farm', redis.url, '--json', '-o', join(dir, 'farm', '%04d.png')]);
  await farm.line((l) => l.frame !== undefined && farm.lines.filter((x) => 'frame' in x).length >= 3);
  const before = farm.lines.filter((l) => 'frame' in l).length;
  await redis.stop('SIGKILL');
  await redis.restart();
  t.same(await farm.exited, { code: 0, signal: null }, farm.stderr);
  const frames = farm.lines.filter((l) => 'frame' in l).map((l) => l.frame);
  t.ok(before < 12, `the restart came mid-render (after ${before} of 12 frames)`);
  t.same([...frames].sort((a, b) => a - b), [...Array(12).keys()], 'every frame written once');
  t.ok(sameFiles(join(dir, 'local'), join(dir, 'farm')), 'the frames are the local render\'s, byte for byte');
  t.ok(worker.lines.filter((l) => l.done).length >= 12 - before, 'the worker rendered after the restart');
  t.equal(worker.child.exitCode, null, 'the worker is still running');
  t.notMatch(farm.stderr, /Error|ECONNREFUSED/, 'the submitter printed no error while Redis was away');
  t.same(farm.lines.filter((l) => l.note).map((l) => l.redis), ['lost', 'back'], 'but said that it was away, and back');
  await stopWorker(worker);
  t.match(worker.lines.find((l) => l.stopping), { stopping: true, held: 0 }, 'a worker told to stop says so, with the jobs it finishes first');
});

t.test('Redis away for a while: the submitter and the worker say so again while it stays away, and go on when it is back', async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.stop());
  const dir = scratchDir('entelechy-farm-');
  writeFileSync(join(dir, 'slow.esn'), SLOW_SCENE);
  const quick = { ENTELECHY_FARM_QUIET_MS: '1500' };
  const worker = await startWorker(redis.url, [], quick);
  t.teardown(() => stopWorker(worker));
  const farm = entelechy(['render', join(dir, 'slow.esn'), '--size', '20x20', '--frames', '0:5', '--farm', redis.url, '--json', '-o', join(dir, 'farm', '%04d.png')], quick);
  t.teardown(() => farm.kill('SIGKILL'));
  await farm.line((l) => l.frame !== undefined);
  await redis.stop('SIGKILL');
  const away = await farm.line((l) => l.redis === 'away');
  t.match(away, { note: /^Redis at redis:\/\/127\.0\.0\.1:\d+ is still away after \d+ s: retrying; start it again, or stop with Ctrl-C$/, away_s: Number });
  t.match(await worker.line((l) => l.redis === 'away'), { note: /is still away after \d+ s/ }, 'the worker says so too');
  t.match(worker.lines.find((l) => l.redis === 'lost'), { note: /^lost the connection to Redis at .*: retrying; this worker takes frames again when it is back$/ });
  await redis.restart();
  t.same(await farm.exited, { code: 0, signal: null }, farm.stderr);
  t.same(readdirSync(join(dir, 'farm')).sort(), ['0000.png', '0001.png', '0002.png', '0003.png', '0004.png', '0005.png'], 'every frame written');
  const notes = farm.lines.filter((l) => l.redis).map((l) => l.redis);
  t.same([notes[0], notes.at(-1)], ['lost', 'back'], 'lost first, back last');
  t.notOk(farm.lines.some((l) => l.quiet_s !== undefined && farm.lines.indexOf(l) < farm.lines.findIndex((x) => x.redis === 'back') && farm.lines.indexOf(l) > farm.lines.findIndex((x) => x.redis === 'lost')), 'no "no worker" note while Redis was away');
  await worker.line((l) => l.redis === 'back');
});

t.test('a render no worker takes says so after a while (it waited without a word)', async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.stop());
  const dir = scratchDir('entelechy-farm-');
  const farm = entelechy(['render', join(ROOT, 'examples', 'rings', 'scene.esn'), '--size', '16x16', '--frames', '0:1', '--farm', redis.url, '--json', '-o', join(dir, '%04d.png')], { ENTELECHY_FARM_QUIET_MS: '1500' });
  const note = await farm.line((l) => l.note !== undefined);
  t.match(note, { note: /^no worker has taken or finished a job of this render for \d+ s: is `entelechy farm worker --redis redis:\/\/127\.0\.0\.1:\d+` running/ });
  farm.kill('SIGTERM');
  t.equal((await farm.exited).code, 143, 'stopped by SIGTERM: 128 + its number');
});
