// One huge frame over the farm: the picture is cut into bands of whole rows, each band a job. A
// worker renders its band in tiles (tiles/renderer.ts) and returns it already encoded: the IDAT
// chunks of its strips, filtered and deflated exactly as PngEncoder (png.ts) encodes the same
// rows, and the Adler-32 sums of its filtered bytes. The submitter writes the PNG's head, the
// bands' chunks in order and the end (the sums combined), so it never holds the picture, and
// the file is byte for byte the one a local render writes.
//
// That holds because bands start on a strip's first row (a multiple of stripRows), each strip is
// deflated apart with a sync flush (the picture's last strip finishes the stream), and the Sub
// filter reads nothing from the row above.

import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ADLER_MOD, asWords, chunk, LEVEL, SIGNATURE, stripRows, RowFilter, ZLIB_HEADER } from '../main/png.js';

const deflateRaw = promisify(zlib.deflateRaw);

/**
 * A band's rows per job: whole strips, about 8 MiB of pixels (at least one strip, 4 MiB of
 * filtered rows): a 32768 x 32768 picture is 529 jobs of 62 rows.
 */
export function bandRows(width: number): number {
  const strip = stripRows(width);
  return strip * Math.max(1, Math.floor((8 << 20) / (width * 4 * strip)));
}

/** Bands of a picture `height` rows high: [y0, y1). */
export function bandsOf(width: number, height: number): { y0: number; y1: number }[] {
  const rows = bandRows(width);
  const out = [];
  for (let y0 = 0; y0 < height; y0 += rows) out.push({ y0, y1: Math.min(height, y0 + rows) });
  return out;
}

export interface EncodedBand {
  /** IDAT chunks, in order. */
  chunks: Buffer;
  /** Adler-32 sums of the band's filtered bytes alone (from a = 1, b = 0), and how many. */
  a: number;
  b: number;
  length: number;
}

/** Encodes the rows of the band starting at `y0` of a `width` x `height` picture, given in order. */
export class BandEncoder {
  private readonly filter: RowFilter;
  private readonly strip: number;
  private rows: Buffer[] = [];
  private given = 0;
  private readonly pieces: Promise<Buffer>[] = [];

  constructor(
    private readonly width: number,
    private readonly height: number,
    private readonly y0: number,
    private readonly y1: number,
  ) {
    this.filter = new RowFilter(width);
    this.strip = stripRows(width);
    if (y0 % this.strip !== 0) throw new Error(`BandEncoder: a band starts on a strip (a multiple of ${this.strip} rows), not at ${y0}`);
  }

  /** Whole rows next in order. */
  add(rgba: Uint8Array): void {
    const rowBytes = this.width * 4;
    const words = asWords(rgba);
    for (let r = 0; r < rgba.length / rowBytes; r++) {
      const out = Buffer.allocUnsafe(rowBytes + 1);
      this.filter.filter(words, r * this.width, out, 0);
      this.rows.push(out);
      this.given++;
      const y = this.y0 + this.given;
      if ((y - this.y0) % this.strip === 0 || y === this.y1) this.deflate(y === this.height);
    }
  }

  async end(): Promise<EncodedBand> {
    if (this.y0 + this.given !== this.y1) throw new Error(`BandEncoder: ${this.given} of ${this.y1 - this.y0} rows given`);
    const pieces = await Promise.all(this.pieces);
    return { chunks: Buffer.concat(pieces.map((p) => chunk('IDAT', p))), a: this.filter.a, b: this.filter.b, length: this.given * (this.width * 4 + 1) };
  }

  private deflate(last: boolean): void {
    const strip = Buffer.concat(this.rows);
    this.rows = [];
    this.pieces.push(deflateRaw(strip, { level: LEVEL, finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH }));
  }
}

/** The PNG's first bytes, as PngEncoder writes them: signature, header, the zlib header. */
export function pngHead(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 6;
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', ZLIB_HEADER)]);
}

/** The PNG's last bytes: the stream's Adler-32, then IEND. */
export function pngTail(sums: { a: number; b: number }): Buffer {
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((sums.b << 16) | sums.a) >>> 0, 0);
  return Buffer.concat([chunk('IDAT', adler), chunk('IEND', Buffer.alloc(0))]);
}

/** Adler-32 sums of two runs of bytes one after the other (zlib's adler32_combine). */
export function adlerCombine(first: { a: number; b: number }, second: { a: number; b: number; length: number }): { a: number; b: number } {
  const rem = second.length % ADLER_MOD;
  const a = (first.a + second.a + ADLER_MOD - 1) % ADLER_MOD;
  const b = (first.b + second.b + ((rem * first.a) % ADLER_MOD) + ADLER_MOD - rem) % ADLER_MOD;
  return { a, b };
}
