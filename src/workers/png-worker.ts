// Encodes one frame's PNG off the main thread: `render --frames` keeps one such task per frame in
// flight while the engine evaluates the next frames (writePng, to its file), and a farm worker
// does the same with the bytes sent back (encode, for Redis). png-threads.ts runs them.

import { move, workerData } from 'piscina';
import { encodePng, savePng } from '../main/image.js';
import { markLoaded } from './loaded.js';

export interface PngTask {
  /** Where writePng writes the PNG (encode ignores it). */
  file: string;
  width: number;
  height: number;
  /** The frame's pixels, moved (not copied) to this thread. */
  rgba: Uint8Array;
}

export default function writePng(task: PngTask): Promise<number> {
  return savePng(task.file, task.width, task.height, task.rgba);
}

/** The PNG's bytes, moved (not copied) back to the caller. */
export async function encode(task: PngTask): Promise<Uint8Array> {
  const png = await encodePng(task.width, task.height, task.rgba);
  // A small Buffer lives in Node's shared pool, which must not be moved away: copied out first.
  const own = png.byteOffset === 0 && png.buffer.byteLength === png.length ? new Uint8Array(png.buffer) : new Uint8Array(png);
  return move(own) as Uint8Array;
}

markLoaded(workerData?.loaded);
