// `evaluate` with `profile`: the next frame run once more on a copy of the world, unfused, so that
// every node is timed on its own (fused, a group of nodes gives one time). The running world, its
// state, clock and frame counter are not touched (unfused-copy.ts): profiling twice times the
// same frame. The times are of one run on a loaded machine: compare nodes, not runs.

import type { FrameReport } from './engine.js';
import type { Session } from './session.js';
import type { FrameInput } from './uniforms.js';
import { onUnfusedCopy } from './unfused-copy.js';

export interface NodeTiming {
  node: string;
  millis: number;
}

/** The copy's frame report (its timings one per node: unfused, each group is one node) and the slowest node. */
export function profileFrame(s: Session, input: FrameInput, signal?: AbortSignal): Promise<{ report: FrameReport; slowest: NodeTiming }> {
  return onUnfusedCopy(s, { next: input }, ({ report }) => {
    const slowest = report.timings.reduce((a, b) => (b.millis > a.millis ? b : a));
    return { report, slowest: { node: slowest.node, millis: slowest.millis } };
  }, signal);
}
