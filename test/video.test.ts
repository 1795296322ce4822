// `render -o out.mp4|.webm|.gif`: frames piped to a real ffmpeg, the videos read back with ffprobe
// and decoded by ffmpeg to compare with the PNGs of the same frames.

import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decodePng } from '../src/main/image.js';
import { ROOT } from './helpers.js';
import { hangsAtFrame, SLOW_SCENE } from './fixtures.js';
import { Proc } from './farm-processes.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const CACHE = scratchDir('entelechy-cache-');

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}

/** ffprobe's account of the first video stream: frames decoded, size, codec, rate. */
function probe(file: string) {
  const r = spawnSync('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames,width,height,codec_name,r_frame_rate', '-of', 'json', file], { encoding: 'utf8' });
  const s = JSON.parse(r.stdout).streams[0];
  return { frames: Number(s.nb_read_frames), width: s.width as number, height: s.height as number, codec: s.codec_name as string, rate: s.r_frame_rate as string };
}

/** Frame n of a video decoded by ffmpeg to raw RGBA. */
function decodeFrame(file: string, n: number): Uint8Array {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-i', file, '-vf', `select=eq(n\\,${n})`, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgba', 'pipe:1'], { maxBuffer: 1 << 28 });
  return new Uint8Array(r.stdout);
}

/** The mean and largest difference of the colour bytes of a png (w x h) and a frame (fw wide). */
function difference(png: { width: number; height: number; rgba: Uint8Array }, frame: Uint8Array, fw: number) {
  let sum = 0, max = 0;
  for (let y = 0; y < png.height; y++)
    for (let x = 0; x < png.width; x++)
      for (let c = 0; c < 3; c++) {
        const d = Math.abs(png.rgba[(y * png.width + x) * 4 + c] - frame[(y * fw + x) * 4 + c]);
        sum += d;
        max = Math.max(max, d);
      }
  return { mean: sum / (png.width * png.height * 3), max };
}

function pngOfFrame(dir: string, frame: number, fps: number, size: string) {
  const file = join(dir, `frame${frame}.png`);
  const r = cli(['render', 'examples/rings/scene.esn', '--size', size, '--time', String(frame / fps), '-o', file]);
  if (r.status !== 0) throw new Error(r.ended);
  return decodePng(readFileSync(file));
}

t.test('render -o out.mp4 pipes the frames to ffmpeg: the video has every frame, the size, and the PNGs\' pixels', async (t) => {
  const dir = scratchDir('entelechy-video-');
  const video = join(dir, 'v', 'rings.mp4');
  const r = cli(['render', 'examples/rings/scene.esn', '--frames', '0:11', '-o', video, '--json']);
  t.equal(r.status, 0, r.ended);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines.slice(0, 12).map((l) => l.frame), [...Array(12).keys()], 'a line per frame, in order');
  t.match(lines[12], { done: true, frames: 12, video: { file: video, width: 256, height: 256, fps: 30 } });
  t.same(readdirSync(dirname(video)), ['rings.mp4'], 'no PNG sequence or partial file beside the video');
  t.match(probe(video), { frames: 12, width: 256, height: 256, codec: 'h264', rate: '30/1' });
  const pngs = [pngOfFrame(dir, 0, 30, '256x256'), pngOfFrame(dir, 11, 30, '256x256')];
  const decoded = [decodeFrame(video, 0), decodeFrame(video, 11)];
  // Measured: about 2.5 within a frame (4:2:0 chroma and crf 18), about 118 across frames 0 and
  // 11, 34 with red and blue swapped.
  for (const [i, frame] of [0, 11].entries()) {
    const d = difference(pngs[i], decoded[i], 256);
    t.ok(d.mean < 4, `frame ${frame} matches its PNG within H.264's loss at crf 18 (mean ${d.mean.toFixed(2)})`);
  }
  t.ok(difference(pngs[0], decoded[1], 256).mean > 20, 'and frame 11 is not frame 0: the frames are in order');
});

t.test('.webm and .gif are written too, and --fps sets the rate', async (t) => {
  const dir = scratchDir('entelechy-video-');
  const webm = join(dir, 'rings.webm');
  const r = cli(['render', 'examples/rings/scene.esn', '--size', '192x128', '--frames', '0:5', '--fps', '10', '-o', webm]);
  t.equal(r.status, 0, r.ended);
  t.match(probe(webm), { frames: 6, width: 192, height: 128, codec: 'vp9', rate: '10/1' });
  const d = difference(pngOfFrame(dir, 0, 10, '192x128'), decodeFrame(webm, 0), 192);
  t.ok(d.mean < 5, `the first frame matches its PNG within VP9's loss at crf 31 (mean ${d.mean.toFixed(2)})`);

  const gif = join(dir, 'rings.gif');
  // What a render killed by SIGKILL left (its process gone): swept by the next render of that video;
  // one of a process that still runs (this one) is left alone.
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
  const left = join(dir, `.rings.gif.${dead}.0.partial`);
  const live = join(dir, `.rings.gif.${process.pid}.0.partial`);
  for (const f of [left, live]) writeFileSync(f, 'half a video');
  const g = cli(['render', 'examples/rings/scene.esn', '--size', '63x47', '--frames', '2:5', '-o', gif]);
  t.equal(g.status, 0, g.ended);
  t.match(probe(gif), { frames: 4, width: 63, height: 47, codec: 'gif' }, 'a GIF keeps an odd size');
  t.same([existsSync(left), existsSync(live)], [false, true], 'the dead render\'s partial video swept, the live one\'s kept');
  const dg = difference(pngOfFrame(dir, 2, 30, '63x47'), decodeFrame(gif, 0), 63);
  t.ok(dg.mean < 6, `the GIF's first frame is frame 2, within its palette (mean ${dg.mean.toFixed(2)})`);
});

t.test('an odd size is padded to even for mp4 (4:2:0), the edge repeated, and said so', async (t) => {
  const dir = scratchDir('entelechy-video-');
  const video = join(dir, 'odd.mp4');
  const r = cli(['render', 'examples/rings/scene.esn', '--size', '255x255', '--frames', '0:2', '-o', video]);
  t.equal(r.status, 0, r.ended);
  t.match(r.stderr, /255 x 255 has an odd side.*the video is 256 x 256, the last column and row repeated/);
  t.match(probe(video), { frames: 3, width: 256, height: 256 });
  const frame = decodeFrame(video, 0);
  const png = pngOfFrame(dir, 0, 30, '255x255');
  t.ok(difference(png, frame, 256).mean < 4, 'the image sits at the top left');
  const column = (x: number) => Array.from({ length: 255 }, (_, y) => frame[(y * 256 + x) * 4 + 1]);
  const gap = column(255).reduce((s, v, y) => s + Math.abs(v - column(254)[y]), 0) / 255;
  t.ok(gap < 8, `the added column repeats the last one, not black (mean difference ${gap.toFixed(1)})`);
});

t.test('--crf trades size for quality, and is checked', async (t) => {
  const dir = scratchDir('entelechy-video-');
  const sizes = [];
  for (const crf of ['4', '40']) {
    const r = cli(['render', 'examples/rings/scene.esn', '--size', '96x64', '--frames', '0:3', '--crf', crf, '-o', join(dir, `c${crf}.mp4`)]);
    t.equal(r.status, 0, r.ended);
    sizes.push(statSync(join(dir, `c${crf}.mp4`)).size);
  }
  t.ok(sizes[0] > 2 * sizes[1], `crf 4 is larger than crf 40 (${sizes.join(' vs ')} bytes)`);
  const bad = cli(['render', 'examples/rings/scene.esn', '--frames', '0:3', '--crf', '70', '-o', join(dir, 'x.mp4')]);
  t.equal(bad.status, 1);
  t.match(bad.stderr, /--crf for \.mp4 is a whole number from 0 \(best\) to 51/);
  const png = cli(['render', 'examples/rings/scene.esn', '--crf', '20', '-o', join(dir, 'x.png')]);
  t.match(png.stderr, /--crf sets a video's quality: write a video with -o out\.mp4/);
});

t.test('without ffmpeg, the error names Debian\'s package and nothing is written', async (t) => {
  const dir = scratchDir('entelechy-video-');
  const r = cli(['render', 'examples/rings/scene.esn', '--frames', '0:3', '-o', join(dir, 'v.mp4')], { PATH: dir });
  t.equal(r.status, 1);
  t.match(r.stderr, /needs ffmpeg, which is not installed.*Debian's `ffmpeg` package \(sudo apt-get install ffmpeg\)/);
  t.notMatch(r.stderr, /at .*\.js/, 'no stack trace');
  t.same(readdirSync(dir), []);
});

t.test('a render that fails mid-way leaves no video, whole or partial', async (t) => {
  const dir = scratchDir('entelechy-video-');
  writeFileSync(join(dir, 'scene.esn'), hangsAtFrame(2));
  const r = cli(['render', join(dir, 'scene.esn'), '--frames', '0:4', '-o', join(dir, 'v.mp4')]);
  t.equal(r.status, 1);
  t.match(r.stderr, /frame 2: node `hang` ran out of fuel/);
  t.same(readdirSync(dir), ['scene.esn'], 'no v.mp4 and no partial file');
  t.notOk(existsSync(join(dir, 'v.mp4')));
});

// Ctrl-C reaches the whole process group, ffmpeg too: its exit (status 255) was reported as
// "ffmpeg could not write", for a render the user stopped.
t.test('Ctrl-C (SIGINT to the process group, ffmpeg too) stops a video render as interrupted, leaving no video', async (t) => {
  const dir = scratchDir('entelechy-video-sigint-');
  writeFileSync(join(dir, 'slow.esn'), SLOW_SCENE);
  const out = join(dir, 'v', 'clip.mp4');
  const p = new Proc(spawn(process.execPath, [BIN, 'render', join(dir, 'slow.esn'), '--size', '64x64', '--frames', '0:30', '--workers', '1', '--json', '-o', out], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } }));
  await p.line((l) => l.frame === 1);
  process.kill(-p.child.pid!, 'SIGINT');
  t.same(await p.exited, { code: 130, signal: null }, p.stderr);
  t.match(p.stderr, /interrupted \(SIGINT\): stopped at frame \d+; the video `.*clip\.mp4` was not written/);
  t.notMatch(p.stderr, /ffmpeg could not write/);
  t.same(readdirSync(dirname(out)), [], 'no video, whole or partial');
});
