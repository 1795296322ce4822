// The engine: evaluates a checked scene frame by frame over fields in the shared memory.
//
// It plans the groups (fused or not: scene-groups.ts), compiles each to WebAssembly or runs the
// interpreter (group-runs.ts), allocates the fields, and runs the groups in order (frame.ts).
// State is double-buffered: the groups write the next state, which becomes current only when
// every group of the frame has succeeded. An engine built for an edit takes over what the one it
// replaces computed (keepInputs, keepOutputs, keepFrame).

import type { SceneNode } from '../ir/check/graph.js';
import type { Scene } from '../ir/check/scene.js';
import type { Group } from '../ir/fuse.js';
import type { IrFunction } from '../ir/ir.js';
import type { components } from '../ir/types.js';
import type { EvalPool } from '../workers/pool.js';
import { checkFieldBudget } from './field-needs.js';
import { allocField, copyField, fieldBytes, fillField, type Field } from './field.js';
import { FrameLoop, type FrameReport } from './frame.js';
import { GroupRuns, POOL_THRESHOLD, type Backend, type Placement } from './group-runs.js';
import { FieldMemory } from './memory.js';
import { irDigest, type Tier } from './modules.js';
import { sceneGroups } from './scene-groups.js';
import { FieldSlots, ownedFields } from './slots.js';
import { GroupReuse } from './reuse.js';
import type { FrameInput } from './uniforms.js';

export type { Backend, FrameInput, FrameReport, Placement };

export interface EngineOptions {
  backend?: Backend;
  fuse?: boolean;
  memory?: FieldMemory;
  /** Nodes whose ports stay readable (never fused away). */
  pins?: string[];
  /**
   * Worker threads for the groups (jit only): every group runs there unless its domain is below
   * `poolThreshold` and its work is provably short (work.ts). Without a pool, groups run on the
   * calling thread (render), where they cannot be cancelled mid-group.
   */
  pool?: EvalPool;
  /** Rows per band that pool tasks claim (default: bandRowsFor the run's rows, pool.ts); results are the same whatever it is. */
  bandRows?: number;
  /** Domains of fewer elements whose work is provably short run on the calling thread: a pool dispatch costs more than they do. */
  poolThreshold?: number;
  /** Fields larger than this many bytes raise a `large` event. */
  largeBytes?: number;
  /**
   * Serve a frame whose inputs did not change from the last one, and reuse the outputs of each
   * group whose inputs did not change (reuse.ts), instead of recomputing them (default true).
   */
  cacheFrames?: boolean;
  /** Reuse compiled modules of equal IR (default true; the benchmark turns it off to time compiles). */
  cacheModules?: boolean;
  /** Every module was prepared beforehand (modules.ts prepareModules): compile none here. */
  prepared?: boolean;
  /** Run modules of this tier (compiled here if missing); default: the best prepared, else optimised. */
  tier?: Tier;
}

/** Something that happened that a client may want to know (the protocol's events). */
export interface EngineEvent {
  kind: 'large';
  field: string;
  bytes: number;
  message: string;
}

export class Engine {
  readonly memory: FieldMemory;
  readonly backend: Backend;
  readonly groups: Group[];
  /** The inputs, out ports and state ports' buffers. */
  readonly fields = new FieldSlots();
  readonly params = new Map<string, number[]>();
  frame = 0;
  time = 0;
  compileMillis = 0;
  readonly events: EngineEvent[] = [];
  /** What each group's outputs were computed from, so an unchanged group is not run again. */
  private readonly reuse: GroupReuse;
  private readonly runs: GroupRuns;
  private readonly frames: FrameLoop;
  private readonly largeBytes: number;
  /** Bumped by writes into fields (inputs), so a cached frame is not reused after one. */
  version = 0;
  /** Whether a frame has run on this engine: before one, its out ports hold nothing computed. */
  computed = false;

  constructor(
    readonly scene: Scene,
    options: EngineOptions = {},
  ) {
    this.memory = options.memory ?? new FieldMemory();
    this.backend = options.backend ?? 'jit';
    this.largeBytes = options.largeBytes ?? 256 << 20;
    const cacheFrames = options.cacheFrames ?? true;
    for (const [name, p] of scene.params) this.params.set(name, [...p.value]);
    this.groups = sceneGroups(scene, options.pins ?? [], options.fuse ?? true);
    this.reuse = new GroupReuse(this.groups, scene.inputs.keys(), this.version, cacheFrames);
    this.runs = new GroupRuns(this.groups, this.memory, this.fields, {
      backend: this.backend,
      pool: this.backend === 'jit' ? options.pool : undefined,
      bandRows: options.bandRows,
      poolThreshold: options.poolThreshold ?? POOL_THRESHOLD,
      cacheModules: options.cacheModules ?? true,
      prepared: options.prepared ?? false,
      tier: options.tier,
    });
    this.frames = new FrameLoop(this, this.groups, this.fields, this.reuse, this.runs, cacheFrames);
    checkFieldBudget(this.memory, this.scene, this.groups);
    try {
      this.fields.allocate(this.memory, this.scene.inputs.values(), this.groups, (size, comps, what) => this.alloc(size, comps, what));
      this.runs.allocate();
      const t0 = performance.now();
      this.runs.compile();
      this.compileMillis = performance.now() - t0;
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  /** Each group's nodes, IR and the tier of the module it runs (jit: none for the interpreter). */
  groupTiers(): { nodes: string[]; ir: IrFunction; digest: string; tier: Tier }[] {
    return this.runs.groupTiers();
  }

  private alloc(size: number[], comps: ReturnType<typeof components>, what: string): Field {
    const bytes = fieldBytes(size, comps.length);
    if (bytes > this.largeBytes)
      this.events.push({ kind: 'large', field: what, bytes, message: `${what} is ${size.join(' x ')} (${Math.round(bytes / (1 << 20))} MiB)` });
    return allocField(this.memory, size, comps, what);
  }

  /**
   * Whether a frame with `input` would be the last frame again, pixel for pixel: nothing has state
   * and nothing the frame reads changed since. Then the fields hold it now (a cached frame is this).
   */
  repeats(input: FrameInput = {}): boolean {
    return this.frames.repeats(input);
  }

  /** The timings of the last frame that ran (not a cached repeat). */
  get lastTimings(): FrameReport['timings'] {
    return this.frames.lastTimings;
  }

  /**
   * Evaluate one frame (frame.ts). On failure the state and frame counter are as they were. When
   * `signal` aborts, the frame stops (a pool run at once, a group on the calling thread after it)
   * and rejects with the signal's reason, a Cancelled.
   */
  evaluate(input: FrameInput = {}, signal?: AbortSignal): Promise<FrameReport> {
    return this.frames.evaluate(input, signal);
  }

  /** The field behind an output of the scene. */
  /** The params set to another value since the out ports were computed (a read shows values of an older setting). */
  paramsChangedSinceComputed(): string[] {
    const was = this.frames.computedWith;
    if (!was || !this.computed) return [];
    return [...this.params].filter(([name, v]) => !sameValues(was.get(name), v)).map(([name]) => name);
  }

  outputField(name: string): Field | undefined {
    const out = this.scene.outputs.find((o) => o.name === name);
    return out && this.fields.port(out.node, out.port);
  }

  /** One node's state back to its declared values (a `reset` of that node). */
  resetNode(node: SceneNode): void {
    for (const port of node.kernel.ports) {
      if (port.kind !== 'state') continue;
      const f = this.fields.state(node.name, port.name)?.current;
      if (f) fillField(this.memory, f, port.value ?? f.comps.map(() => 0));
    }
    this.version++;
    this.reuse.statesChanged(this.version - 1, this.version);
  }

  /** Reset state to the declared values and the clock to zero. */
  reset(): void {
    for (const node of this.scene.nodes) this.resetNode(node);
    this.frame = 0;
    this.time = 0;
    this.frames.forget();
    // The outputs hold the last frame's picture, of a clock now gone: read after the reset, it was
    // told as frame 0's. Nothing is computed until the next frame.
    this.computed = false;
  }

  /**
   * Take the values of `old`'s inputs whose declaration is unchanged (type, size, value): what was
   * written into them (`write`, an image dropped on the Player) stays across a publication. An
   * input added or redeclared starts from its declaration (changedInputs).
   */
  /** Take over `old`'s inputs whose declaration is unchanged; returns those it had that start from their declared value again. */
  keepInputs(old: Engine): string[] {
    const changed = new Set(changedInputs(old.scene, this.scene));
    const reset: string[] = [];
    for (const name of this.scene.inputs.keys()) {
      const from = old.fields.input(name);
      const to = this.fields.input(name);
      if (changed.has(name) || !from || !to || from.planeBytes !== to.planeBytes || from.comps.length !== to.comps.length) {
        if (from) reset.push(name);
        continue;
      }
      copyField(old.memory, from, to, this.memory);
      this.reuse.keepInput(name, old.reuse, old.version, this.version);
    }
    return reset;
  }

  /**
   * Take over `old`'s outputs of each group this engine runs as it ran there (the same last node,
   * IR and domain), with what they were computed from, so a frame recomputes only the groups an
   * edit changed or that read what changed (reuse.ts). Only reusable outputs are copied, or with
   * `all` (a tier swap: the last frame stays readable) every group's that computed something.
   */
  keepOutputs(old: Engine, all = false): void {
    if (!all && !this.reuse.enabled) return;
    const before = new Map(old.groups.map((g, gj) => [g.nodes[g.nodes.length - 1].name, gj]));
    this.groups.forEach((g, gi) => {
      const gj = before.get(g.nodes[g.nodes.length - 1].name);
      if (gj === undefined || this.reuse.holds(gi, false) || !old.reuse.holds(gj, !all)) return;
      const was = old.groups[gj];
      if (irDigest(was.ir) !== irDigest(g.ir) || was.domain.join() !== g.domain.join()) return;
      // The same IR writes the same out ports, in the same order (state is carried apart: carry.ts).
      const outs = (e: Engine, group: Group) => ownedFields(group).filter((o) => !o.state).map((o) => e.fields.out(o.node, o.port)!);
      const from = outs(old, was);
      const to = outs(this, g);
      if (from.length !== to.length || from.some((f, i) => f.planeBytes !== to[i].planeBytes || f.comps.join() !== to[i].comps.join())) return;
      from.forEach((f, i) => copyField(old.memory, f, to[i], this.memory));
      this.reuse.takeOver(gi, old.reuse, gj);
    });
  }

  /**
   * Take over `old`'s last frame when only the code changed (a tier swap: the same scene, so the
   * same fields): its outputs, both state buffers and what trace knows of it, so a read or trace
   * right after the swap answers what the old engine computed. The frame cache is not taken: the
   * next frame runs the new code.
   */
  keepFrame(old: Engine): void {
    const same = (a: Field, b: Field | undefined): b is Field => !!b && a.planeBytes === b.planeBytes && a.comps.join() === b.comps.join();
    this.keepOutputs(old, true);
    for (const { node, port, buffers } of old.fields.stateBuffers()) {
      const mine = this.fields.state(node, port);
      if (same(buffers.current, mine?.current)) copyField(old.memory, buffers.current, mine.current, this.memory);
      if (same(buffers.next, mine?.next)) copyField(old.memory, buffers.next, mine.next, this.memory);
    }
    this.computed = old.computed;
    this.frames.last = old.frames.last;
    this.frames.computedWith = old.frames.computedWith;
    this.version = old.version;
  }

  /**
   * Set `copy` (an engine of the same scene) up to run this engine's last frame again: the state
   * that frame started from, its clock, frame number and params; returns that frame's input. With
   * no frame to replay (none ran, or the last one failed), or with `next`, `copy` starts from the
   * current state and clock to run the next frame, and the answer is undefined.
   */
  replayInto(copy: Engine, next = false): FrameInput | undefined {
    const last = next ? undefined : this.frames.last;
    const carry = (from: Field, mine: Field | undefined) => {
      if (mine && mine.planeBytes === from.planeBytes && mine.comps.length === from.comps.length) copyField(this.memory, from, mine);
    };
    for (const input of this.scene.inputs.keys()) carry(this.fields.input(input)!, copy.fields.input(input));
    for (const { node, port, field } of this.fields.outPorts()) carry(field, copy.fields.out(node, port));
    // After a frame the back buffer holds the state it started from.
    for (const { node, port, buffers } of this.fields.stateBuffers()) carry(last ? buffers.next : buffers.current, copy.fields.state(node, port)?.current);
    for (const [k, v] of last?.params ?? this.params) copy.params.set(k, [...v]);
    copy.frame = last?.frame ?? this.frame;
    copy.time = last?.time ?? this.time;
    return last && { ...last.input, time: last.time };
  }

  dispose(): void {
    for (const f of new Set(this.fields.all())) this.memory.release(f.ptr);
    this.runs.dispose();
    this.fields.clear();
  }
}

/** Inputs `next` adds or declares differently from `running` (type, size or value). */
export function changedInputs(running: Scene, next: Scene): string[] {
  return [...next.inputs.values()]
    .filter((i) => {
      const was = running.inputs.get(i.name);
      return !was || was.type.name !== i.type.name || !sameValues(was.size, i.size) || !sameValues(was.value, i.value);
    })
    .map((i) => i.name);
}

function sameValues(a: readonly number[] | undefined, b: readonly number[]): boolean {
  return !!a && a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}
