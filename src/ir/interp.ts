// The reference backend: runs an IrFunction in plain TypeScript, one element at a time, with the
// exact semantics of ir.ts (f32 rounded after every step, wrapping i32). The SIMD compiler in
// src/codegen must agree with it bit for bit (test/backends.test.ts).
//
// The IR is compiled once per function into JavaScript closures (cached), so running an element
// is a walk over closures rather than a switch per node.

import { ARGS, FIELD, type Expr, type IrFunction, type Op, type Stmt } from './ir.js';
import { MATH_REF } from './mathref.js';

/** A metered loop ran out of fuel at one element; both backends throw this. */
export class FuelTrap extends Error {
  constructor(readonly node: string, readonly fuel: number) {
    super(`node \`${node}\` ran out of fuel: a loop ran more than ${fuel} times at one element`);
    this.name = 'FuelTrap';
  }
}

/**
 * The largest fuel both backends honour: the compiled code counts repetitions in unsigned 32-bit
 * lanes. Larger values (or Infinity) behave as this one.
 */
export const MAX_FUEL = 0xfffffffe;

export function fuelLimit(fuel: number): number {
  if (!(fuel >= 0)) return 0;
  return Math.min(Math.floor(fuel), MAX_FUEL);
}

/** Run every element of rows r in [r0, r1) (r = y + z * height) of `fn`'s domain. */
export function interpret(
  fn: IrFunction,
  memory: WebAssembly.Memory | SharedArrayBuffer | ArrayBuffer,
  args: number,
  r0: number,
  r1: number,
): void {
  const buffer = memory instanceof WebAssembly.Memory ? memory.buffer : memory;
  programFor(fn).run(buffer, args, r0, r1);
}

// ---------------------------------------------------------------------------------------------

type Value = () => number;
/** A statement returns -1 when it completes, else the depth of the break it is leaving by. */
type Exec = () => number;

/** Mutable state the closures of one program read and write. */
interface State {
  f32: Float32Array;
  i32: Int32Array;
  x: number;
  y: number;
  z: number;
  locals: Float64Array;
  fuelUsed: number;
  /** Per field: the i32 index of component 0 of the element (0, y, z), set per row. */
  rowIndex: Int32Array;
  /** Per field and component (fieldComp index): i32 index of the component plane's start. */
  planeIndex: Int32Array;
  /** Per field: width, height, depth, stride, stride * height. */
  width: Int32Array;
  height: Int32Array;
  depth: Int32Array;
  stride: Int32Array;
  slice: Int32Array;
  domain: [number, number, number];
  uniforms: Float64Array;
}

interface Program {
  run(buffer: ArrayBufferLike, args: number, r0: number, r1: number): void;
}

const programs = new WeakMap<IrFunction, Program>();

function programFor(fn: IrFunction): Program {
  let p = programs.get(fn);
  if (!p) {
    p = compileProgram(fn);
    programs.set(fn, p);
  }
  return p;
}

const views = new WeakMap<ArrayBufferLike, { f32: Float32Array; i32: Int32Array }>();

function viewsOf(buffer: ArrayBufferLike): { f32: Float32Array; i32: Int32Array } {
  let v = views.get(buffer);
  if (!v) {
    v = { f32: new Float32Array(buffer), i32: new Int32Array(buffer) };
    views.set(buffer, v);
  }
  return v;
}

function compileProgram(fn: IrFunction): Program {
  const nFields = fn.fields.length;
  // Component planes get one flat index each: compBase[f] + c.
  const compBase: number[] = [];
  let nComps = 0;
  for (const f of fn.fields) {
    compBase.push(nComps);
    nComps += f.comps.length;
  }
  const st: State = {
    f32: new Float32Array(0),
    i32: new Int32Array(0),
    x: 0,
    y: 0,
    z: 0,
    locals: new Float64Array(fn.locals.length),
    fuelUsed: 0,
    rowIndex: new Int32Array(nFields),
    planeIndex: new Int32Array(nComps),
    width: new Int32Array(nFields),
    height: new Int32Array(nFields),
    depth: new Int32Array(nFields),
    stride: new Int32Array(nFields),
    slice: new Int32Array(nFields),
    domain: [0, 0, 0],
    uniforms: new Float64Array(fn.uniforms.length),
  };
  const fuel = fuelLimit(fn.fuel);
  let trapWord = 0; // i32 index of the trap word, set per run

  const expr = (e: Expr): Value => compileExpr(e, st, compBase);

  const stmt = (s: Stmt): Exec => {
    switch (s.k) {
      case 'set': {
        const v = expr(s.e);
        const i = s.local;
        const locals = st.locals;
        return () => {
          locals[i] = v();
          return -1;
        };
      }
      case 'if': {
        const c = expr(s.c);
        const a = list(s.then);
        const b = list(s.else);
        return () => (c() ? a() : b());
      }
      case 'block': {
        const body = list(s.body);
        return () => {
          const r = body();
          return r < 0 ? -1 : r === 0 ? -1 : r - 1;
        };
      }
      case 'loop': {
        const body = list(s.body);
        const node = s.node;
        return () => {
          for (;;) {
            if (++st.fuelUsed > fuel) {
              st.i32[trapWord] = node;
              throw new FuelTrap(fn.nodes[node] ?? `#${node}`, fn.fuel);
            }
            const r = body();
            if (r >= 0) return r === 0 ? -1 : r - 1;
          }
        };
      }
      case 'break': {
        const d = s.depth;
        return () => d;
      }
    }
  };

  const list = (stmts: Stmt[]): Exec => {
    const parts = stmts.map(stmt);
    if (parts.length === 0) return () => -1;
    if (parts.length === 1) return parts[0];
    return () => {
      for (let i = 0; i < parts.length; i++) {
        const r = parts[i]();
        if (r >= 0) return r;
      }
      return -1;
    };
  };

  const body = list(fn.body);
  const stores = fn.stores.map((s) => {
    const t = fn.fields[s.field].comps[s.comp];
    return { field: s.field, plane: compBase[s.field] + s.comp, local: s.local, isF32: t === 'f32' };
  });

  return {
    run(buffer, args, r0, r1) {
      const { f32, i32 } = viewsOf(buffer);
      st.f32 = f32;
      st.i32 = i32;
      const a = args >> 2;
      trapWord = a + (ARGS.trap >> 2);
      const width = i32[a + (ARGS.width >> 2)];
      const height = i32[a + (ARGS.height >> 2)];
      const depth = i32[a + (ARGS.depth >> 2)];
      st.domain = [width, height, depth];
      for (let f = 0; f < nFields; f++) {
        const w = a + (ARGS.field(f) >> 2);
        const base = i32[w + (FIELD.base >> 2)];
        const planeBytes = i32[w + (FIELD.planeBytes >> 2)];
        st.width[f] = i32[w + (FIELD.width >> 2)];
        st.height[f] = i32[w + (FIELD.height >> 2)];
        st.depth[f] = i32[w + (FIELD.depth >> 2)];
        st.stride[f] = i32[w + (FIELD.stride >> 2)];
        st.slice[f] = Math.imul(st.stride[f], st.height[f]);
        for (let c = 0; c < fn.fields[f].comps.length; c++) {
          st.planeIndex[compBase[f] + c] = (base + Math.imul(c, planeBytes)) >> 2;
        }
      }
      for (let u = 0; u < fn.uniforms.length; u++) {
        const at = (args + ARGS.uniform(nFields, u)) >> 2;
        const t = fn.uniforms[u].t;
        st.uniforms[u] = t === 'f32' ? f32[at] : t === 'i32' ? i32[at] : i32[at] !== 0 ? 1 : 0;
      }
      if (width <= 0 || height <= 0) return;
      const locals = st.locals;
      for (let r = r0; r < r1; r++) {
        const y = r % height;
        const z = (r - y) / height;
        st.y = y;
        st.z = z;
        for (let f = 0; f < nFields; f++) {
          st.rowIndex[f] = Math.imul(y, st.stride[f]) + Math.imul(z, st.slice[f]);
        }
        for (let x = 0; x < width; x++) {
          st.x = x;
          locals.fill(0);
          st.fuelUsed = 0;
          body();
          for (const s of stores) {
            const at = st.planeIndex[s.plane] + st.rowIndex[s.field] + x;
            if (s.isF32) f32[at] = locals[s.local];
            else i32[at] = locals[s.local];
          }
        }
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Expressions

const fround = Math.fround;

/** Round to nearest, ties to even (WebAssembly's `nearest`), on an f32 value. */
export function nearestF32(x: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 8388608) return x;
  let r = Math.round(x); // ties toward +Infinity
  if (r - x === 0.5 && r % 2 !== 0) r -= 1;
  if (r === 0) return x < 0 || Object.is(x, -0) ? -0 : 0;
  return r;
}

/** f32 -> i32, truncating toward zero and saturating, NaN -> 0 (i32x4.trunc_sat_f32x4_s). */
export function truncSatI32(x: number): number {
  if (Number.isNaN(x)) return 0;
  if (x >= 2147483648) return 2147483647;
  if (x <= -2147483648) return -2147483648;
  return Math.trunc(x) | 0;
}

/** Clamp a gather coordinate to [0, n - 1]; n below 1 counts as 1 (so is the compiler's). */
export function clampCoord(i: number, n: number): number {
  const hi = (n < 1 ? 1 : n) - 1;
  return i < 0 ? 0 : i > hi ? hi : i;
}

/** Wrap a gather coordinate around [0, n); n below 1 counts as 1. */
export function wrapCoord(i: number, n: number): number {
  const m = n < 1 ? 1 : n;
  return (((i % m) + m) % m) | 0;
}

function compileExpr(e: Expr, st: State, compBase: number[]): Value {
  const sub = (x: Expr) => compileExpr(x, st, compBase);
  switch (e.k) {
    case 'const': {
      const v = e.t === 'f32' ? fround(e.v) : e.t === 'i32' ? e.v | 0 : e.v ? 1 : 0;
      return () => v;
    }
    case 'local': {
      const i = e.i;
      const locals = st.locals;
      return () => locals[i];
    }
    case 'coord':
      return e.axis === 0 ? () => st.x : e.axis === 1 ? () => st.y : () => st.z;
    case 'extent': {
      const axis = e.axis;
      const f = e.field;
      if (f === undefined) return () => st.domain[axis];
      const arr = axis === 0 ? st.width : axis === 1 ? st.height : st.depth;
      return () => arr[f];
    }
    case 'uniform': {
      const slot = e.slot;
      const u = st.uniforms;
      return () => u[slot];
    }
    case 'load':
      return compileLoad(e, st, compBase, sub);
    case 'select': {
      const c = sub(e.c);
      const a = sub(e.a);
      const b = sub(e.b);
      return () => (c() ? a() : b());
    }
    case 'op':
      return compileOp(e.op, e.args.map(sub));
  }
}

function compileLoad(
  e: Extract<Expr, { k: 'load' }>,
  st: State,
  compBase: number[],
  sub: (x: Expr) => Value,
): Value {
  const f = e.field;
  const plane = compBase[f] + e.comp;
  const t = e.t;
  const read = (at: number): number =>
    t === 'f32' ? st.f32[at] : t === 'i32' ? st.i32[at] : st.i32[at] !== 0 ? 1 : 0;
  if (!e.at) return () => read(st.planeIndex[plane] + st.rowIndex[f] + st.x);
  const fix = e.at.mode === 'clamp' ? clampCoord : wrapCoord;
  const coords = e.at.coords.map(sub);
  const cx = coords[0];
  const cy = coords[1];
  const cz = coords[2];
  if (coords.length === 1) return () => read(st.planeIndex[plane] + fix(cx(), st.width[f]));
  if (coords.length === 2) {
    return () =>
      read(st.planeIndex[plane] + fix(cx(), st.width[f]) + Math.imul(fix(cy(), st.height[f]), st.stride[f]));
  }
  return () =>
    read(
      st.planeIndex[plane] +
        fix(cx(), st.width[f]) +
        Math.imul(fix(cy(), st.height[f]), st.stride[f]) +
        Math.imul(fix(cz(), st.depth[f]), st.slice[f]),
    );
}

type MathName = keyof typeof MATH_REF;

function compileOp(op: Op, args: Value[]): Value {
  const [a, b] = args;
  switch (op) {
    case 'f32.add': return () => fround(a() + b());
    case 'f32.sub': return () => fround(a() - b());
    case 'f32.mul': return () => fround(a() * b());
    case 'f32.div': return () => fround(a() / b());
    case 'f32.rem': return () => {
      const x = a();
      const y = b();
      return fround(x - fround(y * Math.trunc(fround(x / y))));
    };
    case 'f32.min': return () => Math.min(a(), b());
    case 'f32.max': return () => Math.max(a(), b());
    case 'f32.neg': return () => -a();
    case 'f32.abs': return () => Math.abs(a());
    case 'f32.floor': return () => Math.floor(a());
    case 'f32.ceil': return () => Math.ceil(a());
    case 'f32.trunc': return () => Math.trunc(a());
    case 'f32.nearest': return () => nearestF32(a());
    case 'f32.sqrt': return () => fround(Math.sqrt(a()));
    case 'f32.pow': case 'f32.atan2': {
      const m = MATH_REF[op.slice(4) as MathName];
      return () => m(a(), b());
    }
    case 'f32.sin': case 'f32.cos': case 'f32.tan': case 'f32.asin': case 'f32.acos':
    case 'f32.atan': case 'f32.exp': case 'f32.log': case 'f32.exp2': case 'f32.log2': {
      const m = MATH_REF[op.slice(4) as MathName];
      return () => m(a());
    }
    case 'f32.eq': return () => (a() === b() ? 1 : 0);
    case 'f32.ne': return () => (a() !== b() ? 1 : 0);
    case 'f32.lt': return () => (a() < b() ? 1 : 0);
    case 'f32.le': return () => (a() <= b() ? 1 : 0);
    case 'f32.gt': return () => (a() > b() ? 1 : 0);
    case 'f32.ge': return () => (a() >= b() ? 1 : 0);
    case 'f32.to_i32': return () => truncSatI32(a());
    case 'f32.to_bool': return () => (a() !== 0 ? 1 : 0); // NaN != 0
    case 'i32.add': return () => (a() + b()) | 0;
    case 'i32.sub': return () => (a() - b()) | 0;
    case 'i32.mul': return () => Math.imul(a(), b());
    case 'i32.rem': return () => {
      const x = a();
      const y = b();
      return y === 0 ? 0 : (x % y) | 0; // INT_MIN % -1 is -0 in JS: | 0 makes it 0
    };
    case 'i32.min': return () => Math.min(a(), b());
    case 'i32.max': return () => Math.max(a(), b());
    case 'i32.and': return () => a() & b();
    case 'i32.or': return () => a() | b();
    case 'i32.xor': return () => a() ^ b();
    case 'i32.shl': return () => a() << b(); // JS shifts already take the count mod 32
    case 'i32.shr_s': return () => a() >> b();
    case 'i32.shr_u': return () => (a() >>> b()) | 0;
    case 'i32.neg': return () => -a() | 0;
    case 'i32.abs': return () => Math.abs(a()) | 0;
    case 'i32.not': return () => ~a();
    case 'i32.eq': return () => (a() === b() ? 1 : 0);
    case 'i32.ne': return () => (a() !== b() ? 1 : 0);
    case 'i32.lt': return () => (a() < b() ? 1 : 0);
    case 'i32.le': return () => (a() <= b() ? 1 : 0);
    case 'i32.gt': return () => (a() > b() ? 1 : 0);
    case 'i32.ge': return () => (a() >= b() ? 1 : 0);
    case 'i32.to_f32': return () => fround(a());
    case 'i32.to_bool': return () => (a() !== 0 ? 1 : 0);
    case 'bool.and': return () => a() & b();
    case 'bool.or': return () => a() | b();
    case 'bool.xor': return () => a() ^ b();
    case 'bool.eq': return () => (a() === b() ? 1 : 0);
    case 'bool.ne': return () => (a() !== b() ? 1 : 0);
    case 'bool.not': return () => a() ^ 1;
    case 'bool.to_i32': return () => a();
    case 'bool.to_f32': return () => a();
  }
}
