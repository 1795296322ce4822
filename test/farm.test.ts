// render --farm with real processes: a redis-server of this test's own, `entelechy farm worker`s
// and submitters. The frames are the local render's, byte for byte; two renders at once keep to
// their own frames; a scene's error fails the render at once, not retried, with file:line:column;
// a submitter that goes away takes its jobs with it.

import t from 'tap';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hangsAtFrame } from './fixtures.js';
import { CACHE, entelechy, eventually, localRender, SLOW_SCENE, startFarm, type Proc } from './farm-processes.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const { redis, workers } = await startFarm(t);

function files(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).sort().map((n) => [n, readFileSync(join(dir, n))]));
}

function sameFiles(a: string, b: string): boolean {
  const [fa, fb] = [files(a), files(b)];
  return fa.size > 0 && [...fa.keys()].join() === [...fb.keys()].join() && [...fa].every(([n, bytes]) => bytes.equals(fb.get(n)!));
}

const frameLines = (p: Proc) => p.lines.filter((l) => 'frame' in l);

t.test('frames rendered on two workers are the local render, byte for byte; a re-run skips them', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  const args = ['examples/mandelbrot/scene.esn', '--size', '96x64', '--frames', '0:11', '--param', 'zoom=2'];
  localRender([...args, '-o', join(dir, 'local', '%04d.png')]);
  const farm = entelechy(['render', ...args, '--farm', redis.url, '--json', '-o', join(dir, 'farm', '%04d.png')]);
  t.same(await farm.exited, { code: 0, signal: null }, farm.stderr);
  t.same(frameLines(farm).map((l) => l.frame).sort((a, b) => a - b), [...Array(12).keys()], 'each frame reported once');
  t.ok(sameFiles(join(dir, 'local'), join(dir, 'farm')), 'the same files, byte for byte');
  t.equal(farm.lines.at(-1).done, true);
  t.same(await redis.counts(), { waiting: 0, active: 0, delayed: 0, prioritized: 0, completed: 0, failed: 0 }, 'no job left in Redis');

  rmSync(join(dir, 'farm', '0005.png'));
  const again = entelechy(['render', ...args, '--farm', redis.url, '--json', '-o', join(dir, 'farm', '%04d.png')]);
  t.same(await again.exited, { code: 0, signal: null }, again.stderr);
  t.same(frameLines(again).filter((l) => !l.skipped).map((l) => l.frame), [5], 'only the missing frame rendered again');
  t.ok('submitted' in again.lines[0], 'the first line is `submitted`, the skipped frames after it');
  t.equal(frameLines(again).filter((l) => l.skipped).length, frameLines(farm).length - 1, 'every other frame told as skipped');
  t.ok(sameFiles(join(dir, 'local'), join(dir, 'farm')));
  const none = entelechy(['render', ...args, '--farm', redis.url, '--json', '-o', join(dir, 'farm', '%04d.png')]);
  t.same(await none.exited, { code: 0, signal: null }, none.stderr);
  t.equal(frameLines(none).filter((l) => l.skipped).length, frameLines(farm).length, 'all done before: each told as skipped, nothing submitted');
});

t.test('one picture in bands over the farm, in tiles: the local render\'s file, byte for byte', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  // 2048 wide: strips of 511 rows, bands of 2 strips: rows 0-1021 and 1022-1099.
  const args = ['examples/mandelbrot/scene.esn', '--size', '2048x1100'];
  const local = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'render', ...args, '-o', join(dir, 'local.png'), '--workers', '1'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  t.equal(local.status, 0, local.stderr);
  const farm = entelechy(['render', ...args, '--tile', '700x300', '--farm', redis.url, '--json', '-o', join(dir, 'farm.png')]);
  t.same(await farm.exited, { code: 0, signal: null }, farm.stderr);
  t.same(farm.lines.filter((l) => 'band' in l).map((l) => l.rows).sort((a, b) => a[0] - b[0]), [[0, 1022], [1022, 1100]], 'two bands of whole strips');
  t.ok(readFileSync(join(dir, 'farm.png')).equals(readFileSync(join(dir, 'local.png'))), 'the same file, byte for byte');
  t.same(readdirSync(dir).sort(), ['farm.png', 'local.png'], 'no temporary file left');
});

t.test('two renders at once: each writes its own frames only', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  writeFileSync(join(dir, 'frames.esn'), SLOW_SCENE); // reads the frame number
  const a = [join(dir, 'frames.esn'), '--size', '16x16', '--frames', '0:9'];
  const b = ['examples/mandelbrot/scene.esn', '--size', '80x60', '--frames', '0:9', '--param', 'zoom=3'];
  localRender([...a, '-o', join(dir, 'a-local', '%04d.png')]);
  localRender([...b, '-o', join(dir, 'b-local', '%04d.png')]);
  const [fa, fb] = [entelechy(['render', ...a, '--farm', redis.url, '--json', '-o', join(dir, 'a', '%04d.png')]), entelechy(['render', ...b, '--farm', redis.url, '--json', '-o', join(dir, 'b', '%04d.png')])];
  t.same(await fa.exited, { code: 0, signal: null }, fa.stderr);
  t.same(await fb.exited, { code: 0, signal: null }, fb.stderr);
  t.ok(sameFiles(join(dir, 'a-local'), join(dir, 'a')), 'the first render has its frames (each reading its frame number)');
  t.ok(sameFiles(join(dir, 'b-local'), join(dir, 'b')), 'the mandelbrot render has the mandelbrot frames');
  t.not(fa.lines.at(-1).farm.render, fb.lines.at(-1).farm.render, 'two renders');
});

t.test('output and Redis URL mistakes are refused before any job is added, in the words a local render uses', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  writeFileSync(join(dir, 'taken'), 'a file where a folder should be');
  mkdirSync(join(dir, 'frames', '0001.png'), { recursive: true });
  const scene = join(ROOT, 'examples', 'rings', 'scene.esn');
  const before = await redis.counts();
  const refused: [string[], RegExp][] = [
    [['-o', join(dir, 'taken', '%04d.png')], /frame 0: cannot write `.*taken\/0000\.png`: a file is in the way of its folder \(EEXIST\)/],
    [['-o', join(dir, 'frames', '%04d.png')], /frame 1: cannot write `.*frames\/0001\.png`: it is a folder \(EISDIR\)/],
    [['-o', '/proc/entelechy-nope/%04d.png'], /frame 0: cannot write `\/proc\/entelechy-nope\/0000\.png`: its folder `\/proc\/entelechy-nope` cannot be made there/],
  ];
  for (const [args, message] of refused) {
    const r = entelechy(['render', scene, '--frames', '0:2', '--size', '16x16', '--farm', redis.url, ...args]);
    t.equal((await r.exited).code, 1, args.join(' '));
    t.match(r.stderr, message);
    t.notMatch(r.stderr, /internal error/);
  }
  t.same(await redis.counts(), before, 'no job was added');
  const port = entelechy(['render', scene, '--frames', '0:2', '--farm', 'redis://127.0.0.1:99999', '-o', join(dir, 'p', '%04d.png')]);
  t.equal((await port.exited).code, 1);
  t.match(port.stderr, /redis:\/\/127\.0\.0\.1:99999: port 99999 is out of range 1\.\.65535/, 'a port out of range (it was an internal error)');
  const db = entelechy(['render', scene, '--frames', '0:2', '--farm', `${redis.url}/99`, '-o', join(dir, 'd', '%04d.png')]);
  t.equal((await db.exited).code, 1);
  t.match(db.stderr, /has no database 99 \(ERR DB index is out of range\)/, 'a database the server does not have (it was taken silently)');
  // A port that takes the connection and never answers held the render and the worker for ever,
  // without a word; one where another service answers gave the Redis library's "Please report this".
  const silent = createServer(() => undefined).listen(0, '127.0.0.1');
  const http = createServer((c) => c.end('<html>not redis</html>\r\n')).listen(0, '127.0.0.1');
  t.teardown(() => {
    silent.close();
    http.close();
  });
  await Promise.all([once(silent, 'listening'), once(http, 'listening')]);
  const portOf = (server: Server) => (server.address() as AddressInfo).port;
  const env = { ENTELECHY_TEST_REDIS_ANSWER_MS: '1500' };
  for (const args of [['render', scene, '--frames', '0:2', '--farm', `redis://127.0.0.1:${portOf(silent)}`, '-o', join(dir, 's', '%04d.png')], ['farm', 'worker', '--redis', `redis://127.0.0.1:${portOf(silent)}`]]) {
    const r = entelechy(args, env);
    t.equal((await r.exited).code, 1, args[0]);
    t.match(r.stderr, /Redis at redis:\/\/127\.0\.0\.1:\d+ took the connection but did not answer within 1\.5 s: is redis-server listening there, and not another service/, `${args[0]}: said, not held`);
  }
  const other = entelechy(['render', scene, '--frames', '0:2', '--farm', `redis://127.0.0.1:${portOf(http)}`, '-o', join(dir, 'h', '%04d.png')], env);
  t.equal((await other.exited).code, 1);
  t.match(other.stderr, /something other than Redis answers at redis:\/\/127\.0\.0\.1:\d+: its reply is not Redis's protocol; name the port redis-server listens on/);
  t.notMatch(other.stderr, /Please report this/);
});

t.test('a scene error fails at once: on the submitter before any job, or on a worker, not retried', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  writeFileSync(join(dir, 'broken.esn'), 'kernel k@1 {\n  out r: field2<f32>;\n  each (x, y) { r = nope; }\n}\nnode n: k@1 { size = 8 x 8; }\noutput r <- n.r;\n');
  const broken = entelechy(['render', join(dir, 'broken.esn'), '--frames', '0:3', '--farm', redis.url, '-o', join(dir, 'b', '%d.png')]);
  t.equal((await broken.exited).code, 1);
  t.match(broken.stderr, /broken\.esn:3:\d+: error: .*nope/, 'the diagnostic, with file:line:column');

  writeFileSync(join(dir, 'hang.esn'), hangsAtFrame(2));
  const hang = entelechy(['render', join(dir, 'hang.esn'), '--frames', '0:5', '--farm', redis.url, '--json', '-o', join(dir, 'h', '%d.png')]);
  t.equal((await hang.exited).code, 1, hang.stderr);
  t.match(hang.stderr, /hang\.esn:\d+:\d+: frame 2: node `hang` ran out of fuel/, 'the worker\'s error, with the node\'s file:line:column');
  t.notMatch(hang.stderr, /internal error|at .*\.js:\d+/);
  t.match(hang.lines.at(-1).error.message, /frame 2: node `hang` ran out of fuel/);
  const render = hang.lines[0].submitted;
  const seen = () => workers.flatMap((w) => w.lines).filter((l) => l.render === render);
  await eventually(async () => seen().some((l) => l.failed), Boolean);
  t.same(seen().filter((l) => l.frame === 2).map((l) => Object.keys(l)[0]), ['started', 'failed'], 'frame 2 ran once and failed: not retried');
  const left = await eventually(() => redis.counts(), (c) => c.active === 0);
  t.equal(left.waiting + left.delayed, 0, 'the render\'s other jobs were removed');
});

t.test('a submitter that stops removes its jobs; one killed outright has them dropped', async (t) => {
  const dir = scratchDir('entelechy-farm-');
  writeFileSync(join(dir, 'slow.esn'), SLOW_SCENE);
  const args = ['render', join(dir, 'slow.esn'), '--size', '32x32', '--frames', '0:39', '--farm', redis.url, '--json'];

  const stopped = entelechy([...args, '-o', join(dir, 'a', '%d.png')]);
  await stopped.line((l) => 'frame' in l);
  stopped.kill('SIGTERM');
  t.equal((await stopped.exited).code, 143, 'as a shell expects: 128 + SIGTERM');
  t.match(stopped.stderr, /interrupted: the render's jobs were removed from the farm/);
  const left = await redis.counts();
  t.equal(left.waiting + left.delayed, 0, 'no job of it waits once it has exited');
  // The jobs workers held went on; their results are not kept for a submitter that is gone.
  await eventually(() => redis.counts(), (c) => c.active === 0);
  t.same(await redis.keys(`entelechy:result:${stopped.lines[0].submitted}-*`), [], 'no result of it is left in Redis');

  const killed = entelechy([...args, '-o', join(dir, 'b', '%d.png')], { ENTELECHY_FARM_ALIVE_MS: '1500' });
  await killed.line((l) => 'frame' in l);
  killed.kill('SIGKILL');
  await killed.exited;
  const render = killed.lines[0].submitted;
  await eventually(() => redis.counts(), (c) => c.waiting + c.active + c.delayed === 0);
  const seen = workers.flatMap((w) => w.lines).filter((l) => l.render === render);
  const rendered = seen.filter((l) => l.done).length;
  const dropped = seen.filter((l) => l.failed && /render \w+ was abandoned: its submitter is gone/.test(l.message)).length;
  t.ok(dropped > 0, `workers dropped the jobs of the submitter that was killed (${rendered} of 40 rendered, ${dropped} dropped)`);
  t.equal(rendered + dropped, 40, 'each of its 40 jobs was rendered (before its key expired) or dropped, none left');
});
