// A file system that refuses a write, told as the user's to mend: what failed, which document
// (relative to the scene's folder, never a path of the machine), what state the documents are in,
// and what to do.

import { PathError } from './documents.js';

export class WriteError extends Error {
  override name = 'WriteError';
  constructor(
    message: string,
    /** The document (or journal) the file system refused, relative to the scene's folder. */
    readonly path: string,
    /** The file system's code: ENOSPC, EROFS, EPERM, ... */
    readonly code: string,
  ) {
    super(message);
  }
}

/** What each refusal means and what mends it. */
const CAUSES: Record<string, { what: string; fix: string }> = {
  ENOSPC: { what: 'the file system is full', fix: 'free some space on it, then send the request again' },
  EDQUOT: { what: 'the disk quota is used up', fix: 'free some space, then send the request again' },
  EROFS: { what: 'the file system is read-only', fix: 'mount it read-write (or open the scene from a writable folder), then send the request again' },
  EPERM: { what: 'the operation is not permitted (the file or its folder is immutable or protected)', fix: 'lift the protection (for example `chattr -i`), then send the request again' },
  EACCES: { what: 'permission is denied', fix: 'make the folder and the document writable, then send the request again' },
  ENAMETOOLONG: { what: 'the name is too long for the file system', fix: 'use a shorter name' },
  EIO: { what: 'the disk reported an input/output error', fix: 'check the disk, then send the request again' },
  EBUSY: { what: 'the file is busy', fix: 'close what holds it, then send the request again' },
  EISDIR: { what: 'a folder stands where the document goes', fix: 'name another path' },
  ENOTDIR: { what: 'a file stands where a folder of the path goes', fix: 'name another path' },
  EMFILE: { what: 'the process has too many files open', fix: 'send the request again' },
};

/**
 * The error a refused write answers. `e` passes through when it is already the user's to read
 * (a PathError, a WriteError) or not a file system's refusal (a bug stays a bug).
 */
export function writeError(e: unknown, path: string, state: string, doing = 'writing'): unknown {
  if (e instanceof WriteError || e instanceof PathError) return e;
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return e;
  const cause = CAUSES[code] ?? { what: `the file system refused (${code})`, fix: 'mend the folder, then send the request again' };
  return new WriteError(`${doing} \`${path}\` failed: ${cause.what} (${code}); ${state}: ${cause.fix}`, path, code);
}
