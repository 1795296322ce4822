// Real disk faults for the tests of the commit path: immutable files and folders (chattr +i), full
// and read-only file systems (a small tmpfs, remounted read-only). Each is undone when the test
// ends, and again when the process exits, whatever happened. Needs root (CI runs as root); where
// a fault cannot be made, `can` says why and the tests that need it are skipped.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { scratchDir } from './scratch.js';

const undo: (() => void)[] = [];
process.once('exit', () => {
  for (const f of undo.splice(0).reverse()) {
    try {
      f();
    } catch {
      // best effort: the next undo still runs
    }
  }
});

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: 'pipe' });
}

/** Whether this machine lets the tests make a fault: undefined, or why not. */
function probe(): { immutable?: string; tmpfs?: string } {
  const dir = scratchDir('entelechy-probe-');
  const out: { immutable?: string; tmpfs?: string } = {};
  try {
    writeFileSync(join(dir, 'f'), 'x');
    try {
      run('chattr', ['+i', join(dir, 'f')]);
      run('chattr', ['-i', join(dir, 'f')]);
    } catch (e) {
      out.immutable = `chattr +i does not work here (${(e as Error).message.split('\n')[0]})`;
    }
    const mnt = join(dir, 'm');
    mkdirSync(mnt);
    try {
      run('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]);
      run('umount', [mnt]);
    } catch (e) {
      out.tmpfs = `mounting a tmpfs does not work here (${(e as Error).message.split('\n')[0]})`;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

export const can = probe();

/** Make a file or folder immutable until the test ends (`chattr +i`); returns the undo. */
export function immutable(t: Test, path: string): () => void {
  run('chattr', ['+i', path]);
  let done = false;
  const off = () => {
    if (done) return;
    done = true;
    run('chattr', ['-i', path]);
  };
  undo.push(off);
  t.teardown(off);
  return off;
}

/** A fresh tmpfs of `size` (e.g. '256k'), unmounted when the test ends. */
export function tmpfs(t: Test, size: string): { dir: string; readOnly: () => void; readWrite: () => void } {
  const dir = scratchDir('entelechy-tmpfs-');
  run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  let mounted = true;
  const off = () => {
    if (!mounted) return;
    mounted = false;
    try {
      run('umount', ['-l', dir]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  undo.push(off);
  t.teardown(off);
  return {
    dir,
    readOnly: () => run('mount', ['-o', 'remount,ro', dir]),
    readWrite: () => run('mount', ['-o', 'remount,rw', dir]),
  };
}

/** Every file under a folder (hidden ones too) with its bytes, to compare before and after. */
export function diskBytes(root: string, under = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of readdirSync(join(root, under), { withFileTypes: true })) {
    const rel = under ? `${under}/${d.name}` : d.name;
    if (d.isDirectory()) Object.assign(out, diskBytes(root, rel));
    else out[rel] = readFileSync(join(root, rel)).toString('base64');
  }
  return out;
}

/** Fill a file system up: one file as large as it takes (the write that no longer fits fails). */
export function fill(dir: string): void {
  const chunk = Buffer.alloc(4096, 1);
  const file = join(dir, 'filler.bin');
  for (let i = 0; i < 1 << 16; i++) {
    try {
      writeFileSync(file, chunk, { flag: 'a' });
    } catch {
      return;
    }
  }
}
