// Documents under the scene's folder: their versions and where they may be written. Writes of
// several documents that land all or none, also across a crash, are in journal.ts.

import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, posix, resolve, sep } from 'node:path';
import { LIMITS, pathProblem } from './limits.js';
import { UserError } from './user-error.js';

/** The journal of an interrupted write, in the root. */
export const JOURNAL_NAME = '.entelechy-journal.json';
/** The suffix of the temp files beside the documents they will replace. */
export const TEMP_SUFFIX = '.entelechy-tmp';
/**
 * The longest name (in bytes) of a document or folder: file systems allow 255, and Entelechy's
 * files beside a document (journal.ts) are named after it. A longer one failed mid-write and left a journal that no
 * later write could get past.
 */
const MAX_NAME_BYTES = LIMITS.segment.limit;

/** A path a document may not have: it says why and what to do. */
export class PathError extends UserError {
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

export function inside(real: string, realRoot: string): boolean {
  return real === realRoot || real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);
}

export function realRootOf(root: string): string {
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
/** What a path names, for its refusals' words: a document, a snapshot, a recording... */
export interface FileKind {
  noun: string;
  /** A name of one, as an example. */
  like: string;
}

export const DOCUMENT: FileKind = { noun: 'document', like: 'kernels.esn' };

export function resolveUnder(root: string, path: string, kind: FileKind = DOCUMENT): string {
  const { noun, like } = kind;
  const hint = `name a ${noun} relative to the scene's folder, like \`${like}\` or \`${posix.join('lib', like)}\``;
  if (typeof path !== 'string' || path.length === 0) throw new PathError(`a document path must be a non-empty string; ${hint}`, String(path));
  if (path.includes('\0')) throw new PathError(`\`${JSON.stringify(path)}\` holds a NUL character; ${hint}`, path);
  if (isAbsolute(path) || /^[\\/]/.test(path) || /^[A-Za-z]:/.test(path)) {
    throw new PathError(`\`${path}\` is an absolute path; ${noun}s are read and written only under the scene's folder: ${hint}`, path);
  }
  const segments = path.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  // `sub/` names a folder: the file written was `sub`.
  if (/[\\/]$/.test(path) && segments.length) throw new PathError(`\`${path}\` ends with a slash, so it names a folder, not a ${noun}: name a file in it, like \`${posix.join(segments.join('/'), like)}\``, path);
  if (segments.includes('..')) throw new PathError(`\`${path}\` uses \`..\`; ${noun}s are read and written only under the scene's folder: ${hint}`, path);
  if (segments.length === 0) throw new PathError(`\`${path}\` names the scene's folder itself, not a ${noun}; ${hint}`, path);
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
          `\`${path}\` goes through a symbolic link \`${segments.slice(0, i + 1).join('/')}\` that leads out of the scene's folder; ${noun}s are read and written only under it: name a path that stays inside`,
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
    if (last && st.isDirectory()) throw new PathError(`\`${path}\` is a folder, not a ${noun}; name a file in it, like \`${posix.join(path.replace(/[\\/]+$/, ''), like)}\``, path);
  }
  return throughLink ? current : join(resolve(root), ...segments);
}

/**
 * What is wrong with `path` as a scene to open, or undefined: a folder (the .esn documents in it
 * are suggested), or a file that is not a `.esn` document. A session on a photograph or a text
 * file took it for its scene, said the scene did not check and to mend it with compose, and the
 * compose replaced the file's bytes.
 */
export function sceneEntryProblem(path: string): string | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  const esn = (folder: string) => {
    try {
      return readdirSync(folder).filter((n) => n.endsWith('.esn')).sort((a, b) => Number(b === 'scene.esn') - Number(a === 'scene.esn'));
    } catch {
      return [];
    }
  };
  if (stat?.isDirectory()) {
    const [first] = esn(path);
    return `\`${path}\` is a folder: name the scene document in it${first ? `, e.g. ${join(path.replace(/[\\/]+$/, ''), first)}` : ' (it holds no .esn document)'}`;
  }
  if (path.endsWith('.esn')) return undefined;
  const [near] = esn(dirname(path));
  return `\`${path}\` is not a scene: a scene is a .esn document${near ? `, e.g. ${join(dirname(path), near)}` : ''}; name one (a new one is made by compose)`;
}
