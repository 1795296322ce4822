// `entelechy bench --rounds N`: the engine against the C reference and Halide, in interleaved rounds.
//
// On a shared machine absolute figures move by 10-100 % within minutes, and alike for every
// program on it; a ratio of two measurements taken seconds apart survives that far better. So each
// round measures, per size, pipeline and worker count, the engine, the C reference and Halide one
// right after the other (the order reverses every round, so a steady drift favours none), and the
// report gives each ratio's spread over the rounds, with the load average at the start and the end.

import { loadavg } from 'node:os';
import { EngineRun, machine } from './run.js';
import { buildReference, runReference } from './reference/build.js';
import { buildHalide, runHalide } from './reference/halide/build.js';
import { median, type Measurement, type PipelineName } from './reference/measurement.js';
import { loadCompiler } from '../src/main/modules.js';

export interface RoundsOptions {
  sizes: number[];
  pipelines: PipelineName[];
  rounds: number;
  /** Timed runs per measurement at 2048 and above (its median is the round's figure); more at smaller sizes (runsAt). */
  runs: number;
  /** The parallel worker count; every pipeline is also measured on 1. */
  workers: number;
  c: boolean;
  /** Halide 14's JIT too, when libhalide14-0-dev is installed. */
  halide: boolean;
}

/** One round's figures for one pipeline, size and worker count. */
export interface Pair {
  pipeline: PipelineName;
  size: number;
  workers: number;
  engine_mpix_s: number;
  engine_checksum: number;
  c_mpix_s?: number;
  c_checksum?: number;
  /** engine / C, this round. */
  vs_c?: number;
  halide_mpix_s?: number;
  halide_checksum?: number;
  /** engine / Halide, this round. */
  vs_halide?: number;
}

export interface Round {
  round: number;
  /** engine first: engine, C, Halide; c first: Halide, C, engine. */
  first: 'engine' | 'c';
  /** 1-, 5- and 15-minute load averages when the round started. */
  load_start: number[];
  pairs: Pair[];
}

export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** One pipeline, size and worker count over every round. */
export interface SummaryRow {
  pipeline: PipelineName;
  size: number;
  workers: number;
  engine_mpix_s: Spread;
  c_mpix_s?: Spread;
  vs_c?: Spread;
  halide_mpix_s?: Spread;
  vs_halide?: Spread;
  /** This worker count against 1 worker, each round's own figures. */
  engine_vs_1?: Spread;
  c_vs_1?: Spread;
  halide_vs_1?: Spread;
}

export interface RoundsReport {
  kind: 'entelechy bench rounds';
  date: string;
  machine: string;
  sizes: number[];
  pipelines: PipelineName[];
  workers: number[];
  rounds: number;
  runs: number;
  /** omp_wait_policy: $OMP_WAIT_POLICY as the C reference ran (under load, libgomp's default spinning collapses its 2-thread figures). */
  c: { compiler: string; flags: string[]; omp_wait_policy: string; note?: string } | { skipped: string };
  /** How the Halide reference ran (threads: HL_NUM_THREADS = the worker count), or why it did not. */
  halide?: { compiler: string; flags: string[] } | { skipped: string };
  /** Load averages (1, 5, 15 minutes) at the start and the end of the whole bench. */
  load: { start: number[]; end: number[] };
  round_list: Round[];
  summary: SummaryRow[];
}

export function spread(values: number[]): Spread {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

/**
 * Timed runs per figure at a size: `runs` at 2048 and above, more below (up to 64 times as many at
 * 256), so that a small frame's median is of enough frames to be steady.
 */
export function runsAt(runs: number, size: number): number {
  return runs * Math.max(1, Math.min(64, Math.floor((2048 / size) ** 2)));
}

const ompWaitPolicy = () => process.env.OMP_WAIT_POLICY ?? 'unset (libgomp spins a while at each barrier, then sleeps)';

const load = () => loadavg().map((l) => Math.round(l * 100) / 100);

/** The engine on one pipeline, size and worker count: compiled, warmed up, `runs` timed runs. */
async function engineOnce(pipeline: PipelineName, size: number, runs: number, workers: number): Promise<Measurement> {
  const run = await EngineRun.start(pipeline, size, workers);
  try {
    for (let r = 0; r < runs; r++) await run.time();
    return run.measurement();
  } finally {
    await run.close();
  }
}

export async function runRounds(options: RoundsOptions, say: (line: string) => void = () => {}): Promise<RoundsReport> {
  await loadCompiler();
  const counts = options.workers > 1 ? [1, options.workers] : [1];
  const build = options.c ? await buildReference() : { skipped: 'disabled with --no-c' };
  const start = load();
  say(`entelechy bench: ${plural(options.rounds, 'round')} of ${options.pipelines.join(', ')} at ${options.sizes.map((s) => `${s} x ${s}`).join(', ')}, ${plural(options.runs, 'run')} per figure (more below 2048), ${machine()}; load average ${start.join(' ')}`);
  if ('skipped' in build) say(`C reference skipped: ${build.skipped}`);
  const halide = options.halide ? await buildHalide() : { skipped: 'disabled with --no-halide' };
  if ('skipped' in halide && options.halide) say(`Halide skipped: ${halide.skipped}`);
  const rounds: Round[] = [];
  for (let r = 0; r < options.rounds; r++) {
    const round: Round = { round: r + 1, first: r % 2 === 0 ? 'engine' : 'c', load_start: load(), pairs: [] };
    say(`round ${round.round} (${round.first} first), load average ${round.load_start[0]}`);
    for (const size of options.sizes) {
      for (const pipeline of options.pipelines) {
        for (const workers of counts) {
          const runs = runsAt(options.runs, size);
          const engine = () => engineOnce(pipeline, size, runs, workers);
          const c = async () => ('skipped' in build ? undefined : runReference(build.binary, pipeline, size, size, runs, workers));
          const hl = async () => ('skipped' in halide ? undefined : runHalide(halide.binary, pipeline, size, size, runs, workers));
          let e: Measurement;
          let cm: Measurement | undefined;
          let hm: Measurement | undefined;
          if (round.first === 'engine') {
            e = await engine();
            cm = await c();
            hm = await hl();
          } else {
            hm = await hl();
            cm = await c();
            e = await engine();
          }
          const pair: Pair = { pipeline, size, workers, engine_mpix_s: e.mpix_s, engine_checksum: e.checksum };
          if (cm) Object.assign(pair, { c_mpix_s: cm.mpix_s, c_checksum: cm.checksum, vs_c: e.mpix_s / cm.mpix_s });
          if (hm) Object.assign(pair, { halide_mpix_s: hm.mpix_s, halide_checksum: hm.checksum, vs_halide: e.mpix_s / hm.mpix_s });
          round.pairs.push(pair);
        }
      }
    }
    rounds.push(round);
  }
  return {
    kind: 'entelechy bench rounds',
    date: new Date().toISOString(),
    machine: machine(),
    sizes: options.sizes,
    pipelines: options.pipelines,
    workers: counts,
    rounds: options.rounds,
    runs: options.runs,
    c: 'skipped' in build ? build : { compiler: build.compiler, flags: build.flags, omp_wait_policy: ompWaitPolicy(), ...(build.note ? { note: build.note } : {}) },
    halide: 'skipped' in halide ? halide : { compiler: halide.compiler, flags: halide.flags },
    load: { start, end: load() },
    round_list: rounds,
    summary: summarise(rounds),
  };
}

/** Each pipeline, size and worker count's figures over the rounds; scaling is taken within a round. */
export function summarise(rounds: Round[]): SummaryRow[] {
  const rows: SummaryRow[] = [];
  const first = rounds[0]?.pairs ?? [];
  for (const key of first) {
    const same = (p: Pair) => p.pipeline === key.pipeline && p.size === key.size;
    const pairs = rounds.map((r) => r.pairs.find((p) => same(p) && p.workers === key.workers)!);
    const ones = rounds.map((r) => r.pairs.find((p) => same(p) && p.workers === 1)!);
    const row: SummaryRow = { pipeline: key.pipeline, size: key.size, workers: key.workers, engine_mpix_s: spread(pairs.map((p) => p.engine_mpix_s)) };
    const withC = pairs.every((p) => p.c_mpix_s !== undefined);
    if (withC) {
      row.c_mpix_s = spread(pairs.map((p) => p.c_mpix_s!));
      row.vs_c = spread(pairs.map((p) => p.vs_c!));
    }
    const withHalide = pairs.every((p) => p.halide_mpix_s !== undefined);
    if (withHalide) {
      row.halide_mpix_s = spread(pairs.map((p) => p.halide_mpix_s!));
      row.vs_halide = spread(pairs.map((p) => p.vs_halide!));
    }
    if (key.workers > 1) {
      row.engine_vs_1 = spread(pairs.map((p, i) => p.engine_mpix_s / ones[i].engine_mpix_s));
      if (withC) row.c_vs_1 = spread(pairs.map((p, i) => p.c_mpix_s! / ones[i].c_mpix_s!));
      if (withHalide) row.halide_vs_1 = spread(pairs.map((p, i) => p.halide_mpix_s! / ones[i].halide_mpix_s!));
    }
    rows.push(row);
  }
  return rows;
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const triple = (s?: Spread, digits = 2) => (s ? `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}` : '');

/** The report as a table: medians of throughput, spreads (min / median / max) of the ratios. */
export function roundsTable(report: RoundsReport): string {
  const rows: string[][] = [
    ['size', 'pipeline', 'workers', 'engine Mpix/s', 'C Mpix/s', 'engine / C  min / median / max', 'vs 1 worker  min / median / max', 'C vs 1 thread'],
  ];
  // Halide's columns only when it ran: a machine without it keeps the table it had
  const withHalide = report.summary.some((s) => s.halide_mpix_s);
  if (withHalide) rows[0].push('Halide Mpix/s', 'engine / Halide  min / median / max', 'Halide vs 1 thread');
  for (const s of report.summary) {
    rows.push([
      String(s.size), s.pipeline, String(s.workers), s.engine_mpix_s.median.toFixed(1), s.c_mpix_s ? s.c_mpix_s.median.toFixed(1) : '',
      triple(s.vs_c), triple(s.engine_vs_1), s.c_vs_1 ? s.c_vs_1.median.toFixed(2) : '',
      ...(withHalide ? [s.halide_mpix_s ? s.halide_mpix_s.median.toFixed(1) : '', triple(s.vs_halide), s.halide_vs_1 ? s.halide_vs_1.median.toFixed(2) : ''] : []),
    ]);
  }
  const width = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(width[i])).join('  ').trimEnd());
  lines.splice(1, 0, width.map((w) => '-'.repeat(w)).join('  '));
  return [
    `${plural(report.rounds, 'round')} of ${report.sizes.map((s) => `${runsAt(report.runs, s)} runs at ${s}`).join(', ')} per figure, ${report.date}, ${report.machine}`,
    `load average (1, 5, 15 min): ${report.load.start.join(' ')} at the start, ${report.load.end.join(' ')} at the end`,
    ...('skipped' in report.c ? [] : [`C reference: ${report.c.compiler} ${report.c.flags.join(' ')}, OMP_WAIT_POLICY ${report.c.omp_wait_policy}`]),
    ...(report.halide && !('skipped' in report.halide) ? ['Halide: Halide 14 JIT (bench/reference/halide, hand-written schedules), HL_NUM_THREADS = workers; its JIT compile is outside the timed runs'] : []),
    'Mpix/s: median over the rounds (P3 per step); ratios: each round\'s own pair, their spread over the rounds',
    '',
    ...lines,
  ].join('\n');
}
