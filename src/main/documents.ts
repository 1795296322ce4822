// Documents under the scene's folder: their versions, where they may be written, and writes of
// several documents that land all or none, also across a crash.
//
// A write of a set of documents goes in five steps, each durable (fsync'd) before the next:
//   1. the journal `.entelechy-journal.json` in the root, state "prepared", names each document
//      and the temp file beside it that will hold its new text;
//   2. each new text is written to its temp file (created fresh, fsync'd);
//   3. the journal is rewritten, state "committed": from here on the set is decided;
//   4. each temp file is renamed over its document (rename is atomic on one file system);
//   5. the journal is removed.
// The journal itself is always written to a temp file and renamed, so it is whole or absent.
// The file operations are asynchronous: a session answers frames while a compose's writes and
// fsyncs run on libuv's threads (about 6 ms of a compose on this machine).
// `recoverJournal` (run by `writeDocuments` before a new set) finishes what a crash
// interrupted: a "prepared" set is rolled back (its temp files removed, the documents untouched),
// a "committed" one is completed (the temp files still present are renamed; one that is gone was
// renamed already, since every temp file was on disk before the commit).

import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LIMITS, pathProblem } from '../protocol/limits.js';

/** The journal of an interrupted write, in the root. */
export const JOURNAL_NAME = '.entelechy-journal.json';
/** The suffix of the temp files beside the documents they will replace. */
const TEMP_SUFFIX = '.entelechy-tmp';
/**
 * The longest name (in bytes) of a document or folder: a document's temp file adds 28 bytes to
 * its name, and file systems allow 255. A longer one failed mid-write and left a journal that no
 * later write could get past.
 */
const MAX_NAME_BYTES = LIMITS.segment.limit;

/** A path a document may not have: it says why and what to do. */
export class PathError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'PathError';
  }
}

/** The version of a document's text: 16 hex chars of the SHA-256 of its UTF-8 bytes. */
export function versionOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

function inside(real: string, realRoot: string): boolean {
  return real === realRoot || real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);
}

function realRootOf(root: string): string {
  try {
    const real = realpathSync(resolve(root));
    if (!statSync(real).isDirectory()) throw new Error(`the scene's folder \`${root}\` is not a folder`);
    return real;
  } catch (e) {
    if (e instanceof Error && !(e as NodeJS.ErrnoException).code) throw e;
    throw new Error(`the scene's folder \`${root}\` does not exist (${(e as Error).message})`);
  }
}

/**
 * The absolute path of a document named `path` (relative to `root`, `/` or `\` between folders),
 * or a PathError that says what to do. Refused: empty paths, absolute paths, `..` anywhere, a
 * folder, the journal and temp files, and paths that go through a symbolic link leading out of
 * the root (or through a dangling one). A path through a symbolic link that stays inside resolves
 * to where the link leads (so a write replaces the linked document, not the link).
 */
export function resolveUnder(root: string, path: string): string {
  const hint = 'name a document relative to the scene\'s folder, like `kernels.esn` or `lib/kernels.esn`';
  if (typeof path !== 'string' || path.length === 0) throw new PathError(`a document path must be a non-empty string; ${hint}`, String(path));
  if (path.includes('\0')) throw new PathError(`\`${JSON.stringify(path)}\` holds a NUL character; ${hint}`, path);
  if (isAbsolute(path) || /^[\\/]/.test(path) || /^[A-Za-z]:/.test(path)) {
    throw new PathError(`\`${path}\` is an absolute path; documents are written only under the scene's folder: ${hint}`, path);
  }
  const segments = path.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new PathError(`\`${path}\` uses \`..\`; documents are written only under the scene's folder: ${hint}`, path);
  if (segments.length === 0) throw new PathError(`\`${path}\` names the scene's folder itself, not a document; ${hint}`, path);
  const long = segments.find((s) => Buffer.byteLength(s) > MAX_NAME_BYTES);
  if (long) throw new PathError(`\`${path}\` has a name of ${Buffer.byteLength(long)} bytes (\`${long.slice(0, 16)}...\`); names of documents and folders are at most ${MAX_NAME_BYTES} bytes: name it shorter`, path);
  // The protocol's other path limits (length, how many names): a path past them is never taken.
  const past = pathProblem(path);
  if (past) throw new PathError(past.message, path.slice(0, 64));
  const leaf = segments[segments.length - 1];
  if (leaf === JOURNAL_NAME || leaf.endsWith(TEMP_SUFFIX)) {
    throw new PathError(`\`${path}\` is reserved for Entelechy's own bookkeeping; ${hint}`, path);
  }
  const realRoot = realRootOf(root);
  let current = realRoot;
  let throughLink = false;
  for (let i = 0; i < segments.length; i++) {
    const next = join(current, segments[i]);
    let st: Stats;
    try {
      st = lstatSync(next);
    } catch {
      // Does not exist yet: the rest is new, under a folder already checked.
      current = join(next, ...segments.slice(i + 1));
      break;
    }
    if (st.isSymbolicLink()) {
      let real: string;
      try {
        real = realpathSync(next);
      } catch {
        throw new PathError(`\`${path}\` goes through a symbolic link \`${segments.slice(0, i + 1).join('/')}\` that leads nowhere; remove the link or name another path`, path);
      }
      if (!inside(real, realRoot)) {
        throw new PathError(
          `\`${path}\` goes through a symbolic link \`${segments.slice(0, i + 1).join('/')}\` that leads out of the scene's folder; documents are written only under it: name a path that stays inside`,
          path,
        );
      }
      throughLink = true;
      current = real;
      st = statSync(real);
    } else {
      current = next;
    }
    const last = i === segments.length - 1;
    if (!last && !st.isDirectory()) {
      throw new PathError(`\`${path}\`: \`${segments.slice(0, i + 1).join('/')}\` is a file, not a folder; name another path`, path);
    }
    if (last && st.isDirectory()) throw new PathError(`\`${path}\` is a folder, not a document; name a file in it, like \`${path.replace(/[\\/]+$/, '')}/scene.esn\``, path);
  }
  return throughLink ? current : join(resolve(root), ...segments);
}

// --- all-or-none writes ---------------------------------------------------------------------

interface JournalEntry {
  /** The document, relative to the root (`/` between folders). */
  path: string;
  /** Its temp file, relative to the root. */
  temp: string;
}

interface Journal {
  entelechy: 'journal';
  state: 'prepared' | 'committed';
  renames: JournalEntry[];
}

/** Where a write stops, to test recovery: after step 1, 2 or 3, or after this many renames. */
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

async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Not every platform can fsync a folder (Windows); the renames are still atomic.
  } finally {
    await handle?.close();
  }
}

/** Write a new file (it must not exist), fsync'd. */
async function writeFresh(file: string, text: string, mode?: number): Promise<void> {
  const handle = await open(file, 'wx', mode ?? 0o666);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function removeIfPresent(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

async function writeJournal(realRoot: string, journal: Journal): Promise<void> {
  const file = join(realRoot, JOURNAL_NAME);
  const temp = `${file}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
  await writeFresh(temp, JSON.stringify(journal, null, 2) + '\n');
  await rename(temp, file);
  await fsyncDir(realRoot);
}

function toRelative(realRoot: string, abs: string): string {
  return relative(realRoot, abs).split(sep).join('/');
}

/**
 * Write several documents all or none, also across a crash (see the top of this file). Every path
 * is checked (resolveUnder) and every text must be a string before anything is written; an error
 * while writing the temp files removes them and leaves every document as it was.
 */
export async function writeDocuments(root: string, files: { path: string; text: string }[], options: WriteOptions = {}): Promise<void> {
  if (!Array.isArray(files)) throw new Error('writeDocuments takes an array of {path, text}');
  const realRoot = realRootOf(root);
  const targets: { abs: string; text: string; entry: JournalEntry; mode?: number }[] = [];
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
    const temp = join(dirname(real), `.${basename(real)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    targets.push({ abs: real, text: f.text, mode, entry: { path: toRelative(realRoot, real), temp: toRelative(realRoot, temp) } });
  }
  if (targets.length === 0) return;
  const crash = (point: CrashPoint): void => {
    if (options.crashAfter === point) throw new SimulatedCrash(point);
  };

  await recoverJournal(root);
  const renames = targets.map((t) => t.entry);
  await writeJournal(realRoot, { entelechy: 'journal', state: 'prepared', renames });
  crash('prepared');
  const dirs = new Set<string>();
  try {
    for (const t of targets) {
      const dir = dirname(t.abs);
      await mkdir(dir, { recursive: true });
      await writeFresh(join(realRoot, t.entry.temp), t.text, t.mode);
      dirs.add(dir);
    }
    for (const dir of dirs) await fsyncDir(dir);
  } catch (e) {
    for (const t of targets) await removeIfPresent(join(realRoot, t.entry.temp));
    await removeIfPresent(join(realRoot, JOURNAL_NAME));
    await fsyncDir(realRoot);
    throw e;
  }
  crash('temps');
  await writeJournal(realRoot, { entelechy: 'journal', state: 'committed', renames });
  crash('committed');
  for (const [i, t] of targets.entries()) {
    crash(i);
    await rename(join(realRoot, t.entry.temp), t.abs);
  }
  crash(targets.length);
  for (const dir of dirs) await fsyncDir(dir);
  await removeIfPresent(join(realRoot, JOURNAL_NAME));
  await fsyncDir(realRoot);
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

function readJournal(realRoot: string): Journal | undefined {
  const file = join(realRoot, JOURNAL_NAME);
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  let j: unknown;
  try {
    j = JSON.parse(raw);
  } catch {
    j = undefined;
  }
  const ok =
    typeof j === 'object' &&
    j !== null &&
    (j as Journal).entelechy === 'journal' &&
    ((j as Journal).state === 'prepared' || (j as Journal).state === 'committed') &&
    Array.isArray((j as Journal).renames) &&
    (j as Journal).renames.every((r) => r && typeof r.path === 'string' && typeof r.temp === 'string' && r.temp.endsWith(TEMP_SUFFIX));
  if (!ok) throw new Error(`${file} is not a journal Entelechy wrote; look at it, then move it away and start again`);
  return j as Journal;
}

/**
 * Finish a write a crash interrupted (see the top of this file). `recovered` lists the documents
 * a committed set wrote (relative to the root), `rolledBack` those a prepared set left as they were.
 */
export async function recoverJournal(root: string): Promise<{ recovered: string[]; rolledBack: string[] }> {
  const realRoot = realRootOf(root);
  // A journal being written when the crash came is a temp file beside it: never in force.
  for (const name of readdirSync(realRoot)) {
    if (name.startsWith(`${JOURNAL_NAME}.`) && name.endsWith(TEMP_SUFFIX)) await removeIfPresent(join(realRoot, name));
  }
  const journal = readJournal(realRoot);
  if (!journal) return { recovered: [], rolledBack: [] };
  // The journal's paths are checked like any other: a journal must not lead a write outside.
  const entries = journal.renames.map((r) => {
    const abs = resolveUnder(realRoot, r.path);
    const tempDir = resolveUnder(realRoot, join(dirname(r.temp), 'x.esn'));
    return { path: r.path, abs, temp: join(dirname(tempDir), basename(r.temp)) };
  });
  const dirs = new Set(entries.map((e) => dirname(e.abs)));
  if (journal.state === 'prepared') {
    for (const e of entries) await removeIfPresent(e.temp);
    for (const dir of dirs) await fsyncDir(dir);
    await removeIfPresent(join(realRoot, JOURNAL_NAME));
    await fsyncDir(realRoot);
    return { recovered: [], rolledBack: entries.map((e) => e.path) };
  }
  for (const e of entries) {
    try {
      await rename(e.temp, e.abs);
    } catch (err) {
      // Gone: renamed before the crash (every temp file was on disk before the commit).
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  for (const dir of dirs) await fsyncDir(dir);
  await removeIfPresent(join(realRoot, JOURNAL_NAME));
  await fsyncDir(realRoot);
  return { recovered: entries.map((e) => e.path), rolledBack: [] };
}
