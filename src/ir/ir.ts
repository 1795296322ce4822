// The typed IR (version 1): what the checker lowers kernel bodies to, what the interpreter runs
// and what codegen compiles to WebAssembly.
//
// The IR is *scalarised*: every value is one scalar (f32, i32 or bool). Vectors and structs are
// lowered to their components by the front end, so both backends see only scalars; codegen maps
// each scalar to a v128 holding 4 neighbouring elements along x (SIMD across x).
//
// One IrFunction computes every element of a domain (width x height x depth) for one kernel or
// for a fused group of kernels. Control flow is structured like WebAssembly's: `block`, `loop`
// and `break` (to the n-th enclosing block or loop). A `loop` repeats its body until a `break`
// leaves it; `continue` and `return` are lowered to `break` out of an inner `block`.
//
// Per element: locals start at 0 (false); the body runs; then every entry of `stores` writes its
// local to its field at the element. Outputs are locals until the end, so a fused consumer reads
// its producer's output local, and a conditional write needs no read-modify-write of memory.

export const IR_VERSION = 1;

export type Scalar = 'f32' | 'i32' | 'bool';

/** Operations, named like WebAssembly's: `<operand type>.<op>`. OPS gives each one's signature. */
export type Op = keyof typeof OPS;

type Sig = { args: Scalar[]; result: Scalar };
const f1: Sig = { args: ['f32'], result: 'f32' };
const f2: Sig = { args: ['f32', 'f32'], result: 'f32' };
const fc: Sig = { args: ['f32', 'f32'], result: 'bool' };
const i1: Sig = { args: ['i32'], result: 'i32' };
const i2: Sig = { args: ['i32', 'i32'], result: 'i32' };
const ic: Sig = { args: ['i32', 'i32'], result: 'bool' };
const b1: Sig = { args: ['bool'], result: 'bool' };
const b2: Sig = { args: ['bool', 'bool'], result: 'bool' };

/**
 * Every operation with its signature. Semantics, identical in both backends (bit for bit):
 * - f32 arithmetic is IEEE single precision, round to nearest (the interpreter rounds each step
 *   with Math.fround); `f32.min`/`f32.max` propagate NaN like WebAssembly's.
 * - `f32.rem` is a - b * trunc(a / b), each step in f32.
 * - the transcendental functions (sin ... pow) are the project's own approximations
 *   (src/codegen/math): the interpreter runs the same polynomials in f32 (src/ir/mathref.ts).
 *   `f32.sin_turns` a / `f32.cos_turns` a are sin(2 pi a) / cos(2 pi a), `a` in turns (what
 *   sin(a * TAU) and cos(a * TAU) lower to).
 * - `f32.to_i32` truncates toward zero and saturates (NaN -> 0), like i32x4.trunc_sat_f32x4_s.
 * - i32 arithmetic wraps (two's complement); `i32.rem` is truncated (sign of a) and gives 0 when
 *   b is 0; shifts take b mod 32.
 * - `x.to_bool` is x != 0; `bool.to_i32`/`bool.to_f32` give 0 or 1.
 */
export const OPS = {
  'f32.add': f2, 'f32.sub': f2, 'f32.mul': f2, 'f32.div': f2, 'f32.rem': f2,
  'f32.min': f2, 'f32.max': f2, 'f32.pow': f2, 'f32.atan2': f2,
  'f32.neg': f1, 'f32.abs': f1, 'f32.floor': f1, 'f32.ceil': f1, 'f32.trunc': f1,
  'f32.nearest': f1, 'f32.sqrt': f1,
  'f32.sin': f1, 'f32.cos': f1, 'f32.tan': f1, 'f32.asin': f1, 'f32.acos': f1, 'f32.atan': f1,
  'f32.exp': f1, 'f32.log': f1, 'f32.exp2': f1, 'f32.log2': f1,
  'f32.sin_turns': f1, 'f32.cos_turns': f1,
  'f32.eq': fc, 'f32.ne': fc, 'f32.lt': fc, 'f32.le': fc, 'f32.gt': fc, 'f32.ge': fc,
  'f32.to_i32': { args: ['f32'], result: 'i32' },
  'f32.to_bool': { args: ['f32'], result: 'bool' },
  'i32.add': i2, 'i32.sub': i2, 'i32.mul': i2, 'i32.rem': i2, 'i32.min': i2, 'i32.max': i2,
  'i32.and': i2, 'i32.or': i2, 'i32.xor': i2, 'i32.shl': i2, 'i32.shr_s': i2, 'i32.shr_u': i2,
  'i32.neg': i1, 'i32.abs': i1, 'i32.not': i1,
  'i32.eq': ic, 'i32.ne': ic, 'i32.lt': ic, 'i32.le': ic, 'i32.gt': ic, 'i32.ge': ic,
  'i32.to_f32': { args: ['i32'], result: 'f32' },
  'i32.to_bool': { args: ['i32'], result: 'bool' },
  'bool.and': b2, 'bool.or': b2, 'bool.xor': b2, 'bool.eq': b2, 'bool.ne': b2, 'bool.not': b1,
  'bool.to_i32': { args: ['bool'], result: 'i32' },
  'bool.to_f32': { args: ['bool'], result: 'f32' },
} as const satisfies Record<string, Sig>;

export type Expr =
  /** A constant. bool constants are 0 or 1. f32 constants are already f32-exact (Math.fround). */
  | { k: 'const'; t: Scalar; v: number }
  | { k: 'local'; t: Scalar; i: number }
  /** The element's coordinate along an axis (0 = x, 1 = y, 2 = z). */
  | { k: 'coord'; t: 'i32'; axis: 0 | 1 | 2 }
  /** The domain's extent along an axis (width, height, depth), or a field's when `field` is set. */
  | { k: 'extent'; t: 'i32'; axis: 0 | 1 | 2; field?: number }
  /** A value the host hands in per evaluation (time, pointer, an `in` port's value, ...). */
  | { k: 'uniform'; t: Scalar; slot: number }
  /**
   * Read component `comp` of field `field`: at the own element when `at` is absent (pointwise),
   * else at integer coordinates `at.coords` (one i32 per axis of the field), clamped to the
   * field's edge or wrapped around it.
   */
  | { k: 'load'; t: Scalar; field: number; comp: number; at?: { mode: 'clamp' | 'wrap'; coords: Expr[] } }
  | { k: 'op'; t: Scalar; op: Op; args: Expr[] }
  /** c ? a : b (both evaluated: expressions have no effects). */
  | { k: 'select'; t: Scalar; c: Expr; a: Expr; b: Expr };

export type Stmt =
  | { k: 'set'; local: number; e: Expr }
  | { k: 'if'; c: Expr; then: Stmt[]; else: Stmt[] }
  | { k: 'block'; body: Stmt[] }
  /**
   * Repeats `body` until a break leaves it. Each repetition costs one unit of fuel; an element
   * that spends more than `fuel` units traps, naming `nodes[node]`.
   */
  | { k: 'loop'; body: Stmt[]; node: number }
  /** Leave the `depth`-th enclosing block or loop (0 = innermost). */
  | { k: 'break'; depth: number };

/** A field the function reads or writes; the host binds each to memory per evaluation. */
export interface IrField {
  /** `node.port` for people and for the host's binding; state fields `node.port` + role. */
  name: string;
  /** read: an input (or the current state); write: an output (or the next state). */
  role: 'read' | 'write';
  dims: 1 | 2 | 3;
  /** The element's components: vec4 -> 4 x f32, a struct -> its fields' components in order. */
  comps: Scalar[];
}

export interface IrUniform {
  /** `time`, `frame`, `pointer.x`, `pointer.y`, `pointer.down`, `keys.space`, or `NODE.in.PORT.COMP`. */
  name: string;
  t: Scalar;
}

export interface IrFunction {
  ir: typeof IR_VERSION;
  /** The domain's number of axes; the function runs rows r = y + z * height in [r0, r1), columns [x0, x1) of the argument block. */
  dims: 1 | 2 | 3;
  /** The nodes whose bodies this function holds (one, or a fused group), for trap messages. */
  nodes: string[];
  locals: Scalar[];
  fields: IrField[];
  uniforms: IrUniform[];
  body: Stmt[];
  /** After the body, per element: fields[field] component `comp` at the element = locals[local]. */
  stores: { field: number; comp: number; local: number }[];
  /** Loop repetitions one element may spend before it traps (both backends count the same). */
  fuel: number;
}

/**
 * The argument block the host writes in memory before running an IrFunction; both backends read
 * it. All words are 4 bytes, little-endian, at byte offsets from the block's address:
 *
 *   0  width   4  height   8  depth   (the domain)
 *   12 trap: the host sets -1; on a fuel trap the backend claims it (compare-and-swap from -1)
 *      with the node index, and the claimer writes the element at 24 (x) and 28 (its row)
 *   16 x0, 20 x1: the columns [x0, x1) of each row to compute (0 and width for all of them; a
 *      tile's columns: x0 a multiple of 4, x1 a multiple of 4 or the width)
 *   24 trapX, 28 trapRow: the trapped element (fuel-trap.ts), meaningful once trap >= 0
 *   32 + 24 * f: field f: base address, width, height, depth, row stride (elements, a multiple
 *      of 4: rows are padded so a v128 never straddles rows), plane bytes (one component's plane;
 *      component c lives at base + c * planeBytes; element (x, y, z) at index
 *      x + y * stride + z * stride * height)
 *   32 + 24 * fields.length + 4 * u: uniform u (f32 or i32; bool as i32 0/1)
 *
 * Fields store f32 as f32, i32 and bool as i32 (bool: 0 or 1).
 */
export const ARGS = {
  width: 0,
  height: 4,
  depth: 8,
  trap: 12,
  x0: 16,
  x1: 20,
  /** On a fuel trap, beside the trap word: x of the element and its row (y + z * height). */
  trapX: 24,
  trapRow: 28,
  header: 32,
  fieldWords: 6,
  field: (f: number) => 32 + 24 * f,
  uniform: (fields: number, u: number) => 32 + 24 * fields + 4 * u,
  size: (fields: number, uniforms: number) => 32 + 24 * fields + 4 * uniforms,
} as const;

/** Offsets within one field's six words. */
export const FIELD = { base: 0, width: 4, height: 8, depth: 12, stride: 16, planeBytes: 20 } as const;

/** The default fuel: loop repetitions one element may spend. */
export const DEFAULT_FUEL = 1 << 24;
