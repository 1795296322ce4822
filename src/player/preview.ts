// Preview before publishing: with the mode on (a box on the page), a saved edit is not published
// at once. The window runs it on a fork of the world (a dry run: protocol/handlers/speculate.ts,
// main/fork.ts) and every page shows, for each output, the running world's picture and the
// change's at the same frame, where it changed, and how much; the person publishes it (as a
// saved edit is published without the mode) or discards it (the running world keeps its version,
// the file keeps the edit). One saved edit waits at a time: a newer save replaces it, and a
// change of the running world meanwhile (an agent's compose) previews it again against the new one.

import { withDeadline } from '../main/cancel.js';
import { publishSavedEdit, runsAlready, savedEdit, savedEditRejected } from '../main/disk-sync.js';
import type { Session } from '../main/session.js';
import { dryRun } from '../protocol/handlers/speculate.js';

/** The longest side of the pictures a preview shows (a 256 x 256 output is shown pixel for pixel). */
export const PREVIEW_SIDE = 512;

/** A saved edit waiting for the person: what the pages are told (`{"type": "preview", ...}`). */
export interface HeldEdit {
  id: number;
  /** The documents the edit changed. */
  paths: string[];
  /** The running world's revision it was run against. */
  revision: number;
  /** What the dry run answered: events it would tell, and per output the pictures and the diff. */
  events: unknown[];
  evaluation: unknown;
}

type Tell = (message: object) => void;

export class SavedEditPreview {
  /** Whether saved edits wait for the person (the page's box). */
  on = false;
  held: HeldEdit | null = null;
  private texts = new Map<string, string>();
  private nextId = 0;
  /** The newest preview asked for: an older one still running is dropped when it ends. */
  private latest = 0;

  constructor(
    private readonly session: Session,
    private readonly tell: Tell,
  ) {}

  /** Turn the mode on or off; a held edit stays held either way (the person decides it). */
  setMode(on: boolean): void {
    this.on = on;
    this.session.holdSavedEdit = on ? (texts, changed) => void this.preview(texts, changed) : undefined;
    this.tell({ type: 'preview-mode', on });
  }

  /** What a page opened now is told. */
  messages(): object[] {
    return [{ type: 'preview-mode', on: this.on }, ...(this.held ? [{ type: 'preview', ...this.held }] : [])];
  }

  /** Run the saved edit on a fork and show it; a rejected one is told as a saved edit's rejection (the overlay). */
  async preview(texts: Map<string, string>, paths: string[]): Promise<void> {
    const id = ++this.nextId;
    this.latest = id;
    const s = this.session;
    // Saved back to what runs (an undo, a bad save mended to the running text): nothing to preview.
    // It goes the way of a saved edit, which clears a rejection; a held edit is over.
    if (runsAlready(s, texts, paths)) {
      if (this.held) this.tell({ type: 'preview', id: null, why: 'superseded' });
      this.held = null;
      void publishSavedEdit(s, texts, paths);
      return;
    }
    this.tell({ type: 'previewing', id, paths });
    try {
      const answer = await s.change(async () => {
        if (id !== this.latest) return undefined; // a newer save came meanwhile
        const revision = s.revision;
        // Under the deadline a saved edit is published under (a runaway migration is abandoned).
        const bound = withDeadline(s.backgroundDeadline);
        try {
          return { revision, ...(await dryRun(s, savedEdit(s, texts, bound.signal), { frames: 1, thumbnail: PREVIEW_SIDE, png: false, before: true })) };
        } finally {
          bound.done();
        }
      });
      if (!answer || id !== this.latest) return;
      this.texts = texts;
      this.held = { id, paths, revision: answer.revision, events: answer.events, evaluation: answer.evaluation };
      this.tell({ type: 'preview', ...this.held });
    } catch (e) {
      if (id !== this.latest) return;
      this.held = null;
      this.tell({ type: 'preview', id: null, why: 'rejected' });
      // As a saved edit that does not check: the overlay names the place, agents hear it on `sync`.
      s.pending.push(savedEditRejected(s, paths, e));
    }
  }

  /** The person publishes the held edit: published as a saved edit is (its verdict told as events). */
  publish(id: number): void {
    const held = this.take(id, 'publish');
    void publishSavedEdit(this.session, this.texts, held.paths);
    this.tell({ type: 'preview', id: null, why: 'published' });
  }

  /** The person discards the held edit: the running world keeps its version, the file keeps the edit. */
  discard(id: number): void {
    const held = this.take(id, 'discard');
    this.session.pending.push({ kind: 'discarded', paths: held.paths });
    this.tell({ type: 'preview', id: null, why: 'discarded' });
  }

  /**
   * The running world changed under a held edit (an agent's compose): run it again against the new
   * world; or, when the world now runs what the disk holds (a newer save published with the mode
   * off, a compose that took the edit in), the held edit is over: it showed the same picture twice.
   */
  worldChanged(): void {
    if (!this.held || this.held.revision === this.session.revision) return;
    const disk = this.session.readAll();
    const runs = this.held.paths.every((path) => disk.get(path) === this.session.texts.get(path));
    if (!runs) return void this.preview(disk, this.held.paths);
    this.held = null;
    this.latest = ++this.nextId;
    this.tell({ type: 'preview', id: null, why: 'superseded' });
  }

  private take(id: number, what: string): HeldEdit {
    const held = this.held;
    if (!held || held.id !== id) throw new Error(`no saved edit ${id} waits to ${what}: ${held ? `edit ${held.id} does` : 'none is held'}`);
    this.held = null;
    this.latest = ++this.nextId; // a preview still running for it is dropped
    return held;
  }
}
