// Encodes and writes one frame's PNG off the main thread: `render --frames` keeps one such task
// per frame in flight on a piscina pool while the engine evaluates the next frames.

import { workerData } from 'piscina';
import { savePng } from '../main/image.js';
import { markLoaded } from './loaded.js';

export interface PngTask {
  file: string;
  width: number;
  height: number;
  /** The frame's pixels, moved (not copied) to this thread. */
  rgba: Uint8Array;
}

export default function writePng(task: PngTask): Promise<number> {
  return savePng(task.file, task.width, task.height, task.rgba);
}

markLoaded(workerData?.loaded);
