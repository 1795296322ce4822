// `entelechy bench --rounds`: ratios summarised over rounds (scaling taken within each round), a
// tiny real run that writes its JSON report and an SVG chart with one median mark per pipeline and
// worker count, and options refused before anything runs.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { buildReference } from '../bench/reference/build.js';
import { runsAt, summarise, type Round, type RoundsReport } from '../bench/rounds.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const dir = scratchDir('entelechy-rounds-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: join(dir, 'cache') } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}

// Built before any test is declared (tap ends the file's test when the first one finishes).
const built = await buildReference();
const skipC = 'skipped' in built ? `C reference not built: ${built.skipped}` : false;

t.test('summarise: spreads over rounds, scaling within each round', async (t) => {
  const pair = (workers: number, engine: number, c: number) => ({ pipeline: 'P1' as const, size: 64, workers, engine_mpix_s: engine, engine_checksum: 1, c_mpix_s: c, c_checksum: 1, vs_c: engine / c });
  const rounds: Round[] = [
    { round: 1, first: 'engine', load_start: [1, 1, 1], pairs: [pair(1, 100, 200), pair(2, 180, 400)] },
    { round: 2, first: 'c', load_start: [9, 1, 1], pairs: [pair(1, 50, 50), pair(2, 100, 80)] },
    { round: 3, first: 'engine', load_start: [5, 1, 1], pairs: [pair(1, 80, 100), pair(2, 150, 160)] },
  ];
  const [one, two] = summarise(rounds);
  t.same(one.vs_c, { min: 0.5, median: 0.8, max: 1 }, 'engine / C of each round, min / median / max');
  t.same(one.engine_mpix_s, { min: 50, median: 80, max: 100 });
  t.equal(one.engine_vs_1, undefined, 'no scaling row for 1 worker');
  t.same(two.vs_c, { min: 0.45, median: 0.9375, max: 1.25 });
  // Within a round: 1.8, 2.0, 1.875. Across rounds (the median of 2 workers over the median of 1)
  // it would be 150 / 80 = 1.875 for the median but 180 / 50 = 3.6 for the max.
  t.same(two.engine_vs_1, { min: 1.8, median: 1.875, max: 2 }, 'scaling pairs each round with itself');
  t.same(two.c_vs_1, { min: 1.6, median: 1.6, max: 2 });
  t.equal(runsAt(5, 4096), 5, 'runs as given at 4096');
  t.equal(runsAt(5, 1024), 20, 'more at 1024');
  t.equal(runsAt(5, 32), 320, 'at most 64 times as many');
});

t.test('a tiny real run: table, JSON report and an SVG with one mark per pipeline and worker count', { skip: skipC }, async (t) => {
  const chart = join(dir, 'ratios.svg');
  const out = join(dir, 'rounds.json');
  const r = cli(['bench', '--rounds', '1', '--sizes', '32', '--runs', '1', '--workers', '2', '--chart', chart, '--out', out, '--no-halide']);
  t.equal(r.status, 0, r.ended);
  t.match(r.stdout, /engine \/ C\s+min \/ median \/ max/, 'the table heads the ratio column');
  t.match(r.stdout, /C reference: .* -fopenmp, OMP_WAIT_POLICY /, 'says how the C reference ran');
  t.match(r.stdout, /load average \(1, 5, 15 min\): [\d.]+ [\d.]+ [\d.]+ at the start, [\d.]+ [\d.]+ [\d.]+ at the end/, 'and gives the load average');

  const report = JSON.parse(readFileSync(out, 'utf8')) as RoundsReport;
  t.equal(report.round_list.length, 1, 'one round');
  t.type('skipped' in report.c ? undefined : report.c.omp_wait_policy, 'string', 'the report names the OpenMP wait policy');
  t.same(report.workers, [1, 2]);
  t.equal(report.load.start.length, 3, 'load averages at the start');
  t.equal(report.load.end.length, 3, 'and at the end');
  t.equal(report.summary.length, 8, 'four pipelines on 1 and 2 workers');
  for (const s of report.summary) {
    t.ok(s.vs_c && s.vs_c.median > 0 && Number.isFinite(s.vs_c.median), `${s.pipeline} on ${s.workers}: a ratio to C`);
    if (s.workers === 2) t.ok(s.engine_vs_1 && s.engine_vs_1.median > 0, `${s.pipeline}: scaling against 1 worker`);
  }
  const p3 = report.round_list[0].pairs.find((p) => p.pipeline === 'P3' && p.workers === 2)!;
  t.equal(p3.engine_checksum, p3.c_checksum, 'P3 counts the same live cells on the engine and in C');

  const svg = readFileSync(chart, 'utf8');
  t.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, 'an SVG document');
  const image = await sharp(Buffer.from(svg)).png().toBuffer({ resolveWithObject: true });
  t.ok(image.info.width > 100 && image.info.height > 100, `librsvg renders it (${image.info.width} x ${image.info.height})`);
  const medians = [...svg.matchAll(/aria-label="pipeline: (P\d); median: ([\d.]+); workers: (\d) workers?;/g)];
  for (const p of ['P1', 'P2', 'P3', 'P4']) {
    const marks = medians.filter((m) => m[1] === p);
    t.same(marks.map((m) => m[3]).sort(), ['1', '2'], `${p}: one median mark per worker count`);
    for (const m of marks) {
      const row = report.summary.find((s) => s.pipeline === p && String(s.workers) === m[3])!;
      t.equal(Number(m[2]), Math.round(row.vs_c!.median * 1000) / 1000, `${p} on ${m[3]}: the mark is the report's median`);
    }
  }
});

t.test('bad options are refused before anything runs, with what to do', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--sizes', '256,abc'], /--sizes takes sizes between 16 and 16384 .*`abc` is not one/],
    [['--sizes', '8'], /`8` is not one/],
    [['--rounds', '0'], /--rounds must be a whole number between 1 and 100; got 0/],
    [['--chart', join(dir, 'no-such-folder', 'c.svg')], /--chart: the folder of .* does not exist; create it first/],
    [['--chart', join(dir, 'c.png')], /--chart names a \.svg file/],
    [['--out', dir + '.json', '--chart', dir], /--chart names a \.svg file/],
    [['--chart', join(dir, 'c.svg'), '--no-c'], /--chart draws the ratios to the C reference: drop --no-c/],
  ];
  for (const [args, message] of cases) {
    const r = cli(['bench', '--size', '32', '--runs', '1', ...args]);
    t.equal(r.status, 1, `${args.join(' ')}: exit status 1`);
    t.match(r.stderr, message, `${args.join(' ')}: says what is wrong`);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
    t.notMatch(r.stderr, /round 1/, 'no round ran');
  }
  t.notOk(existsSync(join(dir, 'c.svg')), 'no chart written');
});
