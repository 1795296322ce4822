// A part of a field as `read` answers it, checked: the region (integers inside the field), the
// planes cropped to it, and the refusal of an answer past the read limit (budget.ts READ_LIMIT).
// `read` and a dry run's state values (speculate.ts) both take them.

import { mib, READ_LIMIT } from '../main/budget.js';
import { noSuchName } from './envelope.js';
import { ProtocolError } from './error.js';

type Fields = Record<string, unknown>;

/** What these need of a field: its sizes and components (a Field, or a dry run's state). */
export interface Sized {
  width: number;
  height: number;
  depth: number;
  /** 3 of a 3-D field (its depth may be 1); a dry run's state may not say. */
  dims?: number;
  comps: readonly unknown[];
}

/**
 * The region a read names, checked: integers inside the field (undefined: the whole field). Of a
 * 3-D field it is a box: `z` and `depth` choose its slices (default every one); a 2-D field's
 * region has neither (but see regionOf's `anyDepth`).
 */
export interface Region {
  x: number;
  y: number;
  z: number;
  width: number;
  height: number;
  depth: number;
}

const KEYS = ['x', 'y', 'z', 'width', 'height', 'depth'] as const;
const FLAT_KEYS = ['x', 'y', 'width', 'height'] as const;

/**
 * `anyDepth`: a region that may say `z` and `depth` of a 2-D field too (their one slice), as a
 * dry run's does: one region there is read of every state, 2-D and 3-D alike. A read or write
 * names one field: `z` of a 2-D one is a mistake, refused.
 */
export function regionOf(field: Sized, region: Fields | undefined, name = 'region', how: { anyDepth?: boolean } = {}): Region | undefined {
  if (!region) return undefined;
  refuseOtherKeys(field, region, name, how.anyDepth ? KEYS : undefined);
  const x = Number(region.x ?? 0);
  const y = Number(region.y ?? 0);
  const z = Number(region.z ?? 0);
  const w = Number(region.width ?? field.width - x);
  const h = Number(region.height ?? field.height - y);
  const d = Number(region.depth ?? field.depth - z);
  const prefix = name === 'region' ? '' : `${name}.`;
  const size = `${field.width} x ${field.height}${field.depth > 1 ? ` x ${field.depth}` : ''}`;
  const expected = field.depth > 1 ? '{x, y, z, width, height, depth} inside the field' : '{x, y, width, height} inside the field';
  const notInteger = KEYS.find((k) => region[k] !== undefined && !Number.isInteger(region[k]));
  if (notInteger) throw new ProtocolError(`${prefix}region.${notInteger} must be an integer (elements of the ${size} field)`, { field: name, expected });
  if (![x, y, z, w, h, d].every(Number.isInteger) || x < 0 || y < 0 || z < 0 || w < 1 || h < 1 || d < 1 || x + w > field.width || y + h > field.height || z + d > field.depth) {
    const box = `{x: ${x}, y: ${y}, ${field.depth > 1 || region.z !== undefined || region.depth !== undefined ? `z: ${z}, ` : ''}width: ${w}, height: ${h}${field.depth > 1 || region.z !== undefined || region.depth !== undefined ? `, depth: ${d}` : ''}}`;
    throw new ProtocolError(`${prefix}region ${box} is not inside the ${size} field`, { field: name, expected });
  }
  return { x, y, z, width: w, height: h, depth: d };
}

/** Refuse a member the region does not take (`widht`, or `z` of a 2-D field): it would be ignored, and the whole row read or written. */
function refuseOtherKeys(field: Sized, region: Fields, name: string, keys?: readonly string[]): void {
  const taken: readonly string[] = keys ?? (field.dims === 3 || field.depth > 1 ? KEYS : FLAT_KEYS);
  const other = Object.keys(region).find((k) => !taken.includes(k));
  if (other === undefined) return;
  const owner = `\`${name === 'region' ? '' : `${name}.`}region\``;
  const size = `${field.width} x ${field.height}${field.depth > 1 ? ` x ${field.depth}` : ''}`;
  const expected = `{${taken.join(', ')}}`;
  if ((other === 'z' || other === 'depth') && !taken.includes(other))
    throw new ProtocolError(`${owner} takes no \`${other}\` here: the ${size} field is 2-D, its region is ${expected}; drop \`${other}\``, { field: name, expected });
  throw new ProtocolError(noSuchName(owner, 'member', other, taken).message, { field: name, expected });
}

/**
 * The planes ([c][z][y][x], packed) cropped to the region: each component's plane holds the
 * region's slices in increasing z, each slice its rows in increasing y, as a whole field's do.
 */
export function crop(field: Sized, planes: Float32Array[], region: Region | undefined): { width: number; height: number; depth: number; planes: Float32Array[] } {
  if (!region) return { width: field.width, height: field.height, depth: field.depth, planes };
  const { x, y, z, width: w, height: h, depth: d } = region;
  return {
    width: w, height: h, depth: d,
    planes: planes.map((p) => {
      const out = new Float32Array(w * h * d);
      for (let s = 0; s < d; s++)
        for (let r = 0; r < h; r++) {
          const from = ((z + s) * field.height + y + r) * field.width + x;
          out.set(p.subarray(from, from + w), (s * h + r) * w);
        }
      return out;
    }),
  };
}

/** Refuse a read whose answer would be too large to make (budget.ts READ_LIMIT), saying what to read instead. */
export function tooLargeToRead(name: string, field: Sized, region: Region | undefined, format: string): void {
  const width = region?.width ?? field.width;
  const height = region?.height ?? field.height;
  const depth = region?.depth ?? field.depth;
  const bytes = width * height * depth * 4 * (format === 'png' ? 1 : field.comps.length);
  if (bytes <= READ_LIMIT) return;
  const side = Math.max(1, Math.floor(Math.sqrt(READ_LIMIT / (4 * (format === 'png' ? 1 : field.comps.length)))));
  // Of a 3-D field, one slice of it: a square of `side` is what one read answers.
  const example = { x: 0, y: 0, ...(field.depth > 1 ? { z: 0 } : {}), width: Math.min(side, field.width), height: Math.min(side, field.height), ...(field.depth > 1 ? { depth: 1 } : {}) };
  throw new ProtocolError(
    `\`${name}\` is ${field.width} x ${field.height}${field.depth > 1 ? ` x ${field.depth}` : ''}: ${region ? 'that region' : 'the whole field'} as ${format} is ${mib(bytes)}, more than a read answers (${mib(READ_LIMIT)}). Read a region of it, e.g. {"region": ${JSON.stringify(example).replace(/,/g, ', ').replace(/:/g, ': ')}}, or give the node a smaller size`,
    { field: 'region', limit: READ_LIMIT, bytes, expected: example },
  );
}

