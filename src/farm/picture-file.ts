// One huge picture over the farm, written from its bands as they come back (bands.ts), in order:
// the bands after a missing one wait (held encoded) until it comes. A temporary file beside it,
// renamed into place when whole; the submitter never holds the picture.


import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { besideTarget, makeFolders } from '../main/files.js';
import { writeProblem } from '../main/png-file.js';
import { RenderError } from '../main/render.js';
import { adlerCombine, pngHead, pngTail } from './bands.js';

/**
 * One picture written from its bands as they come back, in order: the bands after a missing one
 * wait (held encoded) until it comes. A temporary file beside it, renamed into place when whole.
 */
export class PictureFile {
  private next = 0;
  private readonly waiting = new Map<number, Buffer>();
  private sums = { a: 1, b: 0 };

  private constructor(
    /** What the finished picture replaces: the file, or where a link there leads (renameTarget). */
    private readonly file: string,
    private readonly tmp: string,
    private readonly handle: FileHandle,
    private readonly count: number,
  ) {}

  static async create(file: string, width: number, height: number, count: number): Promise<PictureFile> {
    try {
      makeFolders(dirname(file) || '.');
      const { target, tmp } = besideTarget(file);
      const handle = await open(tmp, 'w');
      await handle.write(pngHead(width, height));
      return new PictureFile(target, tmp, handle, count);
    } catch (e) {
      throw new RenderError(writeProblem(file, e));
    }
  }

  /** A band's result: its sums (a, b, length as 32-bit words), then its IDAT chunks. */
  async band(index: number, result: Buffer): Promise<void> {
    this.waiting.set(index, result);
    for (let r; (r = this.waiting.get(this.next)); this.next++) {
      this.waiting.delete(this.next);
      this.sums = adlerCombine(this.sums, { a: r.readUInt32BE(0), b: r.readUInt32BE(4), length: r.readUInt32BE(8) });
      await this.write(r.subarray(12));
    }
  }

  async finish(): Promise<void> {
    if (this.next !== this.count) throw new RenderError(`internal: ${this.next} of ${this.count} bands written`);
    await this.write(pngTail(this.sums));
    await this.handle.close();
    await rename(this.tmp, this.file);
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => {});
    await rm(this.tmp, { force: true });
  }

  private async write(bytes: Buffer): Promise<void> {
    try {
      await this.handle.write(bytes);
    } catch (e) {
      throw new RenderError(writeProblem(this.file, e));
    }
  }
}
