// PNG encoding of 8-bit RGBA pixels: the Sub filter on whole pixels, then zlib's deflate.
//
// pngjs (which still decodes) filters byte by byte in JavaScript and deflates at level 9 with the
// RLE strategy, all on the calling thread. Here the Sub filter takes each pixel as one 32-bit
// word and subtracts its four bytes from the previous pixel's at once (no borrow between bytes),
// and zlib deflates at level 1, on its own threads, batch by batch as the rows are filtered.
// Measured 2026-12-03: at 2048 x 2048 rings 282 -> 97 ms, mandelbrot 154 -> 40 ms, life 162 -> 69
// ms, files 15 % smaller to 40 % larger (a flat image: 0.02 -> 0.14 MB); at 8192 x 8192 rings
// 3.2 -> 1.5-1.8 s, mandelbrot 2.0 -> 0.9-1.2 s, of which deflating is most.
//
// A PNG is the signature, then chunks (length, type, data, CRC-32 of type and data): IHDR (size,
// 8-bit RGBA), IDATs (the zlib stream of the filtered rows, each row led by its filter byte; the
// stream may be cut anywhere between chunks), IEND.

import { once } from 'node:events';
import zlib from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The Sub filter's number, the first byte of each filtered row. */
const SUB = 1;
/** zlib's fastest level: renders are written for pipelines, speed first. */
const LEVEL = 1;
const HIGH_BITS = 0x80808080 | 0;
/** Bytes of filtered rows per batch handed to zlib. */
const BATCH_BYTES = 1 << 20;

/** Each byte of a minus the same byte of b, modulo 256, in one 32-bit operation. */
function subBytes(a: number, b: number): number {
  return ((a | HIGH_BITS) - (b & ~HIGH_BITS)) ^ ((a ^ ~b) & HIGH_BITS);
}

/**
 * The rows of `rgba` filtered with Sub, each led by its filter byte, in batches of about
 * BATCH_BYTES: what IDAT compresses. Batches (not one buffer of the whole image) let zlib deflate
 * one on its thread while the next is filtered, and spare the page faults of a second image-sized
 * buffer (a 8192 x 8192 one: 0.65 s on a machine that takes 10 us per fault).
 */
export function* subFiltered(rgba: Uint8Array, width: number, height: number): Generator<Buffer> {
  const rowBytes = width * 4;
  // Whole pixels as words: rgba's rows are word-aligned only when it starts on a word.
  const aligned = rgba.byteOffset % 4 === 0 ? rgba : rgba.slice();
  const pixels = new Uint32Array(aligned.buffer, aligned.byteOffset, width * height);
  const row = new Uint32Array(width);
  const rowAsBytes = new Uint8Array(row.buffer);
  const rowsPerBatch = Math.max(1, Math.floor(BATCH_BYTES / (rowBytes + 1)));
  for (let y0 = 0; y0 < height; y0 += rowsPerBatch) {
    const rows = Math.min(rowsPerBatch, height - y0);
    const out = Buffer.allocUnsafe(rows * (rowBytes + 1));
    for (let r = 0, p = y0 * width; r < rows; r++, p += width) {
      if (width > 0) row[0] = pixels[p];
      for (let x = 1; x < width; x++) row[x] = subBytes(pixels[p + x], pixels[p + x - 1]);
      const at = r * (rowBytes + 1);
      out[at] = SUB;
      out.set(rowAsBytes, at + 1);
    }
    yield out;
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

/** PNG bytes of width x height RGBA pixels (4 bytes each, rows top to bottom). */
export async function encodePng(width: number, height: number, rgba: Uint8Array): Promise<Buffer> {
  if (rgba.length !== width * height * 4) throw new Error(`encodePng: ${rgba.length} bytes for ${width} x ${height} RGBA pixels`);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 6; // colour type: RGBA
  // compression 0 (deflate), filter method 0, no interlace: bytes 10-12 stay 0
  // The zlib stream may span several IDAT chunks: one per piece deflate gives.
  const deflate = zlib.createDeflate({ level: LEVEL, chunkSize: 1 << 18, writableHighWaterMark: 4 * BATCH_BYTES } as zlib.ZlibOptions);
  const idat: Buffer[] = [];
  deflate.on('data', (piece: Buffer) => idat.push(chunk('IDAT', piece)));
  const ended = once(deflate, 'end');
  for (const batch of subFiltered(rgba, width, height)) {
    if (!deflate.write(batch)) await once(deflate, 'drain');
  }
  deflate.end();
  await ended;
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), ...idat, chunk('IEND', Buffer.alloc(0))]);
}
