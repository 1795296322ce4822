// IrFunction -> WebAssembly module exporting run(args, r0, r1): the row loop, the x loop in
// steps of 4 elements, and around them the values hoisted per call and per row.
//
//   per call:  read the argument block (extents, field words, uniforms; splats of them)
//   per row:   y, z and their splats, row addresses of the planes read and written pointwise
//   per vector (x0 = 0, 4, 8, ... < width):
//              mask of lanes with x < width, fuel counters, locals = 0, the body, trap check,
//              one v128.store per `stores` entry
//
// Latency-bound loops take several vectors per step first (interleave.ts); the columns left over
// take the one-vector loop.

import binaryen from 'binaryen';
import type { IrFunction } from '../ir/ir.js';
import { analyse } from './analysis.js';
import { Gen, P_R0, P_R1, type Ref } from './context.js';
import { compileBody } from './control.js';
import { trapCheck } from './fuel.js';
import { storeCode } from './fields.js';
import { interleaveFactor, interleavedStep, straightLine } from './interleave.js';
import { Interior, gathers, interiorRange, offsetSpans } from './interior.js';
import { finishModule, newModule } from './module.js';

const i32 = binaryen.i32;

export interface CompileOptions {
  /** Run binaryen's optimiser (-O3). Default: yes, except for straight-line bodies. */
  optimize?: boolean;
  /**
   * Vectors per step for latency-bound loops (interleave.ts); 1 turns interleaving off.
   * Default: interleaveFactor's choice.
   */
  interleave?: number;
}

export function compileFunction(fn: IrFunction, options: CompileOptions = {}): Uint8Array<ArrayBuffer> {
  const m = newModule({ nodes: fn.nodes, fuel: fn.fuel });
  const g = new Gen(m, fn, analyse(fn));
  buildRun(g, options.interleave ?? interleaveFactor(g));
  // binaryen's -O3 buys a straight-line body nothing at run time (V8 does the same work) and
  // costs ~90 ms on its six vectors: edits of pointwise kernels publish sooner without it.
  return finishModule(m, options.optimize ?? !straightLine(g));
}

/** One vector: its start, body, trap check and stores. */
function vectorCode(g: Gen): Ref[] {
  const body = compileBody(g);
  const stores = storeCode(g);
  return [...g.vectorStart(), ...body, ...(g.analysis.hasLoops ? [trapCheck(g)] : []), ...stores];
}

function buildRun(g: Gen, interleave: number): void {
  const m = g.m;
  const loops = g.analysis.hasLoops;
  const width = g.domainExtent(0);
  const height = g.domainExtent(1);

  // The vector bodies first: they register what they need hoisted.
  const step = interleave > 1 ? interleavedStep(g, interleave) : null;
  const perCallTraps: Ref[] = [...(step?.perCall ?? [])];
  const general = vectorCode(g);
  // Gathers along x: an interior version without edge tests, where they hold (interior.ts).
  const inner = step || !gathers(g.fn.body) ? null : g.view({ samePosition: true });
  let interior: Ref[] | null = null;
  if (inner) {
    inner.interior = new Interior(offsetSpans(g, g.fn.body));
    const code = vectorCode(inner);
    if (inner.interior.used) {
      interior = code;
      if (inner.usesXv) g.usesXv = true; // (they share the x vector)
      perCallTraps.push(...inner.trapStart());
    }
  }
  const advance = (): Ref[] => [
    g.set(g.x0, m.i32.add(g.get(g.x0, i32), g.i32(4))),
    ...(g.usesXv ? [g.set(g.xv, m.i32x4.add(g.get(g.xv), g.splatI32(4)))] : []),
  ];
  // With an interior version: once a vector is interior, the ones after it are until the end of
  // the interior range (interiorRange), so they run in a loop of their own without the test.
  let vector = [...general, ...advance()];
  if (interior) {
    const run = g.label('interior');
    const { test, end } = interiorRange(g, inner!.interior!);
    const interiorRun = m.loop(run, m.block(null, [...interior, ...advance(), m.br(run, m.i32.lt_s(g.get(g.x0, i32), g.get(end, i32)))]));
    vector = [m.if(test, interiorRun, m.block(null, vector))];
  }

  // Columns of the row from x0 on, one vector at a time.
  const xLoop = g.label('x');
  const oneAtATime = m.loop(xLoop, m.block(null, [
    ...vector,
    m.br(xLoop, m.i32.lt_s(g.get(g.x0, i32), g.get(width, i32))),
  ]));
  const xStart = g.usesXv ? [g.set(g.xv, m.i32x4.add(m.i32x4.splat(g.get(g.x0, i32)), g.lanesI32(0, 1, 2, 3)))] : [];
  const columns: Ref[] = step
    ? [...step.loop, m.if(m.i32.lt_s(g.get(g.x0, i32), g.get(width, i32)), m.block(null, [...xStart, oneAtATime]))]
    : [...xStart, oneAtATime];

  const rowLoop = g.label('row');
  // Registered last on purpose: the row code may add per-call values.
  const perRow = g.rowCode();
  const row: Ref[] = [
    g.set(g.y, m.i32.rem_u(g.get(g.r, i32), g.get(height, i32))),
    g.set(g.z, m.i32.div_u(g.get(g.r, i32), g.get(height, i32))),
    ...perRow,
    g.set(g.x0, g.i32(0)),
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
        m.i32.and(m.i32.gt_s(g.get(width, i32), g.i32(0)), m.i32.gt_s(g.get(height, i32), g.i32(0))),
        m.i32.lt_s(g.get(g.r, i32), g.get(P_R1, i32)),
      ),
      m.loop(rowLoop, m.block(null, row)),
    ),
  ]);
  m.addFunction('run', binaryen.createType([i32, i32, i32]), binaryen.none, g.vars, run);
  m.addFunctionExport('run', 'run');
}
