// The scene's folder: documents are read and written only under it.

import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { PathError, resolveUnder, type FileKind } from './documents.js';
import { frameNameSource } from './frame-pattern.js';

export { PathError };

export class SceneFolder {
  readonly root: string;

  constructor(scenePath: string) {
    const folder = dirname(resolve(scenePath));
    if (!existsSync(folder)) throw new PathError(`cannot open \`${scenePath}\`: the folder ${folder} does not exist`, scenePath);
    this.root = realpathSync(folder);
  }

  /** An absolute path for a path under the folder (of a document, unless `kind` says what else); refuses paths that leave it. */
  resolve(path: string, kind?: FileKind): string {
    return resolveUnder(this.root, path, kind);
  }

  read(path: string): string | undefined {
    try {
      const full = this.resolve(path);
      if (!existsSync(full) || !lstatSync(full).isFile() && !lstatSync(realpathSync(full)).isFile()) return undefined;
      return readFileSync(full, 'utf8');
    } catch (e) {
      if (e instanceof PathError) return undefined;
      throw e;
    }
  }

  /** A document's text as the checker reads it: undefined when there is none, or why it may not be read (a link out of the folder). */
  readDocument(path: string): string | undefined | { refused: string } {
    try {
      this.resolve(path);
    } catch (e) {
      if (e instanceof PathError) return { refused: e.message };
      throw e;
    }
    return this.read(path);
  }

  relative(absolute: string): string {
    return relative(this.root, absolute).split(sep).join('/');
  }
}

/**
 * The file that writing `file` whole (a temporary file beside it, then a rename) replaces: `file`
 * itself, or where a symbolic link there leads (the link stays). Throws (code ENOTREG) for a named
 * pipe, a device or a socket there: a rename would put a regular file in its place (`render -o
 * /dev/full` replaced the device, `-o pipe.png` the pipe). A folder is left to the rename's EISDIR.
 */
export function renameTarget(file: string, links = 0): string {
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return file; // absent: the rename makes it
  }
  if (stat.isSymbolicLink()) {
    if (links >= 40) throw Object.assign(new Error(`too many symbolic links: ${file}`), { code: 'ELOOP' });
    return renameTarget(resolve(dirname(file), readlinkSync(file)), links + 1);
  }
  if (stat.isFile() || stat.isDirectory()) return file;
  const what = stat.isFIFO() ? 'a named pipe' : stat.isSocket() ? 'a socket' : stat.isCharacterDevice() || stat.isBlockDevice() ? 'a device' : 'not a regular file';
  throw Object.assign(new Error(`\`${file}\` is ${what}, not a file`), { code: 'ENOTREG', what });
}

/** `read` the open file (its descriptor), closed after; undefined when the file cannot be opened. */
export function readingFile<T>(file: string, read: (fd: number) => T): T | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    return read(fd);
  } finally {
    closeSync(fd);
  }
}

let temps = 0;

/**
 * Where a file written whole goes: `target`, what the finished file replaces (renameTarget), and
 * `tmp`, a hidden name beside it, this process's own, to write first and rename over `target`.
 * What renameTarget throws, this throws.
 */
export function besideTarget(file: string, suffix = 'tmp'): { target: string; tmp: string } {
  const target = renameTarget(file);
  return { target, tmp: join(dirname(target) || '.', `.${basename(target)}.${process.pid}.${temps++}.${suffix}`) };
}

/**
 * `mkdir -p`: make a folder and the folders above it that are missing, one at a time. Node's own
 * (mkdirSync with `recursive`) never returns for a path it cannot make under a folder that exists
 * but refuses new entries (`/proc/nope`: ENOENT there, EEXIST for `/proc`, again and again, at
 * full CPU and deaf to signals); this one throws the first folder's error.
 */
export function makeFolders(folder: string): void {
  const missing: string[] = [];
  let at = resolve(folder);
  while (!existsSync(at)) {
    missing.push(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  // A file in the way, as Node's own says it (callers name EEXIST "a file is in the way").
  if (existsSync(at) && !statSync(at).isDirectory()) throw Object.assign(new Error(`EEXIST: file already exists, mkdir '${at}'`), { code: 'EEXIST', path: at });
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/**
 * Remove the temporary files besideTarget named for `target` with `suffix` that a process killed
 * before it could (SIGKILL, a crash) left behind: those of a process that no longer runs. A
 * video's is as large as the video, a tiled frame's as large as its rows so far; nothing else
 * would ever sweep them (a shard pre-empted again and again piled them up). With `own`, this
 * process's too: those of writes it stopped without their own cleanup (a PNG thread ended mid-file).
 */
export function sweepLeftBehind(target: string, suffix: string, own = false): string[] {
  const folder = dirname(target) || '.';
  // `target` may be a frame pattern (out/%04d.png): its frames' files are swept too.
  const name = frameNameSource(basename(target));
  const pattern = new RegExp(`^\\.${name}\\.(\\d+)\\.\\d+\\.${suffix}$`);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (!pid || (pid === process.pid ? !own : running(pid))) continue;
    rmSync(join(folder, name), { force: true });
    removed.push(join(folder, name));
  }
  return removed;
}

/** Whether process `pid` runs (a signal 0 reaches it, or it is another user's). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Write a file whole or not at all: a temporary file beside it (or beside where a link there leads), then a rename. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const { target, tmp } = besideTarget(path);
  writeFileSync(tmp, data);
  renameSync(tmp, target);
}
