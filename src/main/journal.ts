// Writes of several documents under the scene's folder that land all or none, also across a
// crash, and the recovery of a write a crash interrupted. The model is SQLite's: a document is
// never half-written, and a journal on disk always says how to reach all-old or all-new.
//
// A write goes in steps, each durable (fsync'd) before the next:
//   1. the journal `.entelechy-journal.json`, state "prepared": each document, the version of its
//      new text, the temp file beside it that will hold that text, and the backup that will keep
//      its old one (none for a new document);
//   2. each new text is written to its temp file; each existing document is hard-linked to its
//      backup (copied where the file system has no links);
//   3. the journal is rewritten, state "committed": from here on the set is decided;
//   4. each temp file is renamed over its document (atomic on one file system);
//   5. the backups, then the journal, are removed (not fsync'd: a finished set's journal that
//      comes back after a crash finds every temp gone, and recovery only finishes it again).
// A set of one document skips step 3, keeps no backup and fsyncs no folder in step 2 (its temp's
// data is fsync'd; its name becomes durable as the document, by step 4's fsync): its rename,
// atomic, decides it, and nothing is ever turned back after it. A crash after it leaves a "prepared" journal whose
// document holds the new text, which recovery tells as written. (The journal's rewrite and its
// fsyncs took 1-3 ms of each compose, after its compile and before its frame.) Nor is the folder
// fsync'd after its journal in step 1: that journal only names the temp to clear, so a power cut
// that loses it leaves at most a stray temp, never a document wrong (a process killed loses
// nothing: the kernel keeps the name). It was one of three fsyncs a literal edit's commit waited for.
// A set of several documents fsyncs the folder there: recovery decides such a set by its journal.
// A failure before step 3 removes what was written: the documents were never touched. A rename
// that fails in step 4 (an immutable document, say) turns the set back: the journal says
// "rollback" and the documents renamed already get their backups back. Either way the error says
// what failed, which file and what to do (WriteError), and no journal is left to act on later.
//
// `recoverJournal` (when a session opens, and before every write) finishes what a crash
// interrupted: "prepared": temps and backups removed; "committed": the renames completed (a temp
// that is gone was renamed; one that cannot be renamed turns the set back); "rollback": back to
// the backups. A journal Entelechy did not write (not JSON, an unknown state, a path outside the
// folder, a temp or backup that is not its own file beside the document) is never followed: it is
// left where it is for the user to look at, and recovery (so every write, and opening a session)
// refuses with what is wrong and what to do.
//
// The journal itself is always written to a temp file and renamed, so it is whole or absent.
//
// The file operations and how a set ends are in journal-disk.ts; the recovery is in
// journal-recovery.ts.

import { readFileSync, rmdirSync, statSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { JOURNAL_NAME, PathError, inside, realRootOf, resolveUnder, versionOf } from './documents.js';
import { besideName, discard, finish, fsyncDir, keepBackup, realpathOrSelf, step, toRelative, turnBack, writeFresh, writeJournal, type JournalEntry } from './journal-disk.js';
import { recoverJournal } from './journal-recovery.js';
import { WriteError, writeError } from './write-error.js';

export { WriteError };

/** Where a write stops, to test recovery: after step 1, 2 or 3 (none for one document), or after this many renames. */
export type CrashPoint = 'prepared' | 'temps' | 'committed' | number;

export interface WriteOptions {
  /** Testing only: stop (throw a SimulatedCrash) at this point, leaving the disk as a crash would. */
  crashAfter?: CrashPoint;
}

/** Thrown by `writeDocuments` at its `crashAfter` point. */
export class SimulatedCrash extends Error {
  constructor(readonly point: CrashPoint) {
    super(`simulated crash after ${typeof point === 'number' ? `${point} rename(s)` : `step "${point}"`}`);
    this.name = 'SimulatedCrash';
  }
}

// --- writing a set --------------------------------------------------------------------------

interface Target {
  abs: string;
  text: string;
  mode?: number;
  entry: JournalEntry;
  /** The text the writer read and changed (null: the document was absent); undefined: not checked. */
  base?: string | null;
}

/** A document to write: its text and, to have the write refused if the disk moved on, the text it was made from. */
export interface DocumentWrite {
  path: string;
  text: string;
  /**
   * What the document held when the writer read it (null: it was absent). A write whose document
   * holds something else by the time it commits is refused (SavedMeanwhile): an editor saved it
   * while the change was checked and compiled, and that save would otherwise be gone unseen.
   */
  base?: string | null;
}

/** Check every path and text, and name each document's temp and (in a set of several) backup; nothing is written. */
function plan(root: string, realRoot: string, files: DocumentWrite[]): Target[] {
  if (!Array.isArray(files)) throw new Error('writeDocuments takes an array of {path, text}');
  const targets: Target[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    if (f === null || typeof f !== 'object') throw new Error('each document to write is {path, text}');
    const abs = resolveUnder(root, f.path);
    if (typeof f.text !== 'string') throw new Error(`the text of \`${f.path}\` must be a string`);
    // The journal names paths under the real root (a link inside the root is followed).
    const real = join(realpathOrSelf(dirname(abs)), basename(abs));
    if (!inside(real, realRoot)) throw new PathError(`\`${f.path}\` leads out of the scene's folder; name a path that stays inside`, f.path);
    const before = seen.get(real);
    if (before !== undefined) throw new PathError(`\`${f.path}\` and \`${before}\` name the same document; send one text per document`, f.path);
    seen.set(real, f.path);
    let mode: number | undefined;
    try {
      mode = statSync(real).mode & 0o7777;
    } catch {
      mode = undefined;
    }
    const entry: JournalEntry = { path: toRelative(realRoot, real), version: versionOf(f.text), temp: toRelative(realRoot, besideName(real, 'new')) };
    if (mode !== undefined && files.length > 1) entry.backup = toRelative(realRoot, besideName(real, 'old'));
    targets.push({ abs: real, text: f.text, mode, entry, base: f.base });
  }
  return targets;
}

/**
 * Write several documents all or none, also across a crash (see the top of this file). Every path
 * is checked (resolveUnder) and every text must be a string before anything is written. A file
 * system that refuses (full, read-only, an immutable file, a name too long) is a WriteError, with
 * every document as it was and no journal left behind.
 */
export async function writeDocuments(root: string, files: DocumentWrite[], options: WriteOptions = {}): Promise<void> {
  await (await prepareWrite(root, files, options)).commit();
}

/** A write whose steps 1-2 are done (the documents untouched): commit it, or abandon it. */
export interface PreparedWrite {
  /** Steps 3-5: the documents replaced. A WriteError leaves every one as it was. */
  commit(): Promise<void>;
  /** Remove what steps 1-2 wrote: the documents were never touched. */
  abandon(): Promise<void>;
}

/**
 * Steps 1-2 of a write (the journal "prepared", the temps and backups), which leave every document
 * as it was: a change does them while its modules compile, and commits them once it is decided
 * (commit.ts). Throws a WriteError with nothing left behind, as writeDocuments does.
 */
export async function prepareWrite(root: string, files: DocumentWrite[], options: WriteOptions = {}): Promise<PreparedWrite> {
  const realRoot = realRootOf(root);
  const targets = plan(root, realRoot, files);
  if (targets.length === 0) return { commit: async () => undefined, abandon: async () => undefined };
  const crash = (point: CrashPoint): void => {
    if (options.crashAfter === point) throw new SimulatedCrash(point);
  };
  const at = (t: Target | undefined) => (t ? t.entry.path : JOURNAL_NAME);

  await recoverJournal(root);
  const renames = targets.map((t) => t.entry);
  let doing: Target | undefined;
  try {
    await writeJournal(realRoot, { entelechy: 'journal', state: 'prepared', renames }, targets.length > 1);
  } catch (e) {
    throw writeError(e, JOURNAL_NAME, 'nothing was written');
  }
  crash('prepared');
  const dirs = new Set<string>();
  /** Folders this write made for new documents, each with the first of them made: gone again if it is abandoned. */
  const made: { dir: string; first: string }[] = [];
  try {
    for (const t of targets) {
      doing = t;
      const dir = dirname(t.abs);
      const first = await step(mkdir(dir, { recursive: true }));
      if (first) made.push({ dir, first });
      await writeFresh(join(realRoot, t.entry.temp), t.text, t.mode);
      if (t.entry.backup) await keepBackup(t.abs, join(realRoot, t.entry.backup), t.mode!);
      dirs.add(dir);
    }
    doing = undefined;
    // The temps' names must be durable before a commit record that recovery rolls forward by;
    // one document has none: its rename, then its folder's fsync, make its temp the document.
    if (targets.length > 1) for (const dir of dirs) await fsyncDir(dir);
    crash('temps');
  } catch (e) {
    if (e instanceof SimulatedCrash) throw e;
    await discard(realRoot, renames).catch(() => undefined); // a prepared journal left here is rolled back later
    removeMade(made);
    throw writeError(e, at(doing), 'nothing was written');
  }
  return {
    abandon: async () => {
      await discard(realRoot, renames);
      removeMade(made);
    },
    commit: async () => {
      // Last, before anything is decided: the documents still hold what the writer changed.
      const moved = targets.find((t) => t.base !== undefined && textNow(t.abs) !== t.base);
      if (moved) {
        await discard(realRoot, renames).catch(() => undefined);
        removeMade(made);
        throw new SavedMeanwhile(moved.entry.path);
      }
      if (targets.length > 1) {
        try {
          await writeJournal(realRoot, { entelechy: 'journal', state: 'committed', renames });
        } catch (e) {
          await discard(realRoot, renames).catch(() => undefined);
          throw writeError(e, JOURNAL_NAME, 'nothing was written');
        }
        crash('committed');
      }
      for (const [i, t] of targets.entries()) {
        crash(i);
        try {
          await step(rename(join(realRoot, t.entry.temp), t.abs));
        } catch (e) {
          await turnBack(realRoot, renames).catch(() => undefined); // a journal left here is turned back later
          throw writeError(e, t.entry.path, 'every document of the write is as it was');
        }
      }
      crash(targets.length);
      for (const dir of dirs) await fsyncDir(dir);
      await finish(realRoot, renames);
    },
  };
}

/** A document's text on disk now; null when it is not there. */
function textNow(abs: string): string | null {
  try {
    return readFileSync(abs, 'utf8');
  } catch {
    return null;
  }
}

/** A write refused because its document changed on disk after the writer read it. */
export class SavedMeanwhile extends WriteError {
  constructor(path: string) {
    super(`\`${path}\` was saved on disk while this change was made (it no longer holds the text the change was made from): nothing was written, and the running version keeps running; send \`sync\` to take the saved text, then make the change again`, path, 'saved_meanwhile');
  }
}

/**
 * Remove the folders a write made, now empty again (a refused compose of `new/more.esn` left an
 * empty `new/`): from each one's deepest up to the first it made. One not empty stays, with its
 * parents.
 */
function removeMade(made: { dir: string; first: string }[]): void {
  for (const { dir, first } of made) {
    for (let d = dir; ; d = dirname(d)) {
      try {
        rmdirSync(d);
      } catch {
        break;
      }
      if (d === first || dirname(d) === d) break;
    }
  }
}
