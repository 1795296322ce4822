// The runtime's scalar conversions, as one function each: the interpreter runs them and constant
// folding in lowering calls them, so a folded constant is what the running code would compute.

/** f32 -> i32, truncating toward zero and saturating, NaN -> 0 (i32x4.trunc_sat_f32x4_s). */
export function truncSatI32(x: number): number {
  if (Number.isNaN(x)) return 0;
  if (x >= 2147483648) return 2147483647;
  if (x <= -2147483648) return -2147483648;
  return Math.trunc(x) | 0;
}
