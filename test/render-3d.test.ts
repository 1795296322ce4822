// `render` of a 3-D output: a picture of one z-slice (--z), or every value as a NumPy array (.npy),
// checked element by element; and the mistakes said before anything runs.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync, utimesSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodePng } from '../src/main/image.js';
import { linearToByte } from '../src/main/srgb.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const CACHE = scratchDir('entelechy-cache-');
const dir = scratchDir('entelechy-3d-');

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', timeout: 300_000, killSignal: 'SIGKILL', env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}\n${r.stderr}` };
}

// A ramp whose every element says where it is; a vec2 of it and its z; an i32 and a bool field.
writeFileSync(join(dir, 'vol.esn'), `kernel vol.ramp@1 {
  grants time.read;
  out v: field3<f32>;
  out pair: field3<vec2>;
  out id: field3<i32>;
  out odd: field3<bool>;
  each (x, y, z) {
    v = f32(x + y * 16 + z * 256) / 2048.0 + time;
    pair = vec2(f32(x) / 16.0, f32(z));
    id = x + y * 16 + z * 256 - 1000;
    odd = (x + y + z) % 2 == 1;
  }
}
node b: vol.ramp@1 { size = 16 x 12 x 8; }
node flat: vol.ramp@1 { size = 4 x 4 x 4; }
output v <- b.v;
output pair <- b.pair;
output id <- b.id;
output odd <- b.odd;
`);

/** A .npy file's header dict and its data. */
function readNpy(file: string): { descr: string; shape: number[]; data: Buffer } {
  const bytes = readFileSync(join(dir, file));
  t.equal(bytes.toString('latin1', 0, 6), '\x93NUMPY', `${file}: the magic`);
  const length = bytes.readUInt16LE(8);
  t.equal((10 + length) % 64, 0, `${file}: the data starts on 64 bytes`);
  const dict = bytes.toString('latin1', 10, 10 + length);
  t.match(dict, /'fortran_order': False/);
  const descr = /'descr': '([^']+)'/.exec(dict)![1];
  const shape = /'shape': \(([^)]*)\)/.exec(dict)![1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  return { descr, shape, data: bytes.subarray(10 + length) };
}

t.test('a .npy holds every value of a 3-D output, numpy-ordered, of its type', async (t) => {
  let r = cli(['render', 'vol.esn', '-o', 'v.npy']);
  t.equal(r.status, 0, r.ended);
  t.match(r.stderr, /wrote v\.npy \(8 x 12 x 16, output `v`/);
  const v = readNpy('v.npy');
  t.equal(v.descr, '<f4');
  t.same(v.shape, [8, 12, 16]);
  const f = new Float32Array(v.data.buffer.slice(v.data.byteOffset, v.data.byteOffset + v.data.length));
  t.equal(f.length, 8 * 12 * 16);
  let wrong = 0;
  for (let z = 0; z < 8; z++) for (let y = 0; y < 12; y++) for (let x = 0; x < 16; x++) if (f[(z * 12 + y) * 16 + x] !== Math.fround((x + y * 16 + z * 256) / 2048)) wrong++;
  t.equal(wrong, 0, 'every element where numpy looks for it, [z][y][x]');

  r = cli(['render', 'vol.esn', '--output', 'pair', '-o', 'pair.npy']);
  t.equal(r.status, 0, r.ended);
  const pair = readNpy('pair.npy');
  t.same(pair.shape, [8, 12, 16, 2], 'components last');
  const p = new Float32Array(pair.data.buffer.slice(pair.data.byteOffset, pair.data.byteOffset + pair.data.length));
  const at = (x: number, y: number, z: number) => [p[((z * 12 + y) * 16 + x) * 2], p[((z * 12 + y) * 16 + x) * 2 + 1]];
  t.same(at(5, 3, 7), [5 / 16, 7]);
  t.same(at(15, 11, 0), [15 / 16, 0]);

  r = cli(['render', 'vol.esn', '--output', 'id', '-o', 'id.npy']);
  t.equal(r.status, 0, r.ended);
  const id = readNpy('id.npy');
  t.equal(id.descr, '<i4');
  t.equal(id.data.readInt32LE(0), -1000);
  t.equal(id.data.readInt32LE(4 * ((7 * 12 + 11) * 16 + 15)), 15 + 11 * 16 + 7 * 256 - 1000);

  r = cli(['render', 'vol.esn', '--output', 'odd', '-o', 'odd.npy']);
  t.equal(r.status, 0, r.ended);
  const odd = readNpy('odd.npy');
  t.equal(odd.descr, '|b1');
  t.equal(odd.data.length, 8 * 12 * 16);
  t.same([odd.data[0], odd.data[1], odd.data[16], odd.data[16 * 12]], [0, 1, 1, 1]);
});

t.test('--z writes one z-slice as a picture', async (t) => {
  const r = cli(['render', 'vol.esn', '-o', 's.png', '--z', '5']);
  t.equal(r.status, 0, r.ended);
  t.match(r.stderr, /wrote s\.png \(16 x 12, z-slice 5 of 8/);
  const png = decodePng(readFileSync(join(dir, 's.png')));
  t.same([png.width, png.height], [16, 12]);
  const gray = (x: number, y: number) => png.rgba[(y * 16 + x) * 4];
  t.equal(gray(3, 2), linearToByte(Math.fround((3 + 2 * 16 + 5 * 256) / 2048)), 'the slice asked for: z = 5');
  t.equal(gray(15, 11), linearToByte(Math.fround((15 + 11 * 16 + 5 * 256) / 2048)));
});

t.test('numbered .npy frames, and a shard resumes past the whole ones', async (t) => {
  let r = cli(['render', 'vol.esn', '--frames', '0:2', '--fps', '1', '-o', 'frames/%02d.npy', '--shard', '0/1']);
  t.equal(r.status, 0, r.ended);
  const f2 = readNpy('frames/02.npy');
  t.equal(f2.data.readFloatLE(0), 2, 'frame 2 at time 2: the ramp plus t');
  // A frame cut short is rendered again; the whole ones are skipped.
  const one = join(dir, 'frames/01.npy');
  writeFileSync(one, readFileSync(one).subarray(0, 500));
  const zero = join(dir, 'frames/00.npy');
  utimesSync(zero, new Date(0), new Date(0));
  r = cli(['render', 'vol.esn', '--frames', '0:2', '--fps', '1', '-o', 'frames/%02d.npy', '--shard', '0/1', '--json']);
  t.equal(r.status, 0, r.ended);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines.filter((l) => l.skipped && l.frame !== undefined).map((l) => l.frame), [0, 2]);
  t.equal(readNpy('frames/01.npy').data.readFloatLE(0), 1, 'the cut frame written again, whole');
  t.equal(statSync(zero).mtimeMs, 0, 'a whole frame left as it was');
});

t.test('mistakes are said before anything runs', async (t) => {
  const refused = (args: string[], message: RegExp, what: string) => {
    const r = cli(['render', 'vol.esn', ...args]);
    t.equal(r.status, 1, `${what}: ${r.ended}`);
    t.match(r.stderr, message, what);
    t.notMatch(r.stderr, /\n\s+at /, `${what}: no stack trace`);
  };
  refused(['-o', 'v.png'], /output `v` is 3-D \(16 x 12 x 8\): a picture shows one z-slice of it: add --z N \(0 to 7\), or write every value to a NumPy array: -o v\.npy/, 'a 3-D output as a picture');
  refused(['-o', 'v.png', '--z', '8'], /--z must be a whole number from 0 to 7/, 'past the depth');
  refused(['-o', 'v.png', '--z', '-1'], /--z must be a whole number from 0 to 7/, 'negative');
  refused(['-o', 'v.png', '--z', 'top'], /got `top`/, 'not a number');
  refused(['-o', 'v.npy', '--z', '2'], /holds every z-slice of `v`: leave --z out/, '--z with .npy');
  refused(['-o', 'v.tif'], /NumPy arrays of the output's values \(\.npy\)/, 'another extension');
  refused(['-o', 'v.npy', '--farm', 'redis://127.0.0.1:1', '--frames', '0:1'], /--farm brings back pictures of 2-D outputs/, '.npy on the farm');
  // Whole or not at all: fields that do not fit were refused as "tiles cover 2-D pictures", unasked.
  refused(['-o', 's.png', '--z', '1', '--size', '128x128x128', '--memory', '4M'], /^entelechy: output `v` is 3-D, rendered whole, and the scene's fields need .* more than the memory budget of 4\.0 MiB.*give the render more memory \(--memory\)$/m, 'a slice whose fields do not fit');
  refused(['-o', 'v.npy', '--tile', '4x4'], /a \.npy is written from the fields whole, not in tiles: leave --tile out/, '.npy in tiles');
  refused(['-o', 'v.npy', '--size', '2048x2048x2048'], /a \.npy is written from the fields whole, and .* \(more memory cannot help: --memory gives at most 4\.0 GiB/, 'a .npy past what --memory can give');
  const rings = cli(['render', join(ROOT, 'examples', 'rings', 'scene.esn'), '-o', 'r.png', '--z', '1']);
  t.equal(rings.status, 1);
  t.match(rings.stderr, /--z picks a z-slice of a 3-D output, and `result` is 2-D \(256 x 256\): leave --z out/);
  t.notOk(existsSync(join(dir, 'r.png')));
  t.notOk(existsSync(join(dir, 'v.png')), 'no picture written by any refusal');
});

t.test('a 2-D output as .npy too, without the picture\'s rounding', async (t) => {
  const r = cli(['render', join(ROOT, 'examples', 'rings', 'scene.esn'), '-o', 'rings.npy']);
  t.equal(r.status, 0, r.ended);
  const rings = readNpy('rings.npy');
  t.equal(rings.descr, '<f4');
  t.equal(rings.shape.length, 3);
  t.same(rings.shape.slice(0, 2), [256, 256]);
});

t.test('check says how a scene of 3-D outputs renders', async (t) => {
  writeFileSync(join(dir, 'only.esn'), readFileSync(join(dir, 'vol.esn'), 'utf8'));
  const r = cli(['check', 'only.esn']);
  t.equal(r.status, 0, r.ended);
  t.match(r.stderr, /every output of only\.esn is 3-D: `render` writes a picture of one z-slice \(--z N\), or every value as a NumPy array \(-o NAME\.npy\)/);
});

t.test('a volume being written stops at Ctrl-C: no file, status 130 (it was made whole in memory first, deaf to the signal)', async (t) => {
  const { entelechy } = await import('./farm-processes.js');
  writeFileSync(join(dir, 'big.esn'), 'kernel vol.big@1 {\n  out v: field3<f32>;\n  each (x, y, z) { v = f32(x + y + z); }\n}\nnode b: vol.big@1 { size = 400 x 400 x 400; }\noutput v <- b.v;\n');
  const p = entelechy(['render', join(dir, 'big.esn'), '-o', join(dir, 'big.npy')], { ENTELECHY_CACHE_DIR: CACHE, ENTELECHY_TIMELINE: '1' });
  // 256 MB to write, seconds of it: the signal comes once the frame is evaluated, as the writing begins.
  while (!p.stderr.includes('timeline frame 0 evaluated') && (await Promise.race([p.exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))])) === false);
  p.kill('SIGINT');
  const ended = await p.exited;
  t.same(ended, { code: 130, signal: null }, p.stderr);
  t.match(p.stderr, /interrupted \(SIGINT\): stopped at frame 0; its file was not written/);
  t.notOk(existsSync(join(dir, 'big.npy')), 'no file');
  t.same(readdirSync(dir).filter((f) => f.includes('big.npy')), [], 'nor a temporary one');
});
