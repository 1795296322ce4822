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

/** Events a connection had not taken past which the oldest are dropped (it is told how many). */
export const MAX_UNTAKEN_EVENTS = 1000;

/**
 * The session's events for `sync`, which also tells each one, as it is pushed, to its observers
 * (the Player, MCP's log). Each connection is told every event once, at its `sync`: each has its
 * own place in the list (one connection's sync took another's published, and a compose refused on
 * one was told to every other as theirs). A connection's place starts at its first request; the
 * first connection's at the start, so that what the session told before any (`recovered`) is
 * told. The list keeps the events some connection has not taken, at most MAX_UNTAKEN_EVENTS.
 */
export class EventList extends Array<SessionEvent> {
  // splice/slice/map make plain arrays: only the session's own list is observed.
  static override get [Symbol.species]() {
    return Array;
  }
  readonly observers = new Set<(event: SessionEvent) => void>();
  /** Each connection's place: the index (counted from the session's first event) of the first event it has not taken. */
  private readonly places = new Map<string, number>();
  /** How many events were removed from the front (taken by every connection, or dropped). */
  private removed = 0;
  private joined = false;
  /** Events told to one connection only (a compose's refusal, told to the one that composed). */
  private readonly only = new WeakMap<SessionEvent, string>();
  /** Events told to every connection but one (a change's events, which its own answer carried). */
  private readonly except = new WeakMap<SessionEvent, string>();

  override push(...events: SessionEvent[]): number {
    for (const event of events) for (const observe of this.observers) observe(event);
    const n = super.push(...events);
    if (this.length > MAX_UNTAKEN_EVENTS) this.dropFront(this.length - MAX_UNTAKEN_EVENTS);
    return n;
  }

  /** Tell `event` to the connection `key` only (and to the observers). */
  tellOnly(key: string, event: SessionEvent): void {
    this.only.set(event, key);
    this.push(event);
  }

  /** Tell `events` to every connection but `key`, whose answer held them (and to the observers). */
  tellOthers(key: string, events: SessionEvent[]): void {
    for (const event of events) this.except.set(event, key);
    this.push(...events);
  }

  /** A connection's request: from its first, it is told the events that come (`lost`: it closed, and is told no more). */
  listen(key: string, lost?: AbortSignal): void {
    if (this.places.has(key)) return;
    this.places.set(key, this.joined ? this.removed + this.length : this.removed);
    this.joined = true;
    lost?.addEventListener('abort', () => this.leave(key), { once: true });
  }

  /** The events for connection `key` since it last took them (it starts listening first if it had not). */
  take(key: string): SessionEvent[] {
    this.listen(key);
    const place = this.places.get(key)!;
    const missed = Math.max(0, this.removed - place);
    const events = this.slice(Math.max(0, place - this.removed)).filter((e) => (this.only.get(e) ?? key) === key && this.except.get(e) !== key);
    this.places.set(key, this.removed + this.length);
    this.trim();
    return missed ? [{ kind: 'missed', count: missed, message: `${missed} events came while this connection did not sync, past the ${MAX_UNTAKEN_EVENTS} kept for it: the oldest are not told` }, ...events] : events;
  }

  private leave(key: string): void {
    this.places.delete(key);
    this.trim();
  }

  /** Remove the events every connection has taken. */
  private trim(): void {
    if (!this.places.size) return;
    const first = Math.min(...this.places.values());
    if (first > this.removed) this.dropFront(first - this.removed);
  }

  private dropFront(count: number): void {
    super.splice(0, count);
    this.removed += count;
  }
}

/** The key a connection's place in the EventList is kept under: ids are counted per door. */
export const connectionKey = (c: { kind: string; id: number }) => `${c.kind}:${c.id}`;

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
