// Statements under a lane mask: structured control flow for 4 elements at once.
//
// Every statement runs under a current mask (a v128 local: lanes all ones or zero); a statement
// never runs with an empty mask. At the top level of the body the mask is `g.top` (the lanes with
// x < width, minus lanes that ran out of fuel) and a `set` may write all 4 lanes: the others do
// not matter. Elsewhere a `set` blends with v128.bitselect, unless no lane outside the mask reads
// the local again (liveness, analysis.ts).
//
// - varying `if`: the then-branch runs under mask & c, the else-branch under mask & ~c, each
//   skipped when no lane is left; uniform `if`: a scalar branch on lane 0, the mask unchanged.
// - varying `block`/`loop`: an alive mask starts as the mask at entry; `break n` removes the
//   current lanes from the alive masks of the constructs it leaves; a loop repeats its body
//   under its alive mask while any lane is alive. Uniform constructs (all lanes leave together,
//   see analysis.ts) are plain WebAssembly blocks and loops, and their breaks plain `br`s.
// - after a statement that may have lost lanes (a break out of it, or a loop, which stops lanes
//   that run out of fuel), the mask becomes mask & (alive mask of the innermost varying
//   construct, or g.top), and the rest of the list is skipped when no lane is left.
// - counted loops (`for (d = -1; d <= 1; d++)`) are unrolled with the counter as a constant
//   where the unroll pass (unroll.ts) decided so; `while` loops test their lockstep counters
//   (lockstep.ts) once, as the lockstep pass found them.
// - every loop repetition charges fuel (fuel.ts); lanes over the limit stop, lane 0 traps.

import binaryen from 'binaryen';
import type { Expr, Stmt } from '../ir/ir.js';
import { containsLoop, visitLocals, escapingBreaks, whileShape } from './analysis.js';
import type { Gen, Ref } from './context.js';
import { fuel } from './fuel.js';
import { lane, scalarCondition, scalarI32, vector } from './lanes.js';
import { anyLane, getMask, type Level } from './mask.js';
import { gathers, scoped } from './interior.js';
import { lockstepCode, shadowSet, varyingExit, withShadows, type Lockstep } from './shadows.js';
import { sampleAt, sampleCode } from './sample.js';
import { constValue, type LoopUnroll } from './unroll.js';
import type { SampleRun } from '../ir/sample.js';

const v128 = binaryen.v128;
const i32 = binaryen.i32;

export function compileBody(g: Gen): Ref[] {
  return list(g, g.fn.body, { mask: g.top, stack: [] });
}

export function list(g: Gen, stmts: Stmt[], lvl: Level): Ref[] {
  const out: Ref[] = [];
  for (let i = 0; i < stmts.length; i++) {
    const s = stmts[i];
    if (s.k === 'break') {
      out.push(...breakCode(g, s.depth, lvl));
      return out; // the rest of the list is unreachable
    }
    // The corners of a sample, loaded together (sample.ts).
    const run = s.k === 'set' ? sampleAt(g, stmts, i) : null;
    if (run) {
      out.push(...sampleSets(g, run, lvl));
      i += run.sets.length - 1;
      continue;
    }
    // Anything but a set may hold code that does not run (interior.ts: `scoped`). The copies of
    // an unrolled loop run in order, so they share the aligned blocks they load.
    if (s.k === 'loop') {
      const unroll = g.unroll.loops.get(s);
      if (unroll?.unrolled) {
        out.push(...scoped(g, () => unrolledLoop(g, unroll, s, stmts[i - 1] as SetStmt, lvl)));
      } else {
        out.push(...scoped(g, () => statement(g, s, lvl, stmts.slice(0, i))));
      }
    } else {
      out.push(...(s.k === 'set' ? statement(g, s, lvl) : scoped(g, () => statement(g, s, lvl))));
    }
    if (i < stmts.length - 1 && losesLanes(s, lvl)) {
      const rest = scoped(g, () => list(g, stmts.slice(i + 1), lvl));
      out.push(g.m.if(anyLane(g, lvl.mask), g.m.block(null, rest)));
      return out;
    }
  }
  return out;
}

/** May lanes of the current mask stop during `s` (break out of it to a varying construct, fuel)? */
function losesLanes(s: Stmt, lvl: Level): boolean {
  if (containsLoop(s)) return true;
  return escapingBreaks(s).some((d) => !lvl.stack[lvl.stack.length - 1 - d].uniform);
}

/** mask &= alive mask of the innermost varying construct (or the top mask). */
function restore(g: Gen, lvl: Level): Ref[] {
  if (lvl.mask === g.top) return [];
  let alive: number | null = null;
  for (let j = lvl.stack.length - 1; j >= 0; j--) {
    if (!lvl.stack[j].uniform) {
      alive = lvl.stack[j].alive!;
      break;
    }
  }
  if (alive === null) {
    if (!g.analysis.hasLoops) return [];
    alive = g.top;
  }
  if (alive === lvl.mask) return [];
  return [g.set(lvl.mask, g.m.v128.and(g.get(lvl.mask), getMask(g, alive)))];
}

/**
 * local = e under the mask. A plain set at the top level, or when no lane outside the mask reads
 * the local again (`blend` false, from the liveness analysis). Uniform i32 locals are computed as
 * scalars and splatted (they are only set at the top level: see analysis.ts). `computed`: e's
 * value, compiled already (a sample's corner, sample.ts; never a uniform i32 local's).
 */
function setLocal(g: Gen, lvl: Level, local: number, e: Expr, blend: boolean, computed?: Ref): Ref[] {
  const m = g.m;
  const pre: Ref[] = [];
  const wasm = g.irLocal[local];
  const scalar = g.scalarLocal[local];
  if (scalar !== undefined && lvl.mask === g.top && computed === undefined) {
    const value = scalarI32(g, e, pre); // (fills `pre` first)
    return [...pre, g.set(scalar, value), g.set(wasm, m.i32x4.splat(g.get(scalar, i32)))];
  }
  const step = blend && lvl.mask !== g.top && computed === undefined ? maskedStep(g, local, e) : undefined;
  const value = step === undefined ? computed ?? vector(g, e, pre) : g.zero();
  const code = step !== undefined
    ? g.set(wasm, step === 1
      ? m.i32x4.sub(g.get(wasm), g.get(lvl.mask)) // mask lanes are -1
      : m.i32x4.add(g.get(wasm), m.v128.and(g.get(lvl.mask), g.splatI32(step))))
    : lvl.mask === g.top || !blend
      ? g.set(wasm, value)
      : g.set(wasm, m.v128.bitselect(value, g.get(wasm), g.get(lvl.mask)));
  const keepScalar = scalar === undefined ? [] : [g.set(scalar, m.i32x4.extract_lane(g.get(wasm), lane(0)))];
  return [...pre, code, ...keepScalar, ...shadowSet(g, local, e)];
}

/**
 * `local = local + k` (i32, k constant): k, else undefined. Under a mask it adds mask & k
 * (exact: i32 adds wrap) instead of blending local + k with the old value: 1-2 SIMD operations
 * instead of 4 on a loop counter.
 */
function maskedStep(g: Gen, local: number, e: Expr): number | undefined {
  if (e.k !== 'op' || e.t !== 'i32' || (e.op !== 'i32.add' && e.op !== 'i32.sub')) return undefined;
  const [a, b] = e.args;
  const self = (x: Expr) => x.k === 'local' && x.i === local && !g.subst.has(local);
  const k = (x: Expr) => constValue(g.subst, x);
  if (e.op === 'i32.add' && self(a) && k(b) !== undefined) return k(b);
  if (e.op === 'i32.add' && self(b) && k(a) !== undefined) return k(a);
  if (e.op === 'i32.sub' && self(a) && k(b) !== undefined) return -k(b)! | 0;
  return undefined;
}

/** The sets of a sample's corners (sample.ts): each writes its corner as setLocal does. */
function sampleSets(g: Gen, run: SampleRun, lvl: Level): Ref[] {
  const write = (s: SetStmt, value: Ref) => setLocal(g, lvl, s.local, s.e, g.analysis.blends(s), value);
  return sampleCode(g, run, lvl.mask, write);
}

/** `before`: the statements before `s` in its list (what a loop's lockstep counters start from). */
function statement(g: Gen, s: Exclude<Stmt, { k: 'break' }>, lvl: Level, before: Stmt[] = []): Ref[] {
  switch (s.k) {
    case 'set':
      return setLocal(g, lvl, s.local, s.e, g.analysis.blends(s));
    case 'if': {
      const known = constValue(g.subst, s.c) ?? g.known.get(s);
      if (known !== undefined) {
        // A condition made constant by unrolling, or known in this version (unswitch.ts): only
        // the branch taken.
        const taken = list(g, known ? s.then : s.else, lvl);
        return [g.m.block(null, taken), ...(losesLanes(s, lvl) ? restore(g, lvl) : [])];
      }
      return g.analysis.uniformIf(s) ? uniformIf(g, s, lvl) : varyingIf(g, s, lvl);
    }
    case 'block':
      return g.analysis.uniformConstruct(s) ? uniformBlock(g, s, lvl) : varyingBlock(g, s, lvl);
    case 'loop':
      return [...anchorInvariants(g, before, s), ...(g.analysis.uniformConstruct(s) ? uniformLoop(g, s, lvl) : varyingLoop(g, s, lvl, before))];
  }
}

type If = Extract<Stmt, { k: 'if' }>;
type SetStmt = Extract<Stmt, { k: 'set' }>;
type Block = Extract<Stmt, { k: 'block' }>;
type Loop = Extract<Stmt, { k: 'loop' }>;

function uniformIf(g: Gen, s: If, lvl: Level): Ref[] {
  const m = g.m;
  const pre: Ref[] = [];
  const c = scalarCondition(g, s.c, pre);
  const a = list(g, s.then, lvl);
  const b = list(g, s.else, lvl);
  const code = m.if(c, m.block(null, a), b.length ? m.block(null, b) : undefined);
  return [...pre, code, ...(losesLanes(s, lvl) ? restore(g, lvl) : [])];
}

function varyingIf(g: Gen, s: If, lvl: Level): Ref[] {
  const m = g.m;
  const out: Ref[] = [];
  if (s.then.length === 1 && s.then[0].k === 'break' && s.else.length === 0 && lvl.mask !== g.top) {
    return [...out, ...breakIf(g, s.c, s.then[0].depth, lvl)];
  }
  const c = g.temp(v128, vector(g, s.c, out), out);
  const t = g.temp(v128, m.v128.and(getMask(g, lvl.mask), g.get(c)), out);
  out.push(m.if(m.v128.any_true(g.get(t)), m.block(null, list(g, s.then, { mask: t, stack: lvl.stack }))));
  if (s.else.length) {
    const e = g.temp(v128, m.v128.andnot(getMask(g, lvl.mask), g.get(c)), out);
    out.push(m.if(m.v128.any_true(g.get(e)), m.block(null, list(g, s.else, { mask: e, stack: lvl.stack }))));
  }
  if (losesLanes(s, lvl)) out.push(...restore(g, lvl));
  return out;
}

/**
 * `if (c) break depth` under a mask that is not the top one: the lanes where c holds leave; the
 * others go on with mask & ~c. An alive mask that is the current mask itself becomes
 * mask & ~c (mask & x when c is !x: the loop condition of a `while`), other alive masks lose
 * mask & c.
 */
function breakIf(g: Gen, cond: Expr, depth: number, lvl: Level): Ref[] {
  const m = g.m;
  const out: Ref[] = [];
  const negated = cond.k === 'op' && cond.op === 'bool.not';
  const c = g.temp(v128, vector(g, negated ? cond.args[0] : cond, out), out);
  const stay = (mask: number) => (negated ? m.v128.and(g.get(mask), g.get(c)) : m.v128.andnot(g.get(mask), g.get(c)));
  let leaving: number | undefined;
  let maskDone = false;
  for (let d = depth; d >= 0; d--) {
    const k = lvl.stack[lvl.stack.length - 1 - d];
    if (k.uniform) continue;
    if (k.alive === lvl.mask) {
      out.push(g.set(k.alive, stay(k.alive)));
      maskDone = true;
      continue;
    }
    // (Outer masks first: the current mask is still the one at the break.)
    leaving ??= g.temp(v128, negated ? m.v128.andnot(g.get(lvl.mask), g.get(c)) : m.v128.and(g.get(lvl.mask), g.get(c)), out);
    out.push(g.set(k.alive!, m.v128.andnot(g.get(k.alive!), g.get(leaving))));
  }
  if (!maskDone) out.push(g.set(lvl.mask, stay(lvl.mask)));
  return out;
}

/**
 * Lanes in `leaving` leave the constructs 0..depth: drop them from their alive masks, outermost
 * first (`leaving` may be the innermost alive mask itself).
 */
function removeFromAlive(g: Gen, lvl: Level, depth: number, leaving: number): { code: Ref[]; locals: number[] } {
  const code: Ref[] = [];
  const locals: number[] = [];
  for (let d = depth; d >= 0; d--) {
    const c = lvl.stack[lvl.stack.length - 1 - d];
    if (c.uniform) continue;
    code.push(g.set(c.alive!, g.m.v128.andnot(g.get(c.alive!), g.get(leaving))));
    locals.push(c.alive!);
  }
  return { code, locals };
}

function breakCode(g: Gen, depth: number, lvl: Level): Ref[] {
  const target = lvl.stack[lvl.stack.length - 1 - depth];
  if (!target) throw new Error(`internal: break ${depth} has no enclosing construct`);
  if (target.uniform) return [g.m.br(target.exit!)];
  return removeFromAlive(g, lvl, depth, lvl.mask).code;
}

function uniformBlock(g: Gen, s: Block, lvl: Level): Ref[] {
  const exit = g.label('block');
  const body = list(g, s.body, { mask: lvl.mask, stack: [...lvl.stack, { uniform: true, exit }] });
  return [g.m.block(exit, body), ...(losesLanes(s, lvl) ? restore(g, lvl) : [])];
}

// At the body level of a varying block or loop, the lanes present are exactly the alive ones,
// so the alive mask serves as the body's mask.

function varyingBlock(g: Gen, s: Block, lvl: Level): Ref[] {
  const alive = g.local(v128);
  const body = list(g, s.body, { mask: alive, stack: [...lvl.stack, { uniform: false, alive }] });
  return [
    g.set(alive, getMask(g, lvl.mask)),
    g.m.block(null, body),
    ...(losesLanes(s, lvl) ? restore(g, lvl) : []),
  ];
}

function uniformLoop(g: Gen, s: Loop, lvl: Level): Ref[] {
  const m = g.m;
  const exit = g.label('exit');
  const repeat = g.label('loop');
  const stack = [...lvl.stack, { uniform: true, exit }];
  const inner: Level = { mask: lvl.mask, stack };
  // Lanes lost inside the body (breaks to outer varying constructs, fuel) are dropped from the
  // mask before repeating; the loop ends early when none is left.
  const bodyLoses =
    s.body.some(containsLoop) || escapingBreaks(s).some((d) => !lvl.stack[lvl.stack.length - 1 - d].uniform);
  const body = [
    ...fuel(g, s.node, inner, exit),
    ...list(g, s.body, inner),
    ...(bodyLoses ? restore(g, lvl) : []),
    bodyLoses ? m.br(repeat, anyLane(g, lvl.mask)) : m.br(repeat),
  ];
  return [m.block(exit, [m.loop(repeat, m.block(null, body))]), ...restore(g, lvl)];
}

function varyingLoop(g: Gen, s: Loop, lvl: Level, before: Stmt[]): Ref[] {
  const m = g.m;
  const alive = g.local(v128);
  const repeat = g.label('loop');
  const bodyEnd = g.label('body');
  const inner: Level = { mask: alive, stack: [...lvl.stack, { uniform: false, alive }] };
  const enter = g.set(alive, getMask(g, lvl.mask));
  if (whileShape(s)) {
    // One test of the alive mask per repetition, after the exit test, instead of two.
    const ls = lockstepCode(g, s);
    const body = withShadows(g, ls, () => m.block(bodyEnd, [
      ...fuel(g, s.node, inner, bodyEnd),
      ...(ls ? [m.br(bodyEnd, m.i32.eqz(ls.stay))] : []),
      ...exitTest(g, s, ls, inner),
      m.if(m.v128.any_true(g.get(alive)), m.block(null, [...list(g, s.body.slice(1), inner), m.br(repeat)])),
    ]));
    return [enter, ...(ls?.init ?? []), m.loop(repeat, body), ...restore(g, lvl)];
  }
  const body = m.block(bodyEnd, [...fuel(g, s.node, inner, bodyEnd), ...list(g, s.body, inner)]);
  return [
    enter,
    m.loop(repeat, m.block(null, [body, m.br(repeat, m.v128.any_true(g.get(alive)))])),
    ...restore(g, lvl),
  ];
}

/**
 * The body of a `while` loop (whileShape) under the alive mask `alive`, without a test of the
 * mask: for several vectors' loops fused into one (interleave.ts). With no lane alive it changes
 * nothing that is read later (straight-line code: masked sets blend or write dead lanes).
 * With `charge` false the caller charges the fuel (fuelParts); `out` is then unused.
 */
export function whileBody(g: Gen, s: Loop, alive: number, lvl: Level, out: string, charge = true, ls: Lockstep | null = null): Ref[] {
  const inner = whileLevel(alive, lvl);
  return [...(charge ? fuel(g, s.node, inner, out) : []), ...exitTest(g, s, ls, inner), ...list(g, s.body.slice(1), inner)];
}

/**
 * The per-lane part of a `while` loop's exit test: all of it, or with lockstep counters
 * (lockstep.ts) the conjuncts that are not lockstep (the caller tests those once, as a scalar).
 */
function exitTest(g: Gen, s: Loop, ls: Lockstep | null, inner: Level): Ref[] {
  return ls ? list(g, varyingExit(ls), inner) : statement(g, s.body[0] as If, inner);
}

/** The level of a `while` body under the alive mask `alive` (whileBody's, for its fuel parts). */
export function whileLevel(alive: number, lvl: Level): Level {
  return { mask: alive, stack: [...lvl.stack, { uniform: false, alive }] };
}

/**
 * A counted loop, unrolled (as the unroll pass decided): each copy of the middle in its own
 * context, the counter's value substituted. Every lane of the mask runs all repetitions, so when
 * the nest's whole fuel is a constant of this loop's node it is charged once at entry (the same
 * lanes trap, naming the same node); else one unit per repetition, in the original order.
 */
function unrolledLoop(g: Gen, d: LoopUnroll, s: Loop, prev: SetStmt, lvl: Level): Ref[] {
  const m = g.m;
  const c = d.counted;
  const out = g.label('unrolled');
  const code: Ref[] = [];
  const perRepetition = !g.unroll.charged && d.charge === undefined;
  if (!g.unroll.charged && d.charge !== undefined) code.push(...fuel(g, s.node, lvl, out, d.charge));
  const context = g.unroll;
  try {
    const middleLoops = c.middle.some(containsLoop);
    // V8 issues a basic block's loads in order and its pure arithmetic as late as it can: a
    // stencil's sums would wait for all its loads, held in spilled registers (100 in a 5 x 5 blur
    // of 4 planes). Anchoring the values an innermost loop writes once its copies are done makes
    // each row of taps finish its additions before the next row's loads. (Anchoring after every
    // copy made the blur 11 % faster than no anchors; once per loop, 8 % faster again: a store
    // per copy and value was the loop's largest cost.)
    const anchored = !middleLoops && gathers(c.middle) ? writtenLocals(c.middle, c.v) : [];
    for (let k = 0; k < c.values.length; k++) {
      if (perRepetition) code.push(...fuel(g, s.node, lvl, out, 1));
      if (k === c.values.length - 1) break; // the last repetition only exits
      g.unroll = d.copies[k];
      code.push(m.block(null, list(g, c.middle, lvl)));
      g.unroll = context;
      // Inner loops may have stopped lanes (fuel): stop when none is left.
      if (middleLoops) code.push(m.br(out, m.i32.eqz(anyLane(g, lvl.mask))));
    }
    code.push(...anchored.map((i) => g.anchor(g.irLocal[i], binaryen.v128)));
  } finally {
    g.unroll = context;
  }
  const last = c.values[c.values.length - 1];
  const final: Expr = { k: 'const', t: 'i32', v: last };
  return [m.block(out, code), ...setLocal(g, lvl, c.v, final, g.analysis.blends(prev)), ...restore(g, lvl)];
}

/**
 * Anchors (Gen.anchor) for the values the statements `before` a loop set and the loop only reads:
 * V8 places a pure computation at the common dominator of its uses and takes it out of a loop
 * only from a block that every exit of the loop follows, so values set before a `while` and read
 * past its exit test (the ray marcher's camera and ray direction: 3 square roots, 4 divisions)
 * were computed again at every repetition, 40 % of the frame.
 */
export function anchorInvariants(g: Gen, before: Stmt[], loop: Loop): Ref[] {
  const set = new Set<number>();
  const read = new Set<number>();
  const written = new Set<number>();
  visitLocals(before, (i, w) => w && set.add(i));
  visitLocals(loop.body, (i, w) => (w ? written : read).add(i));
  return [...set].filter((i) => read.has(i) && !written.has(i) && !g.subst.has(i)).map((i) => g.anchor(g.irLocal[i], v128));
}

/** The IR locals `stmts` set, other than `except`. */
function writtenLocals(stmts: Stmt[], except: number): number[] {
  const written = new Set<number>();
  visitLocals(stmts, (i, write) => write && i !== except && written.add(i));
  return [...written];
}
