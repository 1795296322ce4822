// A render stopped mid-way (SIGINT, SIGTERM or SIGHUP, as Ctrl-C, a scheduler or a closed terminal sends): a tiled one stops
// between tiles, a whole one between frames (on this thread: --workers 1), and neither leaves a
// partial file, temporary or named; frames finished before it stay.

import t from 'tap';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants } from 'node:os';
import { isCompletePng } from '../src/main/shard.js';
import { spawnSync } from 'node:child_process';
import { CACHE, entelechy, SLOW_SCENE } from './farm-processes.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const dir = scratchDir('entelechy-tiles-cancel-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'slow.esn'), SLOW_SCENE);

// The whole render ended where the signal found it (Node's default), leaving its frame's
// temporary file, and said nothing (status 130).
// SIGHUP (the terminal or ssh session closed) ended it where it stood, its temporary file left.
for (const [signal, tiled] of [['SIGINT', true], ['SIGTERM', true], ['SIGINT', false], ['SIGHUP', false]] as const) {
  t.test(`a ${tiled ? 'tiled' : 'whole'} render stopped by ${signal} after its first frame`, async (t) => {
    const out = join(dir, `${signal}-${tiled ? 'tiled' : 'whole'}`);
    // Frames of a second or so apiece (16 tiles each when tiled): the signal comes while frame 1 renders.
    const p = entelechy(['render', join(dir, 'slow.esn'), '--size', '64x64', ...(tiled ? ['--tile', '16x16'] : []), '--frames', '0:9', '--workers', '1', '--json', '-o', join(out, '%04d.png')], { ENTELECHY_CACHE_DIR: CACHE });
    await p.line((l) => l.frame === 0);
    p.kill(signal);
    const ended = await p.exited;
    // As a shell expects of a command a signal stopped: 128 + its number (it exited 1).
    t.same(ended, { code: 128 + constants.signals[signal], signal: null }, `ended by itself, not by the signal\n${p.stderr}`);
    t.match(p.stderr, new RegExp(`interrupted \\(${signal}\\): stopped at frame (\\d+); its file was not written`), 'says where it stopped');
    t.notMatch(p.stderr, /at .*\.js:\d+/, 'no stack trace');
    const stopped = Number(/stopped at frame (\d+)/.exec(p.stderr)?.[1]);
    const files = readdirSync(out).sort();
    t.same(files.filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
    t.ok(stopped >= 1 && stopped <= 9, `stopped mid-way, at frame ${stopped}`);
    t.same(files, [...Array(Number.isInteger(stopped) ? stopped : 0).keys()].map((f) => `${String(f).padStart(4, '0')}.png`), 'the frames before it, and no other');
    t.ok(files.every((f) => isCompletePng(join(out, f), 64, 64)), 'each of them a whole PNG');
    t.same(p.lines.at(-1)?.error?.frame, stopped, '--json: the error line names the frame');
  });
}

// A small scene's frame ran on this thread (no pool below the pool's size), where no signal is seen
// until the frame ends: a runaway loop's render ran on for minutes after Ctrl-C and SIGTERM.
const RUNAWAY = `kernel k.a@1 {
  out result: field2<vec4>;
  each (x, y) {
    let s = 0.0;
    for (let i = 0; i < 10000000; i++) { s += sin(i * 0.001 + x); }
    result = vec4(s, 0.0, 0.0, 1.0);
  }
}
node n: k.a@1 { size = 64 x 64; }
output result <- n.result;
`;
writeFileSync(join(dir, 'runaway.esn'), RUNAWAY);
for (const workers of ['1', '2'])
  t.test(`a small render's long frame stops at SIGINT, mid-frame (--workers ${workers})`, async (t) => {
    const file = join(dir, `runaway-${workers}.png`);
    const p = entelechy(['render', join(dir, 'runaway.esn'), '--workers', workers, '-o', file], { ENTELECHY_CACHE_DIR: CACHE, ENTELECHY_TIMELINE: '1' });
    // Its one frame takes hours (4096 elements x 10^7 steps, each under the fuel of a loop): the signal comes while it runs.
    while (!p.stderr.includes('timeline frame 0 begins') && (await Promise.race([p.exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))])) === false);
    await new Promise((r) => setTimeout(r, 1000));
    p.kill('SIGINT');
    const ended = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('still running 60 s after SIGINT'), 60_000))]);
    if (typeof ended === 'string') p.kill('SIGKILL');
    t.same(ended, { code: 130, signal: null }, `ended by itself, soon after the signal\n${p.stderr}`);
    t.match(p.stderr, /interrupted \(SIGINT\): stopped at frame 0; its file was not written/);
    t.notMatch(p.stderr, /timeline frame 0 evaluated/, 'the frame did not run to its end');
    t.same(readdirSync(dir).filter((f) => f.startsWith(`.runaway-${workers}`) || f === `runaway-${workers}.png`), [], 'no file, whole or temporary');
  });

// `render --json | head -1`: the reader left, and Node threw its EPIPE as an unhandled 'error'
// event, a stack trace, while the render went on to its end or died mid-frame.
t.test('a render whose stdout is closed stops as an interrupted one, without a stack trace', async (t) => {
  const out = join(dir, 'pipe-closed');
  const p = entelechy(['render', join(dir, 'slow.esn'), '--size', '64x64', '--frames', '0:9', '--workers', '1', '--json', '-o', join(out, '%04d.png')], { ENTELECHY_CACHE_DIR: CACHE });
  await p.line((l) => l.frame === 0);
  p.child.stdout!.destroy();
  const ended = await p.exited;
  t.same(ended, { code: 1, signal: null }, p.stderr);
  t.match(p.stderr, /interrupted \(stdout was closed\): stopped at frame \d+; its file was not written/);
  t.notMatch(p.stderr, /EPIPE|node:events|at .*\.js:\d+/, 'no stack trace');
  const files = readdirSync(out);
  t.same(files.filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
  t.ok(files.length < 10 && files.every((f) => isCompletePng(join(out, f), 64, 64)), `stopped early, each frame written whole (${files.length})`);
});

t.test('help piped into a reader that stops early ends quietly', async (t) => {
  const r = spawnSync('sh', ['-c', `"${process.execPath}" bin/entelechy.js help serve | head -c 10`], { cwd: ROOT, encoding: 'utf8' });
  t.equal(r.stdout, 'serve (com');
  t.equal(r.stderr, '', 'no stack trace');
});

// Frames of a range are written on PNG threads while the next ones render: when one could not be
// written, the threads ended with the frames after it mid-file, and their temporary files stayed
// (a full disk left them, as this folder in the way of frame 1 did). The render's stop sweeps them.
t.test('a range whose frame cannot be written leaves no temporary file of the frames being written beside it', async (t) => {
  const out = join(dir, 'in-the-way');
  mkdirSync(join(out, '0001.png'), { recursive: true });
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'render', join(ROOT, 'examples', 'rings', 'scene.esn'), '--size', '6000x6000', '--frames', '0:5', '-o', join(out, '%04d.png')], { encoding: 'utf8', env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  t.equal(r.status, 1);
  t.match(r.stderr, /frame 1: cannot write `.*0001\.png`: it is a folder \(EISDIR\)/);
  const files = readdirSync(out).sort();
  t.same(files.filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
  t.same(files.slice(0, 2), ['0000.png', '0001.png'], 'frame 0, and the folder in the way');
  // Frames after it that were written whole before the failure was seen may stay, each whole.
  t.ok(files.filter((f) => f !== '0001.png').every((f) => isCompletePng(join(out, f), 6000, 6000)), `every file there is a whole frame: ${files.join(', ')}`);
});

// A pipeline reading --json saw nothing during a long tiled frame (a line came only once a frame
// was written): now a progress line comes as tile rows finish, at most every 250 ms.
t.test('a tiled render with --json tells its progress within a frame', async (t) => {
  const out = join(dir, 'progress');
  // 128 x 128 in 64 tiles of 16 x 16 (8 rows of them): a frame of seconds, so rows end well past 250 ms apart from its start.
  const p = entelechy(['render', join(dir, 'slow.esn'), '--size', '128x128', '--tile', '16x16', '--frames', '0:0', '--workers', '1', '--json', '-o', join(out, '%04d.png')], { ENTELECHY_CACHE_DIR: CACHE });
  t.same(await p.exited, { code: 0, signal: null }, p.stderr);
  const firstFrame = p.lines.findIndex((l) => l.frame === 0 && l.file);
  const progress = p.lines.slice(0, firstFrame).filter((l) => l.progress);
  t.ok(progress.length >= 1, `progress lines before frame 0 was written: ${JSON.stringify(progress)}`);
  t.ok(progress.every((l) => l.progress.frame === 0 && l.progress.of === 128 && l.progress.rows > 0 && l.progress.rows <= 128 && l.frame === undefined), 'each names its frame and rows done of all, and is not a frame line');
});
