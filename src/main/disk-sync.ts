// The disk half of `sync` (the Player calls it too when the folder changes): documents the running
// world uses that were renamed or removed, and saved edits, which go through the commit path in the
// background (their `published` or `rejected` comes later, in `pending`).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Cancelled, withDeadline } from './cancel.js';
import { CheckFailed, diagnosticsData, MigrationFailed } from './refusals.js';
import { versionOf } from './documents.js';
import { GrantRefused, inputWritesGranted } from './grants.js';
import { MemoryLimitError } from './memory.js';
import type { Session, SessionEvent } from './session.js';
import type { SceneChange } from './commit.js';

/** What changed on disk since the session last saw each of its documents. */
function diskChanges(s: Session): { texts: Map<string, string>; changed: string[] } {
  const texts = s.readAll();
  const changed: string[] = [];
  for (const [path, text] of texts) {
    const seen = s.history.get(path);
    if (!seen || seen[seen.length - 1].version !== versionOf(text) || s.unjudged.has(path)) changed.push(path);
  }
  return { texts, changed };
}

/** Documents the running world uses that left their path: renamed when their text stands elsewhere. */
function renames(s: Session): SessionEvent[] {
  const reported = s.goneReported;
  const events: SessionEvent[] = [];
  for (const [path, text] of s.texts) {
    const now = s.folder.readDocument(path);
    if (typeof now === 'string') {
      reported.delete(path);
      continue;
    }
    if (reported.has(path)) continue;
    reported.add(path);
    // There, but not to be read (a symbolic link that leads out of the folder): told as what it is.
    if (now !== undefined) {
      events.push({ kind: 'removed', path, message: `${now.refused}; the running world keeps its last version of \`${path}\`` });
      continue;
    }
    const version = versionOf(text);
    const to = listDocuments(s.folder.root).find((p) => versionOf(s.folder.read(p) ?? '') === version);
    // The entry gone, no saved edit can be read as the scene (its documents are found from the entry).
    const waits = path === s.entry ? `: saved edits wait until \`${path}\` is back (this session runs the scene \`${path}\`)` : '';
    events.push(to ? { kind: 'renamed', from: path, to, ...(waits ? { message: `\`${path}\` was renamed to \`${to}\`${waits}` } : {}) } : { kind: 'removed', path, message: `\`${path}\` is gone from disk; the running world keeps its last version${waits}` });
  }
  return events;
}

/** The version of each document told `waiting` (saved while the entry was gone), so each save is told once. */
const toldWaiting = new WeakMap<Session, Map<string, string>>();

/** Saves of the world's other documents while its entry is gone from disk: not taken, and told so. */
function waiting(s: Session): SessionEvent[] {
  const told = toldWaiting.get(s) ?? new Map<string, string>();
  toldWaiting.set(s, told);
  const events: SessionEvent[] = [];
  for (const path of s.texts.keys()) {
    const text = path === s.entry ? undefined : s.folder.readDocument(path);
    if (typeof text !== 'string') continue;
    const version = versionOf(text);
    const seen = s.history.get(path);
    if (seen?.[seen.length - 1].version === version || told.get(path) === version) continue;
    told.set(path, version);
    events.push({ kind: 'waiting', path, version, message: `\`${path}\` was saved, but the scene's entry \`${s.entry}\` is gone from disk: the edit is taken once \`${s.entry}\` is back (rename it back, or open the scene it became)` });
  }
  return events;
}

function listDocuments(root: string, under = ''): string[] {
  return readdirSync(join(root, under), { withFileTypes: true }).flatMap((d) => {
    const rel = under ? `${under}/${d.name}` : d.name;
    if (d.name.startsWith('.') || d.name === 'node_modules') return [];
    return d.isDirectory() ? listDocuments(root, rel) : d.name.endsWith('.esn') ? [rel] : [];
  });
}

/**
 * Look at the disk: documents renamed or removed, and saved edits, which start compiling in the
 * background. Returns what it saw at once. The change runs under `signal` (a `sync` request's:
 * its cancel, deadline or closed connection) and always under the session's own deadline
 * (`backgroundDeadline`), so a runaway migration is abandoned, told as `rejected` naming its
 * node, rather than holding the frame slot; stopped, it writes nothing and the world stays.
 */
export function syncDisk(s: Session, signal?: AbortSignal): SessionEvent[] {
  // A compose is writing: its documents land before it remembers them; look again after.
  if (s.writing) return [];
  const events = renames(s);
  if (s.syncing) {
    // A save while another compiles: seen when that one is done, not at some later sync.
    s.resync = true;
    return events;
  }
  if (s.goneReported.has(s.entry)) return [...events, ...waiting(s)];
  const { texts, changed } = diskChanges(s);
  if (!changed.length) return events;
  for (const path of changed) {
    // History records the saved version; the world's texts change only once it is published.
    s.remember(path, texts.get(path)!, 'disk');
    s.unjudged.delete(path);
    events.push({ kind: 'preparing', path, version: versionOf(texts.get(path)!) });
  }
  // The Player in preview mode holds the saved edit until the person publishes or discards it
  // (one saved back to what runs has nothing to show: the Player takes it as a saved edit).
  if (s.holdSavedEdit) {
    if (runsAlready(s, texts, changed)) return (s.holdSavedEdit(texts, changed), events);
    s.holdSavedEdit(texts, changed);
    events.push({ kind: 'held', paths: changed, message: 'the Player previews saved edits before they are published: the person there publishes or discards this one' });
    return events;
  }
  void publishSavedEdit(s, texts, changed, signal);
  return events;
}

/** Whether the saved texts of `paths` are those the world runs (saved back to them: an undo, a bad save mended). */
export function runsAlready(s: Session, texts: ReadonlyMap<string, string>, paths: string[]): boolean {
  return paths.every((path) => texts.get(path) === s.texts.get(path));
}

/** A saved edit as a change of the world: the texts on disk (what is published, or previewed first). */
export function savedEdit(s: Session, texts: ReadonlyMap<string, string>, signal?: AbortSignal): SceneChange {
  return {
    reason: 'disk', texts, refusal: 'the saved edit does not check; the previous version keeps running',
    // A saved input's value is a write into it, as a compose's is.
    check: inputWritesGranted(s, 'the saved edit'),
    signal,
  };
}

/**
 * Publish a saved edit in the background, after the changes before it; its `published` or
 * `rejected` is told in `pending`. Never throws: no one need await it.
 */
export function publishSavedEdit(s: Session, texts: ReadonlyMap<string, string>, changed: string[], signal?: AbortSignal): Promise<void> {
  const bound = withDeadline(s.backgroundDeadline, signal);
  s.syncing = s
    .change(async () => {
      // Nothing may escape: no one awaits this, and what went wrong is told on a later sync.
      try {
        const published = await s.commit(savedEdit(s, texts, bound.signal));
        s.pending.push(...published, { kind: 'published', paths: changed, revision: s.revision });
      } catch (e) {
        // Stopped by a cancel or a closed connection, the edit was never judged: the next sync
        // takes it again (it was seen, and else would wait for the file's next change). A
        // deadline's stop is a judgement: a runaway migration is not run again at every sync.
        if (e instanceof Cancelled && e.reason !== 'deadline') for (const path of changed) s.unjudged.add(path);
        s.pending.push(savedEditRejected(s, changed, e));
      }
    })
    .finally(() => {
      bound.done();
      s.syncing = undefined;
      if (s.resync) {
        s.resync = false;
        s.pending.push(...syncDisk(s));
      }
    });
  return s.syncing;
}

/** The `rejected` event of a saved edit that was not published (and `status` says refused). */
export function savedEditRejected(s: Session, paths: string[], e: unknown): SessionEvent {
  const retried = e instanceof Cancelled && e.reason !== 'deadline' ? '; the next `sync` takes it again' : '';
  const message = e instanceof CheckFailed ? e.message : `the saved edit was not published; the previous version keeps running: ${(e as Error)?.message ?? e}${retried}`;
  s.refused = { message, at: new Date().toISOString() };
  const why =
    e instanceof CheckFailed ? diagnosticsData(e.diagnostics)
    : e instanceof GrantRefused ? { grant: e.grant }
    : e instanceof MigrationFailed ? e.data
    : e instanceof MemoryLimitError ? { ...e.at }
    : e instanceof Cancelled ? { cancelled: true, reason: e.reason, ...(e.node ? { node: e.node } : {}) }
    : {};
  return { kind: 'rejected', paths, message, ...why };
}
