// Fields in the shared memory: planar components, rows padded to a multiple of 4 elements.

import { fieldLayout, type FieldPlacement } from '../codegen/layout.js';
import type { Scalar } from '../ir/ir.js';
import type { FieldMemory } from './memory.js';

export interface Field {
  ptr: number;
  /** Extents along x, y, z (1 for missing axes). */
  width: number;
  height: number;
  depth: number;
  dims: 1 | 2 | 3;
  /** Row stride in elements: width rounded up to 4, so a v128 never straddles two rows. */
  stride: number;
  /** Bytes of one component's plane; component c starts at ptr + c * planeBytes. */
  planeBytes: number;
  comps: Scalar[];
}

/** One z-slice of a 3-D field, as a 2-D field over the same memory (its rows are consecutive). */
export function zSlice(f: Field, z: number): Field {
  return { ...f, ptr: f.ptr + z * f.height * f.stride * 4, depth: 1, dims: 2 };
}

/** A field as the argument block describes it. */
export function placement(f: Field): FieldPlacement {
  return { base: f.ptr, width: f.width, height: f.height, depth: f.depth, stride: f.stride, planeBytes: f.planeBytes };
}

export function fieldBytes(size: number[], comps: number): number {
  const [width, height = 1, depth = 1] = size;
  return fieldLayout({ width, height, depth }, comps).bytes;
}

export function allocField(memory: FieldMemory, size: number[], comps: Scalar[], what: string): Field {
  const [width, height = 1, depth = 1] = size;
  const { stride, planeBytes } = fieldLayout({ width, height, depth }, comps.length);
  const ptr = memory.alloc(planeBytes * comps.length, what);
  return { ptr, width, height, depth, dims: size.length as 1 | 2 | 3, stride, planeBytes, comps };
}

/** Set every element of a field to one value (given per component). */
export function fillField(memory: FieldMemory, f: Field, value: number[]): void {
  f.comps.forEach((t, c) => {
    const start = (f.ptr + c * f.planeBytes) / 4;
    const end = start + f.planeBytes / 4;
    const v = value[c] ?? 0;
    if (t === 'f32') memory.f32.fill(v, start, end);
    else memory.i32.fill(t === 'bool' ? (v ? 1 : 0) : v | 0, start, end);
  });
}

export function copyField(memory: FieldMemory, from: Field, to: Field, into: FieldMemory = memory): void {
  const end = from.ptr + from.planeBytes * from.comps.length;
  if (into === memory) memory.u8.copyWithin(to.ptr, from.ptr, end);
  else into.u8.set(memory.u8.subarray(from.ptr, end), to.ptr); // a world moving to a fresh memory
}

/** Where a field's bytes lie: elements per row and bytes per component plane. */
export interface RowLayout {
  stride: number;
  planeBytes: number;
}

/** The layout of a field's elements packed without padding (packField). */
export function packedLayout(f: Field): RowLayout {
  return { stride: f.width, planeBytes: f.width * f.height * f.depth * 4 };
}

/** The field's elements as bytes, component-major and row-major, without padding (snapshots). */
export function packField(memory: FieldMemory, f: Field): Uint8Array {
  const to = packedLayout(f);
  const out = new Uint8Array(to.planeBytes * f.comps.length);
  const u8 = memory.u8;
  forEachRow(f, to, (from, at, bytes) => out.set(u8.subarray(from, from + bytes), at));
  return out;
}

/** Write elements laid out as `from` says (packed, or an older padding) into the field. */
export function unpackField(memory: FieldMemory, f: Field, bytes: Uint8Array, from: RowLayout = packedLayout(f)): void {
  const u8 = memory.u8;
  forEachRow(f, from, (to, at, n) => u8.set(bytes.subarray(at, at + n), to));
}

/** Each row of each plane: its address in memory, its offset in `other`, and its length. */
function forEachRow(f: Field, other: RowLayout, visit: (address: number, offset: number, bytes: number) => void): void {
  const rows = f.height * f.depth;
  for (let c = 0; c < f.comps.length; c++)
    for (let r = 0; r < rows; r++) visit(f.ptr + c * f.planeBytes + r * f.stride * 4, c * other.planeBytes + r * other.stride * 4, f.width * 4);
}

/** The field's elements, component-major and unpadded: [c][z][y][x] as numbers. */
export function readField(memory: FieldMemory, f: Field): Float32Array[] {
  const out: Float32Array[] = [];
  const f32 = memory.f32;
  const i32 = memory.i32;
  f.comps.forEach((t, c) => {
    const plane = new Float32Array(f.width * f.height * f.depth);
    const base = (f.ptr + c * f.planeBytes) / 4;
    for (let z = 0; z < f.depth; z++) {
      for (let y = 0; y < f.height; y++) {
        const row = base + (z * f.height + y) * f.stride;
        const o = (z * f.height + y) * f.width;
        if (t === 'f32') plane.set(f32.subarray(row, row + f.width), o);
        else for (let x = 0; x < f.width; x++) plane[o + x] = i32[row + x];
      }
    }
    out.push(plane);
  });
  return out;
}

/** A box of a field's elements. */
export interface Box {
  x: number;
  y: number;
  z: number;
  width: number;
  height: number;
  depth: number;
}

/**
 * Store `values` (component-major planes of the box, x fastest) into the box of `field`, each
 * converted to its component's type (i32 truncated, bool 0 or 1). The box is inside the field.
 */
export function storeRegion(memory: FieldMemory, field: Field, box: Box, values: Float32Array): void {
  const { x: x0, y: y0, z: z0, width: w, height: h, depth: d } = box;
  const plane = w * h * d;
  for (let c = 0; c < field.comps.length; c++) {
    const base = (field.ptr + c * field.planeBytes) / 4;
    const view = field.comps[c] === 'f32' ? memory.f32 : memory.i32;
    for (let z = 0; z < d; z++)
      for (let y = 0; y < h; y++) {
        const from = c * plane + (z * h + y) * w;
        const to = base + x0 + (y0 + y) * field.stride + (z0 + z) * field.stride * field.height;
        // A row of floats is copied as it is (a typed-array copy, no number in between): every bit
        // is kept, NaN payloads included.
        if (field.comps[c] === 'f32') {
          memory.f32.set(values.subarray(from, from + w), to);
          continue;
        }
        for (let x = 0; x < w; x++) {
          const v = values[from + x];
          view[to + x] = field.comps[c] === 'bool' ? (v ? 1 : 0) : v | 0;
        }
      }
  }
}
