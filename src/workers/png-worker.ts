// Encodes and writes one frame's PNG off the main thread: `render --frames` keeps one such task
// per frame in flight on a piscina pool while the engine evaluates the next frames.

import { savePng } from '../main/image.js';

export interface PngTask {
  file: string;
  width: number;
  height: number;
  /** The frame's pixels, moved (not copied) to this thread. */
  rgba: Uint8Array;
}

export default function writePng(task: PngTask): number {
  return savePng(task.file, task.width, task.height, task.rgba);
}
