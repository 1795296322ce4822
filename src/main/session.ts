// The session: owns the documents, the running world (world.ts: scene, documents, registry,
// pins, engine with its params, state and clock) and the authority rules. It knows nothing of the
// protocol: every door reaches it through the protocol's dispatcher (src/protocol/dispatcher.ts),
// whose handlers call the API here — `commit` for every change, `read` and `frame` to read,
// `evaluate` to run a frame.
//
// Rules: every change to the world is a Change carried by `commit` (commit.ts): a scene change is
// prepared (parsed, checked, compiled on the compile worker), its documents written through the
// journal, and only then swapped in whole; a value change (param, write, reset) is checked whole
// before its first value is stored; a change that fails leaves the world and the disk as they were. State commits only when a whole frame succeeds (the engine's double
// buffers). One change is made at a time (the `changes` queue), one frame at a time (`frames`),
// while other connections go on. A write a crash interrupted is finished when a session opens.

import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import type { Grant } from '../ir/grants.js';
import type { IrFunction } from '../ir/ir.js';
import { ALL_GRANTS } from '../ir/grants.js';
import { loadDocuments, loadScene, type Scene } from '../ir/check/scene.js';
import { EvalPool } from '../workers/pool.js';
import { BACKGROUND_DEADLINE_MS, Evaluations, untilCancelled } from './cancel.js';
import { commit, type Change, type SceneChange } from './commit.js';
import { fork, type ForkResult, type ForkRun } from './fork.js';
import { CheckFailed } from './refusals.js';
import { defaultMemoryBudget } from './budget.js';
import { CompileWorker } from './compiler.js';
import { BackgroundOptimiser } from './optimiser.js';
import { syncDisk } from './disk-sync.js';
import { PathError, sceneEntryProblem, versionOf } from './documents.js';
import { Engine, type FrameReport } from './engine.js';
import { sceneGroups } from './scene-groups.js';
import { prepareWrite, writeDocuments, type DocumentWrite, type PreparedWrite } from './journal.js';
import { recoverJournal } from './journal-recovery.js';
import { cacheDir, compileHere, prepareModules } from './modules.js';
import { traceElement } from './trace.js';
import { profileFrame } from './profile.js';
import { SceneFolder } from './files.js';
import { FieldMemory, pagesFor } from './memory.js';
import { emptyWorld, type World, type WorldEvent } from './world.js';
import { EventList, type DocumentVersion, type FrameSource, type PublishedGeneration, type SessionEvent, type SessionOptions } from './session-types.js';
import { FrameSlot, Turns } from './turns.js';
import { Activity, busyGauge, warmUp, type Warmth } from './warm-up.js';
import { parseUncached } from '../ir/syntax/index.js';

export { EventList, type DocumentVersion, type FrameSource, type PublishedGeneration, type SessionEvent, type SessionOptions } from './session-types.js';
export type { RegistryEntry } from './world.js';

export class Session {
  readonly folder: SceneFolder;
  readonly entry: string;
  /** This session's id (random): a client that reconnects tells a restarted session by it, whose params and state are the scene's again. */
  readonly id = randomBytes(8).toString('hex');
  readonly grants: Grant[];
  /** The fields' memory and the pool over it: replaced when a world moves to a fresh memory (commit.ts renew). */
  memory: FieldMemory;
  pool?: EvalPool;
  readonly compiler?: CompileWorker;
  /** Compiles the optimised tier of what runs on the fast one, and swaps it in (none inline). */
  readonly optimiser?: BackgroundOptimiser;
  readonly fuse: boolean;
  /** Rows per tile of a frame on the pool (SessionOptions.bandRows; undefined: the engine's default). */
  readonly bandRows?: number;
  /** Every version of each document the session has seen. */
  readonly history = new Map<string, DocumentVersion[]>();
  /** Every change of the kernels published over the protocol, in order (history's `generations`). */
  readonly generations: PublishedGeneration[] = [];
  /** The next `seq` of a document version or published generation. */
  private seen = 0;
  private current!: World;
  paused = false;
  lastFrame?: FrameReport;
  /** The last refused change, or null. */
  refused: { message: string; at: string } | null = null;
  /** Events waiting for `sync` (observers see them as they come). */
  readonly pending = new EventList();
  /** Set by the Player: `evaluate` requests then answer with the window's next frame. */
  window?: FrameSource;
  /** Changes run one at a time, in order. */
  private readonly changes = new Turns();
  /** Frames run one at a time; a world swap waits for the running one before freeing memory. */
  private readonly slot = new FrameSlot();
  /** The evaluations requests are running, for `cancel`. */
  readonly evaluations = new Evaluations();
  /** Milliseconds a saved edit picked up in the background may take (syncDisk). */
  readonly backgroundDeadline: number;
  /** Set by the Player in preview mode: a saved edit is handed to it to preview instead of published (disk-sync.ts). */
  holdSavedEdit?: (texts: Map<string, string>, changed: string[]) => void;
  /** A saved edit compiling in the background (syncDisk). */
  syncing?: Promise<void>;
  /** The disk was asked about while a saved edit compiled: look again when it is done (syncDisk). */
  resync = false;
  /** Documents of the running world seen gone from disk (told once: disk-sync.ts). */
  readonly goneReported = new Set<string>();
  /** Saved edits stopped before they were judged (a cancel, a closed connection): the next sync takes them again (disk-sync.ts). */
  readonly unjudged = new Set<string>();

  private readonly workers: number;
  /** Whether the compile worker is this session's own (closed with it) or another's (SessionOptions.compiler). */
  private readonly ownsCompiler: boolean;

  private constructor(scenePath: string, options: SessionOptions) {
    this.memory = new FieldMemory(options.memory ?? defaultMemoryBudget());
    this.folder = new SceneFolder(scenePath);
    this.entry = basename(scenePath);
    this.grants = options.grants ?? [...ALL_GRANTS];
    this.fuse = options.fuse ?? true;
    if (options.bandRows !== undefined) this.bandRows = options.bandRows;
    this.backgroundDeadline = options.backgroundDeadline ?? BACKGROUND_DEADLINE_MS;
    this.cacheDir = options.cacheDir === undefined ? cacheDir() : options.cacheDir;
    const workers = options.workers ?? availableParallelism();
    // Always a pool, so kernel code that is not provably short runs off this thread (with
    // --workers 1, one thread, started when a frame first needs it).
    this.workers = Math.max(1, workers);
    this.pool = new EvalPool(this.memory.memory, { workers: this.workers, lazy: workers <= 1 });
    this.ownsCompiler = !options.compiler;
    if (options.compiler) this.compiler = options.compiler;
    else if (!options.inline) this.compiler = new CompileWorker();
    // Changes go live on the fast tier; the optimised one follows in the background (optimiser.ts).
    if (!options.inline && !options.compiler) this.optimiser = new BackgroundOptimiser(this, options.optimiseBudget);
  }

  /**
   * Open a session on a scene: a write a crash interrupted is finished (or turned back) first,
   * before anything reads the documents; a scene that does not check still opens (status says
   * refused).
   */
  static async open(scenePath: string, options: SessionOptions = {}): Promise<Session> {
    // A missing document opens an empty world for an agent to compose; a folder never will be one,
    // nor a file that is not a .esn document (compose would replace its bytes).
    const problem = sceneEntryProblem(scenePath);
    if (problem) throw new PathError(problem, scenePath);
    const s = new Session(scenePath, options);
    try {
      const recovery = await recoverJournal(s.folder.root);
      if (recovery.recovered.length || recovery.rolledBack.length) s.pending.push({ kind: 'recovered', written: recovery.recovered, turnedBack: recovery.rolledBack });
      const texts = s.readAll();
      for (const [path, text] of texts) s.remember(path, text, 'load');
      s.current = emptyWorld(s.memory, texts);
      try {
        await s.commit({ reason: 'open', texts, refusal: 'the scene does not check' });
      } catch (e) {
        // Run the empty world and say why: the agent mends the scene with compose.
        if (!(e instanceof CheckFailed)) throw e;
        s.refused = { message: e.message, at: new Date().toISOString() };
      }
    } catch (e) {
      await s.close();
      throw e;
    }
    return s;
  }

  /** The running world (world.ts): replaced whole by each change, never edited. */
  get world(): World {
    return this.current;
  }
  get scene(): Scene {
    return this.current.scene;
  }
  get engine(): Engine {
    return this.current.engine;
  }
  get revision(): number {
    return this.current.revision;
  }
  /** What the running world was checked from, by document path. */
  get texts(): ReadonlyMap<string, string> {
    return this.current.texts;
  }
  get published(): ReadonlyMap<string, string> {
    return this.current.published;
  }
  get registry(): World['registry'] {
    return this.current.registry;
  }
  get pins(): ReadonlySet<string> {
    return this.current.pins;
  }

  /** The documents of the scene as they are on disk (entry and what it uses, transitively). */
  readAll(overrides: ReadonlyMap<string, string> = new Map()): Map<string, string> {
    const texts = new Map<string, string>();
    // Only the documents' `use` statements are followed: nothing is checked (compose checks next).
    loadDocuments(this.entry, (p) => {
      const t = overrides.get(p) ?? this.folder.readDocument(p);
      if (typeof t === 'string') texts.set(p, t);
      return t;
    });
    return texts;
  }

  /** Parse and check documents (with the protocol's kernels); nothing changes. */
  check(texts: ReadonlyMap<string, string>, published: ReadonlyMap<string, string> = this.published): Scene {
    return loadScene(this.entry, {
      read: (p) => (texts.has(p) ? texts.get(p) : this.folder.readDocument(p)),
      overrides: [...published].map(([id, text]) => ({ path: `(protocol ${id})`, text })),
      grants: this.grants,
    });
  }

  /**
   * Have the modules of functions ready for engines to take (modules.ts): from memory, from the
   * disk cache, or compiled on the compile worker (here, with an inline session).
   */
  async prepare(irs: IrFunction[]): Promise<void> {
    const { compiled, read } = await prepareModules(irs, this.compiler?.compile ?? compileHere, this.cacheDir, this.optimiser ? 'fast' : 'optimised');
    this.modules.compiled += compiled;
    this.modules.read += read;
  }

  /** Modules this session compiled, and read from the disk cache. */
  readonly modules = { compiled: 0, read: 0 };
  readonly cacheDir: string | null;

  /** Prepare the modules an engine of the scene runs (this session's pins and fusion unless given). */
  prepareScene(scene: Scene, pins = [...this.pins], fuse = this.fuse): Promise<void> {
    return this.prepare(sceneGroups(scene, pins, fuse).map((g) => g.ir));
  }

  /** Writes of documents in progress: the disk is between versions (syncDisk waits them out). */
  writing = 0;

  /** Write documents all or none through the journal (journal.ts), counted in `writing`. */
  async write(files: DocumentWrite[]): Promise<void> {
    this.writing++;
    try {
      await writeDocuments(this.folder.root, files);
    } finally {
      this.writing--;
    }
  }

  /**
   * Steps 1-2 of a write through the journal (journal.ts), leaving every document as it was, for
   * commit to do while its modules compile; counted in `writing` until committed or abandoned.
   */
  async prepareWrite(files: DocumentWrite[]): Promise<PreparedWrite> {
    this.writing++;
    let prepared: PreparedWrite;
    try {
      prepared = await prepareWrite(this.folder.root, files);
    } catch (e) {
      this.writing--;
      throw e;
    }
    let ended = false;
    const end = async (step: () => Promise<void>) => {
      if (ended) return;
      ended = true;
      try {
        await step();
      } finally {
        this.writing--;
      }
    };
    return { commit: () => end(prepared.commit), abandon: () => end(prepared.abandon) };
  }

  /**
   * Write one file that is not a document of the scene (a snapshot) through the same journal,
   * after the changes before it: all or nothing, and never over a document.
   */
  writeFile(path: string, text: string, what: string, instead?: string): Promise<void> {
    return this.change(async () => {
      this.refuseDocument(path, what, instead);
      await this.write([{ path, text }]);
    });
  }

  /** The document of the scene, or one the session loaded or composed, that `path` names (however spelled), or undefined. */
  documentAt(path: string): string | undefined {
    const target = this.folder.resolve(path);
    for (const doc of new Set([this.entry, ...this.texts.keys(), ...this.scene.documents.map((d) => d.path), ...this.history.keys()])) {
      try {
        if (this.folder.resolve(doc) === target) return doc;
      } catch {
        // a document path that no longer resolves names nothing here
      }
    }
    return undefined;
  }

  /**
   * Refuse a path that names a document of the scene, or one the session loaded or composed:
   * `what` (a snapshot) would replace it. `instead`: a path to suggest.
   */
  refuseDocument(path: string, what: string, instead?: string): void {
    const doc = this.documentAt(path);
    if (doc === undefined) return;
    throw new PathError(`\`${path}\` is a document of the scene (\`${doc}\`); ${what} would replace it: name another path${instead ? `, like \`${instead}\`` : ''}`, path);
  }

  remember(path: string, text: string, origin: DocumentVersion['origin']): void {
    const list = this.history.get(path) ?? [];
    const version = versionOf(text);
    if (list[list.length - 1]?.version === version) return;
    const seen = list.some((v) => v.version === version);
    list.push({ version, origin: seen && origin !== 'load' ? 'rollback' : origin, at: new Date().toISOString(), bytes: Buffer.byteLength(text), text, seq: this.seen++, published: this.current?.published ?? new Map() });
    this.history.set(path, list);
  }

  /** Record a change of the protocol's kernels (`before`: those published before it), if it made one. */
  private rememberPublished(reason: SceneChange['reason'], before: ReadonlyMap<string, string>): void {
    const after = this.published;
    const ids = [...new Set([...before.keys(), ...after.keys()])].filter((id) => before.get(id) !== after.get(id)).sort();
    if (!ids.length) return;
    const kernels = ids.map((kernel) => ({ kernel, generation: this.registry.get(kernel)?.generation ?? null }));
    this.generations.push({ origin: reason, at: new Date().toISOString(), kernels, published: new Map(after), seq: this.seen++ });
  }

  /** Run a change after the ones before it; its failure does not stop the next. */
  change<T>(f: () => Promise<T>): Promise<T> {
    return this.activity.track(this.changes.take(f));
  }

  /**
   * Run a frame after the one before it. `f` runs under a signal that `signal` (the request's)
   * aborts, and so does a change that swaps the world while it runs; a request cancelled while
   * it waits is answered at once and its `f` never runs.
   */
  frame<T>(f: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.activity.track(this.slot.run(f, signal));
  }

  /**
   * Read the world as it is now, in the frame slot: a request that arrived before a swap reads
   * the world it arrived to (freed only after every such read: commit.ts).
   */
  read<T>(f: (world: World) => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    const world = this.current;
    return this.frame(async () => f(world), signal);
  }

  /**
   * Carry a change to the world (commit.ts); call it inside `change`. A refusal is told to `sync`
   * by who asked for the change (compose, to its connection: `scene_rejected`; a saved edit,
   * disk-sync.ts: `rejected`, and `status` says refused).
   */
  async commit(change: Change): Promise<WorldEvent[]> {
    const published = this.published;
    const { events } = await commit(this, change, (world, moved) => {
      if (moved) ({ memory: this.memory, pool: this.pool } = moved);
      this.current = world;
      this.refused = null;
      // A tier swap keeps the last frame (Engine.keepFrame): a paused world still shows it.
      if (!('tierSwap' in change && change.tierSwap)) this.lastFrame = undefined;
      for (const w of ('writes' in change && change.writes) || []) {
        const unsynced = w.replaced ?? w.included;
        if (unsynced !== undefined) this.remember(w.path, unsynced, 'disk');
        this.remember(w.path, w.text, 'compose');
      }
      if (!('prepare' in change)) this.rememberPublished(change.reason, published);
    });
    if (!('prepare' in change) && !change.tierSwap) {
      this.optimiser?.schedule(); // a value change compiles nothing
      this.warmUp();
    }
    // A reset of every state sets the clock back: the last frame is no longer the world's.
    if ('restarts' in change && change.restarts) this.lastFrame = undefined;
    return events;
  }

  private warmed = false;
  /** Changes and frames at work: the coordinator's warm-up waits for them (warm-up.ts). */
  private readonly activity = new Activity();
  private readonly endWarmUp = new AbortController();
  private coordinatorWarmth?: Warmth;

  /**
   * Once, with the first world that runs compiled groups: the session's own compile worker warms
   * up with them while idle, and so does this thread with the world's documents (parsed, checked
   * and grouped), so the first edits go as fast as later ones (warm-up.ts).
   */
  private warmUp(): void {
    if (this.warmed || !this.ownsCompiler || !this.compiler) return;
    const irs = this.engine.groupTiers().map((g) => g.ir);
    if (!irs.length) return;
    this.warmed = true;
    this.compiler.warm(irs);
    // The world's documents, pins and fusion as they are now: an edit of this scene, rehearsed.
    const texts = new Map(this.texts);
    const pins = [...this.pins];
    const edit = () => {
      for (const [path, text] of texts) parseUncached(path, text);
      sceneGroups(this.check(texts), pins, this.fuse);
    };
    this.coordinatorWarmth = warmUp([texts], edit, { lastRequest: this.activity.lastRequest, busy: busyGauge(), signal: this.endWarmUp.signal });
  }

  /** This session's warm-ups so far, null where none started: this thread's and its compile worker's (null once closed: the worker is gone). */
  async warmth(): Promise<{ coordinator: Warmth | null; compiler: Warmth | null }> {
    const compiler = this.closing || !this.ownsCompiler ? null : await this.compiler?.warmth();
    return { coordinator: this.coordinatorWarmth ? { ...this.coordinatorWarmth } : null, compiler: compiler ?? null };
  }

  /**
   * What a scene change would do, run on a fork of the world (fork.ts): nothing is written,
   * swapped in or told to `sync`. Call it inside `change`, like commit, so it forks the world
   * the changes before it left.
   */
  dryRun(change: SceneChange, run: ForkRun): Promise<ForkResult> {
    return fork(this, change, run);
  }

  /** Swap in the optimised modules now prepared (optimiser.ts): a change of its own, between frames, after the changes before it. */
  swapTiers(): Promise<void> {
    return this.change(async () => {
      if (this.closing) return;
      await this.commit({ reason: 'optimise', texts: this.texts, refusal: 'the scene no longer checks', tierSwap: true });
    });
  }

  /** Tell an event now (the Player) and at the next `sync`. */
  tell(event: SessionEvent): void {
    this.pending.push(event);
  }

  private closing = false;

  /** A fresh memory holding `bytes` of fields and a pool over it, of this session's budget and workers (commit.ts). */
  renew(bytes: number): { memory: FieldMemory; pool: EvalPool } {
    const memory = new FieldMemory(this.memory.limitBytes, pagesFor(bytes));
    return { memory, pool: new EvalPool(memory.memory, { workers: this.workers, lazy: true }) };
  }

  /** What the last pause request asked for: a pause takes effect later (in the frame slot), and a toggle goes by it. */
  private pausing = false;
  /** Pause requests so far: a cancelled one undoes `pausing` only if none came after it. */
  private pauseAsked = 0;

  /**
   * Pause or resume the clock and frames (`paused` undefined: toggle); whether paused now. A pause
   * takes effect in the frame slot, after the frame running now (which commits): once the answer
   * (or `status`) says paused, the frame counter stands still. A resume is at once. The last
   * request wins: a toggle flips what the one before asked for (two toggles at once leave the
   * session running), and a pause whose turn comes after a resume does nothing.
   */
  async pause(paused?: boolean, signal?: AbortSignal): Promise<boolean> {
    const want = paused ?? !this.pausing;
    this.pausing = want;
    const asked = ++this.pauseAsked;
    if (!want) {
      this.paused = false;
      return false;
    }
    try {
      await this.frame(async () => void (this.paused = this.pausing), signal);
    } catch (e) {
      // Cancelled before its turn: unless another request came since, a later toggle goes by what is.
      if (asked === this.pauseAsked) this.pausing = this.paused;
      throw e;
    }
    return this.paused;
  }

  /** What each node computed at one element in the last frame (trace.ts); the world is not touched. */
  trace(at: { x: number; y: number; z: number }, needed?: ReadonlySet<string>, signal?: AbortSignal): ReturnType<typeof traceElement> {
    return traceElement(this, at, needed, signal);
  }

  /** Each node's time in the next frame, run once on an unfused copy (profile.ts); the world is not touched. */
  profile(input: Parameters<Engine['evaluate']>[0], signal?: AbortSignal): ReturnType<typeof profileFrame> {
    return profileFrame(this, input ?? {}, signal);
  }

  /** Stop the frame running now (commit.ts: a change about to swap the world does not wait for it); it commits nothing. */
  interrupt(why: string): void {
    this.slot.interrupt(why);
  }

  /** Look at the disk for saved edits, renames and removals (disk-sync.ts): `sync` (under its request's signal), the Player. */
  syncDisk(signal?: AbortSignal): SessionEvent[] {
    return syncDisk(this, signal);
  }

  /**
   * The `evaluate` request: a frame of its own, or, when a window shows the session (the Player),
   * the window's next frame, so what a client is told is what the person sees.
   */
  evaluate(input: Parameters<Engine['evaluate']>[0], signal?: AbortSignal): Promise<{ report: FrameReport; events: SessionEvent[] }> {
    return this.window && !this.paused ? untilCancelled(this.window.nextFrame(), signal) : this.runFrame(input, signal);
  }

  /** Resolves when the next frame ends, whether it ran, failed or was refused (the background optimiser: optimiser.ts). */
  frameEnded(): Promise<void> {
    return this.slot.nextFrameEnd();
  }

  /**
   * Evaluate a frame on the running world (paused: the last frame, nothing runs, unless `step`:
   * the Player's one frame while paused); `signal` cancels it.
   */
  runFrame(input: Parameters<Engine['evaluate']>[0], signal?: AbortSignal, options: { step?: boolean } = {}): Promise<{ report: FrameReport; events: SessionEvent[] }> {
    return this.frame<{ report: FrameReport; events: SessionEvent[] }>(async (running) => {
      const engine = this.engine;
      if (this.paused && !options.step) {
        // Paused: nothing runs, not even a first frame; the answer is the last frame (if any).
        const last = this.lastFrame ?? { frame: engine.frame, time: engine.time, placements: [] };
        return { report: { ...last, executed: [], reused: last.placements.map((p) => p.node), timings: [], cached: true }, events: [{ kind: 'idle', reason: 'paused' }] };
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
    }, signal).finally(() => this.slot.frameEnded());
  }

  /** What JSON.stringify (a host's log) shows: the session's scene and state, not its threads (CompileWorker.toJSON). */
  toJSON(): object {
    return { scene: join(this.folder.root, this.entry), loaded: !this.refused, revision: this.revision, closed: this.closing };
  }

  /** Whether close() was called: the session answers no more requests. */
  get closed(): boolean {
    return this.closing;
  }

  /**
   * Stop the session: its evaluations are cancelled (a long frame stops at once, as for a closed
   * connection), then its threads end.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.evaluations.closeAll();
    this.endWarmUp.abort();
    await this.optimiser?.close();
    await this.slot.settled();
    this.current?.engine.dispose();
    await this.pool?.destroy();
    if (this.ownsCompiler) await this.compiler?.close();
  }
}
