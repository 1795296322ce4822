// Temporary folders for tests, removed when the test file's process ends (node-tap runs each file
// in a process of its own), so a run of the suite leaves nothing behind in the system's temporary
// folder. ENTELECHY_KEEP_SCRATCH=1 keeps them, to look at what a failing test left.

import './child-env.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

process.once('exit', () => {
  if (process.env.ENTELECHY_KEEP_SCRATCH === '1') return;
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // a folder a test left immutable (chattr +i) or mounted: the test's own teardown owns it
    }
  }
});

/** A fresh folder under the system's temporary folder, named PREFIX + random, removed at exit. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
