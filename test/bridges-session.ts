// A real `entelechy serve --listen 127.0.0.1:0` on a temporary copy of an example, for the bridge
// tests (never a mocked server). The process is ended at the test's teardown.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

export interface ServedSession {
  /** The folder holding the copy of the example (its scene.esn and documents). */
  dir: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
  /** End the process (idempotent); resolves once it has exited. */
  stop(): Promise<void>;
}

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export async function serveExample(t: Teardown, example: string, startTimeout = 120000, extraArgs: string[] = []): Promise<ServedSession> {
  const dir = mkdtempSync(join(tmpdir(), `entelechy-bridge-${example}-`));
  cpSync(join(ROOT, 'examples', example), dir, { recursive: true });
  // stdin is a pipe left open (serve also reads requests there); the process ends at teardown.
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(dir, 'scene.esn'), '--workers', '1', '--listen', '127.0.0.1:0', ...extraArgs], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let err = '';
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT'); // in case a test stopped it
      child.kill();
    }
    await exited;
  };
  t.teardown(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not listen within ${startTimeout} ms: ${err}`)), startTimeout);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on \S+:(\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${child.exitCode}) before listening: ${err}`));
    });
  });
  return { dir, port, child, stderr: () => err, stop };
}
