// A real `entelechy serve SCENE --listen 127.0.0.1:0` process for the tests that talk to it over
// stdin and TCP: started, its port read from its "listening on" line, ended at the test's teardown.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

export interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface ListeningServe {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** What the process has written to stderr so far. */
  stderr(): string;
  /** End the process (idempotent); resolves once it has exited. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  /** More command-line arguments (after `--workers 1 --listen 127.0.0.1:0`). */
  args?: string[];
  /** Read and drop stdout, for tests that talk over TCP only (a full pipe would stall the server). */
  drainStdout?: boolean;
  startTimeout?: number;
}

export async function serveListening(t: Teardown, scene: string, options: ServeOptions = {}): Promise<ListeningServe> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', scene, '--workers', '1', '--listen', '127.0.0.1:0', ...(options.args ?? [])], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (options.drainStdout) child.stdout.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT'); // in case a test stopped it
      child.kill();
    }
    await exited;
  };
  t.teardown(stop);
  let err = '';
  const startTimeout = options.startTimeout ?? 120000;
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
  return { child, port, stderr: () => err, stop };
}
