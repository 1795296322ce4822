// PNG encoding of 8-bit RGBA pixels: the Sub filter on whole pixels, then zlib's deflate.
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

import { promisify } from 'node:util';
import zlib from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The Sub filter's number, the first byte of each filtered row. */
const SUB = 1;
/** zlib's fastest level: renders are written for pipelines, speed first. */
const LEVEL = 1;
const HIGH_BITS = 0x80808080 | 0;
/** Bytes of filtered rows per strip, each deflated apart. */
const STRIP_BYTES = 4 << 20;
const ADLER_MOD = 65521;
/**
 * Pixels whose Adler-32 sums stay within int32 before they are reduced: over n pixels
 * a < 65521 + 1020 n and b < n (4 a + 2550), under 2^31 for n = 512.
 */
const ADLER_PIXELS = 512;
/** zlib's header: deflate with a 32 KiB window, the fastest level (the check bits make it % 31). */
const ZLIB_HEADER = Buffer.from([0x78, 0x01]);
/** Threads zlib deflates on (libuv's pool, UV_THREADPOOL_SIZE, default 4). */
const THREADS = Number(process.env.UV_THREADPOOL_SIZE) || 4;

/** Each byte of a minus the same byte of b, modulo 256, in one 32-bit operation. */
function subBytes(a: number, b: number): number {
  return ((a | HIGH_BITS) - (b & ~HIGH_BITS)) ^ ((a ^ ~b) & HIGH_BITS);
}

/** Rows per strip of an image `width` pixels wide. */
function stripRows(width: number): number {
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
 * The rows of `pixels` filtered with Sub, each led by its filter byte, in strips of about
 * STRIP_BYTES: what IDAT compresses. Strips, not one buffer of the whole image, let zlib deflate
 * them on several threads while the next ones are filtered. The zlib stream's Adler-32 of the
 * filtered bytes is summed here, as they are made (sums a and b, each byte's part computed from
 * the pixel's word).
 */
export function* subFiltered(pixels: Pixels, width: number, height: number): Generator<Strip> {
  const rowBytes = width * 4;
  const rowsOf = typeof pixels === 'function' ? pixels : (y0: number, y1: number) => pixels.subarray(y0 * rowBytes, y1 * rowBytes);
  const row = new Uint32Array(width);
  const rowAsBytes = new Uint8Array(row.buffer);
  const rowsPerStrip = stripRows(width);
  let a = 1;
  let b = 0;
  for (let y0 = 0; y0 < height; y0 += rowsPerStrip) {
    const rows = Math.min(rowsPerStrip, height - y0);
    const rgba = rowsOf(y0, y0 + rows);
    // Whole pixels as words: the rows are word-aligned only when they start on a word.
    const aligned = rgba.byteOffset % 4 === 0 ? rgba : rgba.slice();
    const words = new Uint32Array(aligned.buffer, aligned.byteOffset, width * rows);
    const out = Buffer.allocUnsafe(rows * (rowBytes + 1));
    for (let r = 0, p = 0; r < rows; r++, p += width) {
      for (let x = 0; x < width; x++) row[x] = x === 0 ? words[p] : subBytes(words[p + x], words[p + x - 1]);
      a = (a + SUB) % ADLER_MOD; // the filter byte
      b = (b + a) % ADLER_MOD;
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
      const at = r * (rowBytes + 1);
      out[at] = SUB;
      out.set(rowAsBytes, at + 1);
    }
    yield { bytes: out, a, b };
  }
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, tail]);
}

const deflateRaw = promisify(zlib.deflateRaw);

/**
 * PNG bytes of width x height RGBA pixels (4 bytes each, rows top to bottom).
 *
 * One zlib stream, made of strips deflated apart on zlib's threads (as pigz does): each strip
 * but the last ends with a sync flush (byte-aligned, not final), so the raw strips join into one
 * deflate stream; the zlib header goes before them and the Adler-32 after. A strip starts without
 * the previous one's 32 KiB window: with strips of megabytes, the files grow by well under 1 %.
 */
export async function encodePng(width: number, height: number, pixels: Pixels): Promise<Buffer> {
  if (typeof pixels !== 'function' && pixels.length !== width * height * 4) throw new Error(`encodePng: ${pixels.length} bytes for ${width} x ${height} RGBA pixels`);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 6; // colour type: RGBA
  // compression 0 (deflate), filter method 0, no interlace: bytes 10-12 stay 0
  const strips = Math.ceil(height / stripRows(width));
  const deflated: Promise<Buffer>[] = [];
  let sums = { a: 1, b: 0 };
  let n = 0;
  let settled = 0;
  for (const strip of subFiltered(pixels, width, height)) {
    const last = ++n === strips;
    const piece = deflateRaw(strip.bytes, { level: LEVEL, finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH });
    piece.catch(() => {}); // awaited below, maybe after a later strip fails
    deflated.push(piece);
    sums = strip;
    // At most two strips per thread wait: the filtered bytes are not all held at once.
    if (deflated.length - settled >= 2 * THREADS) await deflated[settled++];
  }
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((sums.b << 16) | sums.a) >>> 0, 0);
  const pieces = [ZLIB_HEADER, ...(await Promise.all(deflated)), adler];
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), ...pieces.map((p) => chunk('IDAT', p)), chunk('IEND', Buffer.alloc(0))]);
}
