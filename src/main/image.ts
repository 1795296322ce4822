// Fields to pictures: 8-bit RGBA pixels and PNG files.

import { PNG } from 'pngjs';
import type { Field } from './field.js';
import { readField } from './field.js';
import type { FieldMemory } from './memory.js';
import type { Scalar } from '../ir/ir.js';

export class ImageError extends Error {
  override name = 'ImageError';
}

/**
 * RGBA bytes of a 2-D field: vec4 is RGBA, vec3 RGB, vec2 RG, one component gray; f32 values in
 * [0, 1] map to 0..255 (clamped, rounded); bools map to 0 or 255; i32 values are clamped to 0..255.
 */
export function fieldToRgba(memory: FieldMemory, f: Field, name: string): Uint8Array {
  if (f.dims === 3) throw new ImageError(`\`${name}\` is a 3-D field: an image needs a 2-D one (read it as f32, or add a view kernel that renders it)`);
  return planesToRgba(f.comps, readField(memory, f), f.width * f.height);
}

/** RGBA bytes of `n` elements given as component planes (the mapping above). */
export function planesToRgba(comps: readonly Scalar[], planes: Float32Array[], n: number): Uint8Array {
  const rgba = new Uint8Array(n * 4);
  const byte = (c: number, v: number) => {
    const t = comps[c];
    if (t === 'bool') return v ? 255 : 0;
    if (t === 'i32') return Math.max(0, Math.min(255, v));
    return Math.round(Math.max(0, Math.min(1, v || 0)) * 255);
  };
  const k = Math.min(4, comps.length);
  for (let i = 0; i < n; i++) {
    if (k === 1) {
      const g = byte(0, planes[0][i]);
      rgba[i * 4] = rgba[i * 4 + 1] = rgba[i * 4 + 2] = g;
      rgba[i * 4 + 3] = 255;
      continue;
    }
    for (let c = 0; c < 4; c++) rgba[i * 4 + c] = c < k ? byte(c, planes[c][i]) : c === 3 ? 255 : 0;
  }
  return rgba;
}

export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  const png = new PNG({ width, height });
  png.data = Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength);
  return PNG.sync.write(png);
}

export function decodePng(bytes: Buffer): { width: number; height: number; rgba: Uint8Array } {
  const png = PNG.sync.read(bytes);
  return { width: png.width, height: png.height, rgba: new Uint8Array(png.data) };
}
