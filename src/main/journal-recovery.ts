// Recovering a write a crash interrupted (the top of journal.ts says how), and refusing a
// journal Entelechy did not write.

import { readdirSync } from 'node:fs';
import { readFile, rename } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { JOURNAL_NAME, TEMP_SUFFIX, realRootOf, resolveUnder } from './documents.js';
import { discard, exists, finish, fsyncDir, holds, removeIfPresent, step, turnBack, type Journal, type JournalEntry } from './journal-disk.js';
import { writeError } from './write-error.js';

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
