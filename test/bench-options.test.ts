// `entelechy bench`'s options off the happy path (a performance engineer's probe): an option the
// mode asked for does not read was ignored without a word (`--sizes` with `--compile`, `--scenes`
// without it); an empty pipeline name measured P1 and then failed with ENOENT; `--runs 1.5` ran 2;
// an --out folder that cannot be written failed after every round had run, losing the table; Ctrl-C
// lost the pipelines already measured; and a checksum far from the engine's went unremarked.

import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { table } from '../bench/run.js';
import type { Measurement } from '../bench/reference/measurement.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const dir = scratchDir('entelechy-bench-options-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, ENTELECHY_CACHE_DIR: join(dir, 'cache') };

t.test('options the mode does not read, counts that are not whole, pipelines empty or twice: refused before anything runs', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--compile', '--cold'], /^entelechy: --compile and --cold are two benches: give one of them$/m],
    [['--compile', '--rounds', '1'], /^entelechy: --rounds does nothing here: --compile measures the compile corpus; --rounds goes with the rounds \(--rounds N\)\. Drop it/m],
    [['--cold', '--edits', '2'], /^entelechy: --edits does nothing here: --cold measures first frames from process start; --edits goes with --compile\./m],
    [['--compile', '--sizes', '64'], /--sizes does nothing here: --compile measures/],
    [['--compile', '--no-c'], /^entelechy: --no-c does nothing here: --compile measures the compile corpus\. Drop it/m],
    [['--scenes', 'P4'], /^entelechy: --scenes does nothing here: without --compile, --cold or rounds, bench measures the pipelines once each; --scenes goes with --compile or --cold\./m],
    [['--edits', '3'], /--edits does nothing here: .*; --edits goes with --compile\./],
    [['--runs', '1.5'], /^entelechy: --runs must be a whole number between 1 and 1000; got `1\.5`$/m],
    [['--compile', '--edits', '2.5'], /--edits must be a whole number between 1 and 1000; got `2\.5`/],
    [['--pipelines', 'P1,,P2'], /^entelechy: --pipelines: an empty name in `P1,,P2`; name them separated by commas, e\.g\. P1,P3$/m],
    [['--pipelines', ''], /^entelechy: --pipelines: no pipeline named;/m],
    [['--pipelines', 'P1,p1'], /^entelechy: --pipelines: `P1` is given twice; name each pipeline once$/m],
    [['--rounds', '1', '--size', '32', '--out', '/sys/entelechy-bench.json'], /^entelechy: --out: cannot write into the folder of `\/sys\/entelechy-bench\.json` \(E[A-Z]+\); name a file in a folder you can write$/m],
  ];
  for (const [args, message] of cases) {
    const r = spawnSync(process.execPath, [BIN, 'bench', ...args], { cwd: ROOT, encoding: 'utf8', env, timeout: 60_000 });
    t.equal(r.status, 1, `${args.join(' ')}: exit status 1`);
    t.match(r.stderr, message, `${args.join(' ')}: says what is wrong`);
    t.notMatch(r.stderr, /internal error|\n\s+at |round 1|: engine on/, 'nothing ran, no stack trace');
  }
});

t.test('interrupted, the table holds the pipelines measured, and says it was cut short', async (t) => {
  const child = spawn(process.execPath, [BIN, 'bench', '--size', '512', '--runs', '3', '--workers', '1', '--no-halide', '--no-c'], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  const second = new Promise<void>((resolve) => child.stderr.on('data', (d) => ((stderr += d), /P2: /.test(stderr) && resolve())));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await Promise.race([second, exited]);
  child.kill('SIGINT');
  t.equal(await exited, 130, stderr);
  t.match(stdout, /^P1 +entelechy +1 /m, 'P1, measured before the interrupt, is in the table');
  t.notMatch(stdout, /^P4 /m, 'P4 was not reached');
  t.match(stderr, /^entelechy: interrupted \(SIGINT\): the figures above are those measured \(P1(, P2)?\)$/m);
});

t.test('a checksum far from the engine\'s is noted under the table', async (t) => {
  const m = (system: 'entelechy' | 'c' | 'js', checksum: number): Measurement => ({ pipeline: 'P4', width: 17, height: 17, system, workers: 1, runs: [1], median_ms: 1, mpix_s: 1, checksum });
  const options = { size: 17, pipelines: ['P4' as const], runs: 1, workers: 1, c: true, js: true, halide: false, json: false };
  const text = table([m('entelechy', 483.068525), m('js', 483.068525), m('c', 475.743336)], [], options);
  t.match(text, /^note: P4 c: checksum 475\.743336 is 1\.5 % from the engine's 483\.068525, past 0\.00001 relative: its ratios compare different work/m);
  t.notMatch(text, /note: P4 js/, 'the same checksum is not noted');
  t.notMatch(table([m('entelechy', 483.068525), m('c', 483.0685)], [], options), /note:/, 'nor one within the tolerance');
});
