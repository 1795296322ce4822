// `read` with `file`: the image written under the scene's folder (so an agent on a terminal can
// look at it with its own tools), with a summary of what the field holds per channel.

import { unlinkSync, writeFileSync, renameSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { SceneFolder } from './files.js';
import { writeError } from './write-error.js';
import { PathError, TEMP_SUFFIX } from './documents.js';
import { makeFolders } from './files.js';

/** One channel (component) of the field read: its least, greatest and mean value; `nan` counts the NaNs left out of them. */
export interface ChannelSummary {
  channel: number;
  /** Over the finite values; null (in JSON) when there are none. */
  min: number;
  max: number;
  mean: number;
  /** How many NaNs, and how many infinities, were left out (absent when none). */
  nan?: number;
  infinite?: number;
}

/**
 * Each plane's min, max and mean over its finite values (the field's floats, before the PNG's 8
 * bits), and how many were not: JSON has no infinity, so one infinity made all three null.
 */
export function summarise(planes: Float32Array[]): ChannelSummary[] {
  return planes.map((p, channel) => {
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    let nan = 0;
    let infinite = 0;
    for (const v of p) {
      if (!Number.isFinite(v)) {
        if (Number.isNaN(v)) nan++;
        else infinite++;
        continue;
      }
      if (v < min) min = v;
      if (v > max) max = v;
      sum += v;
    }
    const n = p.length - nan - infinite;
    const left = { ...(nan ? { nan } : {}), ...(infinite ? { infinite } : {}) };
    return n ? { channel, min, max, mean: sum / n, ...left } : { channel, min: NaN, max: NaN, mean: NaN, ...left };
  });
}

/** The path a `read` writes its PNG to: under the scene's folder, ending in .png; refused otherwise. */
export function imagePath(folder: SceneFolder, file: string): string {
  if (file.includes('\0')) throw new PathError(`\`${JSON.stringify(file)}\` holds a NUL character: name the PNG relative to the scene, like \`out/frame.png\``, file);
  if (!/\.png$/i.test(file)) throw new PathError(`\`${file}\`: \`read\` writes a PNG; name the file with .png, like \`${file.replace(/\.[^./\\]*$/, '')}.png\``, file);
  if (isAbsolute(file) || /^[\\/]|^[A-Za-z]:/.test(file) || file.split(/[\\/]+/).includes('..'))
    throw new PathError(`\`${file}\` is not under the scene's folder: \`read\` writes an image only there; name it relative to the scene, like \`out/frame.png\``, file);
  return folder.resolve(file);
}

/** Write `bytes` whole or not at all (a temporary file beside it, renamed; removed if the write fails). */
export function writeImage(full: string, file: string, bytes: Uint8Array): void {
  const tmp = join(dirname(full), `.${basename(full)}.${process.pid}${TEMP_SUFFIX}`);
  try {
    makeFolders(dirname(full));
    writeFileSync(tmp, bytes);
    renameSync(tmp, full);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // Nothing was written, or it is gone already.
    }
    throw writeError(e, file, 'nothing was written');
  }
}
