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

/**
 * linearToByte by the top 16 bits of an f32 in (0, 1), for code that reads the bits (the SIMD
 * thumbnails, linear-box-simd.ts): for index i = bits >>> 16, byte[i] is the byte of the smallest
 * f32 with those top bits and next[i] the bits of the first f32 above it whose byte is one more
 * (0xffffffff if none has those top bits), so the byte of `bits` is byte[i] + (bits >= next[i]).
 * Made from linearToByte itself (a binary search per index), once; it checks that no index
 * spans two boundaries.
 */
export const TOP_INDICES = 0x3f80;
let topBits: { byte: Uint8Array; next: Uint32Array } | undefined;
export function topBitsTable(): { byte: Uint8Array; next: Uint32Array } {
  if (topBits) return topBits;
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  const byteOf = (bits: number) => ((u[0] = bits), linearToByte(f[0]));
  const byte = new Uint8Array(TOP_INDICES);
  const next = new Uint32Array(TOP_INDICES);
  for (let i = 0; i < TOP_INDICES; i++) {
    const lo = i * 0x10000;
    const hi = lo + 0xffff;
    byte[i] = byteOf(lo);
    const last = byteOf(hi);
    if (last > byte[i] + 1) throw new Error(`topBitsTable: top bits ${i} span two sRGB byte boundaries`);
    if (last === byte[i]) {
      next[i] = 0xffffffff;
      continue;
    }
    // The first bits in (lo, hi] whose byte is byte[i] + 1 (linearToByte rises with the value).
    let [a, b] = [lo, hi];
    while (a + 1 < b) {
      const m = a + Math.floor((b - a) / 2);
      if (byteOf(m) > byte[i]) b = m;
      else a = m;
    }
    next[i] = b;
  }
  topBits = { byte, next };
  return topBits;
}
