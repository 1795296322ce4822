// The frame loop: one evaluation of an engine. Its groups run in order, each unless its outputs
// can be reused (reuse.ts), stopping at the next group when the signal aborts (a pool run at
// once); once every group has succeeded the next state becomes current and the clock moves on.
// A frame that fails or is cancelled commits nothing: state, clock and frame counter stay.
// A stateless frame whose inputs did not change is served from the last one instead.

import type { Group } from '../ir/fuse.js';
import { throwIfCancelled } from './cancel.js';
import type { GroupRuns, Placement } from './group-runs.js';
import type { GroupReuse } from './reuse.js';
import type { FieldSlots } from './slots.js';
import { uniformValues, type FrameInput } from './uniforms.js';

export interface FrameReport {
  frame: number;
  time: number;
  /** True when nothing the frame depends on changed, so nothing ran. */
  cached: boolean;
  /** The nodes that ran this frame. */
  executed: string[];
  /** The nodes whose values were kept from an earlier frame (or the engine before an edit), nothing they read having changed (reuse.ts). */
  reused: string[];
  placements: Placement[];
  /** One entry per group: `node` is the node whose loop it is (the last), `fused` the nodes computed in it. */
  timings: { node: string; fused?: string[]; millis: number }[];
}

/** What a frame reads of its engine and moves on (engine.ts). */
export interface FrameClock {
  time: number;
  frame: number;
  /** Bumped by writes into fields (inputs), so a cached frame is not reused after one. */
  readonly version: number;
  computed: boolean;
  readonly params: Map<string, number[]>;
}

/** The last frame as it started, for replaying it (Engine.replayInto, `trace`). */
export interface LastFrame {
  input: FrameInput;
  time: number;
  frame: number;
  params: [string, number[]][];
}

export class FrameLoop {
  /** A frame of it is never the last one again: it keeps state, or reads the frame counter. */
  private readonly everyFrameNew: boolean;
  /** What the last frame was computed from, for stateless scenes: an equal frame is not recomputed. */
  private lastInputs?: string;
  private lastReport?: FrameReport;
  /**
   * The last frame, while the back buffers still hold the state it started from (a failed frame
   * or a reset ends that): replayInto runs it again on a copy, for `trace`.
   */
  last?: LastFrame;
  /** The params the out ports' values were computed with (the last frame that ran whole). */
  computedWith?: ReadonlyMap<string, number[]>;

  constructor(
    private readonly clock: FrameClock,
    private readonly groups: Group[],
    private readonly fields: FieldSlots,
    private readonly reuse: GroupReuse,
    private readonly runs: GroupRuns,
    private readonly cacheFrames: boolean,
  ) {
    // A kernel that reads `frame` computes something new at each frame number, as one with state
    // does (an evaluate with the same time answered idle, and its `frame` never moved).
    this.everyFrameNew = groups.some((g) => g.nodes.some((n) => n.kernel.ports.some((p) => p.kind === 'state')) || g.uniforms.some((u) => u.kind === 'frame'));
  }

  /** What a stateless frame is a function of: the clock, pointer, keys, params and fields written. */
  private signature(input: FrameInput): string {
    return JSON.stringify([input.time ?? this.clock.time, input.pointer, [...(input.keys ?? [])], [...this.clock.params], this.clock.version]);
  }

  /** See Engine.repeats. */
  repeats(input: FrameInput = {}): boolean {
    return !this.everyFrameNew && this.lastReport !== undefined && this.signature(input) === this.lastInputs;
  }

  /** The timings of the last frame that ran (not a cached repeat). */
  get lastTimings(): FrameReport['timings'] {
    return this.lastReport?.timings ?? [];
  }

  /** Nothing of the last frame is served again nor replayed (a reset, or a frame that failed). */
  forget(): void {
    this.lastReport = undefined;
    this.last = undefined;
  }

  /** See Engine.evaluate. */
  async evaluate(input: FrameInput = {}, signal?: AbortSignal): Promise<FrameReport> {
    const clock = this.clock;
    const time = input.time ?? clock.time;
    const signature = this.signature(input);
    if (this.cacheFrames && this.repeats(input)) return { ...this.lastReport!, cached: true, executed: [], reused: this.lastReport!.placements.map((p) => p.node), timings: [] };
    clock.time = time;
    const executed: string[] = [];
    const reused: string[] = [];
    const placements: Placement[] = [];
    const timings: FrameReport['timings'] = [];
    for (let gi = 0; gi < this.groups.length; gi++) {
      const g = this.groups[gi];
      const values = uniformValues(g, { time: clock.time, frame: clock.frame, params: clock.params, input });
      const key = this.reuse.key(gi, values, clock.version);
      if (this.reuse.reusable(gi, key)) {
        reused.push(...g.nodes.map((n) => n.name));
        placements.push(...this.runs.placements(gi, 0, 0).map((p) => ({ ...p, reused: true as const })));
        continue;
      }
      this.runs.writeArgs(gi, values);
      this.reuse.running(gi);
      const t0 = performance.now();
      let tiles = 1;
      let workers = 1;
      try {
        throwIfCancelled(signal);
        // A group on the calling thread runs without an await: a frame of such groups runs in one go.
        if (this.runs.onPool(gi)) {
          const ran = await this.runs.runOnPool(gi, signal);
          tiles = ran.bands;
          workers = ran.tasks;
        } else {
          tiles = this.runs.runHere(gi, signal);
        }
      } catch (e) {
        // The back buffers and out ports hold part of this frame now: nothing of it is served.
        this.forget();
        clock.computed = false;
        throw this.runs.failure(gi, e);
      }
      const millis = performance.now() - t0;
      const fused = g.nodes.map((n) => n.name);
      this.reuse.ran(gi, key);
      executed.push(...fused);
      placements.push(...this.runs.placements(gi, tiles, workers));
      timings.push({ node: fused[fused.length - 1], ...(fused.length > 1 ? { fused } : {}), millis: Math.round(millis * 1000) / 1000 });
    }
    // Every group succeeded: the next state becomes current.
    this.fields.swapStates();
    this.last = { input: { pointer: input.pointer, keys: [...(input.keys ?? [])] }, time: clock.time, frame: clock.frame, params: [...clock.params].map(([k, v]) => [k, [...v]]) };
    this.computedWith = new Map(this.last.params);
    clock.frame++;
    clock.computed = true;
    const report: FrameReport = { frame: clock.frame, time: clock.time, cached: false, executed, reused, placements, timings };
    this.lastInputs = signature;
    this.lastReport = report;
    return report;
  }
}
