// Where the farm's frames go as they come back, in whatever order the workers finish them: each to
// its own PNG file (written whole, then renamed), or into one video, whose frames must reach
// ffmpeg in order: a frame that comes early waits (as the PNG it came as) for the ones before it,
// and is decoded to RGBA (exactly the pixels the worker encoded) when its turn comes.


import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeFolders, writeFileAtomic } from '../main/files.js';
import { decodePng } from '../main/image.js';
import { writeProblem } from '../main/png-file.js';
import { RenderError, VideoWriter, type RenderOptions } from '../main/render.js';
import { frameFile } from '../main/frame-pattern.js';

export interface FrameOutput {
  /** Before any job is added: what would keep the frames from being written, refused now (a RenderError). */
  prepare?(frames: Iterable<number>): void;
  /** A frame's PNG; returns the frames now written (for a video, every frame it let through, in order). */
  frame(frame: number, png: Buffer, t0: number): Promise<{ frame: number; file: string; millis: number }[]>;
  /** Every frame given: finish the output. */
  complete(): Promise<void>;
  abort(): Promise<void>;
}

export class FrameFiles implements FrameOutput {
  /** `pattern` names each frame's file (out/%04d.png); without `frames`, it is the one file. */
  constructor(
    private readonly pattern: string,
    private readonly frames: boolean,
  ) {}

  /**
   * Each frame's folder made, and no folder where its file goes, none unwritable: said before the
   * farm renders anything (it was said after the workers had rendered the frames, as a raw error).
   */
  prepare(frames: Iterable<number>): void {
    const folders = new Set<string>();
    for (const frame of frames) {
      const file = this.file(frame);
      try {
        const folder = dirname(file) || '.';
        if (!folders.has(folder)) {
          makeFolders(folder);
          accessSync(folder, constants.W_OK);
          folders.add(folder);
        }
        if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw Object.assign(new Error(`EISDIR: ${file}`), { code: 'EISDIR' });
      } catch (e) {
        throw this.problem(frame, file, e);
      }
    }
  }

  async frame(frame: number, png: Buffer, t0: number) {
    const file = this.file(frame);
    try {
      makeFolders(dirname(file) || '.');
      writeFileAtomic(file, png);
    } catch (e) {
      throw this.problem(frame, file, e);
    }
    return [{ frame, file, millis: Math.round((performance.now() - t0) * 1000) / 1000 }];
  }

  private file(frame: number): string {
    return this.frames ? frameFile(this.pattern, frame) : this.pattern;
  }

  /** In the words a local render uses (writeProblem). */
  private problem(frame: number, file: string, e: unknown): RenderError {
    return new RenderError(`${this.frames ? `frame ${frame}: ` : ''}${writeProblem(file, e)}`, frame);
  }

  async complete(): Promise<void> {}
  async abort(): Promise<void> {}
}

export class VideoFrames implements FrameOutput {
  private readonly writer: VideoWriter;
  private readonly waiting = new Map<number, Buffer>();
  private written: { frame: number; file: string; millis: number }[] = [];

  constructor(
    private readonly options: RenderOptions,
    private next: number,
  ) {
    this.writer = new VideoWriter(options, (w) => this.written.push({ frame: w.frame, file: w.file, millis: w.millis }));
  }

  get padded(): string | undefined {
    return this.writer.padded;
  }

  describe(): object {
    return this.writer.describe();
  }

  async frame(frame: number, png: Buffer, t0: number) {
    this.waiting.set(frame, png);
    this.written = [];
    for (let p; (p = this.waiting.get(this.next)); this.next++) {
      this.waiting.delete(this.next);
      const { width, height, rgba } = decodePng(p);
      await this.writer.write({ frame: this.next, file: this.options.file, t0, width, height }, rgba);
    }
    return this.written;
  }

  complete(): Promise<void> {
    return this.writer.complete();
  }

  abort(): Promise<void> {
    return this.writer.abort();
  }
}
