// The Halide reference (bench/reference/halide): its four pipelines agree with the C reference's
// checksums at a small size, P3 wraps around on a grid smaller than a vector, `entelechy bench
// --rounds` shows it beside C, and without the package the bench says so in one line and goes on.
// Each run JIT-compiles its pipeline (0.4-0.8 s of CPU each), so few runs.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildReference, runReference } from '../bench/reference/build.js';
import { buildHalide, runHalide, HALIDE_PACKAGE } from '../bench/reference/halide/build.js';
import { PIPELINES } from '../bench/reference/measurement.js';
import type { RoundsReport } from '../bench/rounds.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const W = 67; // not a multiple of the vector width: the last vector of a row shifts inwards
const H = 48; // even: see bench/reference/measurement.ts on P4's centre row
const REL_TOL = 1e-3; // as test/bench-reference.test.ts allows C against JS (sinf, -ffast-math)
const dir = scratchDir('entelechy-halide-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: join(dir, 'cache'), ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}

// Built before any test is declared, so that "not installed" is a declared skip.
const [halide, c] = await Promise.all([buildHalide(), buildReference()]);
const skip = 'skipped' in halide ? `Halide reference not built: ${halide.skipped}` : 'skipped' in c ? `C reference not built: ${c.skipped}` : false;

t.test('the four pipelines agree with the C reference', { skip }, async (t) => {
  if ('skipped' in halide || 'skipped' in c) return;
  for (const p of PIPELINES) {
    const [h, ref] = await Promise.all([runHalide(halide.binary, p, W, H, 2, 2), runReference(c.binary, p, W, H, 1, 2)]);
    t.equal(h.system, 'halide', `${p}: system`);
    t.equal(h.workers, 2, `${p}: on 2 threads`);
    t.equal(h.runs.length, 2, `${p}: two timed runs`);
    t.ok(h.compile_ms !== undefined && h.compile_ms > 0, `${p}: the JIT compile is reported apart (${h.compile_ms?.toFixed(0)} ms)`);
    if (p === 'P3') t.equal(h.checksum, ref.checksum, 'P3: the same live cells after 10 steps');
    else {
      const rel = Math.abs(h.checksum - ref.checksum) / Math.abs(ref.checksum);
      t.ok(rel < REL_TOL, `${p}: Halide ${h.checksum} against C ${ref.checksum} (rel ${rel.toExponential(2)})`);
    }
  }
});

t.test('P3 wraps around on a 7 x 5 grid (every cell an edge cell)', { skip }, async (t) => {
  if ('skipped' in halide || 'skipped' in c) return;
  for (const steps of [1, 3]) {
    const [h, ref] = await Promise.all([runHalide(halide.binary, 'P3', 7, 5, 1, 2, { steps }), runReference(c.binary, 'P3', 7, 5, 1, 1, { steps })]);
    t.equal(h.checksum, ref.checksum, `${steps} step(s): ${ref.checksum} live cells, as in C`);
  }
  // the first step by hand (test/bench-reference.test.ts draws it): 12 live cells
  t.equal((await runHalide(halide.binary, 'P3', 7, 5, 1, 1, { steps: 1 })).checksum, 12, 'one step, counted by hand');
});

t.test('bench --rounds shows Halide beside C, checksums equal on P3', { skip }, async (t) => {
  const out = join(dir, 'rounds.json');
  const chart = join(dir, 'ratios.svg');
  const r = cli(['bench', '--rounds', '1', '--sizes', '32', '--runs', '1', '--workers', '2', '--pipelines', 'P3', '--out', out, '--chart', chart]);
  t.equal(r.status, 0, r.ended);
  t.match(r.stdout, /Halide Mpix\/s\s+engine \/ Halide\s+min \/ median \/ max/, 'the table has the Halide columns');
  t.match(r.stdout, /Halide: Halide 14 JIT/, 'and says how Halide ran');
  const report = JSON.parse(readFileSync(out, 'utf8')) as RoundsReport;
  t.ok(report.halide && !('skipped' in report.halide), 'the report names the Halide build');
  for (const pair of report.round_list[0].pairs) {
    t.equal(pair.halide_checksum, pair.c_checksum, `P3 on ${pair.workers}: Halide counts the cells C counts`);
    t.ok(pair.vs_halide! > 0 && pair.vs_halide === pair.engine_mpix_s / pair.halide_mpix_s!, `P3 on ${pair.workers}: engine / Halide of the round`);
  }
  const two = report.summary.find((s) => s.workers === 2)!;
  t.ok(two.vs_halide && two.halide_vs_1, 'the summary spreads the ratio to Halide and its scaling');
  // the chart: a row of panels against Halide, one median mark per worker count, the report's
  const marks = [...readFileSync(chart, 'utf8').matchAll(/aria-label="pipeline: P3; median: ([\d.]+); workers: (\d) workers?;[^"]*reference: (\w+)"/g)];
  for (const reference of ['C', 'Halide']) {
    const mine = marks.filter((m) => m[3] === reference);
    t.same(mine.map((m) => m[2]).sort(), ['1', '2'], `chart: a median mark against ${reference} per worker count`);
    for (const m of mine) {
      const row = report.summary.find((s) => s.workers === Number(m[2]))!;
      const ratio = reference === 'C' ? row.vs_c! : row.vs_halide!;
      t.ok(Math.abs(Number(m[1]) - ratio.median) < 1e-3, `chart: ${reference} on ${m[2]} at the report's median ${ratio.median}`);
    }
  }
});

t.test('bench (one run) has a halide line and a ratio to it', { skip }, async (t) => {
  const r = cli(['bench', '--size', '32', '--runs', '1', '--workers', '1', '--pipelines', 'P3', '--no-js', '--json']);
  t.equal(r.status, 0, r.ended);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { system?: string; checksum?: number; compile_ms?: number });
  const hl = lines.find((m) => m.system === 'halide');
  t.ok(hl, 'a halide measurement');
  t.equal(hl?.checksum, lines.find((m) => m.system === 'c')?.checksum, 'with the checksum of C');
  t.ok(hl && hl.compile_ms! > 0, 'and its JIT compile time');
});

t.test('without the package: one line naming it, and the bench goes on', async (t) => {
  const missing = await buildHalide({ include: join(dir, 'no-halide-here') });
  t.ok('skipped' in missing, 'a missing Halide.h is a skip, not an error');
  if ('skipped' in missing) t.match(missing.skipped, HALIDE_PACKAGE, 'naming the Debian package');
  const r = cli(['bench', '--rounds', '1', '--sizes', '16', '--runs', '1', '--workers', '1', '--pipelines', 'P1', '--no-c'], { ENTELECHY_HALIDE_INCLUDE: join(dir, 'no-halide-here') });
  t.equal(r.status, 0, r.ended);
  const lines = r.stderr.split('\n').filter((l) => /halide/i.test(l));
  t.equal(lines.length, 1, `one line about Halide: ${JSON.stringify(lines)}`);
  t.match(lines[0], /^Halide skipped: .*libhalide14-0-dev/, 'it names the package');
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  t.match(r.stdout, /^16\s+P1\s+1\s+[\d.]+/m, 'and the engine was measured');
  t.notMatch(r.stdout, /Halide/, 'with no Halide columns');
});
