// The command line of `entelechy bench --rounds N`: its options checked before anything runs (a
// bench can take many minutes; a typo should not cost them), then the rounds, the table, the JSON
// report and the chart.

import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../src/main/user-error.js';
import { writeFileAtomic } from '../src/main/files.js';
import type { PipelineName } from './reference/measurement.js';

export interface RoundsArgs {
  pipelines: PipelineName[];
  size: number;
  sizes?: string;
  rounds?: number;
  runs: number;
  workers: number;
  c: boolean;
  halide: boolean;
  json: boolean;
  chart?: string;
  out?: string;
}

export function parseSizes(text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const sizes = parts.map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  const bad = parts.find((_, i) => !(sizes[i] >= 16 && sizes[i] <= 16384));
  if (bad !== undefined) throw new UserError(`--sizes takes sizes between 16 and 16384 separated by commas, e.g. 256,1024,4096; \`${bad}\` is not one`);
  return [...new Set(sizes)];
}

/** A file we may write: its folder exists and is writable, and it is not a folder itself. */
function writable(option: string, path: string, ending: string): string {
  const full = resolve(path);
  if (!full.toLowerCase().endsWith(ending)) throw new UserError(`--${option} names a ${ending} file; got \`${path}\``);
  const folder = dirname(full);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new UserError(`--${option}: the folder of \`${path}\` does not exist; create it first`);
  if (existsSync(full) && statSync(full).isDirectory()) throw new UserError(`--${option}: \`${path}\` is a folder; name a file`);
  // Tried by writing, not by access(): root passes access() on a read-only mount, or /sys.
  const probe = join(folder, `.entelechy-bench-${process.pid}.tmp`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (e) {
    throw new UserError(`--${option}: cannot write into the folder of \`${path}\` (${(e as NodeJS.ErrnoException).code ?? 'refused'}); name a file in a folder you can write`);
  }
  return full;
}

export async function benchRounds(args: RoundsArgs): Promise<void> {
  const rounds = args.rounds ?? 3;
  if (!(Number.isInteger(rounds) && rounds >= 1 && rounds <= 100)) throw new UserError(`--rounds must be a whole number between 1 and 100; got ${args.rounds}`);
  const sizes = args.sizes !== undefined ? parseSizes(args.sizes) : [args.size];
  if (args.chart !== undefined && !args.c) throw new UserError('--chart draws the ratios to the C reference: drop --no-c, or --chart');
  const chart = args.chart !== undefined ? writable('chart', args.chart, '.svg') : undefined;
  const out = args.out !== undefined ? writable('out', args.out, '.json') : undefined;
  const say = (s: string) => process.stderr.write(s + '\n');
  // Imported once the options are known to be good: they load the compiler (a second or more).
  const [{ roundsTable, runRounds }, { chartSvg }] = await Promise.all([import('./rounds.js'), import('./chart.js')]);
  const report = await runRounds({ sizes, pipelines: args.pipelines, rounds, runs: args.runs, workers: Math.max(1, args.workers), c: args.c, halide: args.halide }, say);
  // The table first: a file that cannot be written after all (a full disk) loses nothing else.
  process.stdout.write(args.json ? JSON.stringify(report) + '\n' : roundsTable(report) + '\n');
  const failed: string[] = [];
  const keep = async (option: string, path: string | undefined, given: string | undefined, text: () => Promise<string> | string) => {
    if (!path) return;
    try {
      writeFileAtomic(path, await text());
      say(`${option === 'out' ? 'report' : 'chart'}: ${given}`);
    } catch (e) {
      failed.push(`--${option}: \`${given}\` could not be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  };
  await keep('out', out, args.out, () => JSON.stringify(report, null, 2) + '\n');
  await keep('chart', chart, args.chart, () => chartSvg(report));
  if (failed.length) throw new UserError(`${failed.join('; ')}; the table above holds the figures`);
}
