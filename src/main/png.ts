// PNG encoding of 8-bit RGBA pixels: the Sub filter on whole pixels (None for thumbnails), then zlib's deflate.
//
// pngjs (which still decodes) filters byte by byte in JavaScript and deflates at level 9 with the
// RLE strategy, all on the calling thread. Here the Sub filter takes each pixel as one 32-bit
// word and subtracts its four bytes from the previous pixel's at once (no borrow between bytes),
// and zlib deflates at level 1, strips of rows at once on its threads while the next strips are
// filtered. Measured 2026-12-03 on 2 cores: at 2048 x 2048 rings 282 -> 97 ms, mandelbrot 154 ->
// 40 ms, life 162 -> 69 ms (one thread), files 15 % smaller to 40 % larger (a flat image: 0.02 ->
// 0.14 MB); at 8192 x 8192 rings 3.2 -> 1.3 s, mandelbrot 2.0 -> 0.8 s. On more cores the
// deflating, most of the work, divides among them.
//
// A PNG is the signature, then chunks (length, type, data, CRC-32 of type and data): IHDR (size,
// 8-bit RGBA), IDATs (the zlib stream of the filtered rows, each row led by its filter byte; the
// stream may be cut anywhere between chunks), IEND.
//
// PngEncoder takes the rows in order, in runs of any length, and hands each finished chunk to a
// sink as soon as it and every chunk before it are done: the image is never held whole, so a
// tiled render writes a PNG of any size (png-file.ts) and encodePng is the same code with a sink
// that collects.

import { promisify } from 'node:util';
import zlib from 'node:zlib';

export const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/**
 * The row filter: Sub (each byte less the pixel before's; renders, pictures of any size) or None
 * (the bytes as they are). On 128 x 128 thumbnails of every example None was both cheaper and as
 * small or smaller at deflate level 1 (bench/experiments/thumbnail-png.ts, bench/RESULTS.md).
 */
export type RowFilterType = 'sub' | 'none';
/** Each filter's number, the first byte of each filtered row. */
const FILTER_BYTE: Record<RowFilterType, number> = { none: 0, sub: 1 };
/** zlib's fastest level: renders are written for pipelines, speed first. */
export const LEVEL = 1;
const HIGH_BITS = 0x80808080 | 0;
/** Bytes of filtered rows per strip, each deflated apart. */
const STRIP_BYTES = 4 << 20;
export const ADLER_MOD = 65521;
/**
 * Pixels whose Adler-32 sums stay within int32 before they are reduced: over n pixels
 * a < 65521 + 1020 n and b < n (4 a + 2550), under 2^31 for n = 512.
 */
const ADLER_PIXELS = 512;
/** zlib's header: deflate with a 32 KiB window, the fastest level (the check bits make it % 31). */
export const ZLIB_HEADER = Buffer.from([0x78, 0x01]);
/** Threads zlib deflates on (libuv's pool, UV_THREADPOOL_SIZE, default 4). */
const THREADS = Number(process.env.UV_THREADPOOL_SIZE) || 4;

/** Each byte of a minus the same byte of b, modulo 256, in one 32-bit operation. */
function subBytes(a: number, b: number): number {
  return ((a | HIGH_BITS) - (b & ~HIGH_BITS)) ^ ((a ^ ~b) & HIGH_BITS);
}

/** Rows per strip of an image `width` pixels wide. */
export function stripRows(width: number): number {
  return Math.max(1, Math.floor(STRIP_BYTES / (width * 4 + 1)));
}

/**
 * Pixels to encode: all of them (RGBA, rows top to bottom), or a function giving rows [y0, y1)
 * whose buffer may be reused by its next call (rows made from a field as they are encoded).
 */
export type Pixels = Uint8Array | ((y0: number, y1: number) => Uint8Array);

/** A run of filtered rows and the Adler-32 sums of every filtered byte up to its end. */
interface Strip {
  bytes: Buffer;
  a: number;
  b: number;
}

/**
 * The row filter (Sub, or None), row by row, with the zlib stream's Adler-32 of the filtered
 * bytes summed as they are made (sums a and b, each byte's part computed from the pixel's word).
 */
export class RowFilter {
  a = 1;
  b = 0;
  private readonly row: Uint32Array;
  private readonly rowAsBytes: Uint8Array;
  private readonly type: number;

  constructor(
    private readonly width: number,
    type: RowFilterType = 'sub',
  ) {
    this.row = new Uint32Array(width);
    this.rowAsBytes = new Uint8Array(this.row.buffer);
    this.type = FILTER_BYTE[type];
  }

  /** Filter one row (its pixels as words) into `out` at `at`: the filter byte, then the row. */
  filter(words: Uint32Array, p: number, out: Buffer, at: number): void {
    const { row, width, type } = this;
    if (type === FILTER_BYTE.sub) for (let x = 0; x < width; x++) row[x] = x === 0 ? words[p] : subBytes(words[p + x], words[p + x - 1]);
    else row.set(words.subarray(p, p + width));
    let a = (this.a + type) % ADLER_MOD; // the filter byte
    let b = (this.b + a) % ADLER_MOD;
    for (let x0 = 0; x0 < width; x0 += ADLER_PIXELS) {
      // In int32 over a block: per word, b gains 4a + 4b0 + 3b1 + 2b2 + b3 (bytes in memory
      // order, little-endian), a gains the bytes' sum; pairs are summed in 16-bit halves.
      let ra = a;
      let rb = 0;
      const end = Math.min(width, x0 + ADLER_PIXELS);
      for (let x = x0; x < end; x++) {
        const w = row[x];
        const even = w & 0x00ff00ff;
        const pairs = even + ((w >>> 8) & 0x00ff00ff);
        const low = pairs & 0xffff;
        const high = pairs >>> 16;
        rb = (rb + (ra << 2) + low + (low << 1) + high + (even & 0xffff) + (even >>> 16)) | 0;
        ra = (ra + low + high) | 0;
      }
      b = (b + rb) % ADLER_MOD;
      a = ra % ADLER_MOD;
    }
    this.a = a;
    this.b = b;
    out[at] = type;
    out.set(this.rowAsBytes, at + 1);
  }
}

/** Whole pixels as words: rows are word-aligned only when they start on a word. */
export function asWords(rgba: Uint8Array): Uint32Array {
  const aligned = rgba.byteOffset % 4 === 0 ? rgba : rgba.slice();
  return new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.length >> 2);
}

/**
 * The rows of `pixels` filtered with Sub, each led by its filter byte, in strips of about
 * STRIP_BYTES: what IDAT compresses. Strips, not one buffer of the whole image, let zlib deflate
 * them on several threads while the next ones are filtered.
 */
export function* filteredRows(pixels: Pixels, width: number, height: number, type: RowFilterType = 'sub'): Generator<Strip> {
  const rowBytes = width * 4;
  const rowsOf = typeof pixels === 'function' ? pixels : (y0: number, y1: number) => pixels.subarray(y0 * rowBytes, y1 * rowBytes);
  const filter = new RowFilter(width, type);
  const rowsPerStrip = stripRows(width);
  for (let y0 = 0; y0 < height; y0 += rowsPerStrip) {
    const rows = Math.min(rowsPerStrip, height - y0);
    const words = asWords(rowsOf(y0, y0 + rows));
    const out = Buffer.allocUnsafe(rows * (rowBytes + 1));
    for (let r = 0; r < rows; r++) filter.filter(words, r * width, out, r * (rowBytes + 1));
    yield { bytes: out, a: filter.a, b: filter.b };
  }
}

export function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, tail]);
}

const deflateRaw = promisify(zlib.deflateRaw);

/** Where an encoder's bytes go, in order; the encoder waits for each write before the next. */
export type PngSink = (bytes: Buffer) => void | Promise<void>;

/**
 * A PNG made from rows given in order (`rows`, any number at a time), each finished piece handed
 * to `sink` in order as soon as it is ready; `end` once every row was given.
 *
 * One zlib stream, made of strips deflated apart on zlib's threads (as pigz does): each strip
 * but the last ends with a sync flush (byte-aligned, not final), so the raw strips join into one
 * deflate stream; the zlib header goes before them and the Adler-32 after. A strip starts without
 * the previous one's 32 KiB window: with strips of megabytes, the files grow by well under 1 %.
 * At most two strips per thread are in flight: the encoder holds a few strips, never the image.
 */
export class PngEncoder {
  /** Rows given so far. */
  given = 0;
  private readonly filter: RowFilter;
  private readonly rowsPerStrip: number;
  private readonly rowBytes: number;
  private strip: Buffer | null = null;
  private stripRow = 0;
  private readonly strips: number;
  private made = 0;
  /** Each strip's chunk written to the sink, in order (each waits for the one before). */
  private readonly inFlight: Promise<void>[] = [];
  private written: Promise<void>;
  private failed: unknown;

  constructor(
    readonly width: number,
    readonly height: number,
    private readonly sink: PngSink,
    type: RowFilterType = 'sub',
  ) {
    if (!(Number.isInteger(width) && Number.isInteger(height) && width >= 1 && height >= 1)) throw new Error(`PngEncoder: ${width} x ${height} is not a picture's size`);
    this.filter = new RowFilter(width, type);
    this.rowsPerStrip = stripRows(width);
    this.rowBytes = width * 4;
    this.strips = Math.ceil(height / this.rowsPerStrip);
    this.written = this.put(Buffer.concat([SIGNATURE, chunk('IHDR', ihdr(width, height)), chunk('IDAT', ZLIB_HEADER)]));
  }

  /** Rows next in order: whole rows of RGBA bytes (a multiple of width * 4 bytes). */
  async rows(rgba: Uint8Array): Promise<void> {
    if (rgba.length % this.rowBytes !== 0) throw new Error(`PngEncoder: ${rgba.length} bytes are not whole rows of ${this.width} RGBA pixels`);
    const count = rgba.length / this.rowBytes;
    if (this.given + count > this.height) throw new Error(`PngEncoder: ${this.given + count} rows given for a picture ${this.height} high`);
    const words = asWords(rgba);
    for (let r = 0; r < count; r++) {
      if (!this.strip) {
        const rows = Math.min(this.rowsPerStrip, this.height - this.given);
        this.strip = Buffer.allocUnsafe(rows * (this.rowBytes + 1));
        this.stripRow = 0;
      }
      this.filter.filter(words, r * this.width, this.strip, this.stripRow * (this.rowBytes + 1));
      this.given++;
      if (++this.stripRow * (this.rowBytes + 1) === this.strip.length) await this.deflate(this.strip);
    }
  }

  /** Every row was given: the checksum and the end, once every strip is written. */
  async end(): Promise<void> {
    if (this.given !== this.height) throw new Error(`PngEncoder: ${this.given} of ${this.height} rows given`);
    const adler = Buffer.alloc(4);
    adler.writeUInt32BE(((this.filter.b << 16) | this.filter.a) >>> 0, 0);
    await Promise.all(this.inFlight);
    await this.written;
    await this.put(Buffer.concat([chunk('IDAT', adler), chunk('IEND', Buffer.alloc(0))]));
  }

  private async deflate(strip: Buffer): Promise<void> {
    this.strip = null;
    const last = ++this.made === this.strips;
    const piece = deflateRaw(strip, { level: LEVEL, finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH });
    const before = this.written;
    this.written = Promise.all([piece, before]).then(([bytes]) => this.put(chunk('IDAT', bytes)));
    this.written.catch((e) => (this.failed ??= e)); // rethrown by the next rows() or end()
    this.inFlight.push(this.written);
    if (this.inFlight.length >= 2 * THREADS) await this.inFlight.shift();
    if (this.failed) throw this.failed;
  }

  private async put(bytes: Buffer): Promise<void> {
    await this.sink(bytes);
  }
}

/** PNG bytes of width x height RGBA pixels (4 bytes each, rows top to bottom), rows filtered with `filter`. */
export async function encodePng(width: number, height: number, pixels: Pixels, filter: RowFilterType = 'sub'): Promise<Buffer> {
  if (typeof pixels !== 'function' && pixels.length !== width * height * 4) throw new Error(`encodePng: ${pixels.length} bytes for ${width} x ${height} RGBA pixels`);
  if (typeof pixels !== 'function' && height * (width * 4 + 1) <= SMALL_BYTES) return encodeSmall(width, height, pixels, filter);
  const pieces: Buffer[] = [];
  const encoder = new PngEncoder(width, height, (b) => void pieces.push(b), filter);
  const rowsOf = typeof pixels === 'function' ? pixels : (y0: number, y1: number) => pixels.subarray(y0 * width * 4, y1 * width * 4);
  const step = stripRows(width);
  for (let y0 = 0; y0 < height; y0 += step) await encoder.rows(rowsOf(y0, Math.min(height, y0 + step)));
  await encoder.end();
  return Buffer.concat(pieces);
}

/** Filtered bytes at most this many (a 128 x 128 thumbnail's are 66 KB) are deflated on the calling thread. */
const SMALL_BYTES = 256 << 10;

/**
 * A small picture (one strip) deflated on the calling thread, where the hop to zlib's threads and
 * back would cost more than the deflating itself: the same bytes as PngEncoder makes of it.
 */
function encodeSmall(width: number, height: number, rgba: Uint8Array, filter: RowFilterType): Buffer {
  const strips = [...filteredRows(rgba, width, height, filter)];
  if (strips.length !== 1) throw new Error(`encodeSmall: ${width} x ${height} is not one strip`);
  const [{ bytes, a, b }] = strips;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((b << 16) | a) >>> 0, 0);
  const deflated = zlib.deflateRawSync(bytes, { level: LEVEL });
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr(width, height)), chunk('IDAT', ZLIB_HEADER), chunk('IDAT', deflated), chunk('IDAT', adler), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * Rows deflated where they were made, to be joined into a PNG elsewhere in order (a farm
 * worker's tile, sent back to the submitter): one raw deflate piece, byte-aligned and not final
 * unless it ends the picture, with the Adler-32 and length of its filtered bytes.
 */
export interface DeflatedStrip {
  /** The first row and the number of rows. */
  y0: number;
  rows: number;
  bytes: Buffer;
  adler: number;
  length: number;
}

/** Rows filtered as one strip (PngEncoder's), and how its deflate piece ends. */
interface FilteredStrip {
  y0: number;
  rows: number;
  bytes: Buffer;
  adler: number;
  finish: number;
}

/**
 * Rows [y0, y0 + n) of a picture `height` high, filtered in the strips PngEncoder makes (every
 * stripRows(width) rows from row 0), each with its own Adler-32: what deflateStrips and
 * deflateStripsHere deflate.
 */
function* filteredStrips(rgba: Uint8Array, width: number, y0: number, height: number): Generator<FilteredStrip> {
  const rowBytes = width * 4;
  if (rgba.length % rowBytes !== 0) throw new Error(`deflateStrips: ${rgba.length} bytes are not whole rows of ${width} RGBA pixels`);
  const n = rgba.length / rowBytes;
  if (y0 < 0 || y0 + n > height) throw new Error(`deflateStrips: rows [${y0}, ${y0 + n}) are not inside a picture ${height} high`);
  const step = stripRows(width);
  const words = asWords(rgba);
  for (let y = y0; y < y0 + n; ) {
    const end = Math.min(y0 + n, (Math.floor(y / step) + 1) * step);
    const filter = new RowFilter(width);
    const out = Buffer.allocUnsafe((end - y) * (rowBytes + 1));
    for (let r = y; r < end; r++) filter.filter(words, (r - y0) * width, out, (r - y) * (rowBytes + 1));
    yield { y0: y, rows: end - y, bytes: out, adler: ((filter.b << 16) | filter.a) >>> 0, finish: end === height ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH };
    y = end;
  }
}

/**
 * Rows [y0, y0 + n) of a picture `height` high, filtered and deflated (on zlib's threads) in the
 * strips PngEncoder makes: joined in order by PngJoiner, strips that start on those boundaries
 * give the bytes of the PNG encoded in one piece.
 */
export async function deflateStrips(rgba: Uint8Array, width: number, y0: number, height: number): Promise<DeflatedStrip[]> {
  const pieces: Promise<DeflatedStrip>[] = [];
  for (const s of filteredStrips(rgba, width, y0, height))
    pieces.push(deflateRaw(s.bytes, { level: LEVEL, finishFlush: s.finish }).then((bytes) => ({ y0: s.y0, rows: s.rows, bytes, adler: s.adler, length: s.bytes.length })));
  return Promise.all(pieces);
}

/** deflateStrips on the calling thread: for a worker thread that is itself one of several (field-png.ts). */
export function deflateStripsHere(rgba: Uint8Array, width: number, y0: number, height: number): DeflatedStrip[] {
  const pieces: DeflatedStrip[] = [];
  for (const s of filteredStrips(rgba, width, y0, height))
    pieces.push({ y0: s.y0, rows: s.rows, bytes: zlib.deflateRawSync(s.bytes, { level: LEVEL, finishFlush: s.finish }), adler: s.adler, length: s.bytes.length });
  return pieces;
}

/** The Adler-32 of two runs of bytes joined, from each run's (as zlib's adler32_combine). */
export function adlerCombine(a1: number, a2: number, length2: number): number {
  const rem = length2 % ADLER_MOD;
  let sum1 = a1 & 0xffff;
  let sum2 = (rem * sum1) % ADLER_MOD;
  sum1 += (a2 & 0xffff) + ADLER_MOD - 1;
  sum2 += (a1 >>> 16) + (a2 >>> 16) + ADLER_MOD - rem;
  if (sum1 >= ADLER_MOD) sum1 -= ADLER_MOD;
  if (sum1 >= ADLER_MOD) sum1 -= ADLER_MOD;
  if (sum2 >= 2 * ADLER_MOD) sum2 -= 2 * ADLER_MOD;
  if (sum2 >= ADLER_MOD) sum2 -= ADLER_MOD;
  return ((sum2 << 16) | sum1) >>> 0;
}

/**
 * A PNG joined from deflated strips given in order (deflateStrips, made anywhere): each goes to
 * the sink as it comes; `end` once the last row has come. Nothing is deflated or held here.
 */
export class PngJoiner {
  /** Rows joined so far. */
  given = 0;
  private adler = 1;
  private ended = false;
  private written: Promise<void>;

  constructor(
    readonly width: number,
    readonly height: number,
    private readonly sink: PngSink,
  ) {
    this.written = Promise.resolve(sink(Buffer.concat([SIGNATURE, chunk('IHDR', ihdr(width, height)), chunk('IDAT', ZLIB_HEADER)])));
  }

  async add(strip: DeflatedStrip): Promise<void> {
    if (strip.y0 !== this.given) throw new Error(`PngJoiner: rows from ${strip.y0} came when ${this.given} was next: strips join in order`);
    if (strip.y0 + strip.rows > this.height) throw new Error(`PngJoiner: rows to ${strip.y0 + strip.rows} for a picture ${this.height} high`);
    this.given += strip.rows;
    this.adler = adlerCombine(this.adler, strip.adler, strip.length);
    await this.written;
    this.written = Promise.resolve(this.sink(chunk('IDAT', strip.bytes)));
    await this.written;
  }

  async end(): Promise<void> {
    if (this.given !== this.height) throw new Error(`PngJoiner: ${this.given} of ${this.height} rows joined`);
    if (this.ended) return;
    this.ended = true;
    const adler = Buffer.alloc(4);
    adler.writeUInt32BE(this.adler, 0);
    await this.written;
    await this.sink(Buffer.concat([chunk('IDAT', adler), chunk('IEND', Buffer.alloc(0))]));
  }
}

function ihdr(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 6; // colour type: RGBA
  // compression 0 (deflate), filter method 0, no interlace: bytes 10-12 stay 0
  return header;
}
