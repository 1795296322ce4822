// The blocks that `return` and `continue` make, and how they go away when they can.
//
// `return` in an `each` body or a fn lowers to a break out of a block around the body, and
// `continue` to a break out of a block around a loop's body. A block that lanes may leave is a
// construct to the code generator: the statements in it are no longer at the body's top level.
// So a block's `if (c) { T; break }` followed by the rest R of the block becomes
// `if (c) { T } else { R }` (the same statements run), and a block that no break leaves any more
// is dropped, its statements joining the list around it. The mandelbrot example's
// `if (i >= limit) { ...; return; }` after its loop kept the loop out of the top level, where
// interleave.ts runs 4 vectors' loops at once (2048 x 2048: 2.6x).

import type { Stmt } from '../ir.js';
import { unreachable } from '../walk.js';

/** Does a statement list break out of the construct that holds it (depth 0 from here)? */
export function containsBreak(stmts: Stmt[], depth = 0): boolean {
  return stmts.some((s) => {
    switch (s.k) {
      case 'break': return s.depth === depth;
      case 'if': return containsBreak(s.then, depth) || containsBreak(s.else, depth);
      case 'block': case 'loop': return containsBreak(s.body, depth + 1);
      case 'set': return false;
      default: return unreachable(s);
    }
  });
}

/**
 * The statements of a block that no break leaves, for the list around it: breaks to outer
 * constructs count one construct fewer.
 */
export function dropBlock(stmts: Stmt[], depth = 0): Stmt[] {
  return stmts.map((s): Stmt => {
    switch (s.k) {
      case 'break': return s.depth > depth ? { k: 'break', depth: s.depth - 1 } : s;
      case 'if': return { ...s, then: dropBlock(s.then, depth), else: dropBlock(s.else, depth) };
      case 'block': case 'loop': return { ...s, body: dropBlock(s.body, depth + 1) };
      case 'set': return s;
      default: return unreachable(s);
    }
  });
}

const leaves = (list: Stmt[]): boolean => {
  const last = list[list.length - 1];
  return last?.k === 'break' && last.depth === 0;
};

/**
 * A block's own statement list with each `if` whose branch ends by leaving the block taking the
 * rest of the list into its other branch. Only at the block's own level: in a nested list the
 * rest of the block is more than the rest of that list.
 */
export function elseForBreaks(stmts: Stmt[]): Stmt[] {
  for (let i = 0; i < stmts.length; i++) {
    const s = stmts[i];
    if (s.k !== 'if') continue;
    const thenLeaves = leaves(s.then);
    const elseLeaves = leaves(s.else);
    if (!thenLeaves && !elseLeaves) continue;
    const rest = elseForBreaks(stmts.slice(i + 1));
    const then = thenLeaves ? s.then.slice(0, -1) : [...s.then, ...rest];
    const otherwise = elseLeaves ? s.else.slice(0, -1) : [...s.else, ...rest];
    // (Both branches leaving: the rest never runs.)
    return [...stmts.slice(0, i), { ...s, then, else: otherwise }];
  }
  return stmts;
}

/** The statements for a block around `body`: the block, or its statements when nothing leaves it. */
export function blockOrStatements(body: Stmt[]): Stmt[] {
  const list = elseForBreaks(body);
  return containsBreak(list) ? [{ k: 'block', body: list }] : dropBlock(list);
}
