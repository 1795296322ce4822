// The command line: render writes a PNG, check reports file:line:column, and no malformed scene
// ever makes a stack trace reach the user.

import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePng } from '../src/main/image.js';
import { frameFile, framePatternCount } from '../src/main/frame-pattern.js';
import { ROOT, sameBytes } from './helpers.js';
import { hangsAtFrame } from './fixtures.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');

// Compiled modules are cached in a folder of this test's own (ENTELECHY_CACHE_DIR).
const CACHE = scratchDir('entelechy-cache-');

function cli(args: string[], cwd = ROOT, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 300_000, killSignal: 'SIGKILL', env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE, ...env } });
  // How the run ended, for a failing assertion's message: a signal leaves status null.
  const ended = `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}${r.error ? `, ${r.error.message}` : ''}\n${r.stderr}`;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended };
}

t.test('render writes the output as a PNG', async (t) => {
  const dir = scratchDir('entelechy-');
  const out = join(dir, 'rings.png');
  const r = cli(['render', 'examples/rings/scene.esn', '-o', out, '--time', '0.25']);
  t.equal(r.status, 0, r.ended);
  const png = decodePng(readFileSync(out));
  t.equal(png.width, 256);
  t.equal(png.height, 256);
  const px = (x: number, y: number) => Array.from(png.rgba.slice((y * 256 + x) * 4, (y * 256 + x) * 4 + 4));
  t.equal(px(0, 0)[3], 255, 'opaque');
  t.notSame(px(128, 128), px(140, 128), 'rings vary along the radius');
  t.same(px(128, 100), px(100, 128), 'and are round: equal at equal radii');

  const sized = join(dir, 'small.png');
  const r2 = cli(['render', 'examples/mandelbrot/scene.esn', '-o', sized, '--size', '64x32']);
  t.equal(r2.status, 0, r2.ended);
  const small = decodePng(readFileSync(sized));
  t.same([small.width, small.height], [64, 32], '--size sets the size');
});

t.test('render refuses an unknown output, a missing file and a bad size clearly', async (t) => {
  const a = cli(['render', 'examples/rings/scene.esn', '--output', 'nope', '-o', '/tmp/x.png']);
  t.equal(a.status, 1);
  t.match(a.stderr, /has no output `nope`; its outputs: result/);
  const b = cli(['render', 'examples/nothing/scene.esn']);
  t.equal(b.status, 1);
  t.match(b.stderr, /cannot open/);
  const c = cli(['render', 'examples/rings/scene.esn', '--size', 'big']);
  t.equal(c.status, 1);
  t.match(c.stderr, /--size takes WIDTHxHEIGHT/);
});

t.test('render tells each mistake of its arguments, and what to give instead', async (t) => {
  const refused = (args: string[], message: RegExp) => {
    const r = cli(args);
    t.equal(r.status, 1, `${args.join(' ')}: ${r.ended}`);
    t.match(r.stderr, message, args.join(' '));
    t.notMatch(r.stderr, /internal error|\n\s+at /, 'no stack trace');
  };
  refused(['render'], /name a scene: entelechy render <scene\.esn>/);
  refused(['render', 'examples/rings'], /`examples\/rings` is a folder: name the scene document in it, e\.g\. examples\/rings\/scene\.esn/);
  refused(['render', 'examples/photo/photo.jpg'], /`examples\/photo\/photo\.jpg` is not a scene: a scene is a \.esn document, e\.g\. examples\/photo\/scene\.esn/);
  refused(['serve', 'examples/photo/photo.jpg'], /`examples\/photo\/photo\.jpg` is not a scene/);
  refused(['render', 'examples/rings/scene.esn', '--time', 'abc'], /--time must be a number of seconds, e\.g\. --time 1\.5; got `abc`/);
  refused(['render', 'examples/rings/scene.esn', '--workers=x'], /--workers takes a whole number of threads from 1 to 256; got `x`/);
  // PNG bytes were written under these names.
  refused(['render', 'examples/rings/scene.esn', '-o', join(tmpdir(), 'entelechy-never-written.jpg')], /-o .*\.jpg: render writes PNG pictures \(name the file \.png\), videos \(\.mp4, \.webm, \.gif, through ffmpeg\) or NumPy arrays/);
  refused(['render', 'examples/rings/scene.esn', '-o', join(tmpdir(), 'entelechy-never-written')], /render writes PNG pictures/);
  refused(['render', 'examples/rings/scene.esn', '--workers', '0'], /--workers takes a whole number of threads from 1 to 256/);
  refused(['render', 'examples/rings/scene.esn', '--workers', '1000'], /--workers takes a whole number of threads from 1 to 256; got `1000`/);
  refused(['serve', 'examples/rings/scene.esn', '--workers', '999'], /--workers takes a whole number of threads from 1 to 256; got `999`/);
  // Each of these was taken without a word, and did nothing.
  refused(['render', 'examples/rings/scene.esn', '--fps', '10', '-o', join(tmpdir(), 'entelechy-never-written.png')], /--fps sets the rate of --frames .*: add --frames FIRST:LAST, or leave --fps out/);
  refused(['render', 'examples/rings/scene.esn', '--param', '-o', join(tmpdir(), 'entelechy-never-written.png')], /--param names no param: give NAME=VALUE/);
  refused(['render', 'examples/rings/scene.esn', '--input', '-o', join(tmpdir(), 'entelechy-never-written.png')], /--input names no input: give NAME=FILE/);
  // A frame number pattern where it cannot number anything was kept in the name, literally.
  refused(['render', 'examples/rings/scene.esn', '-o', join(tmpdir(), 'entelechy-never-written', '%04d.png')], /names numbered files, but this renders one frame: add --frames FIRST:LAST, or name one file, e\.g\. -o .*frame\.png/);
  refused(['render', 'examples/rings/scene.esn', '--frames', '0:1', '-o', join(tmpdir(), 'entelechy-never-written', 'x%d%d.png')], /has 2 frame number patterns: give one/);
  refused(['render', 'examples/rings/scene.esn', '--frames', '0:1', '-o', join(tmpdir(), 'entelechy-never-written', 'v%d.mp4')], /a video is one file: name it without a frame number pattern/);
  // The photo's nodes follow its picture: --size was ignored without a word.
  refused(['render', 'examples/photo/scene.esn', '--size', '100x50'], /--size 100x50 sizes no node of examples\/photo\/scene\.esn: its 2-D nodes \(grade\) take their size from what they read \(240 x 160\): leave --size out, or change the size of what they read: input `photo` declares `size 240 x 160` \(scene\.esn\); edit that/);
  refused(['render', 'examples/rings/scene.esn', '--size', '64x64x4'], /--size 64x64x4 has 3 axes, but no node of examples\/rings\/scene\.esn has 3: its nodes are 2-D; give WIDTHxHEIGHT/);
  refused(['render', 'examples/rings/scene.esn', '--size', '-5x10'], /`-5x10` reads as an option; write a value that starts with `-` as --name=-5x10/);
  refused(['rendr', 'examples/rings/scene.esn'], /Did you mean render\?/);
  // An option given twice came as an array: an internal error (-o), or a message quoting the first value only.
  refused(['render', 'examples/rings/scene.esn', '-o', 'a.png', '-o', 'b.png'], /--out is given 2 times \(a\.png, b\.png\); give it once/);
  refused(['render', 'examples/rings/scene.esn', '--time', '1', '--time', '2'], /--time is given 2 times \(1, 2\); give it once/);
  refused(['bench', '--workers', '1', '--workers', '2'], /--workers is given 2 times/);
  refused(['bench', '--workers', '0', '--size', '16', '--runs', '1'], /--workers takes a whole number of threads from 1 to 256; got `0`/);
  refused(['bench', '--workers', '1.5', '--size', '16', '--runs', '1'], /--workers takes a whole number of threads from 1 to 256; got `1\.5`/);
});

t.test('check notes a scene with no output, which render cannot write', async (t) => {
  const dir = scratchDir('entelechy-');
  writeFileSync(join(dir, 'scene.esn'), 'kernel k.a@1 {\n  out r: field2<f32>;\n  each (x, y) { r = 1.0; }\n}\nnode n: k.a@1 { size = 4 x 4; }\n');
  const r = cli(['check', join(dir, 'scene.esn')]);
  t.equal(r.status, 0, 'it checks (a session can compose an output)');
  t.match(r.stdout, /ok \(1 kernel, 1 node, 0 outputs\)/);
  t.match(r.stderr, /^note: .*scene\.esn declares no output, so `render` has nothing to write: add `output NAME <- NODE\.PORT;`/);
  writeFileSync(join(dir, 'deep.esn'), 'kernel k.d@1 {\n  out r: field3<f32>;\n  each (x, y, z) { r = 1.0; }\n}\nnode n: k.d@1 { size = 4 x 4 x 4; }\noutput r <- n.r;\n');
  const deep = cli(['check', join(dir, 'deep.esn')]);
  t.equal(deep.status, 0);
  t.match(deep.stderr, /^note: .*deep\.esn is 3-D: `render` writes a picture of one z-slice \(--z N\), or every value as a NumPy array/, 'and one whose every output is 3-D');
});

t.test('many workers: no warning from Node about the threads\' listeners', async (t) => {
  const out = join(scratchDir('entelechy-'), 'w.png');
  const r = cli(['render', 'examples/mandelbrot/scene.esn', '--size', '128x128', '--workers', '24', '-o', out]);
  t.equal(r.status, 0, r.ended);
  t.notMatch(r.stderr, /MaxListenersExceededWarning|memory leak/, 'it printed "possible EventEmitter memory leak" from 9 workers on');
  t.match(r.stderr, /24 workers/);
});

t.test('render --json on a scene that does not check prints the error and its diagnostics as JSON', async (t) => {
  const dir = scratchDir('entelechy-');
  writeFileSync(join(dir, 'scene.esn'), 'kernel k.a@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    r = sine(x);\n  }\n}\nnode n: k.a@1 { size = 4 x 4; }\noutput o <- n.r;\n');
  const r = cli(['render', join(dir, 'scene.esn'), '--json', '-o', join(dir, 'o.png')]);
  t.equal(r.status, 1, r.ended);
  const line = JSON.parse(r.stdout.trim());
  t.match(line.error.message, /has 1 error: nothing rendered/);
  t.same(line.error.diagnostics.map((d: { line: number; column: number; span: object }) => [d.line, d.column, Object.keys(d.span)]), [[4, 9, ['start', 'end']]]);
  t.notOk(existsSync(join(dir, 'o.png')));
});

t.test('help NAME [--json], in any order; help --all lists every name; test runs examples/ by default', async (t) => {
  const index = cli(['help', '--all']);
  t.equal(index.status, 0, index.ended);
  t.match(index.stdout, /operation:\n  status, kernels/);
  t.match(index.stdout, /`entelechy help NAME` describes one/);
  for (const args of [['help', 'status', '--json'], ['help', '--json', 'status']]) {
    const r = cli(args);
    t.equal(r.status, 0, r.ended);
    t.equal(JSON.parse(r.stdout).name, 'status', args.join(' '));
  }
  // Another case was "no help for `Render`", and -v an unknown argument.
  const cased = cli(['help', 'Render']);
  t.equal(cased.status, 0, cased.ended);
  t.match(cased.stdout, /^render \(command\)[^]*--overwrite/, 'the entry and the command\'s options');
  const v = cli(['-v']);
  t.equal(v.status, 0, v.ended);
  t.match(v.stdout, /^\d+\.\d+\.\d+\n$/);
  const typo = cli(['help', 'evalute']);
  t.equal(typo.status, 1);
  t.match(typo.stderr, /no help for `evalute`; similar: evaluate.*`entelechy help --all` lists every name/);
  // A field method by its name: `help sample` had no entry, and offered "similar: FIELD.sample(u".
  const sample = cli(['help', 'sample']);
  t.equal(sample.status, 0, sample.ended);
  t.match(sample.stdout, /^FIELD\.sample\(u, v\[, w\]\) \(value\)/);
  t.notMatch(cli(['help', 'samp']).stderr, /\(u\b/, 'no pieces of a signature among the similar names');
  const replays = cli(['test']);
  t.equal(replays.status, 0, replays.ended);
  t.match(replays.stdout, /^([1-9]\d*) passed, 0 failed$/m);
});

t.test('check prints file:line:column and exits 1 on errors', async (t) => {
  t.equal(cli(['check', 'examples/life/scene.esn']).status, 0);
  const dir = scratchDir('entelechy-');
  writeFileSync(join(dir, 'scene.esn'), 'kernel k.a@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    r = sine(x);\n  }\n}\n');
  const r = cli(['check', join(dir, 'scene.esn')]);
  t.equal(r.status, 1);
  t.match(r.stdout, /scene\.esn:4:9: error: unknown function `sine`; did you mean `sin`\?/);
  const j = cli(['check', join(dir, 'scene.esn'), '--json']);
  const parsed = JSON.parse(j.stdout);
  t.equal(parsed.ok, false);
  t.equal(parsed.diagnostics[0].line, 4);
  t.equal(parsed.diagnostics[0].column, 9);
});

t.test('malformed scenes never throw past the CLI', async (t) => {
  const dir = scratchDir('entelechy-');
  const sources = ['rings/kernels.esn', 'life/scene.esn', 'castle/scene.esn', 'mandelbrot/scene.esn'].map((p) => readFileSync(join(ROOT, 'examples', p), 'utf8'));
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const garbage = ['{', '}', ';', '<-', '@', '"', '/*', 'x', '(', '1e999', 'kernel', 'node', '\u0000', 'é', '..'];
  for (let i = 0; i < 10; i++) {
    let text = sources[i % sources.length];
    for (let k = 0; k < 3; k++) {
      const at = Math.floor(rand() * text.length);
      text = rand() < 0.5 ? text.slice(0, at) + garbage[Math.floor(rand() * garbage.length)] + text.slice(at) : text.slice(0, at) + text.slice(at + Math.floor(rand() * 20));
    }
    writeFileSync(join(dir, 'scene.esn'), text);
    for (const args of [['check', join(dir, 'scene.esn')], ['render', join(dir, 'scene.esn'), '-o', join(dir, 'out.png')]]) {
      const r = cli(args);
      const all = r.stdout + r.stderr;
      t.ok(r.status === 0 || r.status === 1, `exit status 0 or 1 (${args[0]} #${i})`);
      t.notMatch(all, /internal error|\n\s+at .+:\d+:\d+/, `no stack trace (${args[0]} #${i})`);
    }
  }
  t.notOk(existsSync(join(dir, '.out.png.tmp')), 'no half-written file');
});

t.test('render --frames writes numbered PNGs and, with --json, a line per frame and a summary', async (t) => {
  const dir = scratchDir('entelechy-');
  const r = cli(['render', 'examples/life/scene.esn', '--frames', '3:5', '-o', join(dir, 'out', '%04d.png'), '--json']);
  t.equal(r.status, 0, r.ended);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines.slice(0, 3).map((l) => l.frame), [3, 4, 5]);
  t.same(lines.slice(0, 3).map((l) => l.file), [3, 4, 5].map((n) => join(dir, 'out', `000${n}.png`)));
  t.ok(lines.slice(0, 3).every((l) => typeof l.millis === 'number'));
  t.equal(lines[3].done, true);
  t.equal(lines[3].frames, 3);
  const a = readFileSync(join(dir, 'out', '0003.png'));
  const b = readFileSync(join(dir, 'out', '0004.png'));
  t.notOk(sameBytes(a, b), 'life moves between frames');
  const c = cli(['render', 'examples/life/scene.esn', '--frames', '0:3', '-o', join(dir, 'x.png')]);
  t.equal(c.status, 1);
  t.match(c.stderr, /frame number pattern, e\.g\. -o out\/%04d\.png/);
});

t.test('a frame pattern reads `%%` as a `%`, as printf and ffmpeg do', async (t) => {
  const dir = scratchDir('entelechy-');
  // `100%%_%d.png` wrote files named `100%%_1.png`, and `%%d` was taken as a frame number.
  const r = cli(['render', 'examples/life/scene.esn', '--frames', '1:2', '-o', join(dir, '100%%_%02d.png')]);
  t.equal(r.status, 0, r.ended);
  t.same(readdirSync(dir).sort(), ['100%_01.png', '100%_02.png']);
  t.equal(framePatternCount('a%%d.png'), 0, '%%d is a % and a d');
  t.equal(frameFile('%%%d-%4d.png', 7), '%7-   7.png');
  const one = cli(['render', 'examples/life/scene.esn', '--frames', '1:2', '-o', join(dir, 'x%%d.png')]);
  t.equal(one.status, 1);
  t.match(one.stderr, /frame number pattern, e\.g\. -o out\/%04d\.png/);
});

t.test('a failing frame stops the render with a non-zero status naming the frame and the node', async (t) => {
  const dir = scratchDir('entelechy-');
  writeFileSync(join(dir, 'scene.esn'), hangsAtFrame(2));
  const r = cli(['render', join(dir, 'scene.esn'), '--frames', '0:4', '-o', join(dir, '%02d.png'), '--json']);
  t.equal(r.status, 1);
  t.match(r.stderr, /scene\.esn:6:5: frame 2: node `hang` ran out of fuel at element \(0, 0\): a loop ran more than \d+ times there; give the loop a bound/, 'where the loop is (the node runs one), the element, and what to do (as the farm says it)');
  const last = JSON.parse(r.stdout.trim().split('\n').pop()!);
  t.same([last.error.frame, last.error.node], [2, 'hang']);
  t.match(last.error.message, /frame 2: node `hang` ran out of fuel/);
  t.ok(existsSync(join(dir, '01.png')) && !existsSync(join(dir, '02.png')), 'frames before the failure were written, none after');
  t.same(r.stdout.trim().split('\n').slice(0, 2).map((l) => JSON.parse(l).frame), [0, 1], 'and reported, before the failure');
});

t.test('a loop out of fuel is placed at its loop; with several that may run away, at the node, the loops listed', async (t) => {
  const dir = scratchDir('entelechy-');
  const two = hangsAtFrame(0).replace('let k = 0;', 'let k = 0;\n    for (let j = 0; j < 3; j++) k++;\n    while (k < 0) { k--; }');
  writeFileSync(join(dir, 'scene.esn'), two);
  const r = cli(['render', join(dir, 'scene.esn'), '-o', join(dir, 'x.png')]);
  t.equal(r.status, 1);
  t.match(r.stderr, /^entelechy: scene\.esn:12:1: frame 0: node `hang` ran out of fuel at element \(0, 0\): .*; its loops: scene\.esn:7:5 \(while\), scene\.esn:8:5 \(while\)$/m, 'the counted `for` is not among them');
});

t.test('render --frames --json tells each frame once its file is written, not when the range ends', async (t) => {
  // Frame 2 runs for minutes; the lines of frames 0 and 1 must come while it runs (they were held
  // until the queue of frames being written filled or the render ended).
  const dir = scratchDir('entelechy-');
  writeFileSync(join(dir, 'scene.esn'), 'kernel t.slow@1 {\n  grants time.read;\n  out r: field2<f32>;\n  each (x, y) {\n    let k = 0;\n    if (frame == 2) { for (let i = 0; i < 10000000; i++) { k += 1; } }\n    r = k;\n  }\n}\nnode n: t.slow@1 { size = 256 x 256; }\noutput r <- n.r;\n');
  const child = spawn(process.execPath, [BIN, 'render', join(dir, 'scene.esn'), '--frames', '0:4', '-o', join(dir, '%02d.png'), '--json', '--workers', '2'], { cwd: ROOT, env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const two = await new Promise<boolean>((resolve) => {
    const bound = setTimeout(() => resolve(false), 300_000); // a bound, not a measurement
    child.stdout.on('data', (d) => {
      out += String(d);
      if (out.split('\n').filter((l) => l.startsWith('{"frame"')).length >= 2) {
        clearTimeout(bound);
        resolve(true);
      }
    });
    void exited.then(() => resolve(false));
  });
  t.ok(two, `frames 0 and 1 told while frame 2 runs: ${out}`);
  child.kill('SIGTERM');
  await exited;
  t.same(out.trim().split('\n').filter((l) => l.startsWith('{"frame"')).map((l) => JSON.parse(l).frame), [0, 1]);
  t.match(err, /stopped at frame 2/, 'the signal stopped frame 2, which was still running');
});

t.test('render --frames encodes on threads of its own: every frame written, reported in order', async (t) => {
  const dir = scratchDir('entelechy-');
  const r = cli(['render', 'examples/rings/scene.esn', '--size', '96x64', '--frames', '0:11', '-o', join(dir, '%02d.png'), '--json', '--workers', '2']);
  t.equal(r.status, 0, r.ended);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines.slice(0, 12).map((l) => l.frame), [...Array(12).keys()], 'one line per frame, in order');
  const single = cli(['render', 'examples/rings/scene.esn', '--size', '96x64', '--time', String(7 / 30), '-o', join(dir, 'single.png')]);
  t.equal(single.status, 0, single.ended);
  t.ok(sameBytes(decodePng(readFileSync(join(dir, '07.png'))).rgba, decodePng(readFileSync(join(dir, 'single.png'))).rgba), 'frame 7 at 30 fps is the frame at 7/30 s');
  t.notOk(sameBytes(decodePng(readFileSync(join(dir, '06.png'))).rgba, decodePng(readFileSync(join(dir, '07.png'))).rgba), 'frames differ');
});

t.test('render runs a large scene on the pool, with the same pixels as on one worker', async (t) => {
  const dir = scratchDir('entelechy-');
  const runs = [1, 2].map((workers) => {
    const file = join(dir, `w${workers}.png`);
    const r = cli(['render', 'examples/mandelbrot/scene.esn', '--size', '640x480', '-o', file, '--json', '--workers', String(workers)]);
    t.equal(r.status, 0, r.ended);
    return { summary: JSON.parse(r.stdout.trim().split('\n').pop()!), png: decodePng(readFileSync(file)) };
  });
  t.same(runs.map((r) => r.summary.workers), [1, 2], 'the summary says how many workers ran');
  t.same([runs[1].png.width, runs[1].png.height], [640, 480]);
  t.ok(Buffer.from(runs[0].png.rgba).equals(Buffer.from(runs[1].png.rgba)), 'pixels identical on 1 and 2 workers');
  // Taller than a PNG strip (3492 rows at 300 wide): on 2 workers the pool's threads encode it (field-png.ts).
  const tall = [1, 2].map((workers) => {
    const file = join(dir, `tall${workers}.png`);
    const r = cli(['render', 'examples/rings/scene.esn', '--size', '300x4000', '-o', file, '--workers', String(workers)]);
    t.equal(r.status, 0, r.ended);
    return readFileSync(file);
  });
  t.ok(tall[0].equals(tall[1]), 'a tall frame encoded on the pool: the same bytes as on the main thread');
  t.same([decodePng(tall[1]).width, decodePng(tall[1]).height], [300, 4000]);
  const small = cli(['render', 'examples/rings/scene.esn', '--size', '64x32', '-o', join(dir, 'small.png'), '--json', '--workers', '2']);
  t.equal(JSON.parse(small.stdout.trim().split('\n').pop()!).workers, 1, 'a scene too small for the pool starts no threads');
});

t.test('render reads compiled modules from the disk cache, and compiles again over a damaged one', async (t) => {
  const dir = scratchDir('entelechy-');
  const cache = join(dir, 'cache');
  const render = (name: string, env: Record<string, string> = { ENTELECHY_CACHE_DIR: cache }) => {
    const r = cli(['render', 'examples/blur/scene.esn', '--size', '40x30', '-o', join(dir, name), '--json'], ROOT, env);
    t.equal(r.status, 0, r.ended);
    return { summary: JSON.parse(r.stdout.trim().split('\n').pop()!), rgba: Buffer.from(decodePng(readFileSync(join(dir, name))).rgba) };
  };
  const first = render('1.png');
  t.equal(first.summary.cached_modules, 0, 'the first render compiles');
  // (beside them, renders/ holds the markers of renders done: src/main/compile-ahead.ts)
  const files = readdirSync(cache).filter((f) => f !== 'renders');
  t.ok(files.length >= 1 && files.every((f) => f.endsWith('.wasm')), `and writes its modules: ${files.join(', ')}`);
  const second = render('2.png');
  t.equal(second.summary.cached_modules, files.length, 'the second reads every module from the cache');
  t.ok(second.rgba.equals(first.rgba), 'with the same pixels');
  for (const f of files) writeFileSync(join(cache, f), 'not a module');
  const third = render('3.png');
  t.equal(third.summary.cached_modules, 0, 'a damaged file is compiled again');
  t.ok(third.rgba.equals(first.rgba), 'with the same pixels');
  t.equal(render('4.png').summary.cached_modules, files.length, 'and replaced');
  const off = join(dir, 'off');
  t.equal(render('5.png', { ENTELECHY_CACHE_DIR: 'off', XDG_CACHE_HOME: off }).summary.cached_modules, 0, 'ENTELECHY_CACHE_DIR=off: no cache');
  t.notOk(existsSync(off), 'and nothing written');
});

t.test('an output that cannot be written is a clear error naming the file, not an internal one', async (t) => {
  const dir = scratchDir('entelechy-');
  writeFileSync(join(dir, 'taken'), 'a file where a folder should be');
  for (const args of [['-o', join(dir, 'taken', 'x.png')], ['--frames', '0:2', '-o', join(dir, 'taken', '%02d.png')]]) {
    const r = cli(['render', 'examples/rings/scene.esn', ...args]);
    t.equal(r.status, 1);
    t.match(r.stderr, /cannot write `.*taken\/(x|00)\.png`: a file is in the way of its folder/);
    t.notMatch(r.stderr, /internal error/);
  }
  // Node's own mkdir -p never returned for these (ENOENT, EEXIST, again, at full CPU, deaf to SIGTERM).
  for (const out of ['/proc/entelechy-nope/x.png', '/proc/entelechy-nope/%02d.png', '/proc/entelechy-nope/x.gif']) {
    const r = cli(['render', 'examples/rings/scene.esn', ...(out.endsWith('x.png') ? [] : ['--frames', '0:1']), '--size', '16x16', '-o', out]);
    t.equal(r.status, 1, `${out}: ${r.ended}`);
    t.match(r.stderr, /cannot write `\/proc\/entelechy-nope\/(x|00)\.(png|gif)`: its folder `\/proc\/entelechy-nope` cannot be made there \(ENOENT\)/);
  }
  const proc = cli(['render', 'examples/rings/scene.esn', '--size', '16x16', '-o', '/proc/entelechy-x.png']);
  t.match(proc.stderr, /cannot write `\/proc\/entelechy-x\.png`: its folder `\/proc` takes no new files \(ENOENT\)/, 'not the temporary file\'s name');
});

t.test('a render sweeps the temporary files renders of its files killed outright left (those of processes gone), none other', async (t) => {
  const dir = scratchDir('entelechy-');
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
  const left = ['.0000.png', '.0007.png'].map((n) => join(dir, `${n}.${dead}.0.tmp`));
  const kept = [join(dir, `.0000.png.${process.pid}.0.tmp`), join(dir, `.other.png.${dead}.0.tmp`), join(dir, `.0000.png.${dead}.0.partial`)];
  for (const f of [...left, ...kept]) writeFileSync(f, 'rows of a frame');
  const r = cli(['render', 'examples/rings/scene.esn', '--frames', '0:1', '--size', '16x16', '-o', join(dir, '%04d.png')]);
  t.equal(r.status, 0, r.ended);
  t.same(left.map(existsSync), [false, false], 'the frames\' files of a process gone: swept');
  t.same(kept.map(existsSync), [true, true, true], 'a live process\'s, another file\'s, another kind: kept');
});

t.test('serve on a scene whose folder does not exist says so, without a stack trace', async (t) => {
  const r = cli(['serve', join(tmpdir(), 'entelechy-no-such-folder', 'scene.esn')]);
  t.equal(r.status, 1);
  t.match(r.stderr, /the folder .*entelechy-no-such-folder does not exist/);
  t.notMatch(r.stderr, /internal error|\n\s+at /);
});

t.test('serve --listen on an address in use, or not an address, is the user\'s error, and the process ends', async (t) => {
  const { createServer } = await import('node:net');
  const held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  t.teardown(() => held.close());
  const port = (held.address() as { port: number }).port;
  const busy = cli(['serve', 'examples/rings/scene.esn', '--workers', '1', '--listen', `127.0.0.1:${port}`]);
  t.equal(busy.status, 1, busy.ended);
  t.match(busy.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use \\(EADDRINUSE\\); choose another with --listen host:port`));
  t.notMatch(busy.stderr, /internal error|bug/);
  const bad = cli(['serve', 'examples/rings/scene.esn', '--listen', 'nonsense:x']);
  t.equal(bad.status, 1, bad.ended);
  t.match(bad.stderr, /invalid --listen address "nonsense:x": port "x" is not a number/);
  t.notMatch(bad.stderr, /internal error|bug/);
});

t.test('serve --allow-origin refuses something that is not an origin', async (t) => {
  const r = cli(['serve', 'examples/rings/scene.esn', '--listen', '127.0.0.1:0', '--allow-origin', 'localhost:5173/app']);
  t.equal(r.status, 1);
  t.match(r.stderr, /--allow-origin takes an origin such as http:\/\/localhost:5173/);
});

t.test('--input into a 3-D input says only that it takes no image (a note said it was stretched to it first)', async (t) => {
  const dir = scratchDir('entelechy-');
  writeFileSync(join(dir, 'scene.esn'), 'input vol: field3<f32> size 8 x 8 x 4;\nkernel v.v@1 { grants field.read; in src: field3<f32>; out o: field2<f32>; each (x, y) { o = src.at(x, y, 2); } }\nnode v: v.v@1 { src <- vol; size = 8 x 8; }\noutput o <- v.o;\n');
  const r = cli(['render', join(dir, 'scene.esn'), '--input', `vol=${join(ROOT, 'examples', 'photo', 'photo.jpg')}`, '-o', join(dir, 'o.png')]);
  t.equal(r.status, 1);
  t.notMatch(r.stderr, /stretched/);
  t.match(r.stderr, /^entelechy: --input vol: `vol` is not an image's field: an image fills a 2-D field \(an input or a state\) of f32, vec2, vec3 or vec4, and `vol` is 3-D/m);
});
