// The scene's folder: documents are read and written only under it.

import { existsSync, lstatSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export class PathError extends Error {
  override name = 'PathError';
}

export class SceneFolder {
  readonly root: string;

  constructor(scenePath: string) {
    this.root = realpathSync(dirname(resolve(scenePath)));
  }

  /** An absolute path for a document path under the folder; refuses paths that leave it. */
  resolve(path: string): string {
    if (isAbsolute(path) || path.split(/[\\/]/).includes('..'))
      throw new PathError(`\`${path}\` is not under the scene's folder: use a relative path without \`..\``);
    const full = join(this.root, path);
    if (existsSync(full)) {
      const real = realpathSync(full);
      if (real !== this.root && !real.startsWith(this.root + sep))
        throw new PathError(`\`${path}\` leads outside the scene's folder (through a symbolic link)`);
    }
    return full;
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

  relative(absolute: string): string {
    return relative(this.root, absolute).split(sep).join('/');
  }
}

/** Write a file whole or not at all: a temporary file beside it, then a rename. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}
