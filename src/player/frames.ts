// Frames for the page: a field's pixels (the same mapping as `read`) in one binary message.
//
// A message is: u32 (little-endian) byte length of a JSON header, the header (UTF-8), then
// width x height RGBA8 pixels, row 0 at the top. The header says what the pixels are (frame,
// time, output, size); JSON keeps it readable and lets it grow without a format change.

import type { Field } from '../main/field.js';
import { readField } from '../main/field.js';
import { planesToRgba } from '../main/image.js';
import type { FieldMemory } from '../main/memory.js';

export interface FrameHeader {
  frame: number;
  time: number;
  output: string;
  width: number;
  height: number;
  /** For a 3-D field: its depth and the z of the slice shown. */
  depth?: number;
  slice?: number;
  revision: number;
}

/**
 * RGBA pixels of a field as the page shows it: planesToRgba, the one mapping `read` uses, so the
 * window's pixels equal `read`'s. A 3-D field shows its middle z slice.
 */
export function fieldPixels(memory: FieldMemory, field: Field): { width: number; height: number; rgba: Uint8Array; depth?: number; slice?: number } {
  const planes = readField(memory, field);
  const n = field.width * field.height;
  if (field.dims !== 3) return { width: field.width, height: field.height, rgba: planesToRgba(field.comps, planes, n) };
  const slice = Math.floor(field.depth / 2);
  const sliced = planes.map((p) => p.subarray(slice * n, (slice + 1) * n));
  return { width: field.width, height: field.height, rgba: planesToRgba(field.comps, sliced, n), depth: field.depth, slice };
}

export function encodeFrame(header: FrameHeader, rgba: Uint8Array): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const out = Buffer.alloc(4 + json.length + rgba.length);
  out.writeUInt32LE(json.length, 0);
  json.copy(out, 4);
  out.set(rgba, 4 + json.length);
  return out;
}

export function decodeFrame(bytes: Uint8Array): { header: FrameHeader; rgba: Uint8Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(0, true);
  const header = JSON.parse(Buffer.from(bytes.subarray(4, 4 + length)).toString('utf8')) as FrameHeader;
  return { header, rgba: bytes.subarray(4 + length) };
}
