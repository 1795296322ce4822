// sRGB's transfer function, exactly (IEC 61966-2-1): kernels see linear values; pictures hold
// sRGB-encoded bytes. Images read in are decoded to linear, and every picture made of a field (a
// PNG, a video frame, `read` as PNG, the Player's canvas, MCP's images) is encoded back.

/** The linear value of an sRGB-encoded value in [0, 1]. */
export function srgbToLinear(s: number): number {
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
}

/** The sRGB-encoded value of a linear value in [0, 1]. */
export function linearToSrgb(v: number): number {
  return v <= 0.0031308 ? v * 12.92 : 1.055 * v ** (1 / 2.4) - 0.055;
}

/** The linear value of each byte 0..255 of an sRGB picture (as f32, as a field holds it). */
export const BYTE_TO_LINEAR = Float32Array.from({ length: 256 }, (_, b) => srgbToLinear(b / 255));

// A linear value's byte is round(linearToSrgb(v) * 255): the byte b begins where the encoded
// value reaches (b - 0.5) / 255, at the linear value THRESHOLD[b]. BUCKET[i] is the byte at the
// linear value i / BUCKETS; the thresholds are more than 1 / BUCKETS apart (the closest, near 0,
// 1 / (255 * 12.92)), so at most one lies inside a bucket and one comparison finds the byte.
const BUCKETS = 65536;
const THRESHOLD = new Float64Array(257);
for (let b = 1; b <= 255; b++) THRESHOLD[b] = srgbToLinear((b - 0.5) / 255);
THRESHOLD[0] = -Infinity;
THRESHOLD[256] = Infinity;
const BUCKET = new Uint8Array(BUCKETS + 1);
for (let i = 0, b = 0; i <= BUCKETS; i++) {
  while (THRESHOLD[b + 1] <= i / BUCKETS) b++;
  BUCKET[i] = b;
}

/** The sRGB byte of a linear value: clamped to [0, 1], NaN as 0, rounded to the nearest byte. */
export function linearToByte(v: number): number {
  if (!(v > 0)) return 0;
  if (v >= 1) return 255;
  const b = BUCKET[(v * BUCKETS) | 0];
  return v >= THRESHOLD[b + 1] ? b + 1 : b;
}
