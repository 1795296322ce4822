// A PNG file written as its rows arrive: chunks go to a temporary file beside it as the encoder
// finishes them (png.ts), and the file is renamed into place only when whole. A picture of any
// size is written without holding it; a render that fails or is stopped leaves no file behind.


import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { besideTarget, makeFolders, renameTarget } from './files.js';
import { PngEncoder, PngJoiner, type DeflatedStrip } from './png.js';

export class PngWriteError extends Error {
  override name = 'PngWriteError';
}

/** Why a file could not be written, in words, from the system's error. */
export function writeProblem(file: string, e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'ENOTREG') return `cannot write \`${file}\`: it is ${(err as { what?: string }).what}, not a file: name a file to write to`;
  // A link to a folder that is not there: the error named our temporary file beside its target.
  if (err.code === 'ENOENT') {
    let target = file;
    try {
      target = renameTarget(file);
    } catch {
      // a loop of links: said as it is below
    }
    if (target !== file) return `cannot write \`${file}\`: it is a link to \`${target}\`, whose folder is not there (ENOENT): make the folder, or remove the link`;
  }
  // A folder that takes no new files (/proc): the error named our temporary file in it.
  if (err.code === 'ENOENT' && err.syscall === 'open' && typeof err.path === 'string' && basename(err.path).startsWith('.'))
    return `cannot write \`${file}\`: its folder \`${dirname(err.path)}\` takes no new files (ENOENT): write under another folder`;
  // A folder that cannot be made where it is asked (under /proc, a mount point's stand-in).
  if (err.code === 'ENOENT' && err.syscall === 'mkdir') return `cannot write \`${file}\`: its folder \`${err.path}\` cannot be made there (ENOENT): write under a folder that takes new files`;
  const why = err.code === 'EEXIST' || err.code === 'ENOTDIR' ? 'a file is in the way of its folder' : err.code === 'EACCES' || err.code === 'EPERM' ? 'permission denied' : err.code === 'ENOSPC' ? 'the disk is full' : err.code === 'EISDIR' ? 'it is a folder' : err.message;
  return `cannot write \`${file}\`: ${why}${err.code ? ` (${err.code})` : ''}`;
}

/**
 * One PNG file being written: `rows` (whole rows, in order; made by `create`) or `strip` (rows
 * deflated elsewhere, in order; made by `joined`), then `finish`, or `abort`. Errors of the file
 * system are PngWriteErrors naming the file and why.
 */
export class PngFile {
  private constructor(
    readonly file: string,
    /** What the finished file replaces: `file`, or where a link there leads (renameTarget). */
    private readonly target: string,
    private readonly tmp: string,
    private readonly handle: FileHandle,
    private readonly encoder: PngEncoder | PngJoiner,
  ) {}

  /** Bytes written so far. */
  bytes = 0;

  /** A PNG whose rows are encoded here (PngEncoder). */
  static async create(file: string, width: number, height: number): Promise<PngFile> {
    return PngFile.open(file, (sink) => new PngEncoder(width, height, sink));
  }

  /** A PNG joined from strips deflated elsewhere (deflateStrips, PngJoiner). */
  static async joined(file: string, width: number, height: number): Promise<PngFile> {
    return PngFile.open(file, (sink) => new PngJoiner(width, height, sink));
  }

  private static async open(file: string, assembler: (sink: (bytes: Buffer) => Promise<void>) => PngEncoder | PngJoiner): Promise<PngFile> {
    let target: string;
    let tmp: string;
    let handle: FileHandle;
    try {
      makeFolders(dirname(file) || '.');
      ({ target, tmp } = besideTarget(file));
      handle = await open(tmp, 'w');
    } catch (e) {
      throw new PngWriteError(writeProblem(file, e));
    }
    let png: PngFile | undefined = undefined;
    const encoder = assembler(async (bytes) => {
      try {
        await handle.write(bytes);
      } catch (e) {
        throw new PngWriteError(writeProblem(file, e));
      }
      png!.bytes += bytes.length;
    });
    png = new PngFile(file, target, tmp, handle, encoder);
    return png;
  }

  get width(): number {
    return this.encoder.width;
  }

  get height(): number {
    return this.encoder.height;
  }

  /** Rows given so far. */
  get given(): number {
    return this.encoder.given;
  }

  /** The next rows, in order (RGBA bytes, whole rows); the buffer may be reused once this returns. */
  async rows(rgba: Uint8Array): Promise<void> {
    if (!(this.encoder instanceof PngEncoder)) throw new Error('internal: PngFile.rows on a joined PNG (give it strips)');
    await this.encoder.rows(rgba);
  }

  /** The next strip deflated elsewhere, in order. */
  async strip(s: DeflatedStrip): Promise<void> {
    if (!(this.encoder instanceof PngJoiner)) throw new Error('internal: PngFile.strip on a PNG encoded here (give it rows)');
    await this.encoder.add(s);
  }

  /** Every row given: the file's end, then it takes its name. Returns its size in bytes. */
  async finish(): Promise<number> {
    try {
      await this.encoder.end();
      await this.handle.close();
      await rename(this.tmp, this.target).catch((e) => Promise.reject(new PngWriteError(writeProblem(this.file, e))));
    } catch (e) {
      await this.abort();
      throw e;
    }
    return this.bytes;
  }

  /** Give up: the temporary file is removed and nothing takes the name. */
  async abort(): Promise<void> {
    await this.handle.close().catch(() => {});
    await rm(this.tmp, { force: true });
  }
}
