// `bench --cold` (issue 17): a cold render's first frame from process start, stage by stage. One
// run of one scene: the measurement names every stage a cold render goes through, in order, and
// the compiler is loaded (the module cache is off), with CPU time at most the wall time per thread.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

t.test('bench --cold --json: the first frame of a cold render and its stages', async (t) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'bench', '--cold', '--scenes', 'rings', '--runs', '1', '--json'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const m = JSON.parse(r.stdout.trim());
  t.equal(m.measurement, 'cold_first_frame');
  t.equal(m.scene, 'rings');
  t.same(
    m.stages.map((s: any) => s.stage),
    ['node started', 'compile worker started', 'command line imported', 'render imported', 'scene parsed and checked', 'compiler loaded', 'modules compiled', 'frame 0 begins', 'frame 0 evaluated', 'frames written'],
    'every stage, in order: with the cache off the compile worker starts at once, and the modules are compiled on it',
  );
  const walls = m.stages.map((s: any) => s.wall_ms);
  t.same(walls, [...walls].sort((a: number, b: number) => a - b), 'stages end one after another');
  t.ok(m.median_ms >= walls[walls.length - 1], 'the first frame is seen after its stages ended');
  t.equal(m.load.length, 2);
});

t.test('bench --cold refuses a scene not in the corpus, naming them', async (t) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'bench', '--cold', '--scenes', 'nothing'], { encoding: 'utf8' });
  t.equal(r.status, 1);
  t.match(r.stderr, /--scenes: `nothing` is not a corpus scene; they are blur, castle/);
});
