// Emitting the run function: the row loop, the x loop in steps of 4 elements, and around them
// the values hoisted per call and per row.
//
//   per call:  read the argument block (extents, field words, uniforms; splats of them)
//   per row:   y, z and their splats, row addresses of the planes read and written pointwise
//   per vector (x0 = the first column, + 4, + 8, ... < the column after the last):
//              mask of lanes with x < width, fuel counters, locals = 0, the body, trap check,
//              one v128.store per `stores` entry
//
// Latency-bound loops take several vectors per step first (interleave.ts); the columns left over
// take the one-vector loop. The order of emission matters: the vector bodies register the values
// they need hoisted (Gen.rowSplat, uniformVector, ...), so the row code and then the call code
// are emitted after them, each from what the code inside it registered. Each vector's start
// follows the uses pass (uses.ts) on its code: it keeps the x vector and the top mask only where
// that code reads them.
//
// Emission follows the unroll and lockstep passes' decisions (Gen.unroll, Gen.lockstep): it
// decides nothing about loops itself.

import binaryen from 'binaryen';
import { P_R0, P_R1, type Gen, type Ref } from './context.js';
import { compileBody } from './control.js';
import { trapCheck } from './fuel.js';
import { storeCode } from './fields.js';
import { interleavedStep } from './interleave.js';
import { scalarCondition } from './lanes.js';
import { Interior, interiorRange, offsetSpans } from './interior.js';
import type { EmitPlan } from './plan.js';
import { vectorUses, type VectorUses } from './uses.js';

const i32 = binaryen.i32;

/** One vector: its start, body, trap check and stores; and what its code reads (the uses pass). */
function vectorCode(g: Gen): { code: Ref[]; uses: VectorUses } {
  const body = compileBody(g);
  const stores = storeCode(g);
  const uses = vectorUses(g, [...body, ...stores]);
  return { code: [...g.vectorStart(uses), ...body, ...(g.analysis.hasLoops ? [trapCheck(g)] : []), ...stores], uses };
}

/** An interior version of the vector: the view that compiled it, its code and what it reads. */
interface InteriorVersion {
  view: Gen;
  code: Ref[];
  uses: VectorUses;
}

/**
 * The interior versions (interior.ts): one, or with `plan.unswitch` one with its condition known
 * true and one known false (unswitch.ts). They share x0 and the x vector with the general one.
 */
function interiorVersions(g: Gen, plan: EmitPlan, found: UsesFound): InteriorVersion[] {
  const spans = offsetSpans(g, g.fn.body);
  const known = plan.unswitch ? [true, false] : [undefined];
  return known.map((k) => {
    const view = g.view({ samePosition: true });
    view.interior = new Interior(spans);
    if (k !== undefined) view.known = new Map([[plan.unswitch!, k]]);
    const { code, uses } = vectorCode(view);
    found.push({ vector: k === undefined ? 'interior version' : `interior version, ${k ? 'then' : 'else'} branch`, uses });
    return { view, code, uses };
  });
}

/** What the uses pass found for each vector emitted, by name (after:uses prints it). */
export type UsesFound = { vector: string; uses: VectorUses }[];

/** Emit the run function into g's module as `plan` says. */
export function emitRun(g: Gen, plan: EmitPlan): UsesFound {
  const m = g.m;
  g.unroll = plan.unroll;
  g.lockstep = plan.lockstep;
  const found: UsesFound = [];
  const loops = g.analysis.hasLoops;
  const height = g.domainExtent(1);
  // The row's columns [x0, x1): all of them, or a tile's (x0 a multiple of 4, so vectors keep
  // their alignment; lanes past the width are masked as ever).
  const columnsAt = g.columns();

  // The vector bodies first: they register what they need hoisted.
  const step = plan.interleave ? interleavedStep(g, plan.interleave.vectors, plan.interleave.at) : null;
  step?.uses.forEach((uses, j) => found.push({ vector: `step vector ${j}`, uses }));
  const perCallTraps: Ref[] = [...(step?.perCall ?? [])];
  const { code: general, uses } = vectorCode(g);
  found.push({ vector: 'vector', uses });
  // Gathers along x: an interior version without edge tests, where they hold (interior.ts); one
  // per branch when the plan unswitches it on a row-invariant `if` (unswitch.ts).
  const versions = plan.interior ? interiorVersions(g, plan, found) : [];
  versions.forEach((v) => perCallTraps.push(...v.view.trapStart()));
  // The x vector is kept when some version reads it (they share it). A loop whose version does
  // not read it leaves it behind: the vectors after that loop in the row take the same branch
  // (its condition is row-invariant), whose general code differs from the interior one only in
  // its gathers, which read x0, so they do not read it either; the next row sets it from x0.
  const xv = uses.xv || versions.some((v) => v.uses.xv);
  const advance = (keepXv: boolean): Ref[] => [
    g.set(g.x0, m.i32.add(g.get(g.x0, i32), g.i32(4))),
    ...(keepXv ? [g.set(g.xv, m.i32x4.add(g.get(g.xv), g.splatI32(4)))] : []),
  ];
  // With an interior version: once a vector is interior, the ones after it are until the end of
  // the interior range (interiorRange), so they run in a loop of their own without the test.
  let vector = [...general, ...advance(xv)];
  if (versions.length) {
    const range = new Interior();
    for (const v of versions) for (const [f, { lo, hi }] of v.view.interior!.offsets) range.note(f, lo), range.note(f, hi);
    // The interior pass (planInterior) found a gather it serves: emitting one noted its offset.
    if (range.offsets.size === 0) throw new Error(`interior pass and emission disagree: no gather of ${g.fn.nodes.join(' + ')} skipped its test`);
    const { test, end } = interiorRange(g, range);
    const interiorLoop = (v: InteriorVersion): Ref => {
      const run = g.label('interior');
      return m.loop(run, m.block(null, [...v.code, ...advance(v.uses.xv), m.br(run, m.i32.lt_s(g.get(g.x0, i32), g.get(end, i32)))]));
    };
    let interiorRun: Ref;
    if (versions.length === 1) {
      interiorRun = interiorLoop(versions[0]);
    } else {
      // The row-invariant condition, tested once each time the interior range is entered.
      const pre: Ref[] = [];
      const c = scalarCondition(g, plan.unswitch!.c, pre);
      interiorRun = m.block(null, [...pre, m.if(c, interiorLoop(versions[0]), interiorLoop(versions[1]))]);
    }
    vector = [m.if(test, interiorRun, m.block(null, vector))];
  }

  // Columns of the row from x0 on, one vector at a time.
  const xLoop = g.label('x');
  const oneAtATime = m.loop(xLoop, m.block(null, [
    ...vector,
    m.br(xLoop, m.i32.lt_s(g.get(g.x0, i32), g.get(columnsAt.x1, i32))),
  ]));
  const xStart = xv ? [g.set(g.xv, m.i32x4.add(m.i32x4.splat(g.get(g.x0, i32)), g.lanesI32(0, 1, 2, 3)))] : [];
  const columns: Ref[] = step
    ? [...step.loop, m.if(m.i32.lt_s(g.get(g.x0, i32), g.get(columnsAt.x1, i32)), m.block(null, [...xStart, oneAtATime]))]
    : [...xStart, oneAtATime];

  const rowLoop = g.label('row');
  // The row code once every vector's code has registered its per-row values; it may register
  // per-call values itself, so the call code comes after it.
  const perRow = g.rowCode();
  const row: Ref[] = [
    g.set(g.y, m.i32.rem_u(g.get(g.r, i32), g.get(height, i32))),
    g.set(g.z, m.i32.div_u(g.get(g.r, i32), g.get(height, i32))),
    ...perRow,
    g.set(g.x0, g.get(columnsAt.x0, i32)),
    ...columns,
    g.set(g.r, m.i32.add(g.get(g.r, i32), g.i32(1))),
    m.br(rowLoop, m.i32.lt_s(g.get(g.r, i32), g.get(P_R1, i32))),
  ];

  const perCall = g.callCode();
  const start: Ref[] = [...perCall];
  if (loops) start.push(...g.trapStart(), ...perCallTraps);
  const run = m.block(null, [
    ...start,
    g.set(g.r, g.get(P_R0, i32)),
    m.if(
      m.i32.and(
        m.i32.and(m.i32.lt_s(g.get(columnsAt.x0, i32), g.get(columnsAt.x1, i32)), m.i32.gt_s(g.get(height, i32), g.i32(0))),
        m.i32.lt_s(g.get(g.r, i32), g.get(P_R1, i32)),
      ),
      m.loop(rowLoop, m.block(null, row)),
    ),
  ]);
  m.addFunction('run', binaryen.createType([i32, i32, i32]), binaryen.none, g.vars, run);
  m.addFunctionExport('run', 'run');
  return found;
}
