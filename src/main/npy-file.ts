// A field's every value as a NumPy .npy file (format 1.0), which `numpy.load` reads as it is: the
// way `render` writes a 3-D output whole, or any output without the picture's 8-bit rounding.
//
// The array is C-ordered as numpy's images are: shape (height, width) or (depth, height, width),
// with the components last when there are several, e.g. (depth, height, width, 4) for a vec4.
// Its type is the components': float32, int32, or bool; a struct of mixed types is float32 (its
// i32 members exact up to 2^24).

import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fstatSync, readSync } from 'node:fs';
import { besideTarget, makeFolders, readingFile } from './files.js';
import { writeProblem } from './png-file.js';
import { UserError } from './user-error.js';
import { Cancelled, throwIfCancelled } from './cancel.js';
import type { Field } from './field.js';
import type { FieldMemory } from './memory.js';

export class NpyWriteError extends UserError {
  override name = 'NpyWriteError';
}

const MAGIC = Buffer.from('\x93NUMPY', 'latin1');

/** Whether `file` names a .npy file. */
export const isNpyFile = (file: string) => /\.npy$/i.test(file);

type Dtype = '<f4' | '<i4' | '|b1';

function dtypeOf(field: Pick<Field, 'comps'>): Dtype {
  const [first] = field.comps;
  if (!field.comps.every((c) => c === first)) return '<f4';
  return first === 'i32' ? '<i4' : first === 'bool' ? '|b1' : '<f4';
}

/** The array's shape: numpy's order, slowest axis first, components last. */
export function npyShape(field: Pick<Field, 'width' | 'height' | 'depth' | 'dims' | 'comps'>): number[] {
  const axes = [field.depth, field.height, field.width].slice(3 - field.dims);
  return field.comps.length > 1 ? [...axes, field.comps.length] : axes;
}

/** The header: magic, version 1.0, its length, and the dict, padded so the data starts on 64 bytes. */
function header(dtype: Dtype, shape: number[]): Buffer {
  const tuple = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${dtype}', 'fortran_order': False, 'shape': ${tuple}, }`;
  const unpadded = MAGIC.length + 2 + 2 + dict.length + 1;
  dict += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const out = Buffer.alloc(MAGIC.length + 4 + dict.length);
  MAGIC.copy(out, 0);
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(dict.length, 8);
  out.write(dict, 10, 'latin1');
  return out;
}

/** Rows [from, to) of the field's values, components interleaved, into `out` (as many bytes as they take). */
function fillRows(memory: Pick<FieldMemory, 'f32' | 'i32'>, field: Field, dtype: Dtype, from: number, to: number, out: Buffer): number {
  const comps = field.comps.length;
  const n = (to - from) * field.width * comps;
  const f32 = dtype === '<f4' ? new Float32Array(out.buffer, out.byteOffset, n) : undefined;
  const i32 = dtype === '<i4' ? new Int32Array(out.buffer, out.byteOffset, n) : undefined;
  let at = 0;
  for (let row = from; row < to; row++) {
    const starts = field.comps.map((_, c) => (field.ptr + c * field.planeBytes) / 4 + row * field.stride);
    for (let x = 0; x < field.width; x++) {
      for (let c = 0; c < comps; c++, at++) {
        const i = starts[c] + x;
        if (f32) f32[at] = field.comps[c] === 'f32' ? memory.f32[i] : memory.i32[i];
        else if (i32) i32[at] = memory.i32[i];
        else out[at] = memory.i32[i] ? 1 : 0;
      }
    }
  }
  return n * (dtype === '|b1' ? 1 : 4);
}

/** Bytes of values written at once: a volume of gigabytes is written without a second copy of it, and a signal is heard between them. */
const CHUNK_BYTES = 8 << 20;

/**
 * Write the field as a .npy file whole (a temporary file beside it, renamed), rows at a time;
 * `signal` stops it between them (the temporary file removed). Returns its size in bytes.
 */
export async function saveNpy(file: string, memory: Pick<FieldMemory, 'f32' | 'i32'>, field: Field, signal?: AbortSignal): Promise<number> {
  const dtype = dtypeOf(field);
  const head = header(dtype, npyShape(field));
  const rowBytes = field.width * field.comps.length * (dtype === '|b1' ? 1 : 4);
  const rows = field.height * field.depth;
  const step = Math.max(1, Math.floor(CHUNK_BYTES / rowBytes));
  let tmp: string | undefined;
  let handle: FileHandle | undefined;
  try {
    try {
      makeFolders(dirname(file) || '.');
      const beside = besideTarget(file);
      tmp = beside.tmp;
      handle = await open(tmp, 'w');
      await handle.write(head);
      const chunk = Buffer.alloc(Math.min(rows, step) * rowBytes);
      for (let from = 0; from < rows; from += step) {
        throwIfCancelled(signal);
        const bytes = fillRows(memory, field, dtype, from, Math.min(rows, from + step), chunk);
        await handle.write(chunk, 0, bytes);
      }
      await handle.close();
      handle = undefined;
      throwIfCancelled(signal);
      await rename(tmp, beside.target);
    } catch (e) {
      if (e instanceof Cancelled) throw e;
      throw new NpyWriteError(writeProblem(file, e));
    }
  } catch (e) {
    await handle?.close().catch(() => undefined);
    if (tmp) await rm(tmp, { force: true });
    throw e;
  }
  return head.length + rows * rowBytes;
}

/** Whether `file` is a whole .npy of this field's type and shape (a resumed render skips it). */
export function isCompleteNpy(file: string, field: Pick<Field, 'width' | 'height' | 'depth' | 'dims' | 'comps'>): boolean {
  const expected = header(dtypeOf(field), npyShape(field));
  const n = field.width * field.height * field.depth * field.comps.length * (dtypeOf(field) === '|b1' ? 1 : 4);
  return (
    readingFile(file, (fd) => {
      const stat = fstatSync(fd);
      if (!stat.isFile() || stat.size !== expected.length + n) return false;
      const head = Buffer.alloc(expected.length);
      readSync(fd, head, 0, head.length, 0);
      return head.equals(expected);
    }) ?? false
  );
}
