// `render` starts its compile worker with the process (bin/entelechy.js) when it will likely
// compile, so binaryen's load (~0.4 s of CPU) runs on the worker while the command line's code
// and the scene load on the main thread, instead of after them.
//
// Whether it will compile is known only once the scene is checked and its modules looked up in
// the disk cache; by then the overlap is gone. So the guess is made from what was rendered
// before: a render that succeeded leaves a marker in the cache folder (renders/), named by the
// command (its folder, arguments and the size and time of each file they name). The same command
// again, its files unchanged, finds its modules on disk and starts no worker: a worker started
// for nothing costs its load in CPU and keeps the process until binaryen has loaded (a thread
// ended mid-load can crash Node 20: compiler.ts). A wrong guess costs only that, or the load
// after the scene as before: the modules come from the disk cache either way.

import { createHash } from 'node:crypto';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CompileWorker } from './compiler.js';
import { cacheDir } from './modules.js';
import { mark } from './timeline.js';
import { makeFolders } from './files.js';

let early: CompileWorker | undefined;

/** Markers kept; past that, the oldest go. */
const MARKERS = 500;

/** The marker of a command: its folder, arguments, and the size and time of each file named. */
function markerFile(args: string[], dir: string): string {
  const hash = createHash('sha256').update(process.cwd()).update(JSON.stringify(args));
  for (const a of args) {
    try {
      const s = statSync(a);
      if (s.isFile()) hash.update(`${a}\0${s.size}\0${s.mtimeMs}`);
    } catch {
      // not a file
    }
  }
  return join(dir, 'renders', hash.digest('hex').slice(0, 32));
}

/**
 * Whether `render ARGS` will likely compile: it names a scene document there is (else it fails at
 * once, and would wait for the worker's load to end), and there is no disk cache or no marker of
 * the same command.
 */
export function likelyCompiles(args: string[], dir = cacheDir()): boolean {
  if (!args.some((a) => a.endsWith('.esn') && isFile(a))) return false;
  if (args.some((a) => /^--backend(=|$)/.test(a)) && args.includes('interp')) return false;
  if (args.some((a) => /^--farm(=|$)/.test(a))) return false;
  if (!dir) return true;
  try {
    statSync(markerFile(args, dir));
    return false;
  } catch {
    return true;
  }
}

/** For `render ARGS` (bin/entelechy.js): start the compile worker now if it will likely compile. */
export function compileAhead(args: string[]): void {
  if (early || !likelyCompiles(args)) return;
  early = new CompileWorker();
  mark('compile worker started');
}

/** The compile worker started ahead, if one was. */
export function compilerAhead(): CompileWorker | undefined {
  return early;
}

/**
 * The render is done: leave its marker if it succeeded (its modules are on disk now), and end
 * the worker (once binaryen has loaded, compiler.ts).
 */
export async function renderDone(args: string[], succeeded: boolean): Promise<void> {
  const dir = cacheDir();
  if (succeeded && dir) {
    try {
      const file = markerFile(args, dir);
      makeFolders(join(dir, 'renders'));
      writeFileSync(file, '');
      prune(join(dir, 'renders'));
    } catch {
      // a cache that cannot be written keeps no markers: every render guesses it compiles
    }
  }
  await early?.close();
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function prune(dir: string): void {
  const names = readdirSync(dir);
  if (names.length <= MARKERS) return;
  const aged = names.map((n) => ({ n, t: statSync(join(dir, n)).mtimeMs })).sort((a, b) => a.t - b.t);
  for (const { n } of aged.slice(0, names.length - MARKERS)) rmSync(join(dir, n), { force: true });
}
