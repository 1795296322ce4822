// `entelechy test` replays every example's .replay files against a fresh session, and a failing
// step is reported with its file and line.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

function cli(args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 240000 });
}

t.test('every example replays', async (t) => {
  const r = cli(['test', 'examples']);
  t.equal(r.status, 0, r.stdout + r.stderr);
  t.match(r.stdout, /6 passed, 0 failed/);
});

t.test('a failing step names its file and line and what differed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-replay-'));
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  writeFileSync(join(dir, 'bad.replay'), '# expects the wrong frame\n> {"op": "evaluate"}\n< {"ok": {"frame": 7}}\n');
  const r = cli(['test', join(dir, 'bad.replay')]);
  t.equal(r.status, 1);
  t.match(r.stdout, /bad\.replay:2: ok\.frame: expected 7, got 1/);
  t.match(r.stdout, /0 passed, 1 failed/);
});
