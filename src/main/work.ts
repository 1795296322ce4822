// How much work a frame of a group can be at most, bound from its IR before it runs: the
// coordinator runs a group itself only when this bound is small (a frame there stops every
// connection while it runs, and cannot be cancelled).

import type { Expr, IrFunction, Stmt } from '../ir/ir.js';

/**
 * Work (operations, about one vector instruction per 4 elements each) that the coordinator may
 * spend on one group in one frame: a few milliseconds of straight-line code. The rings example at
 * 256 x 256 is about 2^22.
 */
export const SHORT_WORK = 1 << 25;

/** Operations that are calls of the project's own polynomial approximations, not one instruction. */
const COSTLY = /^f32\.(sin|cos|tan|asin|acos|atan|atan2|exp|log|exp2|log2|pow|sin_turns|cos_turns)$/;
const CALL_COST = 24;

/**
 * An upper bound of the operations one frame of `fn` over `elements` elements does. A loop may
 * repeat until the element's fuel runs out (`fn.fuel` repetitions over all its loops), so its body
 * counts that many times.
 */
export function workBound(fn: IrFunction, elements: number): number {
  let straight = 0;
  let loops = 0;
  const visit = (list: Stmt[], inLoop: boolean): void => {
    for (const s of list) {
      let cost = 1;
      if (s.k === 'set') cost += exprCost(s.e);
      else if (s.k === 'if') {
        cost += exprCost(s.c);
        visit(s.then, inLoop);
        visit(s.else, inLoop);
      } else if (s.k === 'block') visit(s.body, inLoop);
      else if (s.k === 'loop') visit(s.body, true);
      if (inLoop) loops += cost;
      else straight += cost;
    }
  };
  visit(fn.body, false);
  const perElement = straight + fn.stores.length + (loops > 0 ? loops * fn.fuel : 0);
  return elements * perElement;
}

function exprCost(e: Expr): number {
  switch (e.k) {
    case 'op':
      return (COSTLY.test(e.op) ? CALL_COST : 1) + e.args.reduce((n, a) => n + exprCost(a), 0);
    case 'select':
      return 1 + exprCost(e.c) + exprCost(e.a) + exprCost(e.b);
    case 'load':
      return 1 + (e.at ? e.at.coords.reduce((n, c) => n + 2 + exprCost(c), 0) : 0);
    default:
      return 1;
  }
}

/** Whether a frame of `fn` over `elements` elements is provably short enough for the coordinator. */
export function provablyShort(fn: IrFunction, elements: number): boolean {
  return workBound(fn, elements) <= SHORT_WORK;
}

/**
 * Work of a pool run the coordinator may take part in (pool.ts, `here`): it is held for its share
 * of the run, the whole run with one worker, so a few milliseconds at most (P1 at 1024 x 1024,
 * 2^26.6, takes ~2.3 ms on one thread; a life step 2^27, ~0.5 ms).
 */
export const JOIN_WORK = 8 * SHORT_WORK;

/** Whether the coordinator may compute bands of a pool run of `fn` over `elements` elements. */
export function joinable(fn: IrFunction, elements: number): boolean {
  return workBound(fn, elements) <= JOIN_WORK;
}
