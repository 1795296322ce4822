// The lane masks of structured control flow (control.ts): the current mask and the enclosing
// constructs whose alive masks a break or a lane out of fuel updates.

import type { Gen, Ref } from './context.js';

export interface Construct {
  uniform: boolean;
  /** Uniform constructs: the label a break branches to. */
  exit?: string;
  /** Varying constructs: the local holding the alive mask. */
  alive?: number;
}

export interface Level {
  /** The local holding the current mask. */
  mask: number;
  /** Enclosing constructs, innermost last. */
  stack: Construct[];
}

/** The mask in a local. */
export function getMask(g: Gen, local: number): Ref {
  return g.get(local);
}

export function anyLane(g: Gen, local: number): Ref {
  return g.m.v128.any_true(getMask(g, local));
}
