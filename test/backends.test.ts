// The two backends of the IR — the reference interpreter and the SIMD compiler — must agree bit
// for bit (NaNs compare equal whatever their payload: WebAssembly does not fix NaN bits), and
// trap on the same inputs with the same node.

import t, { type Test } from 'tap';
import binaryen from 'binaryen';
import { newModule } from '../src/codegen/module.js';
import { optimise } from '../src/codegen/optimise.js';
import { ARGS, type Expr, type IrFunction, type Scalar } from '../src/ir/ir.js';
import { FuelTrap, interpret } from '../src/ir/interp.js';
import { compileFunction, instantiate, type RunFunction } from '../src/codegen/index.js';
import { fieldLayout, writeArgs, elementIndex, type Extents, type FieldPlacement } from '../src/codegen/layout.js';
import {
  X, Y, Z, block, bool, brk, extent, f32, field, fn, gather, i32, iff, load, local, loop, op, randomCase, randomValues, rng,
  select, set, uniform,
} from './ir-gen.js';

// ---------------------------------------------------------------------------------------------
// Harness

const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
const ARGS_INTERP = 0;
const ARGS_WASM = 2048;
const HEAP = 4096;
const SENTINEL = 0x7a7a7a7a;

function ensureBytes(bytes: number): void {
  const have = memory.buffer.byteLength;
  if (bytes > have) memory.grow(Math.ceil((bytes - have) / 65536));
}

type Data = Float32Array | Int32Array;

interface Setup {
  fn: IrFunction;
  domain: Extents;
  /** Field extents; default: the domain's. */
  extents?: Extents[];
  /** Contents of read field f component c (dense, x fastest); default random. */
  input?: (f: number, c: number, n: number, t: Scalar) => Data;
  uniforms?: number[];
  /** Row ranges run one after the other; default all rows at once. */
  splits?: number[];
  seed?: number;
}

interface Outcome {
  trap?: { node: string; word: number; element?: readonly number[]; message: string };
  /** Per write field, per component: raw bits of the elements (x < width). */
  planes: Int32Array[][];
}

interface Prepared {
  interp: FieldPlacement[];
  wasm: FieldPlacement[];
}

function prepare(s: Setup): Prepared {
  const { fn: f } = s;
  const r = rng(s.seed ?? 1);
  let at = HEAP;
  const place = (e: Extents, comps: number): FieldPlacement => {
    const l = fieldLayout(e, comps);
    const p = { base: at, ...e, stride: l.stride, planeBytes: l.planeBytes };
    at += l.bytes + 64;
    return p;
  };
  const interp: FieldPlacement[] = [];
  const wasm: FieldPlacement[] = [];
  const sizes = f.fields.map((_, i) => s.extents?.[i] ?? s.domain);
  // Read fields are shared; each backend writes its own copy of the write fields.
  f.fields.forEach((fd, i) => {
    const p = place(sizes[i], fd.comps.length);
    interp.push(p);
    wasm.push(fd.role === 'read' ? p : place(sizes[i], fd.comps.length));
  });
  ensureBytes(at);
  const words = new Int32Array(memory.buffer);
  const floats = new Float32Array(memory.buffer);
  words.fill(SENTINEL, HEAP / 4, at / 4);
  f.fields.forEach((fd, i) => {
    if (fd.role !== 'read') return;
    const p = interp[i];
    const n = p.width * p.height * p.depth;
    fd.comps.forEach((t, c) => {
      const data = s.input ? s.input(i, c, n, t) : randomValues(r, t, n);
      let k = 0;
      for (let z = 0; z < p.depth; z++)
        for (let y = 0; y < p.height; y++)
          for (let x = 0; x < p.width; x++) {
            const idx = elementIndex(p, c, x, y, z);
            if (data instanceof Float32Array) floats[idx] = data[k++];
            else words[idx] = data[k++];
          }
    });
  });
  writeArgs(memory, ARGS_INTERP, f, s.domain, interp, s.uniforms ?? []);
  writeArgs(memory, ARGS_WASM, f, s.domain, wasm, s.uniforms ?? []);
  return { interp, wasm };
}

function ranges(s: Setup): [number, number][] {
  const rows = s.domain.height * s.domain.depth;
  const cuts = [0, ...(s.splits ?? []).filter((c) => c > 0 && c < rows), rows];
  const out: [number, number][] = [];
  for (let i = 0; i + 1 < cuts.length; i++) out.push([cuts[i], cuts[i + 1]]);
  return out;
}

function runOne(s: Setup, args: number, places: FieldPlacement[], run: (r0: number, r1: number) => void): Outcome {
  const words = new Int32Array(memory.buffer);
  words[(args + ARGS.trap) / 4] = -1;
  let trap: Outcome['trap'];
  try {
    for (const [r0, r1] of ranges(s)) run(r0, r1);
  } catch (e) {
    if (!(e instanceof FuelTrap)) throw e;
    trap = { node: e.node, word: words[(args + ARGS.trap) / 4], element: e.element, message: e.message };
  }
  const planes = s.fn.fields.map((fd, i) => {
    if (fd.role === 'read') return [];
    const p = places[i];
    return fd.comps.map((_, c) => {
      const out = new Int32Array(p.width * p.height * p.depth);
      let k = 0;
      const view = new Int32Array(memory.buffer);
      for (let z = 0; z < p.depth; z++)
        for (let y = 0; y < p.height; y++)
          for (let x = 0; x < p.width; x++) out[k++] = view[elementIndex(p, c, x, y, z)];
      return out;
    });
  });
  return { trap, planes };
}

const isNaNBits = (b: number) => (b & 0x7f800000) === 0x7f800000 && (b & 0x007fffff) !== 0;
const asF32 = (b: number) => new Float32Array(new Int32Array([b]).buffer)[0];

/** The first difference between the two outcomes, or undefined. */
function difference(s: Setup, a: Outcome, b: Outcome): string | undefined {
  if (a.trap || b.trap) {
    if (!a.trap || !b.trap) return `interpreter trap: ${a.trap?.message ?? 'none'}; wasm trap: ${b.trap?.message ?? 'none'}`;
    if (a.trap.node !== b.trap.node || a.trap.word !== b.trap.word || String(a.trap.element) !== String(b.trap.element)) {
      return `traps differ: interpreter ${a.trap.node} (${a.trap.word}) at (${a.trap.element}), wasm ${b.trap.node} (${b.trap.word}) at (${b.trap.element})`;
    }
    return undefined; // outputs after a trap are discarded by the host
  }
  for (let f = 0; f < s.fn.fields.length; f++) {
    const fd = s.fn.fields[f];
    for (let c = 0; c < a.planes[f].length; c++) {
      const pa = a.planes[f][c];
      const pb = b.planes[f][c];
      for (let i = 0; i < pa.length; i++) {
        if (pa[i] === pb[i]) continue;
        if (fd.comps[c] === 'f32' && isNaNBits(pa[i]) && isNaNBits(pb[i])) continue;
        const w = s.domain.width;
        const h = s.domain.height;
        const where = `(${i % w}, ${Math.floor(i / w) % h}, ${Math.floor(i / (w * h))})`;
        const show = (v: number) => (fd.comps[c] === 'f32' ? `${asF32(v)} [${(v >>> 0).toString(16)}]` : String(v));
        return `${fd.name}.${c} at ${where}: interpreter ${show(pa[i])}, wasm ${show(pb[i])}`;
      }
    }
  }
  return undefined;
}

const modules = new WeakMap<IrFunction, Map<boolean, RunFunction>>();

function compiled(f: IrFunction, optimize: boolean): RunFunction {
  let byOpt = modules.get(f);
  if (!byOpt) modules.set(f, (byOpt = new Map()));
  let run = byOpt.get(optimize);
  if (!run) {
    const bytes = compileFunction(f, { optimize });
    if (!WebAssembly.validate(bytes)) throw new Error('the engine rejects the module');
    run = instantiate(bytes, memory);
    byOpt.set(optimize, run);
  }
  return run;
}

/** Run both backends; the difference (or undefined) and the interpreter's outcome. */
function compare(s: Setup, optimize = true, run?: RunFunction): { diff?: string; interp: Outcome; wasm: Outcome } {
  const places = prepare(s);
  const interp = runOne(s, ARGS_INTERP, places.interp, (r0, r1) => interpret(s.fn, memory, ARGS_INTERP, r0, r1));
  const wasmRun = run ?? compiled(s.fn, optimize);
  const wasm = runOne(s, ARGS_WASM, places.wasm, (r0, r1) => wasmRun(ARGS_WASM, r0, r1));
  return { diff: difference(s, interp, wasm), interp, wasm };
}

/** Assert agreement, optimised and not. */
function agree(tt: Test, name: string, s: Setup): Outcome {
  let out: Outcome | undefined;
  for (const optimize of [true, false]) {
    const r = compare(s, optimize);
    const label = `${name} (${optimize ? 'O3' : 'unoptimised'})`;
    if (r.diff === undefined) tt.pass(label);
    else tt.fail(`${label}: ${r.diff}`);
    out = r.interp;
  }
  return out!;
}


// Dense inputs helpers
const f32s = (values: number[]) => (_f: number, _c: number, n: number) =>
  Float32Array.from({ length: n }, (_, i) => values[i % values.length]);
const i32s = (values: number[]) => (_f: number, _c: number, n: number) =>
  Int32Array.from({ length: n }, (_, i) => values[i % values.length]);

const SPECIALS = [0, -0, 1, -1, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1e-45, -1e-45, 1e-40, 3.4028235e38, -3.4028235e38,
  Infinity, -Infinity, NaN, 16777217, -8388609, 2147483520, 2147483648, -2147483648, -2147483904, 0.49999997, 123.456, -7.25];

// ---------------------------------------------------------------------------------------------
// Hand-written functions

t.test('pointwise f32 arithmetic on special values', (tt) => {
  const binary = ['f32.add', 'f32.sub', 'f32.mul', 'f32.div', 'f32.rem', 'f32.min', 'f32.max'] as const;
  const unary = ['f32.neg', 'f32.abs', 'f32.floor', 'f32.ceil', 'f32.trunc', 'f32.nearest', 'f32.sqrt'] as const;
  const compares = ['f32.eq', 'f32.ne', 'f32.lt', 'f32.le', 'f32.gt', 'f32.ge'] as const;
  const a = load(0, 0, 'f32');
  const b = load(0, 1, 'f32');
  const outs: Scalar[] = [];
  const body = [];
  for (const o of binary) { body.push(set(outs.length, op(o, a, b))); outs.push('f32'); }
  for (const o of unary) { body.push(set(outs.length, op(o, a))); outs.push('f32'); }
  for (const o of compares) { body.push(set(outs.length, op(o, a, b))); outs.push('bool'); }
  body.push(set(outs.length, op('f32.to_i32', a))); outs.push('i32');
  body.push(set(outs.length, op('f32.to_bool', a))); outs.push('bool');
  body.push(set(outs.length, op('i32.to_f32', op('f32.to_i32', b)))); outs.push('f32');
  const f = fn({
    locals: outs,
    fields: [field('in', 'read', 2, ['f32', 'f32']), field('out', 'write', 2, outs)],
    body,
    stores: outs.map((_, i) => ({ field: 1, comp: i, local: i })),
  });
  const n = SPECIALS.length;
  // Every pair of specials: a runs along x, b along y.
  const input = (_f: number, c: number, count: number) =>
    Float32Array.from({ length: count }, (_, i) => (c === 0 ? SPECIALS[i % n] : SPECIALS[Math.floor(i / n) % n]));
  agree(tt, 'all pairs', { fn: f, domain: { width: n, height: n, depth: 1 }, input });
  tt.end();
});

t.test('i32 and bool operations: overflow, rem by zero, shifts', (tt) => {
  const ints = [0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 33, -32, 64, 100, 0x7fffffff, -0x80000000, 0x12345678, -0x55555556];
  const binary = ['i32.add', 'i32.sub', 'i32.mul', 'i32.rem', 'i32.min', 'i32.max', 'i32.and', 'i32.or', 'i32.xor', 'i32.shl', 'i32.shr_s', 'i32.shr_u'] as const;
  const a = load(0, 0, 'i32');
  const b = load(0, 1, 'i32');
  const outs: Scalar[] = [];
  const body = [];
  for (const o of binary) { body.push(set(outs.length, op(o, a, b))); outs.push('i32'); }
  // Uniform shift counts take the single-shift path.
  for (const o of ['i32.shl', 'i32.shr_s', 'i32.shr_u'] as const) {
    body.push(set(outs.length, op(o, a, uniform(0, 'i32')))); outs.push('i32');
    body.push(set(outs.length, op(o, a, op('i32.add', Y, i32(29))))); outs.push('i32');
  }
  body.push(set(outs.length, op('i32.rem', a, uniform(1, 'i32')))); outs.push('i32');
  for (const o of ['i32.neg', 'i32.abs', 'i32.not'] as const) { body.push(set(outs.length, op(o, a))); outs.push('i32'); }
  for (const o of ['i32.eq', 'i32.ne', 'i32.lt', 'i32.le', 'i32.gt', 'i32.ge'] as const) { body.push(set(outs.length, op(o, a, b))); outs.push('bool'); }
  body.push(set(outs.length, op('i32.to_f32', a))); outs.push('f32');
  body.push(set(outs.length, op('i32.to_bool', a))); outs.push('bool');
  const p = op('i32.to_bool', op('i32.and', a, i32(1)));
  const q = op('i32.to_bool', op('i32.and', b, i32(2)));
  for (const o of ['bool.and', 'bool.or', 'bool.xor', 'bool.eq', 'bool.ne'] as const) { body.push(set(outs.length, op(o, p, q))); outs.push('bool'); }
  body.push(set(outs.length, op('bool.not', p))); outs.push('bool');
  body.push(set(outs.length, op('bool.to_i32', q))); outs.push('i32');
  body.push(set(outs.length, op('bool.to_f32', q))); outs.push('f32');
  body.push(set(outs.length, select(p, a, b))); outs.push('i32');
  body.push(set(outs.length, load(0, 2, 'bool'))); outs.push('bool');
  const f = fn({
    locals: outs,
    fields: [field('in', 'read', 2, ['i32', 'i32', 'bool']), field('out', 'write', 2, outs)],
    uniforms: [{ name: 'k', t: 'i32' }, { name: 'm', t: 'i32' }],
    body,
    stores: outs.map((_, i) => ({ field: 1, comp: i, local: i })),
  });
  const n = ints.length;
  const input = (_f: number, c: number, count: number) =>
    Int32Array.from({ length: count }, (_, i) => (c === 0 ? ints[i % n] : c === 1 ? ints[Math.floor(i / n) % n] : (i * 7) % 3));
  for (const [k, m] of [[3, 0], [33, -1], [-1, 5]]) {
    agree(tt, `all pairs, k=${k} m=${m}`, { fn: f, domain: { width: n, height: n, depth: 1 }, input, uniforms: [k, m] });
  }
  tt.end();
});

t.test('select against a zero operand: the same bits as the interpreter, one and/andnot instead of a bitselect', (tt) => {
  // The varying condition p takes both values along x; a runs through the specials (-0.0, NaN...).
  const a = load(0, 0, 'f32');
  const n = load(0, 1, 'i32');
  const p = op('f32.lt', a, f32(1));
  const q = op('i32.to_bool', op('i32.and', n, i32(2)));
  const zeroForms: [Expr, Scalar][] = [
    [select(p, a, f32(0)), 'f32'],
    [select(p, f32(0), a), 'f32'],
    [select(p, n, i32(0)), 'i32'],
    [select(p, i32(0), n), 'i32'],
    [select(p, q, bool(false)), 'bool'],
    [select(p, bool(false), q), 'bool'],
    [select(p, f32(1), f32(0)), 'f32'],
  ];
  // -0.0 has its sign bit set: not a zero operand (an `and` would give +0.0 where p is false).
  const signedZero: [Expr, Scalar][] = [
    [select(p, a, f32(-0)), 'f32'],
    [select(p, f32(-0), a), 'f32'],
  ];
  const selects = (forms: [Expr, Scalar][]) =>
    fn({
      locals: forms.map(([, t]) => t),
      fields: [field('in', 'read', 2, ['f32', 'i32']), field('out', 'write', 2, forms.map(([, t]) => t))],
      body: forms.map(([e], i) => set(i, e)),
      stores: forms.map((_, i) => ({ field: 1, comp: i, local: i })),
    });
  const input = (_f: number, c: number, count: number): Data =>
    c === 0 ? Float32Array.from({ length: count }, (_, i) => SPECIALS[i % SPECIALS.length]) : Int32Array.from({ length: count }, (_, i) => i * 7 - 40);
  agree(tt, 'every form', { fn: selects([...zeroForms, ...signedZero]), domain: { width: SPECIALS.length, height: 3, depth: 1 }, input });
  const bitselects = (f: IrFunction, optimize: boolean) => {
    const m = binaryen.readBinary(compileFunction(f, { optimize }));
    const text = m.emitText();
    m.dispose();
    return text.match(/v128\.bitselect/g)?.length ?? 0;
  };
  for (const optimize of [false, true]) {
    const how = optimize ? 'O3' : 'unoptimised';
    tt.equal(bitselects(selects(zeroForms), optimize), 0, `${how}: no bitselect against a zero operand`);
    tt.ok(bitselects(selects(signedZero), optimize) > 0, `${how}: -0.0 keeps its bitselect`);
  }
  tt.end();
});

/** rings + tint fused: vec2/vec4 values lowered to components. */
function ringsTint(dims: 2 = 2): IrFunction {
  const W = op('i32.to_f32', extent(0));
  const H = op('i32.to_f32', extent(1));
  const px = op('f32.sub', op('f32.div', op('f32.add', op('i32.to_f32', X), f32(0.5)), W), f32(0.5));
  const py = op('f32.sub', op('f32.div', op('f32.add', op('i32.to_f32', Y), f32(0.5)), H), f32(0.5));
  const L = (i: number) => local(i, 'f32');
  const count = uniform(0, 'f32');
  const time = uniform(1, 'f32');
  const warmth = uniform(2, 'f32');
  return fn({
    dims,
    nodes: ['rings', 'tint'],
    locals: ['f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'f32'],
    fields: [field('tint.result', 'write', 2, ['f32', 'f32', 'f32', 'f32'])],
    uniforms: [{ name: 'rings.in.count', t: 'f32' }, { name: 'time', t: 'f32' }, { name: 'tint.in.warmth', t: 'f32' }],
    body: [
      set(0, px),
      set(1, py),
      set(2, op('f32.add', op('f32.mul', op('f32.sqrt', op('f32.add', op('f32.mul', L(0), L(0)), op('f32.mul', L(1), L(1)))), count), time)),
      set(3, op('f32.add', f32(0.5), op('f32.mul', f32(0.5), op('f32.sin', op('f32.mul', L(2), f32(6.283185307179586)))))),
      // rings.result = (v, 0.8 v, 0.6 v, 1); tint reads it pointwise from the locals (fused)
      set(4, op('f32.mul', L(3), op('f32.add', f32(0.5), warmth))),
      set(5, op('f32.mul', f32(0.8), L(3))),
      set(6, op('f32.mul', op('f32.mul', f32(0.6), L(3)), op('f32.sub', f32(1.5), warmth))),
      set(7, f32(1)),
    ],
    stores: [4, 5, 6, 7].map((l, comp) => ({ field: 0, comp, local: l })),
  });
}

t.test('rings + tint (vectors as components)', (tt) => {
  for (const [w, h] of [[1, 1], [3, 2], [5, 1], [13, 7], [64, 3]]) {
    agree(tt, `${w}x${h}`, { fn: ringsTint(), domain: { width: w, height: h, depth: 1 }, uniforms: [8, 0.5, 0.9] });
  }
  tt.end();
});

t.test('nested ifs, varying and uniform', (tt) => {
  const a = load(0, 0, 'f32');
  const L = (i: number) => local(i, 'f32');
  const f = fn({
    locals: ['f32', 'f32', 'i32'],
    fields: [field('in', 'read', 2, ['f32']), field('out', 'write', 2, ['f32', 'f32', 'i32'])],
    uniforms: [{ name: 'flag', t: 'bool' }],
    body: [
      set(0, f32(-1)),
      iff(op('f32.gt', a, f32(0)), [
        set(0, f32(1)),
        iff(op('i32.eq', op('i32.rem', X, i32(2)), i32(0)), [set(1, op('f32.add', L(0), a))], [
          iff(uniform(0, 'bool'), [set(1, f32(7))], [set(1, f32(8))]),
        ]),
      ], [
        iff(op('i32.gt', Y, i32(1)), [set(2, i32(5))], [set(2, i32(6)), iff(op('f32.lt', a, f32(-2)), [set(0, f32(-3))])]),
      ]),
      iff(op('i32.lt', X, i32(3)), [set(2, op('i32.add', local(2, 'i32'), i32(100)))]),
    ],
    stores: [{ field: 1, comp: 0, local: 0 }, { field: 1, comp: 1, local: 1 }, { field: 1, comp: 2, local: 2 }],
  });
  for (const [w, h] of [[1, 1], [3, 4], [5, 3], [13, 2]]) {
    for (const flag of [0, 1]) {
      agree(tt, `${w}x${h} flag=${flag}`, { fn: f, domain: { width: w, height: h, depth: 1 }, uniforms: [flag], seed: w * 10 + h });
    }
  }
  tt.end();
});

t.test('loops with breaks at several depths', (tt) => {
  const I = (i: number) => local(i, 'i32');
  // outer loop over i (uniform), inner loop over j up to a per-element bound, a continue-like
  // break out of an inner block, a break out of both loops at a data-dependent point.
  const data = load(0, 0, 'i32');
  const f = fn({
    locals: ['i32', 'i32', 'i32', 'i32'],
    fields: [field('in', 'read', 2, ['i32']), field('out', 'write', 2, ['i32', 'i32', 'i32'])],
    body: [
      set(0, i32(0)),
      loop(0,
        iff(op('i32.ge', I(0), i32(5)), [brk(0)]),
        set(0, op('i32.add', I(0), i32(1))),
        set(1, i32(0)),
        loop(0,
          iff(op('i32.ge', I(1), op('i32.and', op('i32.add', data, X), i32(7))), [brk(0)]),
          set(1, op('i32.add', I(1), i32(1))),
          block(
            iff(op('i32.eq', op('i32.and', I(1), i32(1)), i32(0)), [brk(0)]), // continue
            set(2, op('i32.add', I(2), I(1))),
          ),
          iff(op('i32.gt', I(2), op('i32.add', i32(20), op('i32.mul', Y, i32(3)))), [set(3, i32(99)), brk(1)]), // leave both
        ),
        set(3, op('i32.add', I(3), i32(1))),
      ),
    ],
    stores: [{ field: 1, comp: 0, local: 1 }, { field: 1, comp: 1, local: 2 }, { field: 1, comp: 2, local: 3 }],
  });
  for (const [w, h] of [[1, 1], [3, 3], [5, 4], [13, 5]]) {
    agree(tt, `${w}x${h}`, { fn: f, domain: { width: w, height: h, depth: 1 }, input: i32s([0, 3, 9, 1, 14, 6, 2]) });
  }
  // A break two levels out from inside an if inside a block inside a loop.
  const g = fn({
    locals: ['i32', 'f32'],
    fields: [field('in', 'read', 2, ['f32']), field('out', 'write', 2, ['i32', 'f32'])],
    body: [
      block(
        loop(0,
          set(0, op('i32.add', I(0), i32(1))),
          block(
            iff(op('f32.gt', op('f32.mul', op('i32.to_f32', I(0)), load(0, 0, 'f32')), f32(3)), [set(1, f32(1)), brk(2)]),
            iff(op('i32.ge', I(0), i32(6)), [brk(1)]),
          ),
        ),
        set(1, op('f32.add', local(1, 'f32'), f32(10))),
      ),
    ],
    stores: [{ field: 1, comp: 0, local: 0 }, { field: 1, comp: 1, local: 1 }],
  });
  agree(tt, 'break out of the enclosing block', { fn: g, domain: { width: 13, height: 3, depth: 1 }, input: f32s([0, 0.5, -1, 2, 0.1, 4, NaN]) });
  tt.end();
});

function mandelbrot(maxIter: number): IrFunction {
  const F = (i: number) => local(i, 'f32');
  const W = op('i32.to_f32', extent(0));
  const H = op('i32.to_f32', extent(1));
  // 0 cx, 1 cy, 2 zx, 3 zy, 4 t, 5 v ; 6 i
  return fn({
    nodes: ['mandel'],
    locals: ['f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'i32'],
    fields: [field('out', 'write', 2, ['f32', 'f32', 'f32', 'f32'])],
    body: [
      set(0, op('f32.add', f32(-2), op('f32.div', op('f32.mul', f32(3), op('f32.add', op('i32.to_f32', X), f32(0.5))), W))),
      set(1, op('f32.add', f32(-1.5), op('f32.div', op('f32.mul', f32(3), op('f32.add', op('i32.to_f32', Y), f32(0.5))), H))),
      loop(0,
        iff(op('bool.or', op('i32.ge', local(6, 'i32'), i32(maxIter)),
          op('f32.gt', op('f32.add', op('f32.mul', F(2), F(2)), op('f32.mul', F(3), F(3))), f32(4))), [brk(0)]),
        set(4, op('f32.add', op('f32.sub', op('f32.mul', F(2), F(2)), op('f32.mul', F(3), F(3))), F(0))),
        set(3, op('f32.add', op('f32.mul', op('f32.mul', f32(2), F(2)), F(3)), F(1))),
        set(2, F(4)),
        set(6, op('i32.add', local(6, 'i32'), i32(1))),
      ),
      set(5, op('f32.div', op('i32.to_f32', local(6, 'i32')), f32(maxIter))),
      set(4, op('f32.mul', F(5), F(5))),
      set(2, op('f32.sqrt', F(5))),
      set(3, f32(1)),
    ],
    stores: [5, 4, 2, 3].map((l, comp) => ({ field: 0, comp, local: l })),
  });
}

t.test('mandelbrot: a data-dependent loop with early exit', (tt) => {
  for (const [w, h] of [[1, 1], [5, 3], [13, 11], [64, 48]]) {
    agree(tt, `${w}x${h}`, { fn: mandelbrot(256), domain: { width: w, height: h, depth: 1 } });
  }
  tt.end();
});

/** for (v = from; v <= to; v++) { body }, as the front end lowers it (uniform loop). */
function forRange(node: number, v: number, from: number, to: number, ...body: ReturnType<typeof set>[]) {
  return [
    set(v, i32(from)),
    loop(node,
      iff(op('bool.not', op('i32.le', local(v, 'i32'), i32(to))), [brk(0)]),
      block(...body),
      set(v, op('i32.add', local(v, 'i32'), i32(1))),
    ),
  ];
}

/** life.step: 8 neighbours with wrap-around, nested loops and an if, as lowered from source. */
function life(): IrFunction {
  const n = local(0, 'f32');
  const dy = local(1, 'i32');
  const dx = local(2, 'i32');
  const next = op('f32.add', n, gather(0, 0, 'f32', 'wrap', op('i32.add', X, dx), op('i32.add', Y, dy)));
  const cell = load(0, 0, 'f32');
  return fn({
    nodes: ['life'],
    locals: ['f32', 'i32', 'i32', 'f32'],
    fields: [field('life.cells', 'read', 2, ['f32']), field('life.cells.next', 'write', 2, ['f32'])],
    body: [
      ...forRange(0, 1, -1, 1, ...forRange(0, 2, -1, 1,
        iff(op('bool.or', op('i32.ne', dx, i32(0)), op('i32.ne', dy, i32(0))), [set(0, next)]))),
      set(3, select(op('bool.or', op('f32.eq', n, f32(3)), op('bool.and', op('f32.gt', cell, f32(0.5)), op('f32.eq', n, f32(2)))), f32(1), f32(0))),
    ],
    stores: [{ field: 1, comp: 0, local: 3 }],
  });
}

/**
 * blur: the mean of a 5x5 window of an rgba field, clamped at the edges. With a constant radius
 * the loops unroll; with the radius a uniform (as examples/blur has it) they stay uniform loops.
 */
function blur(uniformRadius = false): IrFunction {
  const dy = local(4, 'i32');
  const dx = local(5, 'i32');
  const sums = [0, 1, 2, 3].map((c) => set(c, op('f32.add', local(c, 'f32'),
    gather(0, c, 'f32', 'clamp', op('i32.add', X, dx), op('i32.add', Y, dy)))));
  const radius = uniform(0, 'i32');
  const window = (v: number, body: ReturnType<typeof set>[]) => (uniformRadius
    ? [set(v, op('i32.neg', radius)), loop(0, iff(op('bool.not', op('i32.le', local(v, 'i32'), radius)), [brk(0)]), ...body, set(v, op('i32.add', local(v, 'i32'), i32(1))))]
    : forRange(0, v, -2, 2, ...body));
  const n = op('i32.to_f32', op('i32.mul', op('i32.add', op('i32.mul', i32(2), radius), i32(1)), op('i32.add', op('i32.mul', i32(2), radius), i32(1))));
  return fn({
    nodes: ['blur'],
    locals: ['f32', 'f32', 'f32', 'f32', 'i32', 'i32', 'f32', 'f32', 'f32', 'f32'],
    fields: [field('rings.result', 'read', 2, ['f32', 'f32', 'f32', 'f32']), field('blur.result', 'write', 2, ['f32', 'f32', 'f32', 'f32'])],
    uniforms: [{ name: 'blur.in.radius', t: 'i32' }],
    body: [
      ...window(4, window(5, sums)),
      ...[0, 1, 2, 3].map((c) => set(6 + c, op('f32.div', local(c, 'f32'), uniformRadius ? n : f32(25)))),
    ],
    stores: [0, 1, 2, 3].map((c) => ({ field: 1, comp: c, local: 6 + c })),
  });
}

t.test('stencils: life (wrap) and blur (clamp) in uniform loops', (tt) => {
  for (const [w, h] of [[1, 1], [2, 3], [5, 1], [13, 6], [33, 9]]) {
    const domain = { width: w, height: h, depth: 1 };
    agree(tt, `life ${w}x${h}`, { fn: life(), domain, input: (_f, _c, n) => Float32Array.from({ length: n }, (_, i) => ((i * 2654435761) >>> 7) % 3 === 0 ? 1 : 0) });
    agree(tt, `blur ${w}x${h}`, { fn: blur(), domain, uniforms: [2] });
    for (const radius of [0, 1, 3]) agree(tt, `blur, radius ${radius} a uniform, ${w}x${h}`, { fn: blur(true), domain, uniforms: [radius] });
  }
  tt.end();
});

t.test('gathers: clamp and wrap at the edges, 1-D, 2-D and 3-D', (tt) => {
  const sizes: Extents[] = [
    { width: 1, height: 1, depth: 1 }, { width: 3, height: 1, depth: 1 }, { width: 5, height: 2, depth: 1 },
    { width: 13, height: 3, depth: 2 }, { width: 4, height: 4, depth: 3 }, { width: 8, height: 1, depth: 1 },
  ];
  for (const mode of ['clamp', 'wrap'] as const) {
    for (const dims of [1, 2, 3] as const) {
      const coords = (dx: number, dy: number, dz: number) => [op('i32.add', X, i32(dx)), op('i32.add', Y, i32(dy)), op('i32.add', Z, i32(dz))].slice(0, dims);
      const locals: Scalar[] = [];
      const body = [];
      // Fast-path forms (x + constant, x - uniform, x + loop local) and general ones.
      for (const [dx, dy, dz] of [[0, 0, 0], [-1, 0, 0], [2, -1, 1], [-3, 2, -1], [5, 1, 0], [-9, -4, 4]]) {
        body.push(set(locals.length, gather(0, 0, 'f32', mode, ...coords(dx, dy, dz)))); locals.push('f32');
      }
      body.push(set(locals.length, gather(0, 1, 'i32', mode, op('i32.sub', X, uniform(0, 'i32')), ...coords(0, 1, 0).slice(1)))); locals.push('i32');
      body.push(set(locals.length, gather(0, 0, 'f32', mode, op('i32.mul', X, i32(-2)), ...coords(0, 0, -1).slice(1)))); locals.push('f32');
      body.push(set(locals.length, gather(0, 1, 'i32', mode, op('i32.add', X, load(1, 0, 'i32')), ...coords(0, 0, 0).slice(1)))); locals.push('i32');
      body.push(set(locals.length, gather(0, 0, 'f32', mode, i32(2), ...[op('i32.sub', load(1, 0, 'i32'), Y), X].slice(0, dims - 1)))); locals.push('f32');
      body.push(set(locals.length, gather(0, 2, 'bool', mode, op('i32.add', X, i32(1)), ...coords(0, 0, 0).slice(1)))); locals.push('bool');
      // A 3x3 (x) window summed in a uniform loop: x + dx with dx a loop local.
      const sum = locals.length; locals.push('f32');
      const dx = locals.length; locals.push('i32');
      body.push(set(dx, i32(-2)), loop(0,
        iff(op('i32.gt', local(dx, 'i32'), i32(2)), [brk(0)]),
        set(sum, op('f32.add', local(sum, 'f32'), gather(0, 0, 'f32', mode, op('i32.add', X, local(dx, 'i32')), ...coords(0, 0, 0).slice(1)))),
        set(dx, op('i32.add', local(dx, 'i32'), i32(1))),
      ));
      const domainDims = dims === 1 ? 2 : dims;
      const f = fn({
        dims: domainDims,
        locals,
        fields: [field('src', 'read', dims, ['f32', 'i32', 'bool']), field('offs', 'read', domainDims, ['i32']), field('out', 'write', domainDims, locals)],
        uniforms: [{ name: 'shift', t: 'i32' }],
        body,
        stores: locals.map((_, i) => ({ field: 2, comp: i, local: i })),
      });
      for (const src of sizes) {
        for (const domain of [{ width: 1, height: 1, depth: 1 }, { width: 5, height: 3, depth: domainDims === 3 ? 2 : 1 }, { width: 13, height: 1, depth: 1 }]) {
          const srcE = { width: src.width, height: dims >= 2 ? src.height : 1, depth: dims === 3 ? src.depth : 1 };
          for (const shift of [0, 2, -7]) {
            agree(tt, `${mode} ${dims}-D src ${srcE.width}x${srcE.height}x${srcE.depth} domain ${domain.width}x${domain.height}x${domain.depth} shift ${shift}`, {
              fn: f, domain, extents: [srcE, domain, domain], uniforms: [shift], seed: srcE.width * 100 + domain.width,
              input: (fi, c, n, ty) => (fi === 1 ? Int32Array.from({ length: n }, (_, i) => (i * 5) % 11 - 5) : randomValues(rng(n + c), ty, n)),
            });
          }
        }
      }
    }
  }
  tt.end();
});

t.test('fuel traps: same node, same trap word, same element, in both backends', (tt) => {
  const spin = (node: number) => loop(node, set(0, op('i32.add', local(0, 'i32'), i32(1))));
  const f = fn({
    nodes: ['quiet', 'spin', 'other'],
    locals: ['i32', 'f32'],
    fields: [field('out', 'write', 2, ['i32'])],
    fuel: 1000,
    body: [
      // Lane 1 (x = 1) runs out in node 2 first; element x = 0 runs out later in node 1: the
      // interpreter stops at element 0, so both must name node 1.
      iff(op('i32.eq', X, i32(1)), [spin(2)]),
      iff(op('i32.eq', X, i32(0)), [spin(1)]),
    ],
    stores: [{ field: 0, comp: 0, local: 0 }],
  });
  for (const [w, h] of [[1, 1], [3, 2], [5, 1]]) {
    const r = compare({ fn: f, domain: { width: w, height: h, depth: 1 } });
    tt.equal(r.diff, undefined, `${w}x${h}`);
    tt.equal(r.interp.trap?.node, 'spin', 'interpreter names the node');
    tt.equal(r.wasm.trap?.node, 'spin', 'wasm names the node');
    tt.equal(r.wasm.trap?.word, 1, 'trap word holds the node index');
    tt.same(r.wasm.trap?.element, [0, 0], 'the element: the interpreter\'s first, x = 0');
    tt.match(r.wasm.trap?.message, /^node `spin` ran out of fuel at element \(0, 0\): a loop ran more than 1000 times there; give the loop a bound/);
  }
  // Only a lane past x = 4 spins: the first vector completes, the second traps.
  const g = fn({
    nodes: ['a', 'b'],
    locals: ['i32'],
    fields: [field('out', 'write', 2, ['i32'])],
    fuel: 50,
    body: [
      loop(0, iff(op('i32.ge', local(0, 'i32'), i32(10)), [brk(0)]), set(0, op('i32.add', local(0, 'i32'), i32(1)))),
      iff(op('i32.eq', X, i32(6)), [spin(1)]),
    ],
    stores: [{ field: 0, comp: 0, local: 0 }],
  });
  const r = compare({ fn: g, domain: { width: 13, height: 2, depth: 1 } });
  tt.equal(r.diff, undefined, 'x = 6 traps');
  tt.equal(r.wasm.trap?.node, 'b');
  tt.same(r.wasm.trap?.element, [6, 0], 'lane 2 of the second vector, in row 0');
  // Lanes other than 0, past the first row, and a 3-D domain: (x, y, z) from the recorded row.
  const g3 = { ...g, fields: [field('out', 'write', 3, ['i32'])] };
  for (const [f, domain, at] of [[g, { width: 13, height: 3, depth: 1 }, [6, 0]], [g3, { width: 7, height: 3, depth: 2 }, [6, 0, 0]]] as const) {
    const rr = compare({ fn: f, domain });
    tt.equal(rr.diff, undefined, JSON.stringify(domain));
    tt.same(rr.interp.trap?.element, at, `interpreter at (${at})`);
  }
  const late = { ...g3, body: [g.body[0], iff(op('i32.and', op('i32.eq', X, i32(5)), op('i32.eq', Y, i32(2))), [spin(1)])] };
  const deep = compare({ fn: late, domain: { width: 7, height: 3, depth: 2 } });
  tt.equal(deep.diff, undefined, 'x = 5, y = 2 traps in the first z slice');
  tt.same(deep.wasm.trap?.element, [5, 2, 0]);
  // Exactly at the limit: 11 + 40 repetitions (the last of each loop only breaks) = 51.
  for (const [limit, traps] of [[52, false], [51, false], [50, true]] as const) {
    const h = { ...g, fuel: limit, body: [g.body[0], iff(op('i32.eq', X, i32(6)), [loop(1,
      iff(op('i32.ge', local(0, 'i32'), i32(49)), [brk(0)]), set(0, op('i32.add', local(0, 'i32'), i32(1))))])] };
    const rr = compare({ fn: h, domain: { width: 13, height: 1, depth: 1 } });
    tt.equal(rr.diff, undefined, `fuel ${limit}`);
    tt.equal(rr.wasm.trap !== undefined, traps, `fuel ${limit}: ${traps ? 'traps' : 'runs'}`);
  }
  tt.end();
});

t.test('errors: an invalid module is an internal error; other traps pass through', (tt) => {
  const m = newModule({ nodes: [], fuel: 1 });
  m.addFunction('bad', binaryen.none, binaryen.i32, [], m.f32.const(1));
  tt.throws(() => optimise(m, true), { name: 'InternalCompileError', message: /does not validate: .*function body type must match/s });

  // A field placed outside the memory: the engine's RuntimeError, not a FuelTrap.
  const f = fn({ locals: ['f32'], fields: [field('in', 'read', 2, ['f32']), field('out', 'write', 2, ['f32'])], body: [set(0, load(0, 0, 'f32'))], stores: [{ field: 1, comp: 0, local: 0 }] });
  const run = compiled(f, true);
  const domain = { width: 4, height: 1, depth: 1 };
  const far = { base: memory.buffer.byteLength + 65536, ...domain, stride: 4, planeBytes: 16 };
  writeArgs(memory, ARGS_WASM, f, domain, [far, { ...far, base: HEAP }]);
  tt.throws(() => run(ARGS_WASM, 0, 1), WebAssembly.RuntimeError);
  tt.end();
});

// ---------------------------------------------------------------------------------------------
// Property test

t.test('random functions: both backends agree bit for bit', (tt) => {
  const cases = Number(process.env.BACKENDS_CASES ?? 400);
  let traps = 0;
  let failures = 0;
  for (let seed = 1; seed <= cases; seed++) {
    const c = randomCase(seed, { math: true });
    const rows = c.domain.height * c.domain.depth;
    const splits = seed % 3 === 0 && rows > 1 ? [1 + (seed % (rows - 1))] : [];
    for (const optimize of [true, false]) {
      let diff: string | undefined;
      let trapped = false;
      try {
        const r = compare({ fn: c.fn, domain: c.domain, extents: c.extents, uniforms: c.uniforms, splits, seed }, optimize);
        diff = r.diff;
        trapped = r.interp.trap !== undefined;
      } catch (e) {
        diff = `threw ${(e as Error).stack}`;
      }
      if (diff !== undefined) {
        failures++;
        if (failures <= 5) tt.fail(`seed ${seed} (${optimize ? 'O3' : 'unoptimised'}): ${diff}\n${JSON.stringify(c.fn)}`);
      }
      if (optimize && trapped) traps++;
    }
  }
  tt.equal(failures, 0, `${cases} random functions x 2 (optimised, unoptimised)`);
  tt.comment(`${traps} of ${cases} random functions ran out of fuel`);
  tt.end();
});

t.test('every module validates', (tt) => {
  for (let seed = 1000; seed < 1100; seed++) {
    const c = randomCase(seed, { math: true });
    for (const optimize of [true, false]) {
      const bytes = compileFunction(c.fn, { optimize });
      tt.ok(WebAssembly.validate(bytes), `seed ${seed}`);
    }
  }
  tt.end();
});
