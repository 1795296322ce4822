// A frame run again on a copy of the running world, unfused with every node's ports kept, for the
// requests that look inside a frame: `trace` (the last frame, what each node read and computed at
// an element) and `evaluate` with `profile` (the next frame, each node timed on its own). The
// copy has fields of its own, freed after; the running world, its state, clock and frame counter
// are not touched.

import { Engine, type FrameReport } from './engine.js';
import type { Session } from './session.js';
import type { FrameInput } from './uniforms.js';

/** Which frame the copy runs: the last one again (or, before any, the next), or the next one with this input. */
export type CopyFrame = { last: true } | { next: FrameInput };

/** What `read` gets: the copy after its frame, the frame's report, and the input it ran with (time included). */
export interface CopyRun {
  copy: Engine;
  report: FrameReport;
  input: FrameInput;
}

export function onUnfusedCopy<T>(s: Session, which: CopyFrame, read: (run: CopyRun) => T, signal?: AbortSignal): Promise<T> {
  return s.frame(async (running) => {
    const scene = s.scene;
    const pins = scene.nodes.map((n) => n.name);
    await s.prepareScene(scene, pins, false);
    // On the pool like any frame: the copy's kernels are no shorter than the world's.
    const copy = new Engine(scene, { memory: s.memory, fuse: false, pins, cacheFrames: false, prepared: true, pool: s.pool, bandRows: s.bandRows });
    try {
      const replayed = s.engine.replayInto(copy, 'next' in which);
      const input = 'next' in which ? { ...which.next, time: which.next.time ?? copy.time } : (replayed ?? { time: copy.time });
      const report = await copy.evaluate(input, running);
      return read({ copy, report, input });
    } finally {
      copy.dispose();
    }
  }, signal);
}
