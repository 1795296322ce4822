// A large frame's PNG made on the evaluation pool's threads: each strip of rows is made into RGBA
// bytes, filtered and deflated on a worker straight from the shared memory (fieldStrips), and the
// strips are joined here in order into the file (savePngOnPool). A single 4096 x 4096 frame spent
// 0.5-0.65 s encoding with the colour mapping and the filter on the main thread alone, while the
// pool's threads were idle; the bytes are those savePng writes (the same strips, png.ts).

import type { EvalPool } from '../workers/pool.js';
import { fieldRgbaRows, ImageError } from './image.js';
import { deflateStripsHere, stripRows, type DeflatedStrip } from './png.js';
import { PngFile, PngWriteError } from './png-file.js';
import type { Field } from './field.js';
import { throwIfCancelled } from './cancel.js';

/** One strip's work, sent to a pool worker: rows [y0, y1) of the field named `name`. */
export interface FieldStripTask {
  field: Field;
  name: string;
  y0: number;
  y1: number;
}

/** Whether a field's PNG is worth making on the pool: more than one strip to share out. */
export function pngOnPool(field: Field): boolean {
  return field.dims === 2 && field.height > stripRows(field.width);
}

/** On a pool worker: the strip's rows from the shared memory, as RGBA, filtered and deflated. */
export function fieldStrips(memory: WebAssembly.Memory, task: FieldStripTask): DeflatedStrip[] {
  const views = { f32: new Float32Array(memory.buffer), i32: new Int32Array(memory.buffer) };
  const rgba = fieldRgbaRows(views, task.field, task.name)(task.y0, task.y1);
  return deflateStripsHere(rgba, task.field.width, task.y0, task.field.height);
}

/**
 * Write a 2-D field's PNG whole or not at all, its strips made on the pool (at most two per
 * worker in flight, written in order as they come). The field must stay as it is until this
 * returns. Returns the file's size in bytes; a file that cannot be written is an ImageError.
 */
export async function savePngOnPool(pool: EvalPool, file: string, field: Field, name: string, signal?: AbortSignal): Promise<number> {
  const { width, height } = field;
  let png: PngFile;
  try {
    png = await PngFile.joined(file, width, height);
  } catch (e) {
    throw e instanceof PngWriteError ? new ImageError(e.message) : e;
  }
  const step = stripRows(width);
  const inFlight: Promise<DeflatedStrip[]>[] = [];
  const writeNext = async () => {
    for (const s of await inFlight.shift()!) await png.strip(fromWorker(s));
  };
  try {
    for (let y0 = 0; y0 < height; y0 += step) {
      throwIfCancelled(signal); // a render stopped (Ctrl-C): the file is not written
      const made = pool.call<DeflatedStrip[]>('pngStrips', { field, name, y0, y1: Math.min(height, y0 + step) } satisfies FieldStripTask);
      made.catch(() => {}); // awaited in order by writeNext; a later strip's failure may come first
      inFlight.push(made);
      if (inFlight.length >= 2 * pool.workers) await writeNext();
    }
    while (inFlight.length) await writeNext();
    return await png.finish();
  } catch (e) {
    await Promise.allSettled(inFlight); // no worker still reads the field
    await png.abort();
    throw e instanceof PngWriteError ? new ImageError(e.message) : e;
  }
}

/** A strip's bytes come back from the worker as a plain Uint8Array (structured clone): a Buffer again. */
function fromWorker(s: DeflatedStrip): DeflatedStrip {
  return { ...s, bytes: Buffer.from(s.bytes.buffer, s.bytes.byteOffset, s.bytes.length) };
}
