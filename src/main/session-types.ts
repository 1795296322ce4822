// The session's shapes: its options, the events it queues for `sync`, the window that makes its
// frames when the Player shows it, and its history of documents and published kernels (bisect).

import type { Grant } from '../ir/grants.js';
import type { SceneChange } from './commit.js';
import type { CompileWorker } from './compiler.js';
import type { FrameReport } from './engine.js';
import type { WorldEvent } from './world.js';

export interface SessionOptions {
  grants?: Grant[];
  workers?: number;
  /**
   * Rows per tile a frame's groups run in on the pool (default: 32, fewer for a run under 1024
   * rows, down to 8: bandRowsFor in workers/pool.ts): outputs are
   * bit-identical whatever it is (placements say how many tiles ran); bisect's replays take it.
   */
  bandRows?: number;
  fuse?: boolean;
  /** Start without the compile worker (compile on this thread): for tools that only inspect. */
  inline?: boolean;
  /** Bytes of fields the session may hold (budget.ts; default an eighth of the machine's memory). */
  memory?: number;
  /** The folder of compiled modules (modules.ts cacheDir), or null for none: the benchmark times compiles. */
  cacheDir?: string | null;
  /** Milliseconds an optimised compile may take before it is abandoned (optimiser.ts; default 2000). */
  optimiseBudget?: number;
  /** Milliseconds a saved edit picked up in the background may take before it is abandoned (cancel.ts; default BACKGROUND_DEADLINE_MS, 60 s). */
  backgroundDeadline?: number;
  /**
   * Another session's compile worker to use (not closed with this one), for a short-lived session
   * beside it (bisect's replays): no second binaryen to load, and no background optimiser, so its
   * modules compile at the optimised tier and no tier swap happens while it runs.
   */
  compiler?: CompileWorker;
}

export type SessionEvent = WorldEvent;

/** Events waiting for `sync` that also tells each one, as it is pushed, to its observers (the Player). */
export class EventList extends Array<SessionEvent> {
  // splice/slice/map make plain arrays: only the session's own list is observed.
  static override get [Symbol.species]() {
    return Array;
  }
  readonly observers = new Set<(event: SessionEvent) => void>();
  override push(...events: SessionEvent[]): number {
    for (const event of events) for (const observe of this.observers) observe(event);
    return super.push(...events);
  }
}

/** Who makes the frames when a window shows the session (the Player): `evaluate` asks it. */
export interface FrameSource {
  /** The window's next frame, made with the person's pointer and keys. */
  nextFrame(): Promise<{ report: FrameReport; events: SessionEvent[] }>;
}

export interface DocumentVersion {
  version: string;
  origin: 'load' | 'compose' | 'disk' | 'rollback';
  at: string;
  bytes: number;
  text: string;
  /** Where it stands among every document version and published generation the session has seen (bisect's order). */
  seq: number;
  /** The kernels published over the protocol when the session saw it (bisect runs it with them). */
  published: ReadonlyMap<string, string>;
}

/**
 * A change of the kernels published over the protocol (publish, retire, restore, or a compose that
 * takes a published kernel into a document): what each kernel it changed runs now (its
 * generation; null: gone from the registry) and every protocol kernel's source after it, so the
 * world of that point can be run again (bisect).
 */
export interface PublishedGeneration {
  origin: SceneChange['reason'];
  at: string;
  kernels: { kernel: string; generation: number | null }[];
  published: ReadonlyMap<string, string>;
  seq: number;
}
