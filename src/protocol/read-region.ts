// A part of a field as `read` answers it, checked: the region (integers inside the field), the
// planes cropped to it, and the refusal of an answer past the read limit (budget.ts READ_LIMIT).
// `read` and a dry run's state values (speculate.ts) both take them.

import { mib, READ_LIMIT } from '../main/budget.js';
import { ProtocolError } from './error.js';

type Fields = Record<string, unknown>;

/** What these need of a field: its sizes and components (a Field, or a dry run's state). */
export interface Sized {
  width: number;
  height: number;
  depth: number;
  comps: readonly unknown[];
}

/** The region a read names, checked: integers inside the field (undefined: the whole field). */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function regionOf(field: Sized, region: Fields | undefined, name = 'region'): Region | undefined {
  if (!region) return undefined;
  const x = Number(region.x ?? 0);
  const y = Number(region.y ?? 0);
  const w = Number(region.width ?? field.width - x);
  const h = Number(region.height ?? field.height - y);
  const notInteger = (['x', 'y', 'width', 'height'] as const).find((k) => region[k] !== undefined && !Number.isInteger(region[k]));
  if (notInteger) throw new ProtocolError(`${name === 'region' ? '' : `${name}.`}region.${notInteger} must be an integer (elements of the ${field.width} x ${field.height} field)`, { field: name, expected: '{x, y, width, height} inside the field' });
  if (![x, y, w, h].every(Number.isInteger) || x < 0 || y < 0 || w < 1 || h < 1 || x + w > field.width || y + h > field.height)
    throw new ProtocolError(`${name === 'region' ? '' : `${name}.`}region {x: ${x}, y: ${y}, width: ${w}, height: ${h}} is not inside the ${field.width} x ${field.height} field`, { field: name, expected: '{x, y, width, height} inside the field' });
  return { x, y, width: w, height: h };
}

export function crop(field: Sized, planes: Float32Array[], region: Region | undefined) {
  if (!region) return { width: field.width, height: field.height, planes };
  const { x, y, width: w, height: h } = region;
  return {
    width: w, height: h,
    planes: planes.map((p) => {
      const out = new Float32Array(w * h);
      for (let r = 0; r < h; r++) out.set(p.subarray((y + r) * field.width + x, (y + r) * field.width + x + w), r * w);
      return out;
    }),
  };
}

/** Refuse a read whose answer would be too large to make (budget.ts READ_LIMIT), saying what to read instead. */
export function tooLargeToRead(name: string, field: Sized, region: Region | undefined, format: string): void {
  const width = region?.width ?? field.width;
  const height = region?.height ?? field.height;
  const bytes = width * height * (region ? 1 : field.depth) * 4 * (format === 'png' ? 1 : field.comps.length);
  if (bytes <= READ_LIMIT) return;
  const side = Math.max(1, Math.floor(Math.sqrt(READ_LIMIT / (4 * (format === 'png' ? 1 : field.comps.length)))));
  throw new ProtocolError(
    `\`${name}\` is ${field.width} x ${field.height}${field.depth > 1 ? ` x ${field.depth}` : ''}: ${region ? 'that region' : 'the whole field'} as ${format} is ${mib(bytes)}, more than a read answers (${mib(READ_LIMIT)}). Read a region of it, e.g. {"region": {"x": 0, "y": 0, "width": ${Math.min(side, field.width)}, "height": ${Math.min(side, field.height)}}}, or give the node a smaller size`,
    { field: 'region', limit: READ_LIMIT, bytes, expected: { x: 0, y: 0, width: Math.min(side, field.width), height: Math.min(side, field.height) } },
  );
}

