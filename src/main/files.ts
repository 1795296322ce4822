// The scene's folder: documents are read and written only under it.

import { existsSync, lstatSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { PathError, resolveUnder } from './documents.js';

export { PathError };

export class SceneFolder {
  readonly root: string;

  constructor(scenePath: string) {
    const folder = dirname(resolve(scenePath));
    if (!existsSync(folder)) throw new PathError(`cannot open \`${scenePath}\`: the folder ${folder} does not exist`, scenePath);
    this.root = realpathSync(folder);
  }

  /** An absolute path for a document path under the folder; refuses paths that leave it. */
  resolve(path: string): string {
    return resolveUnder(this.root, path);
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
