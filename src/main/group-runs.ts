// How each group of an engine runs: its compiled module (or the interpreter), its argument block,
// and where a frame runs it: on the pool, the calling thread taking part in the run when it is
// short (work.ts `joinable`); on the calling thread when it is small and provably short (a pool
// dispatch costs more), or without a pool, in bands when it is large.

import { instantiate } from '../codegen/instantiate.js';
import { argsBytes, writeArgs } from '../codegen/layout.js';
import type { FieldBinding } from '../ir/bindings.js';
import type { Group } from '../ir/fuse.js';
import { interpret } from '../ir/interp.js';
import type { IrFunction } from '../ir/ir.js';
import { bandRowsFor, DEFAULT_BAND_ROWS, type EvalPool } from '../workers/pool.js';
import { throwIfCancelled, type Cancelled } from './cancel.js';
import { groupFailure, type EvaluationError } from './evaluation-error.js';
import { placement, type Field } from './field.js';
import type { FieldMemory } from './memory.js';
import { compileModule, type Tier } from './modules.js';
import type { FieldSlots } from './slots.js';
import { joinable, provablyShort } from './work.js';

export type Backend = 'jit' | 'interp';

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

type Runner = (args: number, r0: number, r1: number) => void;

/** Domains of fewer elements than this, provably short, run on the calling thread (the default `poolThreshold`). */
export const POOL_THRESHOLD = 1 << 17;

export interface GroupRunOptions {
  backend: Backend;
  /** Only with the jit backend. */
  pool?: EvalPool;
  /** Rows per band; undefined: bandRowsFor the run's rows on the pool, DEFAULT_BAND_ROWS on the calling thread. */
  bandRows?: number;
  poolThreshold: number;
  cacheModules: boolean;
  prepared: boolean;
  tier?: Tier;
}

export class GroupRuns {
  private readonly runners: Runner[] = [];
  /** Per group: whether it runs on the calling thread even with a pool (small and provably short). */
  private readonly here: boolean[];
  /** Per group run on the pool: whether the calling thread takes part in its runs (short enough, work.ts). */
  private readonly joins: boolean[];
  private readonly modules: { module: WebAssembly.Module; digest: string; key: string; tier: Tier }[] = [];
  private args: number[] = [];

  constructor(
    private readonly groups: Group[],
    private readonly memory: FieldMemory,
    /** The engine's fields, which the groups' bindings name. */
    private readonly fields: FieldSlots,
    private readonly options: GroupRunOptions,
  ) {
    const pool = options.pool;
    this.here = groups.map((g) => {
      const elements = g.domain.reduce((n, e) => n * e, 1);
      return !pool || (elements < options.poolThreshold && provablyShort(g.ir, elements));
    });
    this.joins = groups.map((g) => joinable(g.ir, g.domain.reduce((n, e) => n * e, 1)));
  }

  /** Each group's argument block (after the fields: the order the memory hands them out in). */
  allocate(): void {
    for (const g of this.groups) {
      this.args.push(this.memory.alloc(argsBytes(g.ir), 'an argument block'));
    }
  }

  /** Each group's module compiled (or taken prepared) and instantiated, or its interpreter. */
  compile(): void {
    for (const g of this.groups) this.runners.push(this.options.backend === 'jit' ? this.compileGroup(g) : this.interpreter(g));
  }

  private compileGroup(g: Group): Runner {
    const { cacheModules, prepared, tier } = this.options;
    const { module, digest, key, tier: made } = compileModule(g.ir, { cache: cacheModules, prepared, tier });
    this.modules.push({ module, digest, key, tier: made });
    return instantiate(module, this.memory.memory);
  }

  private interpreter(g: Group): Runner {
    return (args, r0, r1) => interpret(g.ir, this.memory.memory, args, r0, r1);
  }

  /** Each group's nodes, IR and the tier of the module it runs (jit: none for the interpreter). */
  groupTiers(): { nodes: string[]; ir: IrFunction; digest: string; tier: Tier }[] {
    return this.modules.map((m, gi) => ({ nodes: this.groups[gi].nodes.map((n) => n.name), ir: this.groups[gi].ir, digest: m.digest, tier: m.tier }));
  }

  /** The field a group's field binding reads or writes this frame. */
  private bound(b: FieldBinding): Field {
    const f = this.fields.bound(b);
    if (!f) throw new Error(`internal: no field allocated for ${b.kind} binding of \`${b.node}.${b.port}\``);
    return f;
  }

  /** Group `gi`'s argument block for this frame: its fields' places, its domain and uniform `values`. */
  writeArgs(gi: number, values: number[]): void {
    const g = this.groups[gi];
    const [width, height = 1, depth = 1] = g.domain;
    writeArgs(this.memory.memory, this.args[gi], g.ir, { width, height, depth }, g.fields.map((b) => placement(this.bound(b))), values);
  }

  /** Whether group `gi` runs on the pool (else on the calling thread, synchronously: runHere). */
  onPool(gi: number): boolean {
    return !!this.options.pool && !this.here[gi];
  }

  /** Run group `gi` over its whole domain on the pool, the calling thread taking part when the run is short. */
  runOnPool(gi: number, signal?: AbortSignal): Promise<{ tasks: number; bands: number }> {
    const [, h = 1, d = 1] = this.groups[gi].domain;
    const { module, key: moduleKey } = this.modules[gi];
    return this.options.pool!.run(module, moduleKey, this.args[gi], h * d, this.options.bandRows ?? bandRowsFor(h * d), signal, 0, this.joins[gi] ? this.runners[gi] : undefined);
  }

  /** Run group `gi` over its whole domain on the calling thread; answers how many bands it ran in. */
  runHere(gi: number, signal?: AbortSignal): number {
    const [w, h = 1, d = 1] = this.groups[gi].domain;
    const rows = h * d;
    const bandRows = this.options.bandRows ?? DEFAULT_BAND_ROWS;
    if (this.options.backend === 'jit' && w * rows >= this.options.poolThreshold) {
      // In bands, as the pool runs it: V8 starts a module in its baseline code and moves to
      // the optimised code only at a call, so one call for a whole large frame would run in
      // baseline code throughout (the mandelbrot example's first 2048 x 2048 frame: 1.5x).
      const run = this.runners[gi];
      for (let r0 = 0; r0 < rows; r0 += bandRows) {
        throwIfCancelled(signal);
        run(this.args[gi], r0, Math.min(rows, r0 + bandRows));
      }
      return Math.ceil(rows / bandRows);
    }
    this.runners[gi](this.args[gi], 0, rows);
    return 1;
  }

  /** Where group `gi`'s nodes ran this frame. */
  placements(gi: number, tiles: number, workers: number): Placement[] {
    const fused = this.groups[gi].nodes.map((n) => n.name);
    return fused.map((node) => ({ node, backend: this.options.backend, ...(this.modules[gi] ? { tier: this.modules[gi].tier } : {}), group: gi, fused, tiles, workers }));
  }

  /** Group `gi`'s run failed with `e`: the error that names its node. */
  failure(gi: number, e: unknown): EvaluationError | Cancelled {
    return groupFailure(this.groups[gi], this.modules[gi]?.module, e);
  }

  /** Release the argument blocks. */
  dispose(): void {
    for (const a of this.args) this.memory.release(a);
    this.args = [];
  }
}
