// A thumbnail's reduction done on a field's linear values, before the sRGB mapping: each pixel of
// the smaller picture is the average of the light of its k x k block, and only the smaller
// picture's elements are mapped to bytes (a quarter of the mapping for 256 -> 128). Averaging
// sRGB bytes instead darkens edges and fine detail (the mean of bytes 0 and 255 is 128, which
// shows 22 % of the light, where the mean of the light is 50 %: byte 188).
//
// Values are clamped to [0, 1] (NaN as 0) before they are averaged: the average is of the light
// the full picture shows, which is clamped. With an alpha component (the 4th), colours are
// weighted by alpha as boxReduce weights bytes (thumbnail.ts): a transparent element's colour
// does not bleed; a block wholly transparent keeps the plain average of its colours.

/** One component's elements: (x, y) at data[offset + y * stride + x] (a field's padded rows, or packed ones). */
export interface PlaneRows {
  data: Float32Array;
  offset: number;
  stride: number;
}

/** A value clamped to [0, 1], NaN as 0: what the mapping to bytes shows of it. */
function shown(v: number): number {
  return v > 0 ? (v < 1 ? v : 1) : 0;
}

/**
 * The shown components (1 to 4; a 4th is alpha) of a width x height field reduced k times both
 * ways, as packed f32 planes (the values a field would hold): each element the average of the
 * clamped values of its k x k block, colours weighted by alpha when there is one.
 */
export function boxReduceLinear(planes: PlaneRows[], width: number, height: number, k: number): Float32Array[] {
  if (!(Number.isInteger(k) && k >= 1 && width % k === 0 && height % k === 0)) throw new Error(`boxReduceLinear: ${width} x ${height} is not reduced by a whole ${k}`);
  if (planes.length < 1 || planes.length > 4) throw new Error(`boxReduceLinear: ${planes.length} components, where a picture shows 1 to 4`);
  const alpha = planes.length === 4 ? planes[3] : undefined;
  if (!alpha) return planes.map((p) => averaged(p, width, height, k));
  // Opaque: colours the plain averages, and alpha 1 without averaging it.
  if (opaque(alpha, width, height)) return [...planes.slice(0, 3).map((p) => averaged(p, width, height, k)), new Float32Array((width / k) * (height / k)).fill(1)];
  return weighted(planes, width, height, k);
}

/** Whether every alpha value shows as 1 (then the weighted average is the plain one). */
function opaque({ data, offset, stride }: PlaneRows, width: number, height: number): boolean {
  for (let y = 0; y < height; y++) for (let x = 0, i = offset + y * stride; x < width; x++, i++) if (!(data[i] >= 1)) return false;
  return true;
}

/** One component's plain block averages, each block summed row by row in one local sum. */
function averaged({ data, offset, stride }: PlaneRows, width: number, height: number, k: number): Float32Array {
  const outWidth = width / k;
  const out = new Float32Array(outWidth * (height / k));
  const n = k * k;
  for (let oy = 0, o = 0; oy < height / k; oy++) {
    const row = offset + oy * k * stride;
    if (k === 2) {
      // The common case (256 -> 128), unrolled: the same sums in the same order.
      for (let ox = 0, i = row; ox < outWidth; ox++, o++, i += 2) out[o] = (shown(data[i]) + shown(data[i + 1]) + shown(data[i + stride]) + shown(data[i + stride + 1])) / 4;
      continue;
    }
    for (let ox = 0; ox < outWidth; ox++, o++) {
      let sum = 0;
      for (let y = 0, i = row + ox * k; y < k; y++, i += stride) for (let dx = 0; dx < k; dx++) sum += shown(data[i + dx]);
      out[o] = sum / n;
    }
  }
  return out;
}

/** Colours weighted by alpha, alpha the plain average (see boxReduceLinear). */
function weighted(planes: PlaneRows[], width: number, height: number, k: number): Float32Array[] {
  const outWidth = width / k;
  const out = planes.map(() => new Float32Array(outWidth * (height / k)));
  const n = k * k;
  // Per block of the row: alpha, colours times alpha, plain colours.
  const sums = new Float64Array(outWidth * 7);
  const [r, g, b, a] = planes;
  for (let oy = 0; oy < height / k; oy++) {
    sums.fill(0);
    for (let y = oy * k; y < (oy + 1) * k; y++) {
      let ir = r.offset + y * r.stride;
      let ig = g.offset + y * g.stride;
      let ib = b.offset + y * b.stride;
      let ia = a.offset + y * a.stride;
      for (let ox = 0, s = 0; ox < outWidth; ox++, s += 7)
        for (let dx = 0; dx < k; dx++) {
          const w = shown(a.data[ia++]);
          const cr = shown(r.data[ir++]);
          const cg = shown(g.data[ig++]);
          const cb = shown(b.data[ib++]);
          sums[s] += w;
          sums[s + 1] += cr * w;
          sums[s + 2] += cg * w;
          sums[s + 3] += cb * w;
          sums[s + 4] += cr;
          sums[s + 5] += cg;
          sums[s + 6] += cb;
        }
    }
    for (let ox = 0, s = 0, o = oy * outWidth; ox < outWidth; ox++, s += 7, o++) {
      const w = sums[s];
      for (let c = 0; c < 3; c++) out[c][o] = w > 0 ? sums[s + 1 + c] / w : sums[s + 4 + c] / n;
      out[3][o] = w / n;
    }
  }
  return out;
}

/**
 * Each output cell's source elements along one axis and how much of each it covers: cell o covers
 * elements start[o] .. start[o] + count[o] - 1, their weights at weights[at[o]...].
 */
export function footprints(from: number, to: number): { start: Int32Array; count: Int32Array; at: Int32Array; weights: Float64Array } {
  const scale = from / to;
  const start = new Int32Array(to);
  const count = new Int32Array(to);
  const at = new Int32Array(to);
  const weights: number[] = [];
  for (let o = 0; o < to; o++) {
    const lo = o * scale;
    const hi = (o + 1) * scale;
    start[o] = Math.floor(lo);
    count[o] = Math.min(from, Math.ceil(hi)) - start[o];
    at[o] = weights.length;
    for (let x = start[o]; x < start[o] + count[o]; x++) weights.push(Math.min(x + 1, hi) - Math.max(x, lo));
  }
  return { start, count, at, weights: Float64Array.from(weights) };
}

type Footprints = ReturnType<typeof footprints>;

/**
 * Each row of a component summed across into the output's columns: row y's part of cell ox at
 * out[y * outWidth + ox], the elements' clamped values (times alpha's, when `times` is given)
 * weighted by how much of each the cell covers, added in increasing x.
 */
function across({ data, offset, stride }: PlaneRows, cols: Footprints, height: number, out: Float64Array, times?: PlaneRows): void {
  const outWidth = cols.start.length;
  const { start, count, at, weights } = cols;
  for (let y = 0, o = 0; y < height; y++) {
    const row = offset + y * stride;
    const arow = times ? times.offset + y * times.stride : 0;
    for (let ox = 0; ox < outWidth; ox++, o++) {
      let h = 0;
      for (let d = 0, x = start[ox], w = at[ox]; d < count[ox]; d++, x++, w++) h += weights[w] * (times ? shown(data[row + x]) * shown(times.data[arow + x]) : shown(data[row + x]));
      out[o] = h;
    }
  }
}

/** Rows summed across (`across`) then down: cell (ox, oy) at out[oy * outWidth + ox], the rows added in increasing y. */
function down(acrossRows: Float64Array, rows: Footprints, outWidth: number, out: Float64Array): void {
  const outHeight = rows.start.length;
  out.fill(0);
  for (let oy = 0; oy < outHeight; oy++)
    for (let dy = 0; dy < rows.count[oy]; dy++) {
      const wy = rows.weights[rows.at[oy] + dy];
      const from = (rows.start[oy] + dy) * outWidth;
      for (let ox = 0, o = oy * outWidth; ox < outWidth; ox++, o++) out[o] += wy * acrossRows[from + ox];
    }
}

/**
 * The shown components (1 to 4; a 4th is alpha) of a width x height field made outWidth x
 * outHeight (smaller) by area: each output element the average of the clamped values under its
 * cell, each element weighted by how much of it the cell covers (an exact box filter of any
 * factor; boxReduceLinear is the whole-factor case), colours weighted by alpha as there. Each
 * row is summed across into the cells once, then the rows down.
 */
export function resampleLinear(planes: PlaneRows[], width: number, height: number, outWidth: number, outHeight: number): Float32Array[] {
  if (!(outWidth >= 1 && outHeight >= 1 && outWidth <= width && outHeight <= height)) throw new Error(`resampleLinear: ${width} x ${height} is not made ${outWidth} x ${outHeight} by shrinking`);
  if (planes.length < 1 || planes.length > 4) throw new Error(`resampleLinear: ${planes.length} components, where a picture shows 1 to 4`);
  const cols = footprints(width, outWidth);
  const rows = footprints(height, outHeight);
  const area = (width / outWidth) * (height / outHeight);
  const n = outWidth * outHeight;
  const alpha = planes.length === 4 ? planes[3] : undefined;
  const weighted = alpha !== undefined && !opaque(alpha, width, height);
  const colours = Math.min(planes.length, 3);
  const out = planes.map(() => new Float32Array(n));
  const acrossRows = new Float64Array(height * outWidth);
  const plain = new Float64Array(n);
  if (!weighted) {
    for (let c = 0; c < colours; c++) {
      across(planes[c], cols, height, acrossRows);
      down(acrossRows, rows, outWidth, plain);
      for (let o = 0; o < n; o++) out[c][o] = plain[o] / area;
    }
    if (alpha) out[3].fill(1);
    return out;
  }
  const alphas = new Float64Array(n);
  across(alpha, cols, height, acrossRows);
  down(acrossRows, rows, outWidth, alphas);
  const times = new Float64Array(n);
  // The plain sums only where some cell is wholly transparent; the weighted ones only where some is not.
  const anyClear = alphas.some((a) => !(a > 0));
  const anySeen = alphas.some((a) => a > 0);
  for (let c = 0; c < 3; c++) {
    if (anyClear) {
      across(planes[c], cols, height, acrossRows);
      down(acrossRows, rows, outWidth, plain);
    }
    if (anySeen) {
      across(planes[c], cols, height, acrossRows, alpha);
      down(acrossRows, rows, outWidth, times);
    }
    for (let o = 0; o < n; o++) out[c][o] = alphas[o] > 0 ? times[o] / alphas[o] : plain[o] / area;
  }
  for (let o = 0; o < n; o++) out[3][o] = alphas[o] / area;
  return out;
}
