// Images into input fields: PNG, JPEG (and WebP, TIFF, GIF) decoded by sharp, their sRGB bytes
// turned into the linear values kernels see (srgb.ts), by `render --input` and the `write`
// operation's `file`.
//
// sharp (libvips, prebuilt in its npm packages) against jpeg-js (pure JavaScript), measured here
// 2026-12-03 on a busy 2-core machine: a 240 x 160 JPEG 19 against 60 ms, 451 x 300 50 against
// 74 ms, 2048 x 1362 157 against 817 ms, the pixels within 3 of each other (IDCT rounding). An
// image sequence decodes a frame per frame: sharp, five times faster on large frames.

import { existsSync, statSync } from 'node:fs';
import type { Field } from './field.js';
import { unpackField } from './field.js';
import type { FieldMemory } from './memory.js';
import { BYTE_TO_LINEAR } from './srgb.js';
import { UserError } from './user-error.js';

export class InputImageError extends UserError {
  override name = 'ImageError';
}

export interface Picture {
  width: number;
  height: number;
  /** RGBA, 8 bits, sRGB-encoded colours, straight alpha. */
  rgba: Uint8Array;
}

/**
 * sharp, loaded when an image is first read: a session or render that reads none starts without
 * loading libvips (and runs on a machine whose node_modules predates the dependency).
 */
async function loadSharp(): Promise<typeof import('sharp').default> {
  return (await import('sharp')).default;
}

function readable(file: string): void {
  if (!existsSync(file)) throw new InputImageError(`cannot read \`${file}\`: no such file`);
  if (statSync(file).isDirectory()) throw new InputImageError(`cannot read \`${file}\`: it is a folder; name an image file (PNG or JPEG)`);
}

/** An image's width and height, read from its header. */
export async function imageSize(file: string): Promise<[number, number]> {
  readable(file);
  const sharp = await loadSharp();
  try {
    const m = await sharp(file).metadata();
    // EXIF orientations 5-8 turn the picture a quarter: it is read upright (decodeImage).
    return (m.orientation ?? 1) >= 5 ? [m.height!, m.width!] : [m.width!, m.height!];
  } catch (e) {
    throw notAnImage(file, e);
  }
}

/** An image's bytes in memory (a file dropped on the Player), with the name it is told by. */
export interface ImageBytes {
  bytes: Uint8Array;
  name: string;
}

/** Decode an image (a file, or its bytes) as RGBA, resized (stretched) to width x height when given and different. */
export async function decodeImage(source: string | ImageBytes, size?: { width: number; height: number }): Promise<Picture> {
  if (typeof source === 'string') readable(source);
  const file = typeof source === 'string' ? source : source.name;
  const sharp = await loadSharp();
  try {
    // Upright, as a viewer shows it: a phone's photo is stored sideways with an EXIF orientation.
    let image = sharp(typeof source === 'string' ? source : source.bytes).rotate().ensureAlpha();
    if (size) image = image.resize(size.width, size.height, { fit: 'fill' });
    const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
    if (info.channels !== 4) throw new Error(`${info.channels} channels`);
    return { width: info.width, height: info.height, rgba: new Uint8Array(data.buffer, data.byteOffset, data.length) };
  } catch (e) {
    throw notAnImage(file, e);
  }
}

/** RGBA pixels resized (stretched) to width x height by sharp, the resampling images read into inputs take (thumbnails too: thumbnail.ts). */
export async function resizeRgba(rgba: Uint8Array, from: { width: number; height: number }, to: { width: number; height: number }): Promise<Uint8Array> {
  if (from.width === to.width && from.height === to.height) return rgba;
  const sharp = await loadSharp();
  const input = Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength);
  const data = await sharp(input, { raw: { width: from.width, height: from.height, channels: 4 } }).resize(to.width, to.height, { fit: 'fill' }).raw().toBuffer();
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

function notAnImage(file: string, e: unknown): InputImageError {
  const why = (e as Error).message.replace(/^Input file /, '').replace(/\s+/g, ' ');
  return new InputImageError(`cannot read \`${file}\` as an image (PNG, JPEG, WebP, TIFF or GIF): ${why}`);
}

/** Why a field cannot take an image, or undefined: a 2-D field of f32 components (f32 to vec4). */
export function imageFieldProblem(name: string, f: Field): string | undefined {
  if (f.dims !== 2 || f.comps.length > 4 || f.comps.some((c) => c !== 'f32'))
    return `\`${name}\` is not an image's field: an image fills a 2-D field (an input or a state) of f32, vec2, vec3 or vec4${f.dims === 3 ? `, and \`${name}\` is 3-D: write its slices as f32 data ({"op": "write", "data": ..., "region": {"z": ..., "depth": 1}})` : ''}`;
  return undefined;
}

/**
 * A picture's pixels as a field of n components holds them, component-major: vec4 RGBA, vec3 RGB,
 * vec2 RG, one component the linear luminance (Rec. 709 weights, as sRGB's primaries). Colours are
 * decoded to linear with sRGB's exact function; alpha is its byte / 255.
 */
export function picturePlanes(p: Picture, n: number): Float32Array {
  const count = p.width * p.height;
  const out = new Float32Array(count * n);
  const { rgba } = p;
  for (let i = 0; i < count; i++) {
    const r = BYTE_TO_LINEAR[rgba[i * 4]], g = BYTE_TO_LINEAR[rgba[i * 4 + 1]], b = BYTE_TO_LINEAR[rgba[i * 4 + 2]];
    if (n === 1) {
      out[i] = 0.2126 * r + 0.7152 * g + 0.0722 * b;
      continue;
    }
    out[i] = r;
    out[count + i] = g;
    if (n > 2) out[2 * count + i] = b;
    if (n > 3) out[3 * count + i] = rgba[i * 4 + 3] / 255;
  }
  return out;
}

/** Put a picture of the field's size into it. */
export function storePicture(memory: FieldMemory, f: Field, picture: Picture): void {
  unpackField(memory, f, new Uint8Array(picturePlanes(picture, f.comps.length).buffer));
}

/** The image (a file, or its bytes) decoded and resized for field `f` (input `name`); nothing is stored yet. */
export async function decodeImageFor(f: Field, name: string, source: string | ImageBytes): Promise<Picture> {
  const problem = imageFieldProblem(name, f);
  if (problem) throw new InputImageError(problem);
  return decodeImage(source, { width: f.width, height: f.height });
}

/** Fill a field with an image (a file, or its bytes), resized to the field's size if it differs. */
export async function readImageInto(memory: FieldMemory, f: Field, name: string, source: string | ImageBytes): Promise<void> {
  storePicture(memory, f, await decodeImageFor(f, name, source));
}
