// Thumbnails of the running world's outputs, made once per frame however many requests ask: a
// cache keyed by the world (a change swaps in another), the frame its fields hold (the engine's
// frame counter, and its version, which writes and resets bump: a reset starts the counter again
// on the same world), the output and the side. A repeated frame (a stateless scene evaluated at
// the same inputs, Engine.repeats) keeps the counter, so its thumbnail is not made again.
//
// Only the latest frame of a world is held (a world's entry is replaced when its frame moves), and
// a world no longer referenced drops its entry with it (a WeakMap).

import { fieldToRgba } from './image.js';
import { memoryPlanes, thumbnail, thumbnailPixels, type PngPicture, type RgbaPicture } from './thumbnail.js';
import { outputField } from './world-fields.js';
import type { World } from './world.js';

interface Entry {
  frame: number;
  version: number;
  pictures: Map<string, Promise<PngPicture>>;
}

const cache = new WeakMap<World, Entry>();
let made = 0;

/** How many thumbnails were made (not served from the cache) since the process started: for tests. */
export function thumbnailsMade(): number {
  return made;
}

/**
 * The pixels of a thumbnail of 2-D output `name` as `world`'s fields hold it now, made afresh
 * (thumbnail.ts): read in the frame slot; `thumbnail` encodes them.
 */
export function outputThumbnailPixels(world: World, name: string, side: number): RgbaPicture {
  const field = outputField(world, name);
  if (!field || field.dims === 3) throw new Error(`outputThumbnailPixels: \`${name}\` is not a 2-D output of this world`);
  const { memory } = world.engine;
  return thumbnailPixels(field.comps, memoryPlanes(memory, field), field.width, field.height, side, () => fieldToRgba(memory, field, name), memory);
}

/**
 * The thumbnail of 2-D output `name` of `world` as its fields hold it now. Call it in the frame
 * slot (Session.read), after a frame has computed the output: the field is read there, at once;
 * the PNG is encoded after the slot is left.
 */
export function outputThumbnail(world: World, name: string, side: number): Promise<PngPicture> {
  const { engine } = world;
  let entry = cache.get(world);
  if (!entry || entry.frame !== engine.frame || entry.version !== engine.version) {
    entry = { frame: engine.frame, version: engine.version, pictures: new Map() };
    cache.set(world, entry);
  }
  const key = `${name}\n${side}`;
  const held = entry.pictures.get(key);
  if (held) return held;
  const pixels = outputThumbnailPixels(world, name, side);
  made++;
  const pictures = entry.pictures;
  const picture = new Promise((r) => setImmediate(r)).then(() => thumbnail(pixels.rgba, pixels.width, pixels.height, side));
  // A failure is answered to the requests that share it, not kept for the next.
  picture.catch(() => pictures.get(key) === picture && pictures.delete(key));
  pictures.set(key, picture);
  return picture;
}
