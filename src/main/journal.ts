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
// fsyncs took 1-3 ms of each compose, after its compile and before its frame.)
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

import { randomBytes } from 'node:crypto';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { link, mkdir, open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, posix, relative, sep } from 'node:path';
import { JOURNAL_NAME, PathError, TEMP_SUFFIX, inside, realRootOf, resolveUnder, versionOf } from './documents.js';
import { WriteError, writeError } from './write-error.js';

export { WriteError };

/** A journal on disk that Entelechy did not write: never followed. */
export class JournalError extends Error {
  override name = 'JournalError';
  constructor(
    file: string,
    /** What is wrong with it, for the user: named relative to the scene's folder. */
    readonly why: string,
  ) {
    super(`${file} is not a journal Entelechy wrote; look at it, then move it away and start again`);
  }
}

interface JournalEntry {
  /** The document, relative to the root (`/` between folders). */
  path: string;
  /** The version of its new text (versionOf); journals from before it have none. */
  version?: string;
  /** Its temp file, relative to the root, beside it. */
  temp: string;
  /** Its old text's backup, beside it; absent for a document the write creates. */
  backup?: string;
}

type JournalState = 'prepared' | 'committed' | 'rollback';

interface Journal {
  entelechy: 'journal';
  state: JournalState;
  renames: JournalEntry[];
}

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

// --- the crash seam -------------------------------------------------------------------------
// ENTELECHY_TEST_KILL_AT_STEP=N makes this process SIGKILL itself right after its N-th file
// operation here (test/crash.test.ts kills a real `entelechy serve` at every step of a compose).
let steps = 0;

async function step<T>(op: Promise<T>): Promise<T> {
  const result = await op;
  steps++;
  if (steps === Number(process.env.ENTELECHY_TEST_KILL_AT_STEP)) {
    process.kill(process.pid, 'SIGKILL');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // never returns
  }
  return result;
}

// --- file operations ------------------------------------------------------------------------

async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await step(open(dir, 'r'));
    await step(handle.sync());
  } catch {
    // Not every platform can fsync a folder (Windows); the renames are still atomic.
  } finally {
    await handle?.close();
  }
}

/** Write a new file (it must not exist), fsync'd. */
async function writeFresh(file: string, text: string, mode?: number): Promise<void> {
  const handle = await step(open(file, 'wx', mode ?? 0o666));
  try {
    await step(handle.writeFile(text, 'utf8'));
    await step(handle.sync());
  } finally {
    await handle.close();
  }
}

/** Remove a file; false when it was not there (a name too long to exist is not there either). */
async function removeIfPresent(file: string): Promise<boolean> {
  try {
    await step(unlink(file));
    return true;
  } catch (e) {
    if (['ENOENT', 'ENAMETOOLONG'].includes((e as NodeJS.ErrnoException).code ?? '')) return false;
    throw e;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

/** The link errors after which a backup is a copy instead: the link was refused, the document can still be read. */
const LINK_REFUSED = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV'];

/**
 * Whether a hard link failed because it was refused (an immutable document: EPERM; a file system
 * without hard links: ENOTSUP, EOPNOTSUPP, ENOSYS; a file at its link limit: EMLINK; another mount:
 * EXDEV), so a copy will do. Exported for its test: most of these codes no file system here gives.
 */
export function linkRefused(e: unknown): boolean {
  return LINK_REFUSED.includes((e as NodeJS.ErrnoException)?.code ?? '');
}

/** Keep a document's old text at `backup`: a hard link (no copy), else a copy. */
async function keepBackup(doc: string, backup: string, mode: number): Promise<void> {
  try {
    await step(link(doc, backup));
  } catch (e) {
    if (!linkRefused(e)) throw e;
    await writeFresh(backup, await readFile(doc, 'utf8'), mode);
  }
}

async function writeJournal(realRoot: string, journal: Journal): Promise<void> {
  const file = join(realRoot, JOURNAL_NAME);
  const temp = `${file}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
  try {
    await writeFresh(temp, JSON.stringify(journal, null, 2) + '\n');
    await step(rename(temp, file));
  } catch (e) {
    await removeIfPresent(temp).catch(() => undefined);
    throw e;
  }
  await fsyncDir(realRoot);
}

function toRelative(realRoot: string, abs: string): string {
  return relative(realRoot, abs).split(sep).join('/');
}

/** A file beside `real` that only Entelechy names: its name's start, a random tag, the suffix. */
function besideName(real: string, kind: 'new' | 'old'): string {
  return join(dirname(real), `.${basename(real).slice(0, 32)}.${randomBytes(6).toString('hex')}.${kind}${TEMP_SUFFIX}`);
}

function realpathOrSelf(dir: string): string {
  // The nearest existing ancestor's real path, with the rest appended (folders may be new).
  const rest: string[] = [];
  let d = dir;
  for (;;) {
    try {
      return join(realpathSync(d), ...rest.reverse());
    } catch {
      const up = dirname(d);
      if (up === d) return dir;
      rest.push(basename(d));
      d = up;
    }
  }
}

// --- writing a set --------------------------------------------------------------------------

interface Target {
  abs: string;
  text: string;
  mode?: number;
  entry: JournalEntry;
}

/** Check every path and text, and name each document's temp and (in a set of several) backup; nothing is written. */
function plan(root: string, realRoot: string, files: { path: string; text: string }[]): Target[] {
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
    targets.push({ abs: real, text: f.text, mode, entry });
  }
  return targets;
}

/**
 * Write several documents all or none, also across a crash (see the top of this file). Every path
 * is checked (resolveUnder) and every text must be a string before anything is written. A file
 * system that refuses (full, read-only, an immutable file, a name too long) is a WriteError, with
 * every document as it was and no journal left behind.
 */
export async function writeDocuments(root: string, files: { path: string; text: string }[], options: WriteOptions = {}): Promise<void> {
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
export async function prepareWrite(root: string, files: { path: string; text: string }[], options: WriteOptions = {}): Promise<PreparedWrite> {
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
    await writeJournal(realRoot, { entelechy: 'journal', state: 'prepared', renames });
  } catch (e) {
    throw writeError(e, JOURNAL_NAME, 'nothing was written');
  }
  crash('prepared');
  const dirs = new Set<string>();
  try {
    for (const t of targets) {
      doing = t;
      const dir = dirname(t.abs);
      await step(mkdir(dir, { recursive: true }));
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
    throw writeError(e, at(doing), 'nothing was written');
  }
  return {
    abandon: () => discard(realRoot, renames),
    commit: async () => {
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

/**
 * Remove a backup no longer needed. Best effort: a backup is never read again once its set is
 * decided (a link to a document made immutable since cannot be removed, and need not be).
 */
async function dropBackup(realRoot: string, r: JournalEntry): Promise<void> {
  if (r.backup) await removeIfPresent(join(realRoot, r.backup)).catch(() => false);
}

/** Remove the temps and backups of a set that was not committed, then its journal. */
async function discard(realRoot: string, renames: JournalEntry[]): Promise<void> {
  for (const r of renames) {
    await removeIfPresent(join(realRoot, r.temp));
    await dropBackup(realRoot, r);
  }
  await removeJournal(realRoot);
}

/** A set whose renames are all done: its backups go, then its journal (no fsync: see the top of this file). */
async function finish(realRoot: string, renames: JournalEntry[]): Promise<void> {
  for (const r of renames) await dropBackup(realRoot, r);
  await removeIfPresent(join(realRoot, JOURNAL_NAME));
}

async function removeJournal(realRoot: string): Promise<void> {
  await removeIfPresent(join(realRoot, JOURNAL_NAME));
  await fsyncDir(realRoot);
}

/**
 * Turn a committed set back to its old documents: the journal says "rollback" first (a crash
 * here is turned back at the next recovery too), then each document our write replaced gets its
 * backup (or, created by it, goes), and each temp not renamed goes.
 */
async function turnBack(realRoot: string, renames: JournalEntry[]): Promise<void> {
  await writeJournal(realRoot, { entelechy: 'journal', state: 'rollback', renames }).catch(() => undefined);
  for (const r of renames) {
    const doc = join(realRoot, r.path);
    if (await removeIfPresent(join(realRoot, r.temp))) {
      await dropBackup(realRoot, r);
      continue; // never renamed: the document is as it was
    }
    // Renamed (or turned back already): undo only our own text.
    if (r.version === undefined || !(await holds(doc, r.version))) {
      await dropBackup(realRoot, r);
      continue;
    }
    if (r.backup) await step(rename(join(realRoot, r.backup), doc));
    else await removeIfPresent(doc);
  }
  for (const dir of new Set(renames.map((r) => dirname(join(realRoot, r.path))))) await fsyncDir(dir);
  await removeJournal(realRoot);
}

async function holds(file: string, version: string): Promise<boolean> {
  try {
    return versionOf(await readFile(file, 'utf8')) === version;
  } catch {
    return false;
  }
}

// --- recovery -------------------------------------------------------------------------------

export interface Recovery {
  /** Documents a committed set wrote (relative to the root). */
  recovered: string[];
  /** Documents an unfinished set left (or put back) as they were. */
  rolledBack: string[];
}

/** Whether a journal entry's name of a temp or backup is one of Entelechy's (its suffix). */
function tempName(file: unknown): file is string {
  return typeof file === 'string' && file.endsWith(TEMP_SUFFIX) && !file.includes('\0');
}

/**
 * The journal on disk, checked before anything is done with it: absent, or whole and pointing
 * only at documents under the folder and at Entelechy's own files beside them. Anything else
 * throws (JournalError, or a PathError naming the path that leads out), touching nothing.
 */
async function readJournal(realRoot: string): Promise<Journal | undefined> {
  const file = join(realRoot, JOURNAL_NAME);
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  let j: Journal | undefined;
  try {
    j = JSON.parse(raw);
  } catch {
    throw new JournalError(file, 'it is not JSON (cut short, or not written by Entelechy)');
  }
  const whole =
    typeof j === 'object' && j !== null && j.entelechy === 'journal' && ['prepared', 'committed', 'rollback'].includes(j.state) && Array.isArray(j.renames) &&
    j.renames.every((r) => r && typeof r === 'object' && typeof r.path === 'string' && tempName(r.temp) && (r.backup === undefined || tempName(r.backup)) && (r.version === undefined || typeof r.version === 'string'));
  if (!whole) throw new JournalError(file, 'its form, state or renames are not what Entelechy writes');
  for (const r of j!.renames) {
    // Paths are checked like any other (resolveUnder: a PathError says which leads where).
    resolveUnder(realRoot, r.path);
    for (const beside of [r.temp, r.backup]) {
      if (beside === undefined) continue;
      resolveUnder(realRoot, posix.join(posix.dirname(beside), 'x.esn'));
      // Entelechy's files lie beside their document: one elsewhere would move another document.
      if (posix.dirname(beside) !== posix.dirname(r.path) || !posix.basename(beside).startsWith('.')) throw new JournalError(file, `\`${beside}\` is not a file of Entelechy's beside \`${r.path}\``);
    }
  }
  return j!;
}

/**
 * Finish a write a crash interrupted (see the top of this file). Refuses when the journal is not
 * one Entelechy wrote (it stays for the user to look at), and when the file system refuses what
 * recovery must do (a WriteError: the documents are as the journal left them, and the next
 * recovery tries again).
 */
export async function recoverJournal(root: string): Promise<Recovery> {
  const realRoot = realRootOf(root);
  try {
    // A journal being written when the crash came is a temp file beside it: never in force.
    for (const name of readdirSync(realRoot)) {
      if (name.startsWith(`${JOURNAL_NAME}.`) && name.endsWith(TEMP_SUFFIX)) await removeIfPresent(join(realRoot, name));
    }
    const journal = await readJournal(realRoot);
    if (!journal) return { recovered: [], rolledBack: [] };
    const paths = journal.renames.map((r) => r.path);
    if (journal.state === 'prepared') {
      const written = await renamedAlone(realRoot, journal.renames);
      await discard(realRoot, journal.renames);
      return written ? { recovered: paths, rolledBack: [] } : { recovered: [], rolledBack: paths };
    }
    if (journal.state === 'committed' && (await rollForward(realRoot, journal.renames))) {
      await finish(realRoot, journal.renames);
      return { recovered: paths, rolledBack: [] };
    }
    await turnBack(realRoot, journal.renames);
    return { recovered: [], rolledBack: paths };
  } catch (e) {
    throw writeError(e, JOURNAL_NAME, 'the documents are as the interrupted write left them', 'recovering an interrupted write in');
  }
}

/**
 * Whether a "prepared" set of one document was renamed (its commit, see the top of this file): its
 * temp gone and the document holding the new text. (A crash before the temp was written, of a
 * text the document held already, is told so too: it holds the text the write asked for.)
 */
async function renamedAlone(realRoot: string, renames: JournalEntry[]): Promise<boolean> {
  if (renames.length !== 1) return false;
  const [r] = renames;
  if (r.version === undefined || (await exists(join(realRoot, r.temp)))) return false;
  return holds(join(realRoot, r.path), r.version);
}

/** Complete a committed set's renames; false when one cannot be done (the set is turned back). */
async function rollForward(realRoot: string, renames: JournalEntry[]): Promise<boolean> {
  for (const r of renames) {
    const temp = join(realRoot, r.temp);
    if (!(await exists(temp))) continue; // renamed before the crash: every temp was on disk before the commit
    if (r.version !== undefined && !(await holds(temp, r.version))) return false;
    try {
      await step(rename(temp, join(realRoot, r.path)));
    } catch {
      return false;
    }
  }
  for (const dir of new Set(renames.map((r) => dirname(join(realRoot, r.path))))) await fsyncDir(dir);
  return true;
}
