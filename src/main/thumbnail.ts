// Small pictures of outputs: a thumbnail is the output's RGBA (image.ts's mapping) resized by the
// resampling images read into inputs take (image-input.ts, sharp), its longest side at most the
// size asked for, and encoded by the engine's own PNG encoder (png.ts). `evaluate` answers one
// per output when asked, and so does a dry run (fork.ts) for the change and its diff.

import { fitInside } from './image-diff.js';
import { resizeRgba } from './image-input.js';
import { encodePng } from './png.js';

/** A PNG in base64 and its size. */
export interface PngPicture {
  width: number;
  height: number;
  data: string;
}

/** The longest side of a thumbnail unless asked otherwise, and the largest one may ask for. */
export const THUMBNAIL_SIDE = 128;
export const THUMBNAIL_MAX_SIDE = 1024;

/** `rgba` (width x height) as a PNG whose longest side is at most `side` (a smaller picture is not enlarged). */
export async function thumbnail(rgba: Uint8Array, width: number, height: number, side = THUMBNAIL_SIDE): Promise<PngPicture> {
  const size = fitInside(width, height, side);
  return pngPicture(await resizeRgba(rgba, { width, height }, size), size.width, size.height);
}

/** RGBA pixels as a PNG picture, in base64. */
export async function pngPicture(rgba: Uint8Array, width: number, height: number): Promise<PngPicture> {
  return { width, height, data: (await encodePng(width, height, rgba)).toString('base64') };
}
