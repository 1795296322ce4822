// A minimal WebAssembly binary encoder: what the small modules assembled outside binaryen need
// (src/main/linear-box-simd.ts and resample-wasm.ts; turbofan.ts's custom section), no more.
// binaryen, which compiles the kernels, is loaded on the compiler's thread only; these modules are
// a few dozen instructions, written out here by name.

/** Unsigned LEB128. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

/** Signed LEB128 (of an i32). */
export function sleb(n: number): number[] {
  const out: number[] = [];
  n |= 0;
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return [...out, b];
    out.push(b | 0x80);
  }
}

/** A vector: its length, then its items. */
export const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const name = (s: string) => vec([...Buffer.from(s)].map((b) => [b]));

export const I32 = 0x7f;
export const V128 = 0x7b;
/** A block or `if` that leaves nothing, or one i32. */
export const VOID = 0x40;

/** Core instructions, as the binary format numbers them. */
export const op = {
  if: 0x04, else: 0x05, loop: 0x03, brIf: 0x0d, end: 0x0b,
  localGet: 0x20, localSet: 0x21, localTee: 0x22,
  i32Load: 0x28, i32Load8U: 0x2d, i32Store: 0x36,
  i32Const: 0x41, i32Eqz: 0x45, i32Ne: 0x47, i32LtU: 0x49, i32LeS: 0x4c, i32GeS: 0x4e, i32GeU: 0x4f,
  i32Add: 0x6a, i32Sub: 0x6b, i32Mul: 0x6c, i32And: 0x71, i32Or: 0x72, i32Shl: 0x74, i32ShrU: 0x76,
  f32Load: 0x2a, f64Load: 0x2b, f64Store: 0x39, select: 0x1b, f32Lt: 0x5d, f32Gt: 0x5e,
  f32Const: 0x43, f64Const: 0x44, f64Add: 0xa0, f64Mul: 0xa2, i32TruncF64U: 0xab, f64PromoteF32: 0xbb,
};

const simd = (code: number) => [0xfd, ...uleb(code)];
/** SIMD instructions (after the 0xfd prefix). */
export const v = {
  load: simd(0x00), const: simd(0x0c), shuffle: simd(0x0d), f32x4Splat: simd(0x13), f64x2Splat: simd(0x14),
  f32x4Ge: simd(0x46), f64x2Gt: simd(0x4a), and: simd(0x4e), bitselect: simd(0x52), store64Lane: simd(0x5b),
  demote: simd(0x5e), promoteLow: simd(0x5f), i32x4AllTrue: simd(0xa3),
  f32x4Pmin: simd(0xea), f32x4Pmax: simd(0xeb), f64x2Add: simd(0xf0), f64x2Mul: simd(0xf2), f64x2Div: simd(0xf3),
};

/** A memory access's immediates: alignment hint 1 byte (any address works), offset 0. */
export const memarg = [0, 0];
export const get = (i: number) => [op.localGet, ...uleb(i)];
export const set = (i: number) => [op.localSet, ...uleb(i)];
export const tee = (i: number) => [op.localTee, ...uleb(i)];
export const i32 = (x: number) => [op.i32Const, ...sleb(x)];
export const f32 = (x: number) => [op.f32Const, ...new Uint8Array(new Float32Array([x]).buffer)];
export const f64 = (x: number) => [op.f64Const, ...new Uint8Array(new Float64Array([x]).buffer)];

/** A function: its parameters and result (i32s), its locals as [count, type] runs, its body (ending in `end`). */
export interface Func {
  name: string;
  params: number;
  result: boolean;
  locals: [number, number][];
  body: number[];
}

/** A module of `funcs`, each exported by name, importing a shared memory as env.memory (up to 4 GiB). */
export function moduleBytes(funcs: Func[]): Uint8Array<ArrayBuffer> {
  const types = vec(funcs.map((f) => [0x60, ...vec(new Array(f.params).fill([I32])), ...vec(f.result ? [[I32]] : [])]));
  const imports = vec([[...name('env'), ...name('memory'), 0x02, 0x03, ...uleb(1), ...uleb(65536)]]);
  const functions = vec(funcs.map((_, i) => uleb(i)));
  const exports = vec(funcs.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]));
  const code = vec(funcs.map((f) => {
    const body = [...vec(f.locals), ...f.body];
    return [...uleb(body.length), ...body];
  }));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...section(1, types), ...section(2, imports), ...section(3, functions), ...section(7, exports), ...section(10, code)]);
}
