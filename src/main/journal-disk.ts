// The journal's file operations (journal.ts): each one a step of the crash seam, the journal
// itself written whole or not at all, and how a set of documents ends: discarded before its
// commit, finished after it, or turned back to the old documents. Used by the write (journal.ts)
// and by the recovery of a write a crash interrupted (journal-recovery.ts).

import { randomBytes } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { link, open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { JOURNAL_NAME, TEMP_SUFFIX, versionOf } from './documents.js';

export interface JournalEntry {
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

export interface Journal {
  entelechy: 'journal';
  state: JournalState;
  renames: JournalEntry[];
}

// --- the crash seam -------------------------------------------------------------------------
// ENTELECHY_TEST_KILL_AT_STEP=N makes this process SIGKILL itself right after its N-th file
// operation here (test/crash.test.ts kills a real `entelechy serve` at every step of a compose).
let steps = 0;

export async function step<T>(op: Promise<T>): Promise<T> {
  const result = await op;
  steps++;
  if (steps === Number(process.env.ENTELECHY_TEST_KILL_AT_STEP)) {
    process.kill(process.pid, 'SIGKILL');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // never returns
  }
  return result;
}

// --- file operations ------------------------------------------------------------------------

export async function fsyncDir(dir: string): Promise<void> {
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

/** Write a new file (it must not exist), fsync'd, with `mode` (the document's it replaces) if given. */
export async function writeFresh(file: string, text: string, mode?: number): Promise<void> {
  const handle = await step(open(file, 'wx', mode ?? 0o666));
  try {
    // The document's own mode, whatever the umask: open() had 0o664 come out 0o644 under umask 022.
    if (mode !== undefined) await step(handle.chmod(mode));
    await step(handle.writeFile(text, 'utf8'));
    await step(handle.sync());
  } finally {
    await handle.close();
  }
}

/** Remove a file; false when it was not there (a name too long to exist is not there either). */
export async function removeIfPresent(file: string): Promise<boolean> {
  try {
    await step(unlink(file));
    return true;
  } catch (e) {
    if (['ENOENT', 'ENAMETOOLONG'].includes((e as NodeJS.ErrnoException).code ?? '')) return false;
    throw e;
  }
}

export async function exists(file: string): Promise<boolean> {
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
export async function keepBackup(doc: string, backup: string, mode: number): Promise<void> {
  try {
    await step(link(doc, backup));
  } catch (e) {
    if (!linkRefused(e)) throw e;
    await writeFresh(backup, await readFile(doc, 'utf8'), mode);
  }
}

/**
 * Write the journal whole (a temp, fsync'd, renamed over it). `durableName`: the folder is fsync'd
 * so the journal's name survives a power cut before what follows. A "prepared" journal of one
 * document does without: it only names the temp to clear, and the document is decided by its
 * rename alone; lost in a power cut, it leaves at most that temp behind, never a document wrong.
 */
export async function writeJournal(realRoot: string, journal: Journal, durableName = true): Promise<void> {
  const file = join(realRoot, JOURNAL_NAME);
  const temp = `${file}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
  try {
    await writeFresh(temp, JSON.stringify(journal, null, 2) + '\n');
    await step(rename(temp, file));
  } catch (e) {
    await removeIfPresent(temp).catch(() => undefined);
    throw e;
  }
  if (durableName) await fsyncDir(realRoot);
}

export function toRelative(realRoot: string, abs: string): string {
  return relative(realRoot, abs).split(sep).join('/');
}

/** A file beside `real` that only Entelechy names: its name's start, a random tag, the suffix. */
export function besideName(real: string, kind: 'new' | 'old'): string {
  return join(dirname(real), `.${basename(real).slice(0, 32)}.${randomBytes(6).toString('hex')}.${kind}${TEMP_SUFFIX}`);
}

export function realpathOrSelf(dir: string): string {
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

// --- how a set ends ------------------------------------------------------------------------

/**
 * Remove a backup no longer needed. Best effort: a backup is never read again once its set is
 * decided (a link to a document made immutable since cannot be removed, and need not be).
 */
async function dropBackup(realRoot: string, r: JournalEntry): Promise<void> {
  if (r.backup) await removeIfPresent(join(realRoot, r.backup)).catch(() => false);
}

/** Remove the temps and backups of a set that was not committed, then its journal. */
export async function discard(realRoot: string, renames: JournalEntry[]): Promise<void> {
  for (const r of renames) {
    await removeIfPresent(join(realRoot, r.temp));
    await dropBackup(realRoot, r);
  }
  await removeJournal(realRoot);
}

/** A set whose renames are all done: its backups go, then its journal (no fsync: see the top of this file). */
export async function finish(realRoot: string, renames: JournalEntry[]): Promise<void> {
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
export async function turnBack(realRoot: string, renames: JournalEntry[]): Promise<void> {
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

export async function holds(file: string, version: string): Promise<boolean> {
  try {
    return versionOf(await readFile(file, 'utf8')) === version;
  } catch {
    return false;
  }
}
