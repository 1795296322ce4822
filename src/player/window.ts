// The window loop: one per session. It makes the frames every page watches (and the frames
// `evaluate` answers with while the Player serves the session), at most one per tick, only when a
// page is ready for one or a request waits: a page that is slow misses frames, none queue up.

import { Cancelled } from '../main/cancel.js';
import { EvaluationError, failureTold } from '../main/evaluation-error.js';
import { watch, type FSWatcher } from 'node:fs';
import type { FrameReport } from '../main/engine.js';
import type { Field } from '../main/field.js';
import type { FrameSource, Session, SessionEvent } from '../main/session.js';
import { encodeFrame, fieldPixels, type FrameHeader } from './frames.js';
import { describeScene, sourceFields, type SceneDescription } from './scene.js';
import { Recorder, type RecordingSummary } from './recorder.js';
import { SavedEditPreview } from './preview.js';

/** What the window needs of a page (see pages.ts). */
export interface WindowPage {
  /** The page has drawn its last frame and asked for the next. */
  ready: boolean;
  /** What it shows: an output's name, or `node.port` of a pinned node. */
  source?: string;
  /** The key of the last frame it got (revision, frame, source): a frame is sent once. */
  lastKey?: string;
  sendFrame(bytes: Buffer): void;
  sendJson(message: object): void;
}

/** A rejected change as the overlay shows it. */
export interface Rejection {
  message: string;
  path?: string;
  line?: number;
  column?: number;
}

export interface WindowOptions {
  /** Shortest time between two frames (ms); default 1000/60, a display's rate. */
  interval?: number;
  /** How often the folder is looked at besides file-change notices (ms); default 1000. */
  pollInterval?: number;
}

/** Events that say which tier runs: the Player shows them (a change live on a tier, the optimised one arrived or given up). */
const TIER_EVENTS = ['published', 'optimised', 'optimise_abandoned'];
type Answer = { report: FrameReport; events: SessionEvent[] };

/**
 * Each group's timing with its tier (fast until its optimised module is swapped in:
 * docs/architecture.md, Tiers); a group the frame kept (reuse) as `reused`, without time. A
 * cached frame ran nothing: none (the page keeps the last).
 */
function groupTimings(report: FrameReport): { node: string; fused?: string[]; millis: number; tier?: string; reused?: true }[] {
  if (report.cached) return [];
  const last = new Map(report.placements.map((p) => [p.group, p])); // each group under its last node
  return [...last.values()].map((p) => {
    const timing = report.timings.find((t) => t.node === p.node) ?? { node: p.node, ...(p.fused.length > 1 ? { fused: p.fused } : {}), millis: 0 };
    return { ...timing, tier: p.tier, ...(p.reused ? { reused: true as const } : {}) };
  });
}

export class PlayerWindow implements FrameSource {
  readonly pages = new Set<WindowPage>();
  /** The person's pointer, in field elements, and the keys held (from the page used last). */
  pointer = { x: -1, y: -1, down: false };
  keys: string[] = [];
  /** The last rejected change, shown until a change is published. */
  rejection: Rejection | null = null;
  /** The last tier news (a change live on a tier, the optimised one arrived or given up): a page opened later is told it too. */
  private tierNews?: Record<string, unknown>;
  /** The running documents when the rejection came. */
  private rejectedOver?: string;
  private waiters: { resolve: (a: Answer) => void; reject: (e: unknown) => void }[] = [];
  private timer?: NodeJS.Timeout;
  private running = false;
  private closed = false;
  private lastStart = 0;
  private lastClock = performance.now();
  /** Wall-clock times of the frames of the last second (the frame rate). */
  private recent: number[] = [];
  /** A step asked for while paused: one frame runs, then the world stands still again. */
  private stepAsked = false;
  /** The failure last told to the pages (its node and words, the element left out): a frame that fails the same way every tick is told once, until a frame runs again. */
  private failureTold?: { key: string; message: object };
  private lastReport?: FrameReport;
  private revision: number;
  private described = '';
  private housekeeping: NodeJS.Timeout;
  private watcher?: FSWatcher;
  private diskTimer?: NodeJS.Timeout;
  private readonly interval: number;
  private readonly observe = (event: SessionEvent) => this.onEvent(event);
  /** The recording in progress, if any (one per window: the person records what they watch). */
  private recorder?: Recorder;
  /** The pixels of the frame made last, by source (pages and the recording share them). */
  private pixels = new Map<string, ReturnType<typeof fieldPixels>>();
  private pixelsKey = '';
  /** Preview before publishing: saved edits held for the person (preview.ts). */
  readonly preview: SavedEditPreview;

  constructor(
    readonly session: Session,
    options: WindowOptions = {},
  ) {
    this.interval = options.interval ?? 1000 / 60;
    this.revision = session.revision;
    // A scene that did not check at all runs an empty world: say why until it is mended.
    if (session.refused) {
      this.rejection = { message: session.refused.message };
      this.rejectedOver = this.documentsNow();
    }
    session.window = this;
    this.preview = new SavedEditPreview(session, (m) => this.pages.forEach((p) => p.sendJson(m)));
    session.pending.observers.add(this.observe);
    // Tier news told before this window was made (the optimiser starts with the session): the last of it.
    for (const event of session.pending) if (TIER_EVENTS.includes(event.kind)) this.tellTier(event);
    // Saved edits: the folder is watched (and looked at now and then, for editors and file systems
    // whose notices do not come); the session prepares them as for `sync`.
    try {
      this.watcher = watch(session.folder.root, { recursive: true }, (_, name) => {
        // A video being recorded into the folder is no document: its writes are no saved edits.
        if (typeof name === 'string' && /\.(mp4|partial)$/.test(name)) return;
        this.diskSoon();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      // no file notices here: the poll below still sees saved edits
    }
    let ticks = 0;
    const poll = Math.max(1, Math.round((options.pollInterval ?? 1000) / 250));
    this.housekeeping = setInterval(() => {
      if (++ticks % poll === 0) this.lookAtDisk();
      this.tellScene();
      this.schedule();
    }, 250);
    this.housekeeping.unref();
  }

  /** What `evaluate` answers while the Player serves the session: the window's next frame. */
  nextFrame(): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  addPage(page: WindowPage): void {
    this.pages.add(page);
    page.sendJson({ type: 'scene', ...this.description() });
    if (this.rejection) page.sendJson({ type: 'rejected', ...this.rejection });
    if (this.failureTold) page.sendJson(this.failureTold.message);
    if (this.tierNews) page.sendJson(this.tierNews);
    if (this.recorder) page.sendJson({ type: 'recording', file: this.recorder.file, source: this.recorder.source });
    for (const m of this.preview.messages()) page.sendJson(m);
    this.schedule();
  }

  // -- recording ----------------------------------------------------------------------------------

  /** Start recording `source` (an output, or `node.port` of a pinned node) to a video under the scene's folder. */
  startRecording(source?: string): { file: string; source: string } {
    if (this.recorder) throw new Error(`already recording to ${this.recorder.file}: stop that first`);
    const name = source ?? this.session.scene.outputs[0]?.name ?? '';
    const field = this.fieldOf(name);
    if (!field) throw new Error(`nothing to record as \`${name}\`: name an output, or a port of a pinned node`);
    const entry = this.session.entry.replace(/\.esn$/, '').split('/').pop() ?? 'scene';
    this.recorder = Recorder.start(this.session.folder, entry, name, field.width, field.height);
    const started = { file: this.recorder.file, source: name };
    for (const p of this.pages) p.sendJson({ type: 'recording', ...started });
    this.schedule();
    return started;
  }

  /** Stop the recording: the video is finished and named; every page is told where it is. */
  async stopRecording(why?: string): Promise<RecordingSummary> {
    const recorder = this.recorder;
    if (!recorder) throw new Error('nothing is being recorded');
    this.recorder = undefined;
    try {
      const done = await recorder.stop();
      for (const p of this.pages) p.sendJson({ type: 'recorded', file: done.file, path: done.path, source: done.source, frames: done.frames, width: done.width, height: done.height, ...(why ? { why } : {}) });
      return done;
    } catch (e) {
      const message = `the recording to ${recorder.file} failed, nothing was kept: ${(e as Error)?.message ?? e}`;
      for (const p of this.pages) p.sendJson({ type: 'recorded', file: null, error: message });
      throw new Error(message);
    }
  }

  /** Hand the frame just made to the recording, if one runs. */
  private record(): void {
    const recorder = this.recorder;
    if (!recorder) return;
    const px = this.fieldOf(recorder.source) && this.pixelsOf(recorder.source);
    const why = recorder.failed ? 'ffmpeg failed'
      : !px ? `\`${recorder.source}\` is no longer shown (the scene changed)`
      : px.width !== recorder.width || px.height !== recorder.height ? `\`${recorder.source}\` changed size from ${recorder.width} x ${recorder.height} to ${px.width} x ${px.height}`
      : undefined;
    if (why) {
      void this.stopRecording(`stopped: ${why}`).catch(() => undefined);
      return;
    }
    recorder.add(px!.rgba, this.session.engine.time);
  }

  /** The pixels of `source` in the frame the world holds, made once per frame. */
  private pixelsOf(source: string): ReturnType<typeof fieldPixels> | undefined {
    const key = `${this.session.revision}:${this.session.engine.frame}`;
    if (key !== this.pixelsKey) {
      this.pixels.clear();
      this.pixelsKey = key;
    }
    let px = this.pixels.get(source);
    if (!px) {
      const field = this.fieldOf(source);
      if (!field) return undefined;
      px = fieldPixels(this.session.memory, field);
      this.pixels.set(source, px);
    }
    return px;
  }

  /** One frame while paused (the page's step button); nothing while running. */
  step(): void {
    if (!this.session.paused) return;
    this.stepAsked = true;
    this.schedule();
  }

  removePage(page: WindowPage): void {
    this.pages.delete(page);
  }

  /** The scene as pages show it (params, outputs, pins, paused); told again when it changes. */
  description(): SceneDescription {
    return describeScene(this.session);
  }

  /** Tell every page the scene when it changed (a publication, a param, a pin, pause). */
  tellScene(): void {
    if (this.session.revision !== this.revision) {
      this.revision = this.session.revision;
      // A change of the documents was published (a compose, say): the overlay goes. A pin also
      // publishes, but the documents are as they were: the rejected edit still waits for a fix.
      if (this.documentsNow() !== this.rejectedOver) this.clearRejection();
      this.preview.worldChanged();
    }
    const d = this.description();
    const text = JSON.stringify(d);
    if (text === this.described) return;
    this.described = text;
    for (const p of this.pages) p.sendJson({ type: 'scene', ...d });
  }

  /** A page asked for the next frame, or changed what it shows: look again soon. */
  schedule(): void {
    if (this.closed || this.timer || this.running || !this.wanted()) return;
    // A frame that keeps failing is tried again twice a second, not at the frame rate (each try can burn its fuel).
    const delay = Math.max(0, this.lastStart + (this.failureTold ? Math.max(this.interval, 500) : this.interval) - performance.now());
    this.timer = setTimeout(() => void this.tick(), delay);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.diskTimer);
    clearInterval(this.housekeeping);
    this.watcher?.close();
    this.session.pending.observers.delete(this.observe);
    if (this.session.window === this) this.session.window = undefined;
    if (this.preview.on) this.session.holdSavedEdit = undefined;
    for (const w of this.waiters.splice(0)) w.reject(new Error('the Player closed'));
    // A recording in progress keeps what was recorded.
    if (this.recorder) await this.stopRecording('stopped: the Player closed').catch(() => undefined);
  }

  private wanted(): boolean {
    if (this.waiters.length || this.stepAsked) return true;
    // A recording takes every frame the window can make, whether or not a page has drawn the last.
    if (this.recorder && !this.session.paused) return true;
    for (const p of this.pages) if (p.ready && (!this.session.paused || p.lastKey !== this.keyFor(p))) return true;
    return false;
  }

  private keyFor(page: WindowPage): string {
    return `${this.session.revision}:${this.session.engine.frame}:${page.source ?? ''}`;
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.running = true;
    try {
      const step = this.stepAsked && this.session.paused;
      this.stepAsked = false;
      if (this.session.paused && !step) {
        // Paused: nothing runs; requests get the last frame, pages the frame they may not have yet.
        const waiters = this.waiters.splice(0);
        if (waiters.length) {
          const answer = await this.session.runFrame({});
          for (const w of waiters) w.resolve(answer);
        }
        if (this.session.lastFrame) this.deliver(this.session.lastFrame);
        return;
      }
      this.lastStart = performance.now();
      // The world's clock follows the wall clock while it runs (a long stall counts as 0.1 s); a step is one interval.
      const dt = step ? this.interval / 1000 : Math.min(0.1, (this.lastStart - this.lastClock) / 1000);
      this.lastClock = this.lastStart;
      const waiters = this.waiters.splice(0);
      let answer: Answer;
      try {
        answer = await this.session.runFrame({ time: this.session.engine.time + dt, pointer: { ...this.pointer }, keys: this.keys }, undefined, { step });
      } catch (e) {
        for (const w of waiters) w.reject(e);
        // A frame a change stopped (the world swapped under it) is no error to show: the next tick runs the new world.
        if (!(e instanceof Cancelled && e.reason === 'changed')) {
          // A failed frame (a loop out of fuel) with where its node is: the page shows it until a frame runs again.
          const told = e instanceof EvaluationError ? failureTold(this.session.scene, e) : undefined;
          const failed = e instanceof EvaluationError ? { type: 'frame-failed', node: e.node, ...told!.place } : { type: 'error' };
          const message = told?.message ?? (e as Error)?.message ?? String(e);
          const key = `${this.session.revision}:${e instanceof EvaluationError ? e.node : ''}:${message.replace(/ at element \([^)]*\)/, '')}`;
          if (key !== this.failureTold?.key) for (const p of this.pages) p.sendJson({ ...failed, message });
          this.failureTold = { key, message: { ...failed, message } };
        }
        return;
      }
      this.failureTold = undefined;
      for (const w of waiters) w.resolve(answer);
      if (!answer.report.cached) {
        const now = performance.now();
        this.recent.push(now);
        while (this.recent.length && this.recent[0]! < now - 1000) this.recent.shift();
      }
      this.lastReport = answer.report.cached ? (this.lastReport ?? answer.report) : answer.report;
      // The world may have been swapped while the frame ran: then this frame is not the one held.
      if (this.session.lastFrame === answer.report || answer.report.cached) this.deliver(this.lastReport);
      if (this.session.lastFrame === answer.report || answer.report.cached) this.record();
    } finally {
      this.running = false;
      this.lastClock = this.session.paused ? performance.now() : this.lastClock;
      this.schedule();
    }
  }

  /** Send the frame the world holds to every ready page that has not got it (read now, at once). */
  private deliver(report: FrameReport): void {
    const encoded = new Map<string, Buffer | null>();
    for (const page of this.pages) {
      if (!page.ready) continue;
      const key = this.keyFor(page);
      if (page.lastKey === key) continue;
      const source = page.source ?? this.session.scene.outputs[0]?.name ?? '';
      if (!encoded.has(source)) encoded.set(source, this.encode(source, report));
      const bytes = encoded.get(source);
      if (!bytes) continue;
      page.ready = false;
      page.lastKey = key;
      page.sendFrame(bytes);
    }
  }

  private encode(source: string, report: FrameReport): Buffer | null {
    const px = this.pixelsOf(source);
    if (!px) return null;
    const { width, height, rgba, depth, slice } = px;
    const header: FrameHeader & Record<string, unknown> = {
      frame: this.session.engine.frame, time: this.session.engine.time, output: source, width, height,
      ...(depth !== undefined ? { depth, slice } : {}), revision: this.session.revision,
      timings: groupTimings(report), fps: this.recent.length, paused: this.session.paused,
    };
    return encodeFrame(header, rgba);
  }

  /** An output by name, `input:NAME` of an input, or `node.port` of a node whose field is kept (pinned): scene.ts names them. */
  fieldOf(source: string): Field | undefined {
    return sourceFields(this.session).find((src) => src.name === source)?.field;
  }

  // -- changes and their verdicts ---------------------------------------------------------------

  /** The running documents' texts, to tell a published fix from a publication of the same. */
  private documentsNow(): string {
    return JSON.stringify([...this.session.texts]);
  }

  private onEvent(event: SessionEvent): void {
    if (event.kind === 'rejected' || event.kind === 'scene_rejected') {
      this.rejectedOver = this.documentsNow();
      const where = (k: string) => (typeof event[k] === 'number' ? (event[k] as number) : undefined);
      this.rejection = {
        message: String(event.message ?? 'the change was rejected'),
        ...(typeof event.path === 'string' ? { path: event.path } : {}),
        ...(where('line') !== undefined ? { line: where('line'), column: where('column') } : {}),
      };
      for (const p of this.pages) p.sendJson({ type: 'rejected', ...this.rejection });
    } else if (event.kind === 'published' && Array.isArray(event.paths)) {
      this.tellScene();
      this.clearRejection();
    }
    // A pin a change of the scene took away (its node renamed or removed): the view fell back to an output.
    if (event.kind === 'unpinned') for (const p of this.pages) p.sendJson({ type: 'notice', kind: 'unpinned', message: `the pin of \`${String(event.node)}\` went with its node (renamed or removed from the scene): pin it again under its new name` });
    // Which tier a change went live on, and when the optimised one arrives (or is given up).
    if (TIER_EVENTS.includes(event.kind)) this.tellTier(event);
  }

  private tellTier(event: SessionEvent): void {
    if (event.kind === 'published' && typeof event.tier !== 'string') return; // a kernel's generation, not a compile
    this.tierNews = { type: 'tier', event: event.kind, tier: event.kind === 'published' ? event.tier : event.kind === 'optimised' ? 'optimised' : 'fast', nodes: event.nodes, compile_ms: event.compile_ms, budget_ms: event.budget_ms };
    for (const p of this.pages) p.sendJson(this.tierNews);
  }

  private clearRejection(): void {
    if (!this.rejection) return;
    this.rejection = null;
    for (const p of this.pages) p.sendJson({ type: 'published', revision: this.session.revision });
  }

  private diskSoon(): void {
    if (this.closed || this.diskTimer) return;
    // Editors write a file in several steps: look once they are done.
    this.diskTimer = setTimeout(() => {
      this.diskTimer = undefined;
      this.lookAtDisk();
    }, 50);
  }

  private lookAtDisk(): void {
    if (this.closed) return;
    try {
      const seen = this.session.syncDisk();
      // Agents that `sync` are told too: what the Player saw is theirs as well.
      if (seen.length) this.session.pending.push(...seen);
      // A document gone or renamed on disk: the person is told too (the world keeps its last version).
      for (const e of seen) {
        if (e.kind !== 'removed' && e.kind !== 'renamed' && e.kind !== 'waiting') continue;
        const message = typeof e.message === 'string' ? e.message : e.kind === 'renamed' ? `\`${String(e.from)}\` was renamed to \`${String(e.to)}\`` : `\`${String(e.path)}\` is gone from disk`;
        for (const p of this.pages) p.sendJson({ type: 'notice', kind: e.kind, message });
      }
    } catch (e) {
      for (const p of this.pages) p.sendJson({ type: 'error', message: `looking at the folder failed: ${(e as Error)?.message ?? e}` });
    }
  }
}
