// Memory layout shared by the host and both backends: padded field planes and the argument
// block (ARGS/FIELD in ir.ts).

import { ARGS, FIELD, type IrFunction, type Scalar } from '../ir/ir.js';
import { literalsOf } from '../ir/literals.js';

/** Planes start on 16-byte boundaries so a row's v128 loads and stores are aligned. */
export const PLANE_ALIGN = 16;

export interface Extents {
  width: number;
  height: number;
  depth: number;
}

/** Where one field lives in memory: its six words in the argument block. */
export interface FieldPlacement extends Extents {
  base: number;
  /** Elements per row, a multiple of 4 (>= width). */
  stride: number;
  /** Bytes per component plane, a multiple of 16. */
  planeBytes: number;
  /**
   * The field holds a window of its elements (a tile's): rows `stride` apart from `base`, the
   * address element (0, 0) would have, and width and height still the whole field's.
   */
  window?: boolean;
}

/**
 * Addresses a multiple of this apart share an L1 cache set (and look alike to the load/store
 * disambiguation) on x86-64 and most ARM cores.
 */
const ALIAS_BYTES = 4096;
/** Where a plane ends relative to that period: planes, and fields after them, start this far apart. */
const PLANE_SKEW = 1088;

/**
 * The padded layout of a field with `comps` components: stride, plane bytes, total bytes.
 *
 * Rows and planes are padded so that the rows a stencil reads at once do not alias: with rows
 * 16 KiB apart and planes 64 MiB apart, the 20 rows of a 5 x 5 blur over 4 planes all fell in
 * one cache set and evicted each other (the blur ran at half speed; see docs/architecture.md).
 * Rows a multiple of 1 KiB long get 64 bytes more; planes of 4 KiB or more end PLANE_SKEW past a
 * multiple of 4 KiB.
 */
export function fieldLayout(e: Extents, comps: number): { stride: number; planeBytes: number; bytes: number } {
  let stride = Math.ceil(Math.max(e.width, 1) / 4) * 4;
  const rows = Math.max(e.height, 1) * Math.max(e.depth, 1);
  if (rows > 1 && (stride * 4) % 1024 === 0) stride += 16;
  let planeBytes = stride * rows * 4;
  if (planeBytes >= ALIAS_BYTES) planeBytes += (PLANE_SKEW - (planeBytes % ALIAS_BYTES) + ALIAS_BYTES) % ALIAS_BYTES;
  return { stride, planeBytes, bytes: planeBytes * Math.max(comps, 1) };
}

/** Bytes the argument block of `fn` needs: its uniforms, then its literals (read by a module of its form: src/ir/literals.ts). */
export function argsBytes(fn: IrFunction): number {
  return ARGS.size(fn.fields.length, fn.uniforms.length + literalsOf(fn).values.length);
}

function bufferOf(memory: WebAssembly.Memory | ArrayBufferLike): ArrayBufferLike {
  return memory instanceof WebAssembly.Memory ? memory.buffer : memory;
}

/**
 * Write the argument block of `fn` at byte address `args`: the domain, the trap word (-1), the
 * columns to compute (all of them, or a tile's), each field's placement, each uniform's value
 * (by slot, or by name from a record; missing uniforms are 0) and after them the literals' values,
 * so a module of the function or of its form (src/ir/literals.ts) runs on the block.
 */
export function writeArgs(
  memory: WebAssembly.Memory | ArrayBufferLike,
  args: number,
  fn: IrFunction,
  domain: Extents,
  fields: readonly FieldPlacement[],
  uniforms: readonly number[] | Readonly<Record<string, number>> = [],
  columns: readonly [number, number] = [0, domain.width],
): void {
  if (args % 4 !== 0) throw new Error(`argument block address ${args} is not a multiple of 4`);
  if (fields.length !== fn.fields.length) {
    throw new Error(`${fn.fields.length} fields expected, ${fields.length} given`);
  }
  const buffer = bufferOf(memory);
  const words = new Int32Array(buffer, args, argsBytes(fn) / 4);
  const floats = new Float32Array(buffer, args, argsBytes(fn) / 4);
  words.fill(0);
  words[ARGS.width / 4] = domain.width;
  words[ARGS.height / 4] = domain.height;
  words[ARGS.depth / 4] = domain.depth;
  words[ARGS.trap / 4] = -1;
  const [x0, x1] = columns;
  if (x0 % 4 !== 0 || (x1 % 4 !== 0 && x1 !== domain.width) || x0 < 0 || x1 > domain.width) throw new Error(`columns [${x0}, ${x1}) of a domain ${domain.width} wide: the start must be a multiple of 4, the end too or the width`);
  words[ARGS.x0 / 4] = x0;
  words[ARGS.x1 / 4] = x1;
  fields.forEach((p, f) => {
    const at = ARGS.field(f) / 4;
    if (p.stride % 4 !== 0 || (p.stride < p.width && !p.window)) throw new Error(`field ${fn.fields[f].name}: bad stride ${p.stride}`);
    words[at + FIELD.base / 4] = p.base;
    words[at + FIELD.width / 4] = p.width;
    words[at + FIELD.height / 4] = p.height;
    words[at + FIELD.depth / 4] = p.depth;
    words[at + FIELD.stride / 4] = p.stride;
    words[at + FIELD.planeBytes / 4] = p.planeBytes;
  });
  fn.uniforms.forEach((u, slot) => {
    const value = Array.isArray(uniforms)
      ? (uniforms as readonly number[])[slot]
      : (uniforms as Readonly<Record<string, number>>)[u.name];
    writeScalar(words, floats, ARGS.uniform(fn.fields.length, slot) / 4, u.t, value ?? 0);
  });
  literalsOf(fn).values.forEach((v, i) => (floats[ARGS.uniform(fn.fields.length, fn.uniforms.length + i) / 4] = v));
}

function writeScalar(words: Int32Array, floats: Float32Array, at: number, t: Scalar, v: number): void {
  if (t === 'f32') floats[at] = v;
  else if (t === 'i32') words[at] = v | 0;
  else words[at] = v ? 1 : 0;
}

/** The i32 index of element (x, y, z) of a component plane. */
export function elementIndex(p: FieldPlacement, comp: number, x: number, y = 0, z = 0): number {
  return (p.base + comp * p.planeBytes) / 4 + x + y * p.stride + z * p.stride * p.height;
}

/**
 * Copy one component of a field between memory and a dense array (x fastest, then y, then z):
 * `read` fills `out` from memory, `write` the other way. f32 components use Float32Array,
 * i32 and bool Int32Array.
 */
export function readPlane(memory: WebAssembly.Memory | ArrayBufferLike, p: FieldPlacement, comp: number, out: Float32Array | Int32Array): void {
  const buffer = bufferOf(memory);
  const view = out instanceof Float32Array ? new Float32Array(buffer) : new Int32Array(buffer);
  let i = 0;
  for (let z = 0; z < p.depth; z++)
    for (let y = 0; y < p.height; y++) {
      const row = elementIndex(p, comp, 0, y, z);
      for (let x = 0; x < p.width; x++) out[i++] = view[row + x];
    }
}

export function writePlane(memory: WebAssembly.Memory | ArrayBufferLike, p: FieldPlacement, comp: number, data: Float32Array | Int32Array): void {
  const buffer = bufferOf(memory);
  const view = data instanceof Float32Array ? new Float32Array(buffer) : new Int32Array(buffer);
  let i = 0;
  for (let z = 0; z < p.depth; z++)
    for (let y = 0; y < p.height; y++) {
      const row = elementIndex(p, comp, 0, y, z);
      for (let x = 0; x < p.width; x++) view[row + x] = data[i++];
    }
}
