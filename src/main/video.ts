// Video files from rendered frames: raw RGBA piped to Debian's ffmpeg as the frames are evaluated.
//
// ffmpeg runs as a child process reading `-f rawvideo -pix_fmt rgba` on its stdin, so it encodes
// one frame while the engine evaluates the next; no PNG sequence is written in between. The video
// is written to a temporary file beside the named one and renamed when ffmpeg has finished: a
// render that fails leaves no half-written video.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { UserError } from './user-error.js';
import { besideTarget, makeFolders, sweepLeftBehind } from './files.js';
import { writeProblem } from './png-file.js';

export class VideoError extends UserError {
  override name = 'VideoError';
}

interface Format {
  /** ffmpeg's muxer. */
  muxer: string;
  /** The constant rate factor when --crf is not given, and the largest allowed (none: no --crf). */
  crf?: { default: number; max: number };
  /** Whether the codec's 4:2:0 chroma needs even width and height. */
  even: boolean;
  args: (crf: number | undefined) => string[];
}

// mp4 and webm: the sRGB bytes are converted to Y'CbCr with the BT.709 matrix in the TV range and
// the stream is tagged so (the sRGB transfer), so players and ffmpeg decode the colours back as
// they were. gif: one palette made from every frame (palettegen holds the frames until the end).
const FORMATS: Record<string, Format> = {
  '.mp4': {
    muxer: 'mp4', crf: { default: 18, max: 51 }, even: true,
    args: (crf) => ['-vf', 'scale=out_color_matrix=bt709:out_range=tv,format=yuv420p', '-c:v', 'libx264', '-preset', 'medium', '-crf', String(crf), ...TAGS, '-movflags', '+faststart'],
  },
  '.webm': {
    muxer: 'webm', crf: { default: 31, max: 63 }, even: true,
    args: (crf) => ['-vf', 'scale=out_color_matrix=bt709:out_range=tv,format=yuv420p', '-c:v', 'libvpx-vp9', '-crf', String(crf), '-b:v', '0', '-deadline', 'good', '-cpu-used', '4', '-row-mt', '1', ...TAGS],
  },
  '.gif': {
    muxer: 'gif', even: false,
    args: () => ['-filter_complex', '[0:v]split[a][b];[a]palettegen=stats_mode=full[p];[b][p]paletteuse=dither=sierra2_4a', '-loop', '0'],
  },
};
const TAGS = ['-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'iec61966-2-1'];

/** Whether a file name asks for a video (.mp4, .webm, .gif). */
export function isVideoFile(file: string): boolean {
  return extname(file).toLowerCase() in FORMATS;
}

/** The CRF a render uses: the one given, checked against the format, or the format's default. */
export function videoCrf(file: string, crf: number | undefined): number | undefined {
  const format = FORMATS[extname(file).toLowerCase()];
  if (crf === undefined) return format?.crf?.default;
  if (!format) throw new VideoError(`--crf sets a video's quality: write a video with -o out.mp4 (or .webm); got -o ${file}`);
  if (!format.crf) throw new VideoError(`--crf does not apply to a GIF (it is lossless within its 256-colour palette): leave it out, or write .mp4 or .webm`);
  if (!(Number.isInteger(crf) && crf >= 0 && crf <= format.crf.max))
    throw new VideoError(`--crf for ${extname(file)} is a whole number from 0 (best) to ${format.crf.max} (worst), ${format.crf.default} by default; got ${crf}`);
  return crf;
}

/** Fail early, before anything is compiled, when ffmpeg is not on the machine. */
export function requireFfmpeg(): void {
  const r = spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' });
  if (r.error) throw new VideoError(`writing a video needs ffmpeg, which is not installed (or not on PATH): install Debian's \`ffmpeg\` package (sudo apt-get install ffmpeg), or write PNG frames with -o out/%04d.png`);
}

export interface VideoOptions {
  width: number;
  height: number;
  fps: number;
  crf?: number;
}

/** The size a video of a w x h image has: 4:2:0 formats need even sides (the edge is repeated). */
export function videoSize(file: string, width: number, height: number): { width: number; height: number } {
  const even = FORMATS[extname(file).toLowerCase()]?.even;
  return even ? { width: width + (width % 2), height: height + (height % 2) } : { width, height };
}

/** One video being written: frames in order, then close (or abort). */
export class VideoFile {
  readonly width: number;
  readonly height: number;
  private readonly child: ChildProcess;
  private readonly temporary: string;
  /** What the finished video replaces: `file`, or where a link there leads (renameTarget). */
  private readonly target: string;
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = '';
  private failure?: Error;

  constructor(
    readonly file: string,
    private readonly source: VideoOptions,
  ) {
    const format = FORMATS[extname(file).toLowerCase()];
    if (!format) throw new VideoError(`-o ${file}: a video is .mp4, .webm or .gif`);
    ({ width: this.width, height: this.height } = videoSize(file, source.width, source.height));
    try {
      makeFolders(dirname(file) || '.');
    } catch (e) {
      throw new VideoError(writeProblem(file, e));
    }
    try {
      ({ target: this.target, tmp: this.temporary } = besideTarget(file, 'partial'));
      sweepLeftBehind(this.target, 'partial');
    } catch (e) {
      throw new VideoError(writeProblem(file, e));
    }
    const args = ['-hide_banner', '-loglevel', 'error', '-y',
      '-f', 'rawvideo', '-pix_fmt', 'rgba', '-s', `${this.width}x${this.height}`, '-r', String(source.fps), '-i', 'pipe:0',
      ...format.args(source.crf ?? format.crf?.default), '-f', format.muxer, this.temporary];
    this.child = spawn('ffmpeg', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr = (this.stderr + s).slice(-4000)));
    // A pipe closed by an ffmpeg that failed: its exit status and message say why (close, below).
    this.child.stdin!.on('error', () => {});
    this.exited = new Promise((done) => {
      this.child.on('error', (e: NodeJS.ErrnoException) => {
        this.failure = e.code === 'ENOENT'
          ? new VideoError(`writing a video needs ffmpeg, which is not installed (or not on PATH): install Debian's \`ffmpeg\` package (sudo apt-get install ffmpeg)`)
          : new VideoError(`ffmpeg could not start: ${e.message}`);
        done({ code: null, signal: null });
      });
      this.child.on('close', (code, signal) => done({ code, signal }));
    });
  }

  /**
   * Hand one frame (source-sized RGBA) to ffmpeg. Returns at once while up to two frames wait in
   * the pipe, so that evaluation goes on while ffmpeg encodes; otherwise when the pipe drains.
   */
  async write(rgba: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    const frame = padToEven(rgba, this.source.width, this.source.height, this.width, this.height);
    const stdin = this.child.stdin!;
    if (stdin.destroyed || this.child.exitCode !== null) throw await this.failed();
    stdin.write(frame);
    if (stdin.writableLength > 2 * frame.length) {
      const drained = new Promise<boolean>((done) => {
        stdin.once('drain', () => done(true));
        this.exited.then(() => done(false));
      });
      if (!(await drained)) throw await this.failed();
    }
  }

  /** Finish the video: ffmpeg writes its end, then the file takes its name. */
  async close(): Promise<void> {
    this.child.stdin!.end();
    const { code, signal } = await this.exited;
    if (code !== 0) throw await this.failed(code, signal);
    try {
      renameSync(this.temporary, this.target);
    } catch (e) {
      rmSync(this.temporary, { force: true });
      throw new VideoError(`cannot write \`${this.file}\`: ${(e as NodeJS.ErrnoException).code === 'EISDIR' ? 'it is a folder' : (e as Error).message}`);
    }
  }

  /** Stop ffmpeg and remove what it wrote: no half-written video is left. */
  async abort(): Promise<void> {
    this.child.stdin!.destroy();
    this.child.kill('SIGKILL');
    await this.exited;
    rmSync(this.temporary, { force: true });
  }

  private async failed(code?: number | null, signal?: NodeJS.Signals | null): Promise<Error> {
    if (code === undefined) ({ code, signal } = await this.exited);
    rmSync(this.temporary, { force: true });
    if (this.failure) return this.failure;
    const message = this.stderr.trim().split('\n').slice(-3).join('; ').replaceAll(this.temporary, this.file);
    return new VideoError(`ffmpeg could not write \`${this.file}\` (${signal ? `signal ${signal}` : `exit status ${code}`})${message ? `: ${message}` : ''}`);
  }
}

/**
 * A w x h frame padded to pw x ph by repeating its last column and row (4:2:0 chroma covers 2 x 2
 * pixels: an edge repeated keeps the edge's colour, where black would bleed into it).
 */
function padToEven(rgba: Uint8Array, w: number, h: number, pw: number, ph: number): Uint8Array {
  if (pw === w && ph === h) return rgba;
  const out = new Uint8Array(pw * ph * 4);
  for (let y = 0; y < ph; y++) {
    const from = Math.min(y, h - 1) * w * 4;
    out.set(rgba.subarray(from, from + w * 4), y * pw * 4);
    if (pw > w) out.copyWithin((y * pw + w) * 4, (y * pw + w - 1) * 4, (y * pw + w) * 4);
  }
  return out;
}
