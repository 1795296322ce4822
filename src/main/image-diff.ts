// The difference between two pictures of one field (a dry run's: the running world's frame and the
// change's, fork.ts): how many elements changed, the largest and the mean absolute difference per
// component, the box holding every change, and a picture of where it changed.

/** A field's elements as component planes, unpadded ([c][z][y][x]). */
export interface Planes {
  width: number;
  height: number;
  depth: number;
  planes: Float32Array[];
}

/** The box of elements holding every change (z and depth only for a 3-D field). */
export interface ChangeBox {
  x: number;
  y: number;
  width: number;
  height: number;
  z?: number;
  depth?: number;
}

export interface DiffStats {
  /** Elements compared, and those where any component differs. */
  elements: number;
  changed: number;
  /** Per component compared: the largest and the mean absolute difference (over every element). */
  max: number[];
  mean: number[];
  /** Elements where one side is NaN or infinite and the other is not the same: changed, and left out of max and mean. */
  notFinite: number;
  /** The box holding every changed element, or null when nothing changed. */
  box: ChangeBox | null;
}

/** The stats, and per element the largest difference over its components (Infinity where not finite). */
export interface Diff extends DiffStats {
  magnitude: Float32Array;
}

/**
 * Compare two pictures of the same size, component by component (the components both have; a
 * change of the component count is the caller's to say). Equal bits, NaN against NaN included,
 * are unchanged.
 */
export function diffPlanes(before: Planes, now: Planes): Diff {
  const { width, height, depth } = now;
  const n = width * height * depth;
  const comps = Math.min(before.planes.length, now.planes.length);
  const magnitude = new Float32Array(n);
  const max = new Array<number>(comps).fill(0);
  const sum = new Array<number>(comps).fill(0);
  let notFinite = 0;
  for (let c = 0; c < comps; c++) {
    const a = before.planes[c];
    const b = now.planes[c];
    for (let i = 0; i < n; i++) {
      const x = a[i];
      const y = b[i];
      if (x === y || (x !== x && y !== y)) continue;
      const d = Math.abs(x - y);
      if (Number.isFinite(d)) {
        if (d > max[c]) max[c] = d;
        sum[c] += d;
        if (d > magnitude[i]) magnitude[i] = d;
      } else {
        if (magnitude[i] !== Infinity) notFinite++;
        magnitude[i] = Infinity;
      }
    }
  }
  let changed = 0;
  let x0 = width, y0 = height, z0 = depth, x1 = -1, y1 = -1, z1 = -1;
  for (let z = 0, i = 0; z < depth; z++)
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++, i++) {
        if (magnitude[i] === 0) continue;
        changed++;
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
        if (z < z0) z0 = z;
        if (z > z1) z1 = z;
      }
  const box = changed === 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1, ...(depth > 1 ? { z: z0, depth: z1 - z0 + 1 } : {}) };
  return { elements: n, changed, max, mean: sum.map((s) => s / n), notFinite, box, magnitude };
}

/**
 * A picture of where the change is, `outWidth` x `outHeight` RGBA: each pixel shows the largest
 * difference of the elements it covers (over every z of a 3-D field), so a change of one element
 * stays visible at any size. Black is unchanged; a change is red to yellow, brighter the larger
 * it is against the largest (square-rooted, so small changes are seen; not finite: white).
 */
export function diffPicture(diff: Diff, size: Planes, outWidth: number, outHeight: number): Uint8Array {
  const { width, height, depth } = size;
  const pooled = new Float32Array(outWidth * outHeight);
  for (let z = 0, i = 0; z < depth; z++)
    for (let y = 0; y < height; y++) {
      const row = Math.min(outHeight - 1, Math.floor((y * outHeight) / height)) * outWidth;
      for (let x = 0; x < width; x++, i++) {
        const m = diff.magnitude[i];
        const o = row + Math.min(outWidth - 1, Math.floor((x * outWidth) / width));
        if (m > pooled[o]) pooled[o] = m;
      }
    }
  const peak = Math.max(...diff.max, 0);
  const out = new Uint8Array(outWidth * outHeight * 4);
  for (let o = 0; o < pooled.length; o++) {
    const m = pooled[o];
    out[o * 4 + 3] = 255;
    if (m === 0) continue;
    if (m === Infinity) {
      out.fill(255, o * 4, o * 4 + 3);
      continue;
    }
    const s = peak > 0 ? Math.sqrt(Math.min(1, m / peak)) : 1;
    out[o * 4] = Math.round(96 + 159 * s);
    out[o * 4 + 1] = Math.round(220 * s * s);
  }
  return out;
}

/** The size of a picture whose longest side is at most `side` (never larger than the picture). */
export function fitInside(width: number, height: number, side: number): { width: number; height: number } {
  const scale = Math.min(1, side / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}
