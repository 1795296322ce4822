// The reference backend: runs an IrFunction in plain TypeScript, one element at a time, with the
// exact semantics of ir.ts (f32 rounded after every step, wrapping i32). The SIMD compiler in
// src/codegen must agree with it bit for bit (test/backends.test.ts).
//
// The IR is translated once per function into JavaScript source (cached; see compileProgram), so
// an element runs as straight JavaScript rather than a switch per node.

import { setFlagsFromString } from 'node:v8';
import { ARGS, FIELD, type Expr, type IrFunction, type Op, type Stmt } from './ir.js';
import { MATH_REF } from './mathref.js';
import { truncSatI32 } from './convert.js';
import { unreachable } from './walk.js';
import { shareValues } from './share.js';
import { fuelTrapIn, recordTrap } from './fuel-trap.js';

export { FuelTrap } from './fuel-trap.js';

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
  const { f32, i32 } = viewsOf(buffer);
  programFor(fn)(f32, i32, args, r0, r1);
}

// ---------------------------------------------------------------------------------------------
// The IR becomes the source of one JavaScript function per IrFunction (cached): locals are `let`
// variables, f32 steps are wrapped in Math.fround, blocks and loops are labelled statements and
// `break n` is `break label`. V8 then keeps the arithmetic unboxed, which closures per node cannot
// (about 15x slower). Only numbers the IR holds are written into the source: node names and
// everything else stay in the runtime object.

type Run = (f32: Float32Array, i32: Int32Array, args: number, r0: number, r1: number) => void;

const programs = new WeakMap<IrFunction, Run>();

function programFor(fn: IrFunction): Run {
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

/** What the generated code calls. */
interface Runtime {
  fr: (x: number) => number;
  nearest: (x: number) => number;
  truncSat: (x: number) => number;
  clamp: (i: number, n: number) => number;
  wrap: (i: number, n: number) => number;
  irem: (a: number, b: number) => number;
  frem: (a: number, b: number) => number;
  math: typeof MATH_REF;
  trap: (i32: Int32Array, args: number, node: number, x: number, row: number) => never;
}

/** A number as a JavaScript literal that reads back exactly (also -0, NaN, Infinity). */
function literal(v: number): string {
  if (Object.is(v, -0)) return '(-0)';
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '(-Infinity)';
  return v < 0 ? `(${v})` : String(v);
}

/** 4-byte elements in WebAssembly's 4 GiB: indices are taken modulo this. */
const ELEMENTS = 2 ** 30;

/**
 * The JavaScript source of `fn`'s run function. Shared values are locals first (share.ts), so the
 * text is linear in the IR's size, not in the size of the tree the DAG would print as.
 */
export function programSource(ir: IrFunction): string {
  const fn = shareValues(ir);
  const nFields = fn.fields.length;
  const w = (byteOffset: number) => `i32[a + ${byteOffset >> 2}]`;
  const lines: string[] = [];
  const out = (line: string) => lines.push(line);

  // Addresses are unsigned: a field (or this block) past 2 GiB has a base word that reads negative
  // as an i32, so bases are read with >>> 0 and element indices computed in doubles (exact below
  // 2^53), never with |, >> or Math.imul, which wrap at 2^31. A tile's field holds a window of
  // rows and columns, its base word the address element (0, 0) would have, which may lie below 0
  // or past 4 GiB: addresses wrap modulo 2^32 as WebAssembly's i32 sums do, so plane indices are
  // taken modulo 2^30 elements and every index is masked to 30 bits (at most 2^31 before).
  out('const a = args >>> 2;');
  out(`const width = ${w(ARGS.width)}, height = ${w(ARGS.height)}, depth = ${w(ARGS.depth)};`);
  fn.fields.forEach((f, i) => {
    const at = ARGS.field(i);
    out(`const W${i} = ${w(at + FIELD.width)}, H${i} = ${w(at + FIELD.height)}, D${i} = ${w(at + FIELD.depth)}, S${i} = ${w(at + FIELD.stride)};`);
    out(`const SL${i} = Math.imul(S${i}, H${i});`);
    f.comps.forEach((_, c) => out(`const P${i}_${c} = (((${w(at + FIELD.base)} >>> 0) + ${c} * (${w(at + FIELD.planeBytes)} >>> 0)) / 4) % ${ELEMENTS};`));
  });
  fn.uniforms.forEach((u, slot) => {
    const at = `a + ${ARGS.uniform(nFields, slot) >> 2}`;
    out(`const U${slot} = ${u.t === 'f32' ? `f32[${at}]` : u.t === 'i32' ? `i32[${at}]` : `(i32[${at}] !== 0 ? 1 : 0)`};`);
  });
  out('void depth;');
  out('if (width <= 0 || height <= 0) return;');
  out('for (let r = r0; r < r1; r++) {');
  out('const y = r % height, z = (r - y) / height;');
  for (let i = 0; i < nFields; i++) out(`const R${i} = Math.imul(y, S${i}) + Math.imul(z, SL${i});`);
  out(`const x0 = ${w(ARGS.x0)}, x1 = ${w(ARGS.x1)};`);
  out('for (let x = x0; x < x1; x++) {');
  if (fn.locals.length) out(`let ${fn.locals.map((_, i) => `L${i} = 0`).join(', ')};`);
  out('let fuel = 0;');
  let labels = 0;
  const stmts = (list: Stmt[], constructs: string[]) => {
    for (const s of list) {
      switch (s.k) {
        case 'set':
          out(`L${s.local} = ${jsExpr(s.e)};`);
          break;
        case 'if':
          out(`if (${jsExpr(s.c)}) {`);
          stmts(s.then, constructs);
          if (s.else.length) {
            out('} else {');
            stmts(s.else, constructs);
          }
          out('}');
          break;
        case 'block': {
          const label = `b${labels++}`;
          out(`${label}: {`);
          stmts(s.body, [...constructs, label]);
          out('}');
          break;
        }
        case 'loop': {
          const label = `l${labels++}`;
          out(`${label}: for (;;) {`);
          out(`if (++fuel > ${fuelLimit(fn.fuel)}) trap(i32, args, ${s.node | 0}, x, r);`);
          stmts(s.body, [...constructs, label]);
          out('}');
          break;
        }
        case 'break': {
          const label = constructs[constructs.length - 1 - s.depth];
          if (label === undefined) throw new Error(`internal: break ${s.depth} has no enclosing construct`);
          out(`break ${label};`);
          break;
        }
        default:
          unreachable(s);
      }
    }
  };
  stmts(fn.body, []);
  for (const st of fn.stores) {
    const t = fn.fields[st.field].comps[st.comp];
    out(`${t === 'f32' ? 'f32' : 'i32'}[(P${st.field}_${st.comp} + R${st.field} + x) & ${ELEMENTS - 1}] = L${st.local};`);
  }
  out('}');
  out('}');

  const helpers = ['fr', 'nearest', 'truncSat', 'clamp', 'wrap', 'irem', 'frem', 'trap'].map((h) => `const ${h} = rt.${h};`);
  const math = Object.keys(MATH_REF).map((m) => `const M_${m} = rt.math.${m};`);
  return `"use strict";\n${[...helpers, ...math].join('\n')}\nreturn function run(f32, i32, args, r0, r1) {\n${lines.join('\n')}\n};`;
}

/**
 * V8 leaves a function of more than 60 KB of bytecode to its baseline tiers: a fused group's
 * program past that (a chain of nodes with noise) ran ~5x slower than when optimised. Raised once,
 * for the whole process, before the first program is made.
 */
let largeFunctionsOptimised = false;
function optimiseLargeFunctions(): void {
  if (largeFunctionsOptimised) return;
  largeFunctionsOptimised = true;
  setFlagsFromString('--max-optimized-bytecode-size=4194304');
}

function compileProgram(fn: IrFunction): Run {
  optimiseLargeFunctions();
  const source = programSource(fn);
  const runtime: Runtime = {
    fr: Math.fround,
    nearest: nearestF32,
    truncSat: truncSatI32,
    clamp: clampCoord,
    wrap: wrapCoord,
    irem: (a, b) => (b === 0 ? 0 : (a % b) | 0), // INT_MIN % -1 is -0 in JS: | 0 makes it 0
    frem: (a, b) => Math.fround(a - Math.fround(b * Math.trunc(Math.fround(a / b)))),
    math: MATH_REF,
    trap: (i32, args, node, x, row) => {
      recordTrap(i32, args, node, x, row);
      throw fuelTrapIn(i32, args, fn.nodes, fn.fuel)!;
    },
  };
  return new Function('rt', source)(runtime) as Run;
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

/** An IR expression as JavaScript source (names as set up by compileProgram). */
function jsExpr(e: Expr): string {
  switch (e.k) {
    case 'const':
      return literal(e.t === 'f32' ? fround(e.v) : e.t === 'i32' ? e.v | 0 : e.v ? 1 : 0);
    case 'local':
      return `L${e.i | 0}`;
    case 'coord':
      return ['x', 'y', 'z'][e.axis];
    case 'extent':
      if (e.field === undefined) return ['width', 'height', 'depth'][e.axis];
      return `${['W', 'H', 'D'][e.axis]}${e.field | 0}`;
    case 'uniform':
      return `U${e.slot | 0}`;
    case 'select':
      return `(${jsExpr(e.c)} ? ${jsExpr(e.a)} : ${jsExpr(e.b)})`;
    case 'load':
      return jsLoad(e);
    case 'op':
      return jsOp(e.op, e.args.map(jsExpr));
  }
}

function jsLoad(e: Extract<Expr, { k: 'load' }>): string {
  const f = e.field | 0;
  let index: string;
  if (!e.at) {
    index = `P${f}_${e.comp | 0} + R${f} + x`;
  } else {
    const fix = e.at.mode === 'clamp' ? 'clamp' : 'wrap';
    const [cx, cy, cz] = e.at.coords.map(jsExpr);
    index = `P${f}_${e.comp | 0} + ${fix}(${cx}, W${f})`;
    if (cy !== undefined) index += ` + Math.imul(${fix}(${cy}, H${f}), S${f})`;
    if (cz !== undefined) index += ` + Math.imul(${fix}(${cz}, D${f}), SL${f})`;
  }
  index = `(${index}) & ${ELEMENTS - 1}`;
  if (e.t === 'f32') return `f32[${index}]`;
  if (e.t === 'i32') return `i32[${index}]`;
  return `(i32[${index}] !== 0 ? 1 : 0)`;
}

function jsOp(op: Op, [a, b]: string[]): string {
  const cmp = (o: string) => `(${a} ${o} ${b} ? 1 : 0)`;
  switch (op) {
    case 'f32.add': return `fr(${a} + ${b})`;
    case 'f32.sub': return `fr(${a} - ${b})`;
    case 'f32.mul': return `fr(${a} * ${b})`;
    case 'f32.div': return `fr(${a} / ${b})`;
    case 'f32.rem': return `frem(${a}, ${b})`;
    case 'f32.min': return `Math.min(${a}, ${b})`; // NaN-propagating, -0 < +0, like WebAssembly
    case 'f32.max': return `Math.max(${a}, ${b})`;
    case 'f32.neg': return `(-${a})`;
    case 'f32.abs': return `Math.abs(${a})`;
    case 'f32.floor': return `Math.floor(${a})`;
    case 'f32.ceil': return `Math.ceil(${a})`;
    case 'f32.trunc': return `Math.trunc(${a})`;
    case 'f32.nearest': return `nearest(${a})`;
    case 'f32.sqrt': return `fr(Math.sqrt(${a}))`;
    case 'f32.pow': case 'f32.atan2':
      return `M_${op.slice(4)}(${a}, ${b})`;
    case 'f32.sin': case 'f32.cos': case 'f32.tan': case 'f32.asin': case 'f32.acos':
    case 'f32.atan': case 'f32.exp': case 'f32.log': case 'f32.exp2': case 'f32.log2':
    case 'f32.sin_turns': case 'f32.cos_turns':
      return `M_${op.slice(4)}(${a})`;
    case 'f32.eq': case 'i32.eq': case 'bool.eq': return cmp('===');
    case 'f32.ne': case 'i32.ne': case 'bool.ne': return cmp('!==');
    case 'f32.lt': case 'i32.lt': return cmp('<');
    case 'f32.le': case 'i32.le': return cmp('<=');
    case 'f32.gt': case 'i32.gt': return cmp('>');
    case 'f32.ge': case 'i32.ge': return cmp('>=');
    case 'f32.to_i32': return `truncSat(${a})`;
    case 'f32.to_bool': return `(${a} !== 0 ? 1 : 0)`; // NaN != 0
    case 'i32.add': return `((${a} + ${b}) | 0)`;
    case 'i32.sub': return `((${a} - ${b}) | 0)`;
    case 'i32.mul': return `Math.imul(${a}, ${b})`;
    case 'i32.rem': return `irem(${a}, ${b})`;
    case 'i32.min': return `Math.min(${a}, ${b})`;
    case 'i32.max': return `Math.max(${a}, ${b})`;
    case 'i32.and': case 'bool.and': return `(${a} & ${b})`;
    case 'i32.or': case 'bool.or': return `(${a} | ${b})`;
    case 'i32.xor': case 'bool.xor': return `(${a} ^ ${b})`;
    case 'i32.shl': return `(${a} << ${b})`; // JS shifts take the count mod 32
    case 'i32.shr_s': return `(${a} >> ${b})`;
    case 'i32.shr_u': return `((${a} >>> ${b}) | 0)`;
    case 'i32.neg': return `((-${a}) | 0)`;
    case 'i32.abs': return `(Math.abs(${a}) | 0)`;
    case 'i32.not': return `(~${a})`;
    case 'i32.to_f32': return `fr(${a})`;
    case 'i32.to_bool': return `(${a} !== 0 ? 1 : 0)`;
    case 'bool.not': return `(${a} ^ 1)`;
    case 'bool.to_i32': case 'bool.to_f32': return a;
  }
}
