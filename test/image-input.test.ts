// Images in: `render --input NAME=FILE` (PNG, JPEG, sequences) and the `write` operation's `file`,
// with real files, the real CLI in a child process, and ffmpeg as an independent JPEG decoder.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { decodePng } from '../src/main/image.js';
import { srgbToLinear } from '../src/main/srgb.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const CACHE = scratchDir('entelechy-cache-');

/** Run the CLI; `input` is given as a file on stdin (a script of requests: its end cancels nothing). */
function cli(args: string[], input = '', cwd = ROOT) {
  const file = join(scratchDir('entelechy-input-requests-'), 'requests.jsonl');
  writeFileSync(file, input);
  const fd = openSync(file, 'r');
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), ...args], { cwd, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  closeSync(fd);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}

/** A scene that passes its input through: what comes out is what the kernels saw, encoded again. */
function passScene(dir: string, type = 'vec4', size = '') {
  writeFileSync(join(dir, 'scene.esn'), `input img: field2<${type}>${size};
kernel t.pass@1 {
  in src: field2<${type}>;
  out result: field2<${type}>;
  each (x, y) { result = src; }
}
node pass: t.pass@1 { src <- img; }
output result <- pass.result;
`);
  return join(dir, 'scene.esn');
}

function writePng(file: string, width: number, height: number, pixel: (x: number, y: number) => number[]) {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) png.data.set(pixel(x, y), (y * width + x) * 4);
  writeFileSync(file, PNG.sync.write(png));
}

const gradient = (x: number, y: number) => [(x * 7) & 255, (y * 12) & 255, (x * y) & 255, 255 - ((x + y) & 127)];

t.test('a PNG goes in and comes out byte for byte, the field sized by the image', async (t) => {
  const dir = scratchDir('entelechy-input-');
  writePng(join(dir, 'in.png'), 37, 21, gradient);
  const r = cli(['render', passScene(dir), '--input', `img=${join(dir, 'in.png')}`, '-o', join(dir, 'out.png')]);
  t.equal(r.status, 0, r.ended);
  const out = decodePng(readFileSync(join(dir, 'out.png')));
  t.same([out.width, out.height], [37, 21], 'the input took the image\'s size, and the node its input\'s');
  t.same(Buffer.from(out.rgba), PNG.sync.read(readFileSync(join(dir, 'in.png'))).data, 'sRGB decoded to linear and encoded back: every byte kept');
});

t.test("a photo stored sideways with an EXIF orientation is read upright, as a viewer shows it", async (t) => {
  const sharp = (await import('sharp')).default;
  const dir = scratchDir('entelechy-input-');
  // Stored 40 x 20, red on the left and blue on the right; orientation 6 turns it a quarter clockwise.
  const stored = Buffer.alloc(40 * 20 * 3);
  for (let i = 0; i < 40 * 20; i++) stored.set(i % 40 < 20 ? [255, 0, 0] : [0, 0, 255], i * 3);
  await sharp(stored, { raw: { width: 40, height: 20, channels: 3 } }).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toFile(join(dir, 'phone.jpg'));
  const r = cli(['render', passScene(dir), '--input', `img=${join(dir, 'phone.jpg')}`, '-o', join(dir, 'out.png')]);
  t.equal(r.status, 0, r.ended);
  const out = decodePng(readFileSync(join(dir, 'out.png')));
  t.same([out.width, out.height], [20, 40], 'upright: 20 wide, 40 high');
  const at = (x: number, y: number) => [...out.rgba.subarray((y * 20 + x) * 4, (y * 20 + x) * 4 + 3)];
  t.ok(at(10, 5)[0] > 200 && at(10, 5)[2] < 60, `red on top: ${at(10, 5)}`);
  t.ok(at(10, 35)[2] > 200 && at(10, 35)[0] < 60, `blue below: ${at(10, 35)}`);
});

t.test('kernels see linear values: sRGB byte 128 is 0.2158605 in the field', async (t) => {
  const dir = scratchDir('entelechy-input-');
  writePng(join(dir, 'grey.png'), 8, 8, () => [128, 64, 255, 51]);
  passScene(dir, 'vec4', ' size 8 x 8');
  const lines = ['{"id":1,"op":"write","input":"img","file":"grey.png"}', '{"id":2,"op":"evaluate"}', '{"id":3,"op":"trace","x":3,"y":4}'];
  const r = cli(['serve', 'scene.esn', '--workers', '1'], lines.join('\n') + '\n', dir);
  const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.match(answers[0], { ok: { events: [{ kind: 'wrote', field: 'input:img', file: 'grey.png' }] } }, r.ended);
  const value = answers[2].ok.values[0].value as number[];
  const expected = [srgbToLinear(128 / 255), srgbToLinear(64 / 255), 1, 0.2].map(Math.fround);
  t.same(value, expected, `the exact transfer function, alpha as it is (${value.join(', ')})`);
  t.ok(Math.abs(value[0] - 128 / 255) > 0.2, 'not the byte / 255');

  const denied = cli(['serve', 'scene.esn', '--workers', '1', '--deny', 'field.write'], lines[0] + '\n', dir);
  t.match(JSON.parse(denied.stdout.trim()), { error: { grant: 'field.write' } }, 'refused under --deny field.write');
  // A port beside an input: it has none (it was told there was no input of its own name).
  const port = cli(['serve', 'scene.esn', '--workers', '1'], JSON.stringify({ op: 'write', input: 'img', port: 'x', value: [0, 0, 0, 1] }) + '\n', dir);
  t.match(JSON.parse(port.stdout.trim()), { error: { field: 'port', message: '`img` is an input, which has no ports: drop `port`' } });
  const outside = cli(['serve', 'scene.esn', '--workers', '1'], JSON.stringify({ op: 'write', input: 'img', file: join(dir, '..', 'x.png') }) + '\n', dir);
  t.match(JSON.parse(outside.stdout.trim()), { error: { field: 'file', message: /is not under the scene's folder/ } }, 'refused outside the folder');
});

t.test('a JPEG decodes as ffmpeg decodes it (within IDCT rounding); a gray input takes luminance', async (t) => {
  const dir = scratchDir('entelechy-input-');
  const jpeg = join(ROOT, 'examples', 'photo', 'photo.jpg');
  const r = cli(['render', passScene(dir), '--input', `img=${jpeg}`, '-o', join(dir, 'out.png')]);
  t.equal(r.status, 0, r.ended);
  const out = decodePng(readFileSync(join(dir, 'out.png')));
  t.same([out.width, out.height], [240, 160]);
  const ff = spawnSync('ffmpeg', ['-v', 'error', '-i', jpeg, '-f', 'rawvideo', '-pix_fmt', 'rgba', 'pipe:1'], { maxBuffer: 1 << 24 }).stdout as Buffer;
  let sum = 0;
  for (let i = 0; i < ff.length; i++) if (i % 4 !== 3) sum += Math.abs(ff[i] - out.rgba[i]);
  const mean = sum / (240 * 160 * 3);
  t.ok(mean < 2, `mean difference from ffmpeg's decoding ${mean.toFixed(3)}`);

  const grey = scratchDir('entelechy-input-');
  writePng(join(grey, 'c.png'), 4, 4, () => [255, 0, 0, 255]);
  cli(['render', passScene(grey, 'f32'), '--input', `img=${join(grey, 'c.png')}`, '-o', join(grey, 'out.png')]);
  const g = decodePng(readFileSync(join(grey, 'out.png')));
  // Pure red's linear luminance is 0.2126: sRGB byte 127.
  t.same(Array.from(g.rgba.slice(0, 4)), [127, 127, 127, 255], 'red seen as gray is its linear luminance');
});

t.test('a scene that fixes the input\'s size keeps it: the image is resized to it', async (t) => {
  const dir = scratchDir('entelechy-input-');
  writePng(join(dir, 'in.png'), 40, 20, () => [200, 100, 50, 255]);
  const r = cli(['render', passScene(dir, 'vec4', ' size 16 x 16'), '--input', `img=${join(dir, 'in.png')}`, '-o', join(dir, 'out.png')]);
  t.equal(r.status, 0, r.ended);
  const out = decodePng(readFileSync(join(dir, 'out.png')));
  t.same([out.width, out.height], [16, 16]);
  t.same(Array.from(out.rgba.slice(0, 4)), [200, 100, 50, 255], 'a flat image stays the same colour resized');
  t.match(r.stderr, /note: input `img` declares `size 16 x 16` \(scene\.esn\), so `.*in\.png` \(40 x 20\) is stretched to it; leave the size out of the declaration to take the image's/, 'the stretch is told');
  writePng(join(dir, 'square.png'), 16, 16, () => [200, 100, 50, 255]);
  const same = cli(['render', join(dir, 'scene.esn'), '--input', `img=${join(dir, 'square.png')}`, '-o', join(dir, 'out.png')]);
  t.equal(same.status, 0, same.ended);
  t.notMatch(same.stderr, /stretched/, 'an image of the size is not');
});

t.test('an image sequence: one file per frame, in order; a missing one names its frame and file', async (t) => {
  const dir = scratchDir('entelechy-input-');
  mkdirSync(join(dir, 'in'));
  const colours = [[255, 0, 0], [0, 255, 0], [0, 0, 255]];
  colours.forEach((c, i) => writePng(join(dir, 'in', `000${i}.png`), 6, 4, () => [...c, 255]));
  const scene = passScene(dir);
  const r = cli(['render', scene, '--frames', '0:2', '--input', `img=${join(dir, 'in', '%04d.png')}`, '-o', join(dir, 'out', '%02d.png')]);
  t.equal(r.status, 0, r.ended);
  for (const [i, c] of colours.entries()) t.same(Array.from(decodePng(readFileSync(join(dir, 'out', `0${i}.png`))).rgba.slice(0, 4)), [...c, 255], `frame ${i} shows file ${i}`);
  const missing = cli(['render', scene, '--frames', '1:3', '--input', `img=${join(dir, 'in', '%04d.png')}`, '-o', join(dir, 'more', '%02d.png')]);
  t.equal(missing.status, 1);
  t.match(missing.stderr, /--input img=.*in\/%04d\.png: frame 3's image `.*in\/0003\.png` is not there \(the render's frames are 1 to 3\): add it, or render the frames the sequence has \(--frames\)/);
  t.notOk(existsSync(join(dir, 'more')), 'refused before any frame: nothing rendered or written');
});

t.test('--input mistakes say what is wrong', async (t) => {
  const dir = scratchDir('entelechy-input-');
  writePng(join(dir, 'in.png'), 4, 4, gradient);
  writeFileSync(join(dir, 'notes.txt'), 'not an image');
  const scene = passScene(dir);
  const cases: [string[], RegExp][] = [
    [['--input', `im=${join(dir, 'in.png')}`], /--input im=.*declares no input `im`; did you mean `img`\?; its inputs: img/],
    [['--input', `img=${join(dir, 'none.png')}`], /cannot read `.*none\.png`: no such file/],
    [['--input', `img=${join(dir, 'notes.txt')}`], /cannot read `.*notes\.txt` as an image \(PNG, JPEG/],
    [['--input', 'img'], /--input takes NAME=FILE/],
  ];
  for (const [args, message] of cases) {
    const r = cli(['render', scene, ...args, '-o', join(dir, 'o.png')]);
    t.equal(r.status, 1, args.join(' '));
    t.match(r.stderr, message);
    // The stderr in the name: a CI log shows only a failed assertion's name (this failed once there, under load).
    t.notMatch(r.stderr, /internal error|\n\s+at /, `no stack trace (stderr: ${r.stderr.trim().slice(0, 600)})`);
  }
});

t.test('examples/photo grades its photograph from the command line', async (t) => {
  const dir = scratchDir('entelechy-input-');
  const args = ['render', 'examples/photo/scene.esn', '--input', 'photo=examples/photo/photo.jpg'];
  const given = cli([...args, '-o', join(dir, 'graded.png')]);
  t.equal(given.status, 0);
  t.notMatch(given.stderr, /note: input/, 'an input given says nothing of it');
  // Left out, the input held zeros: a picture of nothing, written without a word.
  const empty = cli(['render', 'examples/photo/scene.esn', '-o', join(dir, 'empty.png')]);
  t.equal(empty.status, 0, empty.ended);
  t.match(empty.stderr, /note: input `photo` was given no image, so it holds zeros; fill it with --input photo=FILE/);
  t.equal(cli([...args, '--param', 'exposure=0', '--param', 'warmth=0', '-o', join(dir, 'plain.png')]).status, 0);
  const [graded, plain] = ['graded', 'plain'].map((n) => decodePng(readFileSync(join(dir, `${n}.png`))).rgba);
  const centre = (120 + 80 * 240) * 4;
  t.ok(graded[centre] > plain[centre] && graded[centre + 2] < graded[centre] - 40, 'half a stop brighter at the centre, and warm');
});

t.test('serve and mcp take --input NAME=FILE: the image is in the input from the start, as write with file puts it', async (t) => {
  const dir = scratchDir('entelechy-input-');
  writePng(join(dir, 'in.png'), 6, 4, gradient);
  const scene = passScene(dir, 'vec4', ' size 6 x 4');
  const lines = [{ op: 'read', input: 'img', id: 1 }, { op: 'write', input: 'img', file: 'in.png', id: 2 }, { op: 'read', input: 'img', id: 3 }, { op: 'quit', id: 4 }];
  const r = cli(['serve', scene, '--input', `img=${join(dir, 'in.png')}`, '--workers', '1'], lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  t.equal(r.status, 0, r.ended);
  const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const [first, , again] = answers.map((a) => a.ok?.data && decodePng(Buffer.from(a.ok.data, 'base64')));
  const want = new Uint8Array(6 * 4 * 4);
  for (let y = 0; y < 4; y++) for (let x = 0; x < 6; x++) want.set(gradient(x, y), (y * 6 + x) * 4);
  t.same(Array.from(first.rgba), Array.from(want), 'read of the input gives the image back, byte for byte');
  t.same(Array.from(again.rgba), Array.from(first.rgba), 'the same as write with file');
  const sequence = cli(['serve', scene, '--input', `img=${join(dir, '%04d.png')}`], '');
  t.equal(sequence.status, 1);
  t.match(sequence.stderr, /^entelechy: --input img=.*%04d\.png: a file per frame is for `render --frames A:B`; a session takes one image/);
  const missing = cli(['mcp', scene, '--input', `img=${join(dir, 'none.png')}`], '');
  t.equal(missing.status, 1);
  t.match(missing.stderr, /cannot read `.*none\.png`: no such file/);
  t.notMatch(missing.stderr, /internal error|\n\s+at /, 'no stack trace');
});
