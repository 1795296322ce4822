// The state of compiling one IrFunction: the binaryen module, the function's locals, and values
// hoisted out of the element loop (computed once per call or once per row, on first use).

import binaryen from 'binaryen';
import { ARGS, FIELD, type IrFunction, type Stmt } from '../ir/ir.js';
import type { Analysis } from './analysis.js';
import type { Interior } from './interior.js';
import type { LockstepPlan } from './lockstep.js';
import type { VectorUses } from './uses.js';
import { rootContext, type Subst, type UnrollContext } from './unroll.js';

export type Ref = binaryen.ExpressionRef;

/** The run function's parameters. */
export const P_ARGS = 0;
export const P_R0 = 1;
export const P_R1 = 2;

interface Hoisted {
  local: number;
  type: binaryen.Type;
  value: Ref;
}

export interface ViewOptions {
  /** Does lane 0 trap at once (see laneZeroTraps)? Default true. */
  laneZeroTraps?: boolean;
  /** The same elements as the parent: share its x0 and x vector (another version of its code). */
  samePosition?: boolean;
}

/**
 * The lanes of a v128 constant being made: binaryen copies them as it makes the constant, so one
 * buffer serves every constant (two typed arrays made per constant were ~5% of codegen).
 */
const LANES = (() => {
  const buffer = new ArrayBuffer(16);
  return { i32: new Int32Array(buffer), f32: new Float32Array(buffer), bytes: new Uint8Array(buffer) };
})();

/** What every vector of one run function shares: its locals' types, hoisted values, labels. */
interface Shared {
  vars: binaryen.Type[];
  perCall: Hoisted[];
  perRow: Hoisted[];
  memo: Map<string, number>;
  labels: number;
  anchors: number;
}

export class Gen {
  readonly m: binaryen.Module;
  readonly fn: IrFunction;
  readonly analysis: Analysis;
  /** Types of the non-parameter locals, in order (the first is local 3). */
  readonly vars: binaryen.Type[];
  /** IR local i lives in WASM local irLocal[i] (a v128). */
  readonly irLocal: number[];
  /**
   * Uniform i32 locals (loop counters, mostly) also live in a scalar i32 local, kept equal to
   * their lane 0, so that control flow and addresses built from them stay scalar.
   */
  readonly scalarLocal: (number | undefined)[];

  // Per-vector state (fixed locals).
  readonly x0: number; // i32: x of lane 0
  readonly y: number; // i32, per row
  readonly z: number; // i32, per row
  readonly r: number; // i32, the row counter
  /** v128 x of the 4 lanes; only maintained when the vector's code reads it (uses.ts). */
  readonly xv: number;
  /** The mask of the lanes that matter (x < width, minus lanes that ran out of fuel). */
  readonly top: number;
  /** Loops: per-lane repetition counters, a scalar count of repetitions, the trap record. */
  readonly counter: number;
  readonly reps: number;
  readonly trapNode: number;
  readonly trapped: number;
  /**
   * Does lane 0 trap at once when it runs out of fuel? Only when it is the lowest element in
   * flight: in the first (or only) vector of a step (see interleave.ts).
   */
  readonly laneZeroTraps: boolean;

  /**
   * Compiling the interior version of the vector (interior.ts): gathers at x + constant skip
   * their edge test and note the offsets here; the caller runs this version only where they hold.
   */
  interior: Interior | null = null;

  /**
   * Conditions known in this version of the code (unswitch.ts): each `if` here compiles only the
   * branch taken.
   */
  known: ReadonlyMap<Stmt, boolean> = new Map();

  /**
   * Where emission stands in the unroll pass's decisions (unroll.ts): the body, or a copy of an
   * unrolled loop (its counters substituted, its fuel maybe charged at the nest's entry).
   */
  unroll: UnrollContext;
  /** The lockstep pass's findings (lockstep.ts), for the `while` loops emission meets. */
  lockstep: LockstepPlan;
  /** In a loop with lockstep counters (lockstep.ts): their scalar shadows, by IR local. */
  shadows: Map<number, number> | null = null;

  private readonly shared: Shared;

  /**
   * `parent`: make a view for another vector of the same run function (interleave.ts): it shares
   * the parent's module, locals list, hoisted values, labels and row locals (y, z, r), and has
   * its own per-vector locals.
   */
  constructor(m: binaryen.Module, fn: IrFunction, analysis: Analysis, parent?: Gen, options: ViewOptions = {}) {
    const laneZeroTraps = options.laneZeroTraps ?? true;
    const sharePosition = parent !== undefined && options.samePosition === true;
    this.m = m;
    this.fn = fn;
    this.analysis = analysis;
    this.shared = parent ? parent.shared : { vars: [], perCall: [], perRow: [], memo: new Map(), labels: 0, anchors: 0 };
    this.unroll = parent ? parent.unroll : rootContext();
    this.lockstep = parent ? parent.lockstep : new Map();
    this.vars = this.shared.vars;
    this.laneZeroTraps = laneZeroTraps;
    this.irLocal = fn.locals.map(() => this.local(binaryen.v128));
    this.scalarLocal = fn.locals.map((t, i) => (t === 'i32' && analysis.uniformLocal[i] ? this.local(binaryen.i32) : undefined));
    this.x0 = sharePosition ? parent.x0 : this.local(binaryen.i32);
    this.y = parent ? parent.y : this.local(binaryen.i32);
    this.z = parent ? parent.z : this.local(binaryen.i32);
    this.r = parent ? parent.r : this.local(binaryen.i32);
    this.xv = sharePosition ? parent.xv : this.local(binaryen.v128);
    this.top = this.local(binaryen.v128);
    this.counter = this.local(binaryen.v128);
    this.reps = this.local(binaryen.i32);
    this.trapNode = this.local(binaryen.v128);
    this.trapped = this.local(binaryen.i32);
  }

  /** Locals replaced by constants here: the counters of the unrolled loops being emitted. */
  get subst(): Subst {
    return this.unroll.subst;
  }

  /** A new non-parameter local. */
  local(type: binaryen.Type): number {
    this.vars.push(type);
    return 2 + this.vars.length;
  }

  /** A Gen for another vector compiled alongside this one, or for another version of it. */
  view(options: ViewOptions): Gen {
    return new Gen(this.m, this.fn, this.analysis, this, options);
  }

  label(prefix: string): string {
    return `${prefix}${this.shared.labels++}`;
  }

  get(i: number, type: binaryen.Type = binaryen.v128): Ref {
    return this.m.local.get(i, type);
  }

  set(i: number, value: Ref): Ref {
    return this.m.local.set(i, value);
  }

  /** Evaluate `value` into a new local (for values used more than once). */
  temp(type: binaryen.Type, value: Ref, into: Ref[]): number {
    const t = this.local(type);
    into.push(this.set(t, value));
    return t;
  }

  i32(v: number): Ref {
    return this.m.i32.const(v | 0);
  }

  /** A v128 constant with the same i32 in every lane. */
  splatI32(v: number): Ref {
    return this.lanesI32(v, v, v, v);
  }

  splatF32(v: number): Ref {
    for (let i = 0; i < 4; i++) LANES.f32[i] = v;
    return this.m.v128.const(LANES.bytes);
  }

  lanesI32(a: number, b: number, c: number, d: number): Ref {
    LANES.i32[0] = a;
    LANES.i32[1] = b;
    LANES.i32[2] = c;
    LANES.i32[3] = d;
    return this.m.v128.const(LANES.bytes);
  }

  zero(): Ref {
    return this.splatI32(0);
  }

  ones(): Ref {
    return this.splatI32(-1);
  }

  /**
   * A value computed once per call of `run`, before the row loop. `build` may itself ask for
   * other hoisted values: they are registered first, so they are computed first.
   */
  callValue(key: string, type: binaryen.Type, build: () => Ref): number {
    return this.hoist(this.shared.perCall, `call:${key}`, type, build);
  }

  /** A value computed once per row (y and z are set when it runs). */
  rowValue(key: string, type: binaryen.Type, build: () => Ref): number {
    return this.hoist(this.shared.perRow, `row:${key}`, type, build);
  }

  private hoist(list: Hoisted[], key: string, type: binaryen.Type, build: () => Ref): number {
    const known = this.shared.memo.get(key);
    if (known !== undefined) return known;
    const value = build();
    const local = this.local(type);
    list.push({ local, type, value });
    this.shared.memo.set(key, local);
    return local;
  }

  callCode(): Ref[] {
    return this.shared.perCall.flatMap((h) => [this.set(h.local, h.value), this.anchor(h.local, h.type)]);
  }

  rowCode(): Ref[] {
    return this.shared.perRow.flatMap((h) => [this.set(h.local, h.value), this.anchor(h.local, h.type)]);
  }

  /**
   * Keep a value computed outside a loop where it is computed. V8's optimiser places a pure
   * computation next to its use and often does not take it back out of a loop (it does not when
   * the loop has another exit, such as a trap), so a value hoisted by hand would be computed
   * again at every repetition. Storing it to a global of its own (per instance, never read: an
   * exported one, so binaryen keeps the store) is a use that stays where it is.
   */
  anchor(local: number, type: binaryen.Type): Ref {
    const name = `anchor${this.shared.anchors++}`;
    const zero = type === binaryen.v128 ? this.zero() : type === binaryen.f32 ? this.m.f32.const(0) : this.i32(0);
    this.m.addGlobal(name, type, true, zero);
    this.m.addGlobalExport(name, name);
    return this.m.global.set(name, this.get(local, type));
  }

  // --- the argument block ---

  private argWord(offset: number): Ref {
    return this.m.i32.load(offset, 4, this.get(P_ARGS, binaryen.i32));
  }

  /** Domain extent along an axis (i32 scalar local). */
  domainExtent(axis: 0 | 1 | 2): number {
    const offset = [ARGS.width, ARGS.height, ARGS.depth][axis];
    return this.callValue(`domain${axis}`, binaryen.i32, () => this.argWord(offset));
  }

  /** The first column to compute and the column after the last (i32 scalar locals). */
  columns(): { x0: number; x1: number } {
    return {
      x0: this.callValue('columns.x0', binaryen.i32, () => this.argWord(ARGS.x0)),
      x1: this.callValue('columns.x1', binaryen.i32, () => this.argWord(ARGS.x1)),
    };
  }

  /** One of a field's six words (i32 scalar local). */
  fieldWord(f: number, word: keyof typeof FIELD): number {
    return this.callValue(`field${f}.${word}`, binaryen.i32, () => this.argWord(ARGS.field(f) + FIELD[word]));
  }

  /** A field's extent along an axis. */
  fieldExtent(f: number, axis: 0 | 1 | 2): number {
    return this.fieldWord(f, (['width', 'height', 'depth'] as const)[axis]);
  }

  /** stride * height: elements per z slice. */
  fieldSlice(f: number): number {
    return this.callValue(`field${f}.slice`, binaryen.i32, () =>
      this.m.i32.mul(this.get(this.fieldWord(f, 'stride'), binaryen.i32), this.get(this.fieldWord(f, 'height'), binaryen.i32)),
    );
  }

  /** Byte address of component `c`'s plane of field `f`. */
  planeAddress(f: number, c: number): number {
    return this.callValue(`plane${f}.${c}`, binaryen.i32, () => {
      const base = this.fieldWord(f, 'base');
      if (c === 0) return this.get(base, binaryen.i32);
      const pb = this.fieldWord(f, 'planeBytes');
      return this.m.i32.add(this.get(base, binaryen.i32), this.m.i32.mul(this.i32(c), this.get(pb, binaryen.i32)));
    });
  }

  /** The uniform's scalar value (f32 or i32 local; bool as i32). */
  uniformScalar(slot: number): number {
    const t = this.fn.uniforms[slot].t;
    const offset = ARGS.uniform(this.fn.fields.length, slot);
    return this.callValue(`uniform${slot}`, t === 'f32' ? binaryen.f32 : binaryen.i32, () =>
      t === 'f32'
        ? this.m.f32.load(offset, 4, this.get(P_ARGS, binaryen.i32))
        : this.m.i32.load(offset, 4, this.get(P_ARGS, binaryen.i32)),
    );
  }

  /** The uniform in all four lanes (bool: a lane mask). */
  uniformVector(slot: number): number {
    const t = this.fn.uniforms[slot].t;
    return this.callValue(`uniformv${slot}`, binaryen.v128, () => {
      const s = this.uniformScalar(slot);
      if (t === 'f32') return this.m.f32x4.splat(this.get(s, binaryen.f32));
      const v = this.m.i32x4.splat(this.get(s, binaryen.i32));
      return t === 'bool' ? this.m.i32x4.ne(v, this.zero()) : v;
    });
  }

  /** A scalar i32 call value in all four lanes. */
  splatOf(scalar: number): number {
    return this.callValue(`splat${scalar}`, binaryen.v128, () => this.m.i32x4.splat(this.get(scalar, binaryen.i32)));
  }

  /** The y or z of the row in all four lanes. */
  rowSplat(axis: 1 | 2): number {
    return this.rowValue(`splat${axis}`, binaryen.v128, () =>
      this.m.i32x4.splat(this.get(axis === 1 ? this.y : this.z, binaryen.i32)),
    );
  }

  /**
   * The start of a vector: its mask, fuel counter, locals = 0. `uses`: what the vector's code
   * reads (uses.ts), so call it after that code was emitted.
   */
  vectorStart(uses: VectorUses): Ref[] {
    const m = this.m;
    const start: Ref[] = [];
    if (this.analysis.hasLoops) {
      start.push(this.set(this.counter, this.zero()), this.set(this.reps, this.i32(0)));
    }
    for (const local of this.irLocal) start.push(this.set(local, this.zero()));
    for (const local of this.scalarLocal) if (local !== undefined) start.push(this.set(local, this.i32(0)));
    if (uses.top) {
      const widthSplat = this.splatOf(this.domainExtent(0));
      start.unshift(this.set(this.top, m.i32x4.lt_s(this.get(this.xv), this.get(widthSplat))));
    }
    return start;
  }

  /** Per call: no lane of this vector has trapped yet. */
  trapStart(): Ref[] {
    return this.analysis.hasLoops ? [this.set(this.trapNode, this.splatI32(-1)), this.set(this.trapped, this.i32(0))] : [];
  }

  xVector(): Ref {
    return this.get(this.xv);
  }
}
