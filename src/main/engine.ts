// The engine: evaluates a checked scene frame by frame over fields in the shared memory.
//
// It plans the groups (fused or not), compiles each to WebAssembly (or runs the interpreter),
// allocates the fields, and runs the groups in order. State is double-buffered: the groups write
// the next state, which becomes current only when every group of the frame has succeeded.

import { instantiate, moduleMeta } from '../codegen/instantiate.js';
import { writeArgs } from '../codegen/layout.js';
import type { FieldBinding } from '../ir/bindings.js';
import type { SceneNode } from '../ir/check/graph.js';
import { dumpAfter } from '../ir/dump.js';
import { printFunction } from '../ir/print-ir.js';
import type { Scene } from '../ir/check/scene.js';
import { buildGroup, planGroups, type Group } from '../ir/fuse.js';
import { FuelTrap, interpret } from '../ir/interp.js';
import { ARGS, type IrFunction } from '../ir/ir.js';
import { components } from '../ir/types.js';
import { DEFAULT_BAND_ROWS, PoolTrap, type EvalPool } from '../workers/pool.js';
import { Cancelled, throwIfCancelled } from './cancel.js';
import { allocField, copyField, fieldBytes, fillField, placement, type Field } from './field.js';
import { mib } from './budget.js';
import { FieldMemory, MemoryLimitError } from './memory.js';
import { compileModule, irDigest, type Tier } from './modules.js';
import { FieldSlots, ownedFields } from './slots.js';
import { GroupReuse } from './reuse.js';
import { joinable, provablyShort } from './work.js';
import { uniformValues, type FrameInput } from './uniforms.js';
import { UserError } from './user-error.js';

export type Backend = 'jit' | 'interp';

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
  /** Rows per band that pool tasks claim; results are the same whatever it is. */
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

export type { FrameInput };

export interface Placement {
  node: string;
  backend: Backend;
  /** The compiled module's tier (jit): `fast` until the optimised one is swapped in (docs/architecture.md, Tiers). */
  tier?: Tier;
  group: number;
  fused: string[];
  tiles: number;
  workers: number;
  /** Not run this frame (tiles and workers 0): its value is the one computed earlier (reuse.ts); `tier` is the module that runs it when it runs. */
  reused?: true;
}

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

/** A failed evaluation: names the node; the world is as it was before the frame. */
export class EvaluationError extends UserError {
  override name = 'EvaluationError';
  constructor(
    message: string,
    readonly node?: string,
  ) {
    super(message);
  }
}

type Runner = (args: number, r0: number, r1: number) => void;

/** Domains of fewer elements than this, provably short, run on the calling thread (the default `poolThreshold`). */
export const POOL_THRESHOLD = 1 << 17;

/**
 * The groups of a scene, by its pins and fusion: made once. A change prepared the groups' modules
 * and then built its engine from the groups again, fusing and digesting each group's IR twice
 * (new IR objects have no digest yet: modules.ts); a Scene and its groups are never changed.
 */
const groupsMade = new WeakMap<Scene, Map<string, Group[]>>();

/** The groups an engine for this scene runs (what the compile worker compiles ahead). */
export function sceneGroups(scene: Scene, pins: string[], fuse: boolean): Group[] {
  const key = JSON.stringify([fuse, ...pins]);
  let made = groupsMade.get(scene);
  if (!made) groupsMade.set(scene, (made = new Map()));
  let groups = made.get(key);
  if (!groups) made.set(key, (groups = groupsOf(scene, pins, fuse)));
  return groups;
}

function groupsOf(scene: Scene, pins: string[], fuse: boolean): Group[] {
  const keep = new Set([...scene.outputs.map((o) => o.node), ...pins]);
  const nodes = neededNodes(scene, pins);
  dumpAfter('lower', () => [...new Set(nodes.map((n) => n.kernel))].map((k) => printFunction(k.ir)).join('\n\n'));
  const groups = planGroups(nodes, keep, fuse).map(buildGroup);
  dumpAfter('fuse', () => groups.map((g) => printFunction(g.ir)).join('\n\n'));
  return groups;
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
  private runners: Runner[] = [];
  /** Per group: whether it runs on the calling thread even with a pool (small and provably short). */
  private here: boolean[] = [];
  /** Per group run on the pool: whether the calling thread takes part in its runs (short enough, work.ts). */
  private joins: boolean[] = [];
  private modules: { module: WebAssembly.Module; digest: string; key: string; tier: Tier }[] = [];
  private args: number[] = [];
  /** What each group's outputs were computed from, so an unchanged group is not run again. */
  private readonly reuse: GroupReuse;
  private readonly pool?: EvalPool;
  private readonly bandRows: number;
  private readonly poolThreshold: number;
  private readonly largeBytes: number;
  private readonly stateful: boolean;
  private readonly cacheFrames: boolean;
  private readonly cacheModules: boolean;
  private readonly prepared: boolean;
  private readonly tier?: Tier;
  /** What the last frame was computed from, for stateless scenes: an equal frame is not recomputed. */
  private lastInputs?: string;
  private lastReport?: FrameReport;
  /** Bumped by writes into fields (inputs), so a cached frame is not reused after one. */
  version = 0;
  /** Whether a frame has run on this engine: before one, its out ports hold nothing computed. */
  computed = false;
  /**
   * The last frame, while the back buffers still hold the state it started from (a failed frame
   * or a reset ends that): replayInto runs it again on a copy, for `trace`.
   */
  private last?: { input: FrameInput; time: number; frame: number; params: [string, number[]][] };

  constructor(
    readonly scene: Scene,
    options: EngineOptions = {},
  ) {
    this.memory = options.memory ?? new FieldMemory();
    this.backend = options.backend ?? 'jit';
    this.pool = this.backend === 'jit' ? options.pool : undefined;
    this.bandRows = options.bandRows ?? DEFAULT_BAND_ROWS;
    this.poolThreshold = options.poolThreshold ?? POOL_THRESHOLD;
    this.largeBytes = options.largeBytes ?? 256 << 20;
    this.cacheFrames = options.cacheFrames ?? true;
    this.cacheModules = options.cacheModules ?? true;
    this.prepared = options.prepared ?? false;
    this.tier = options.tier;
    for (const [name, p] of scene.params) this.params.set(name, [...p.value]);
    this.groups = sceneGroups(scene, options.pins ?? [], options.fuse ?? true);
    this.stateful = this.groups.some((g) => g.nodes.some((n) => n.kernel.ports.some((p) => p.kind === 'state')));
    this.reuse = new GroupReuse(this.groups, scene.inputs.keys(), this.version, this.cacheFrames);
    this.here = this.groups.map((g) => {
      const elements = g.domain.reduce((n, e) => n * e, 1);
      return !this.pool || (elements < this.poolThreshold && provablyShort(g.ir, elements));
    });
    this.joins = this.groups.map((g) => joinable(g.ir, g.domain.reduce((n, e) => n * e, 1)));
    this.checkBudget();
    try {
      this.allocate();
      const t0 = performance.now();
      for (const g of this.groups) this.runners.push(this.backend === 'jit' ? this.compile(g) : this.interpreter(g));
      this.compileMillis = performance.now() - t0;
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  private compile(g: Group): Runner {
    const { module, digest, key, tier } = compileModule(g.ir, { cache: this.cacheModules, prepared: this.prepared, tier: this.tier });
    this.modules.push({ module, digest, key, tier });
    return instantiate(module, this.memory.memory);
  }

  /** Each group's nodes, IR and the tier of the module it runs (jit: none for the interpreter). */
  groupTiers(): { nodes: string[]; ir: IrFunction; digest: string; tier: Tier }[] {
    return this.modules.map((m, gi) => ({ nodes: this.groups[gi].nodes.map((n) => n.name), ir: this.groups[gi].ir, digest: m.digest, tier: m.tier }));
  }

  private alloc(size: number[], comps: ReturnType<typeof components>, what: string): Field {
    const bytes = fieldBytes(size, comps.length);
    if (bytes > this.largeBytes)
      this.events.push({ kind: 'large', field: what, bytes, message: `${what} is ${size.join(' x ')} (${Math.round(bytes / (1 << 20))} MiB)` });
    return allocField(this.memory, size, comps, what);
  }

  private interpreter(g: Group): Runner {
    return (args, r0, r1) => interpret(g.ir, this.memory.memory, args, r0, r1);
  }

  /**
   * Refuse, before anything is allocated, fields that do not fit what the memory has left (the
   * session's budget less the running world's fields): the error names the largest field, its
   * node and size, and what the whole scene needs.
   */
  private checkBudget(): void {
    const needs = fieldNeeds(this.scene, this.groups);
    const total = needs.reduce((n, x) => n + x.bytes, 0);
    const free = this.memory.limitBytes - this.memory.allocatedBytes;
    if (total <= free) return;
    const largest = needs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const inUse = this.memory.allocatedBytes > 0 ? ` (${mib(this.memory.allocatedBytes)} of it in use by the running world)` : '';
    throw new MemoryLimitError(
      `the scene's fields need ${mib(total)}, more than the memory budget of ${mib(this.memory.limitBytes)}${inUse}: ${largest.what}, ${largest.size.join(' x ')}, alone needs ${mib(largest.bytes)}. Use a smaller size, or give the session more memory (--memory)`,
    );
  }

  private allocate(): void {
    const m = this.memory;
    this.fields.allocate(m, this.scene.inputs.values(), this.groups, (size, comps, what) => this.alloc(size, comps, what));
    for (const g of this.groups) {
      this.args.push(m.alloc(ARGS.size(g.ir.fields.length, g.ir.uniforms.length), 'an argument block'));
    }
  }

  /** The field a group's field binding reads or writes this frame. */
  private bound(b: FieldBinding): Field {
    const f = this.fields.bound(b);
    if (!f) throw new Error(`internal: no field allocated for ${b.kind} binding of \`${b.node}.${b.port}\``);
    return f;
  }

  private writeArgs(gi: number, values: number[]): void {
    const g = this.groups[gi];
    const [width, height = 1, depth = 1] = g.domain;
    writeArgs(this.memory.memory, this.args[gi], g.ir, { width, height, depth }, g.fields.map((b) => placement(this.bound(b))), values);
  }

  /** What a stateless frame is a function of: the clock, pointer, keys, params and fields written. */
  private signature(input: FrameInput): string {
    return JSON.stringify([input.time ?? this.time, input.pointer, [...(input.keys ?? [])], [...this.params], this.version]);
  }

  /**
   * Whether a frame with `input` would be the last frame again, pixel for pixel: nothing has state
   * and nothing the frame reads changed since. Then the fields hold it now (a cached frame is this).
   */
  repeats(input: FrameInput = {}): boolean {
    return !this.stateful && this.lastReport !== undefined && this.signature(input) === this.lastInputs;
  }

  /** The timings of the last frame that ran (not a cached repeat). */
  get lastTimings(): FrameReport['timings'] {
    return this.lastReport?.timings ?? [];
  }

  /**
   * Evaluate one frame. On failure the state and frame counter are as they were. When `signal`
   * aborts, the frame stops (a pool run at once, a group on the calling thread after it) and
   * rejects with the signal's reason, a Cancelled.
   */
  async evaluate(input: FrameInput = {}, signal?: AbortSignal): Promise<FrameReport> {
    const time = input.time ?? this.time;
    const signature = this.signature(input);
    if (this.cacheFrames && this.repeats(input)) return { ...this.lastReport!, cached: true, executed: [], reused: this.lastReport!.placements.map((p) => p.node), timings: [] };
    this.time = time;
    const executed: string[] = [];
    const reused: string[] = [];
    const placements: Placement[] = [];
    const timings: FrameReport['timings'] = [];
    for (let gi = 0; gi < this.groups.length; gi++) {
      const g = this.groups[gi];
      const values = uniformValues(g, { time: this.time, frame: this.frame, params: this.params, input });
      const key = this.reuse.key(gi, values, this.version);
      if (this.reuse.reusable(gi, key)) {
        reused.push(...g.nodes.map((n) => n.name));
        placements.push(...this.placements(gi, 0, 0).map((p) => ({ ...p, reused: true as const })));
        continue;
      }
      this.writeArgs(gi, values);
      this.reuse.running(gi);
      const [w, h = 1, d = 1] = g.domain;
      const rows = h * d;
      const t0 = performance.now();
      let tiles = 1;
      let workers = 1;
      try {
        throwIfCancelled(signal);
        if (this.pool && !this.here[gi]) {
          const { module, key: moduleKey } = this.modules[gi];
          const ran = await this.pool.run(module, moduleKey, this.args[gi], rows, this.bandRows, signal, 0, this.joins[gi] ? this.runners[gi] : undefined);
          tiles = ran.bands;
          workers = ran.tasks;
        } else if (this.backend === 'jit' && w * rows >= this.poolThreshold) {
          // In bands, as the pool runs it: V8 starts a module in its baseline code and moves to
          // the optimised code only at a call, so one call for a whole large frame would run in
          // baseline code throughout (the mandelbrot example's first 2048 x 2048 frame: 1.5x).
          const run = this.runners[gi];
          for (let r0 = 0; r0 < rows; r0 += this.bandRows) {
            throwIfCancelled(signal);
            run(this.args[gi], r0, Math.min(rows, r0 + this.bandRows));
          }
          tiles = Math.ceil(rows / this.bandRows);
        } else {
          this.runners[gi](this.args[gi], 0, rows);
        }
      } catch (e) {
        // The back buffers and out ports hold part of this frame now: nothing of it is served.
        this.last = undefined;
        this.lastReport = undefined;
        this.computed = false;
        throw this.failure(g, gi, e);
      }
      const millis = performance.now() - t0;
      const fused = g.nodes.map((n) => n.name);
      this.reuse.ran(gi, key);
      executed.push(...fused);
      placements.push(...this.placements(gi, tiles, workers));
      timings.push({ node: fused[fused.length - 1], ...(fused.length > 1 ? { fused } : {}), millis: Math.round(millis * 1000) / 1000 });
    }
    // Every group succeeded: the next state becomes current.
    this.fields.swapStates();
    this.last = { input: { pointer: input.pointer, keys: [...(input.keys ?? [])] }, time: this.time, frame: this.frame, params: [...this.params].map(([k, v]) => [k, [...v]]) };
    this.frame++;
    this.computed = true;
    const report: FrameReport = { frame: this.frame, time: this.time, cached: false, executed, reused, placements, timings };
    this.lastInputs = signature;
    this.lastReport = report;
    return report;
  }

  /** Where group `gi`'s nodes ran this frame. */
  private placements(gi: number, tiles: number, workers: number): Placement[] {
    const fused = this.groups[gi].nodes.map((n) => n.name);
    return fused.map((node) => ({ node, backend: this.backend, ...(this.modules[gi] ? { tier: this.modules[gi].tier } : {}), group: gi, fused, tiles, workers }));
  }

  private failure(g: Group, gi: number, e: unknown): EvaluationError | Cancelled {
    return groupFailure(g, this.modules[gi]?.module, e);
  }

  /** The field behind an output of the scene. */
  outputField(name: string): Field | undefined {
    const out = this.scene.outputs.find((o) => o.name === name);
    return out && this.fields.port(out.node, out.port);
  }

  /** Reset state to the declared values and the clock to zero. */
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

  reset(): void {
    for (const node of this.scene.nodes) this.resetNode(node);
    this.frame = 0;
    this.time = 0;
    this.lastReport = undefined;
    this.last = undefined;
  }

  /**
   * Take the values of `old`'s inputs whose declaration is unchanged (type, size, value): what was
   * written into them (`write`, an image dropped on the Player) stays across a publication. An
   * input added or redeclared starts from its declaration (changedInputs).
   */
  keepInputs(old: Engine): void {
    const changed = new Set(changedInputs(old.scene, this.scene));
    for (const name of this.scene.inputs.keys()) {
      const from = old.fields.input(name);
      const to = this.fields.input(name);
      if (changed.has(name) || !from || !to || from.planeBytes !== to.planeBytes || from.comps.length !== to.comps.length) continue;
      copyField(old.memory, from, to, this.memory);
      this.reuse.keepInput(name, old.reuse, old.version, this.version);
    }
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
    this.last = old.last;
    this.version = old.version;
  }

  /**
   * Set `copy` (an engine of the same scene) up to run this engine's last frame again: the state
   * that frame started from, its clock, frame number and params; returns that frame's input. With
   * no frame to replay (none ran, or the last one failed), or with `next`, `copy` starts from the
   * current state and clock to run the next frame, and the answer is undefined.
   */
  replayInto(copy: Engine, next = false): FrameInput | undefined {
    const last = next ? undefined : this.last;
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
    for (const a of this.args) this.memory.release(a);
    this.fields.clear();
    this.args = [];
  }
}

/** A group's run failed: the EvaluationError naming the node (a fuel trap names the node that ran out). */
export function groupFailure(g: Group, module: WebAssembly.Module | undefined, e: unknown): EvaluationError | Cancelled {
  if (e instanceof Cancelled) return e;
  if (e instanceof PoolTrap && module) {
    const meta = moduleMeta(module);
    e = new FuelTrap(meta.nodes[e.trap], meta.fuel);
  }
  if (e instanceof FuelTrap) return new EvaluationError(e.message, e.node);
  const node = g.nodes[g.nodes.length - 1].name;
  const message = e instanceof Error ? e.message : String(e);
  return new EvaluationError(`node \`${node}\` failed: ${message}`, node);
}

/**
 * Run one function over a domain once (a migration), its module prepared and its fields bound:
 * on the pool when there is one, like any frame that is not provably short, so the coordinator
 * goes on answering meanwhile and `signal` stops it (the pool ends the workers running it);
 * without a pool (render, tools), on the calling thread.
 */
export async function runOnce(memory: FieldMemory, ir: IrFunction, domain: number[], fields: Field[], options: { pool?: EvalPool; signal?: AbortSignal } = {}): Promise<void> {
  const [width, height = 1, depth = 1] = domain;
  const args = memory.alloc(ARGS.size(ir.fields.length, ir.uniforms.length), 'an argument block');
  try {
    throwIfCancelled(options.signal);
    const { module, key } = compileModule(ir, { prepared: true });
    writeArgs(memory.memory, args, ir, { width, height, depth }, fields.map(placement), []);
    if (!options.pool) return instantiate(module, memory.memory)(args, 0, height * depth);
    try {
      await options.pool.run(module, key, args, height * depth, DEFAULT_BAND_ROWS, options.signal);
    } catch (e) {
      if (!(e instanceof PoolTrap)) throw e;
      const meta = moduleMeta(module);
      throw new FuelTrap(meta.nodes[e.trap] ?? 'the migration', meta.fuel);
    }
  } finally {
    memory.release(args);
  }
}

/** The fields an engine of `scene` running `groups` allocates: what each is, its size and bytes (state twice: double-buffered). */
export function fieldNeeds(scene: Scene, groups: Group[]): { what: string; size: number[]; bytes: number }[] {
  const needs: { what: string; size: number[]; bytes: number }[] = [];
  for (const input of scene.inputs.values()) needs.push({ what: `input \`${input.name}\``, size: input.size, bytes: fieldBytes(input.size, components(input.type).length) });
  const seen = new Set<string>();
  for (const g of groups) {
    for (const b of g.fields) {
      if (b.kind === 'read' || seen.has(`${b.node}.${b.port}`)) continue;
      seen.add(`${b.node}.${b.port}`);
      const node = g.nodes.find((n) => n.name === b.node)!;
      const port = node.kernel.ports.find((p) => p.name === b.port)!;
      const bytes = fieldBytes(node.domain, components(port.type).length);
      needs.push({ what: `\`${b.node}.${b.port}\` of node \`${b.node}\``, size: node.domain, bytes: b.kind === 'state' || (b.kind === 'write' && b.state) ? 2 * bytes : bytes });
    }
  }
  return needs;
}

/** The nodes the outputs and pins need, in order. */
function neededNodes(scene: Scene, pins: string[]): SceneNode[] {
  const byName = new Map(scene.nodes.map((n) => [n.name, n]));
  const need = new Set<string>();
  const visit = (name: string) => {
    if (need.has(name)) return;
    const n = byName.get(name);
    if (!n) return;
    need.add(name);
    for (const src of n.edges.values()) if ('node' in src) visit(src.node);
  };
  for (const o of scene.outputs) visit(o.node);
  for (const p of pins) visit(p);
  return scene.nodes.filter((n) => need.has(n.name));
}

/** Inputs `next` adds or declares differently from `running` (type, size or value). */
export function changedInputs(running: Scene, next: Scene): string[] {
  const same = (a: number[], b: number[]) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
  return [...next.inputs.values()]
    .filter((i) => {
      const was = running.inputs.get(i.name);
      return !was || was.type.name !== i.type.name || !same(was.size, i.size) || !same(was.value, i.value);
    })
    .map((i) => i.name);
}
