// The session: owns the documents, the world (registry, graph, params, state, clock) and the
// authority rules. Every door (stdin, TCP, WebSocket, in process) reaches it through `request`.
//
// Rules: a change is prepared (parsed, checked, compiled on the compile worker) before it is
// published; publication swaps the world at once; a rejected change leaves the running world as it
// was; state commits only when a whole frame succeeds (the engine's double buffers); one change is
// made at a time (the `changes` queue), while frames and other connections go on.

import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import type { Grant } from '../ir/grants.js';
import type { IrFunction } from '../ir/ir.js';
import { ALL_GRANTS } from '../ir/grants.js';
import { loadScene, type Scene } from '../ir/check/scene.js';
import type { Diagnostic } from '../ir/syntax/tree.js';
import { errorLine, okLine, parseRequest, plainReason, ProtocolError } from '../protocol/envelope.js';
import { HANDLERS } from '../protocol/handlers/index.js';
import { EvalPool } from '../workers/pool.js';
import { Cancelled, Evaluations, deadlineProblem, throwIfCancelled, untilCancelled } from './cancel.js';
import { carryState, migrationIrs } from './carry.js';
import { CompileWorker } from './compiler.js';
import { versionOf, writeDocuments } from './documents.js';
import { Engine, EvaluationError, sceneGroups, type FrameReport } from './engine.js';
import { cacheDir, compileHere, prepareModules } from './modules.js';
import { SceneFolder } from './files.js';
import { FieldMemory } from './memory.js';

export interface SessionOptions {
  grants?: Grant[];
  workers?: number;
  fuse?: boolean;
  /** Start without the compile worker (compile on this thread): for tools that only inspect. */
  inline?: boolean;
  /** The folder of compiled modules (modules.ts cacheDir), or null for none: the benchmark times compiles. */
  cacheDir?: string | null;
}

export interface SessionEvent {
  kind: string;
  [k: string]: unknown;
}

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
}

/** A kernel the registry holds: its generation counts publications of its id. */
export interface RegistryEntry {
  id: string;
  generation: number;
  origin: string;
  source: string;
}

/** A failed check or compile, as an error the client can act on. */
export function diagnosticsError(what: string, diagnostics: Diagnostic[]): ProtocolError {
  const first = diagnostics[0];
  const data: Record<string, unknown> = {
    diagnostics: diagnostics.map((d) => ({ path: d.path, line: d.line, column: d.column, message: d.message, ...(d.fix ? { fix: d.fix } : {}) })),
    path: first.path, line: first.line, column: first.column,
  };
  if (first.fix) data.fix = first.fix;
  return new ProtocolError(`${what}: ${first.path}:${first.line}:${first.column}: ${first.message}${diagnostics.length > 1 ? ` (and ${diagnostics.length - 1} more)` : ''}`, data);
}

export class Session {
  readonly folder: SceneFolder;
  readonly entry: string;
  readonly grants: Grant[];
  readonly memory = new FieldMemory();
  readonly pool?: EvalPool;
  readonly compiler?: CompileWorker;
  readonly fuse: boolean;
  /** What the session last loaded of each document, and every version it has seen. */
  readonly texts = new Map<string, string>();
  readonly history = new Map<string, DocumentVersion[]>();
  /** Kernel sources published over the protocol, by id. */
  readonly published = new Map<string, string>();
  readonly registry = new Map<string, RegistryEntry>();
  readonly pins = new Set<string>();
  scene!: Scene;
  engine!: Engine;
  revision = 0;
  paused = false;
  lastFrame?: FrameReport;
  /** The last refused change, or null. */
  refused: { message: string; at: string } | null = null;
  /** Events waiting for `sync` (observers see them as they come). */
  readonly pending = new EventList();
  /** Set by the Player: `evaluate` requests then answer with the window's next frame. */
  window?: FrameSource;
  /** Changes run one at a time, in order. */
  private changes: Promise<unknown> = Promise.resolve();
  /** Frames run one at a time; a world swap waits for the running one before freeing memory. */
  private frames: Promise<unknown> = Promise.resolve();
  /** The frame running now: a change that swaps the world cancels it. */
  private running?: AbortController;
  /** The evaluations requests are running, for `cancel`. */
  readonly evaluations = new Evaluations();
  /** A saved edit compiling in the background (sync). */
  syncing?: Promise<void>;

  private constructor(scenePath: string, options: SessionOptions) {
    this.folder = new SceneFolder(scenePath);
    this.entry = basename(scenePath);
    this.grants = options.grants ?? [...ALL_GRANTS];
    this.fuse = options.fuse ?? true;
    this.cacheDir = options.cacheDir === undefined ? cacheDir() : options.cacheDir;
    const workers = options.workers ?? availableParallelism();
    // Always a pool, so kernel code that is not provably short runs off this thread (with
    // --workers 1, one thread, started when a frame first needs it).
    this.pool = new EvalPool(this.memory.memory, { workers: Math.max(1, workers), lazy: workers <= 1 });
    if (!options.inline) this.compiler = new CompileWorker();
  }

  /** Open a session on a scene; a scene that does not check still opens (status says refused). */
  static async open(scenePath: string, options: SessionOptions = {}): Promise<Session> {
    const s = new Session(scenePath, options);
    const texts = s.readAll();
    const scene = s.check(texts);
    for (const [path, text] of texts) s.remember(path, text, 'load');
    if (scene.diagnostics.length) {
      // Run an empty world and say why: the agent mends the scene with compose.
      s.refused = { message: diagnosticsError('the scene does not check', scene.diagnostics).message, at: new Date().toISOString() };
      s.scene = loadScene('(empty)', { read: () => '' });
      s.engine = new Engine(s.scene, { memory: s.memory });
      return s;
    }
    await s.prepareScene(scene);
    s.install(scene, []);
    return s;
  }

  /** The documents of the scene as they are on disk (entry and what it uses, transitively). */
  readAll(overrides: Map<string, string> = new Map()): Map<string, string> {
    const texts = new Map<string, string>();
    const scene = loadScene(this.entry, {
      read: (p) => {
        const t = overrides.get(p) ?? this.folder.read(p);
        if (t !== undefined) texts.set(p, t);
        return t;
      },
    });
    void scene;
    return texts;
  }

  /** Parse and check documents (with the protocol's kernels); nothing changes. */
  check(texts: Map<string, string>, published = this.published): Scene {
    return loadScene(this.entry, {
      read: (p) => (texts.has(p) ? texts.get(p) : this.folder.read(p)),
      overrides: [...published].map(([id, text]) => ({ path: `(protocol ${id})`, text })),
      grants: this.grants,
    });
  }

  /**
   * Have the modules of functions ready for engines to take (modules.ts): from memory, from the
   * disk cache, or compiled on the compile worker (here, with an inline session).
   */
  async prepare(irs: IrFunction[]): Promise<void> {
    const { compiled, read } = await prepareModules(irs, this.compiler?.compile ?? compileHere, this.cacheDir);
    this.modules.compiled += compiled;
    this.modules.read += read;
  }

  /** Modules this session compiled, and read from the disk cache. */
  readonly modules = { compiled: 0, read: 0 };
  private readonly cacheDir: string | null;

  /** Prepare the modules an engine of the scene runs (this session's pins and fusion unless given). */
  prepareScene(scene: Scene, pins = [...this.pins], fuse = this.fuse): Promise<void> {
    return this.prepare(sceneGroups(scene, pins, fuse).map((g) => g.ir));
  }

  /** Writes of documents in progress: the disk is between versions (syncDisk waits them out). */
  writing = 0;

  /** Write documents all or none (documents.ts), counted in `writing` while they land. */
  async write(files: { path: string; text: string }[]): Promise<void> {
    this.writing++;
    try {
      await writeDocuments(this.folder.root, files);
    } finally {
      this.writing--;
    }
  }

  remember(path: string, text: string, origin: DocumentVersion['origin']): void {
    this.texts.set(path, text);
    const list = this.history.get(path) ?? [];
    const version = versionOf(text);
    if (list[list.length - 1]?.version === version) return;
    const seen = list.some((v) => v.version === version);
    list.push({ version, origin: seen && origin !== 'load' ? 'rollback' : origin, at: new Date().toISOString(), bytes: Buffer.byteLength(text), text });
    this.history.set(path, list);
  }

  /** Run a change after the ones before it; its failure does not stop the next. */
  change<T>(f: () => Promise<T>): Promise<T> {
    const run = this.changes.then(f, f);
    this.changes = run.catch(() => undefined);
    return run;
  }

  /**
   * Run a frame after the one before it. `f` runs under a signal that `signal` (the request's)
   * aborts, and so does a change that swaps the world while it runs; a request cancelled while
   * it waits is answered at once and its `f` never runs.
   */
  frame<T>(f: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const task = async () => {
      throwIfCancelled(signal);
      const controller = new AbortController();
      const forward = () => controller.abort(signal!.reason);
      signal?.addEventListener('abort', forward, { once: true });
      this.running = controller;
      try {
        return await f(controller.signal);
      } finally {
        signal?.removeEventListener('abort', forward);
        if (this.running === controller) this.running = undefined;
      }
    };
    const run = this.frames.then(task, task);
    this.frames = run.catch(() => undefined);
    return untilCancelled(run, signal);
  }

  /**
   * Compile a checked scene on the compile worker, then swap it in at once: state carried where
   * its layout is unchanged, params kept, the clock kept. Returns the events of the swap.
   */
  async publishScene(scene: Scene, reason: string): Promise<SessionEvent[]> {
    await this.prepareScene(scene);
    await this.prepare(this.scene ? migrationIrs(this.published, this.scene, scene) : []);
    return this.install(scene, [reason]);
  }

  private install(scene: Scene, _reasons: string[]): SessionEvent[] {
    const events: SessionEvent[] = [];
    const old = this.engine;
    const engine = new Engine(scene, { memory: this.memory, pool: this.pool, pins: [...this.pins], fuse: this.fuse, prepared: true });
    if (old) {
      engine.frame = old.frame;
      engine.time = old.time;
      for (const [name, value] of old.params) if (engine.params.get(name)?.length === value.length) engine.params.set(name, value);
      try {
        events.push(...carryState(this.memory, this.published, old, engine));
      } catch (e) {
        engine.dispose();
        throw e;
      }
    }
    for (const e of engine.events) events.push({ ...e });
    // Generations: a kernel whose source changed (or is new) is published anew.
    const seen = new Set<string>();
    for (const k of scene.kernels.values()) {
      seen.add(k.id);
      const doc = scene.documents.find((d) => d.path === k.path);
      const source = this.published.get(k.id) ?? (doc ? doc.text.slice(k.statement.span.start, k.statement.span.end) : '');
      const origin = this.published.has(k.id) ? 'protocol' : k.path;
      const entry = this.registry.get(k.id);
      if (!entry || entry.source !== source || entry.origin !== origin) {
        const generation = (entry?.generation ?? 0) + 1;
        this.registry.set(k.id, { id: k.id, generation, origin, source });
        // A protocol kernel withdrawn for a document's of the same id (retire, or composed into one).
        if (old && entry?.origin === 'protocol' && origin !== 'protocol') events.push({ kind: 'retired', kernel: k.id });
        if (old) events.push({ kind: 'published', kernel: k.id, generation, origin });
      }
    }
    for (const id of [...this.registry.keys()]) {
      if (seen.has(id)) continue;
      this.registry.delete(id);
      events.push({ kind: 'retired', kernel: id });
    }
    // A frame of the old world still running is not waited for: it stops and commits nothing.
    this.running?.abort(new Cancelled('changed', `a change swapped the world (revision ${this.revision + 1}) while it ran`));
    const previous = this.scene;
    this.scene = scene;
    this.engine = engine;
    this.revision++;
    this.refused = null;
    this.lastFrame = undefined;
    if (previous && JSON.stringify(order(previous)) !== JSON.stringify(order(scene))) events.push({ kind: 'routed', order: order(scene) });
    events.push({ kind: 'scene_loaded', revision: this.revision });
    for (const n of scene.nodes) if (!engine.groups.some((g) => g.nodes.includes(n))) events.push({ kind: 'unrun', node: n.name });
    // Free the old world once no frame runs on it.
    if (old) void this.frame(async () => old.dispose());
    return events;
  }

  /**
   * The `evaluate` request: a frame of its own, or, when a window shows the session (the Player),
   * the window's next frame, so what a client is told is what the person sees.
   */
  evaluate(input: Parameters<Engine['evaluate']>[0], signal?: AbortSignal): Promise<{ report: FrameReport; events: SessionEvent[] }> {
    return this.window && !this.paused ? untilCancelled(this.window.nextFrame(), signal) : this.runFrame(input, signal);
  }

  /** Evaluate a frame on the running world (paused: the last frame, nothing runs); `signal` cancels it. */
  runFrame(input: Parameters<Engine['evaluate']>[0], signal?: AbortSignal): Promise<{ report: FrameReport; events: SessionEvent[] }> {
    return this.frame(async (running) => {
      const engine = this.engine;
      if (this.paused) {
        // Paused: nothing runs, not even a first frame; the answer is the last frame (if any).
        const last = this.lastFrame ?? { frame: engine.frame, time: engine.time, placements: [] };
        return { report: { ...last, executed: [], timings: [], cached: true }, events: [{ kind: 'idle', reason: 'paused' }] };
      }
      // A failed frame commits nothing: the engine keeps state and frame; the clock goes back too.
      const time = engine.time;
      let report: FrameReport;
      try {
        report = await engine.evaluate(input, running);
      } catch (e) {
        engine.time = time;
        throw e;
      }
      this.lastFrame = report;
      const events: SessionEvent[] = report.cached ? [{ kind: 'idle', reason: 'nothing changed since the last frame' }] : [];
      return { report, events };
    }, signal);
  }

  /** One request line in, one answer line out: the in-process door. */
  async request(line: string, conn: { kind: string; id: number; lost?: AbortSignal } = { kind: 'in-process', id: 0 }): Promise<string> {
    const req = parseRequest(line);
    if ('error' in req) return errorLine(req.id, req.error);
    // Operations that evaluate take a deadline and can be cancelled (cancel.ts).
    const late = deadlineProblem(req.fields.deadline);
    if (late) return errorLine(req.id, new ProtocolError(late, { field: 'deadline', expected: 'milliseconds > 0' }));
    const evaluation = req.spec.fields.some((f) => f.name === 'deadline')
      ? this.evaluations.start({ connection: conn.id, request: req.id, deadline: req.fields.deadline as number | undefined, closed: conn.lost })
      : undefined;
    try {
      const ok = await HANDLERS[req.op](this, req.fields, { kind: conn.kind, id: conn.id, signal: evaluation?.signal });
      return okLine(req.id, ok);
    } catch (e) {
      if (e instanceof Cancelled)
        return errorLine(req.id, new ProtocolError(`cancelled: ${e.message}; nothing of it was kept: state, clock and frame counter are as before it (frame ${this.engine.frame})`, { cancelled: true, reason: e.reason, frame: this.engine.frame }));
      if (e instanceof ProtocolError) return errorLine(req.id, e);
      if (e instanceof EvaluationError) return errorLine(req.id, new ProtocolError(e.message, { node: e.node }));
      const err = e as Error;
      const known = err && ['MemoryLimitError', 'PathError', 'EditError', 'ImageError'].includes(err.name);
      return errorLine(req.id, new ProtocolError(known ? err.message : `internal error in \`${req.op}\`: ${plainReason(err)} (the session goes on)`, known ? {} : { internal: true }));
    } finally {
      evaluation?.done();
    }
  }

  async close(): Promise<void> {
    await this.frames;
    this.engine?.dispose();
    await this.pool?.destroy();
    await this.compiler?.close();
  }
}

function order(scene: Scene): string[] {
  return scene.nodes.map((n) => n.name);
}

