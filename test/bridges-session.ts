// A real `entelechy serve --listen 127.0.0.1:0` on a temporary copy of an example, for the bridge
// tests (never a mocked server). The process is ended at the test's teardown.

import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';
import { serveListening, type Teardown } from './serve-process.js';
import { scratchDir } from './scratch.js';

export interface ServedSession {
  /** The folder holding the copy of the example (its scene.esn and documents). */
  dir: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
  /** End the process (idempotent); resolves once it has exited. */
  stop(): Promise<void>;
}

export async function serveExample(t: Teardown, example: string, startTimeout = 120000, extraArgs: string[] = []): Promise<ServedSession> {
  const dir = scratchDir(`entelechy-bridge-${example}-`);
  cpSync(join(ROOT, 'examples', example), dir, { recursive: true });
  const remove = () => rmSync(dir, { recursive: true, force: true });
  // stdin is a pipe left open (serve also reads requests there); the process ends at teardown,
  // and then its folder goes.
  const served = await serveListening(t, join(dir, 'scene.esn'), { args: extraArgs, drainStdout: true, startTimeout }).catch((e) => {
    remove();
    throw e;
  });
  t.teardown(remove);
  return { dir, ...served };
}
