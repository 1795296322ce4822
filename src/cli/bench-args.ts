// `entelechy bench`'s options, checked before anything runs: a bench takes minutes, and an option
// that does nothing in the mode asked for (`--sizes` with `--compile`, `--scenes` without it) was
// ignored without a word, so a run measured something other than what was meant.

import { UserError } from '../main/user-error.js';

/** What a bench measures: the compile corpus, cold starts, rounds against C, or the table. */
export type BenchMode = 'compile' | 'cold' | 'rounds' | 'table';

/** The options each mode reads (beyond --json, which all do). */
const READS: Record<BenchMode, readonly string[]> = {
  compile: ['compile', 'scenes', 'runs', 'edits'],
  cold: ['cold', 'scenes', 'runs'],
  rounds: ['rounds', 'sizes', 'chart', 'out', 'size', 'pipelines', 'runs', 'workers', 'c', 'halide', 'js'],
  table: ['size', 'pipelines', 'runs', 'workers', 'c', 'js', 'halide'],
};

const WHAT: Record<BenchMode, string> = {
  compile: '--compile measures the compile corpus',
  cold: '--cold measures first frames from process start',
  rounds: 'rounds (--rounds, --sizes, --chart, --out) measure the pipelines against C',
  table: 'without --compile, --cold or rounds, bench measures the pipelines once each',
};

/** The options given on the command line: long name (`--no-c` is c) to the flag as written. */
export function givenOptions(args: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const a of args) {
    if (a.startsWith('--')) names.set(a.slice(2).split('=')[0].replace(/^no-/, ''), a.split('=')[0]);
  }
  return names;
}

/** The mode the options ask for; refused when they ask for two, or give one an option it does not read. */
export function benchMode(given: Map<string, string>): BenchMode {
  if (given.has('compile') && given.has('cold')) throw new UserError('--compile and --cold are two benches: give one of them');
  const mode: BenchMode = given.has('compile') ? 'compile' : given.has('cold') ? 'cold' : ['rounds', 'sizes', 'chart', 'out'].some((o) => given.has(o)) ? 'rounds' : 'table';
  const stray = [...given.keys()].find((o) => o !== 'json' && Object.values(READS).some((r) => r.includes(o)) && !READS[mode].includes(o));
  if (stray) {
    const where = (Object.keys(READS) as BenchMode[]).filter((m) => m !== 'table' && READS[m].includes(stray) && !READS.table.includes(stray)).map((m) => (m === 'rounds' ? 'the rounds (--rounds N)' : `--${m}`));
    const flag = given.get(stray);
    throw new UserError(`${flag} does nothing here: ${WHAT[mode]}${where.length ? `; ${flag} goes with ${where.join(' or ')}` : ''}. Drop it, or ask for the bench it belongs to`);
  }
  return mode;
}

/** A count option: a whole number in [1, max]. */
export function wholeCount(option: string, value: number, max: number, shown: string): number {
  if (!(Number.isInteger(value) && value >= 1 && value <= max)) throw new UserError(`--${option} must be a whole number between 1 and ${max}; got ${shown}`);
  return value;
}

/** --pipelines: names from P1 to P4, each once. */
export function pipelineNames(text: string, isName: (s: string) => boolean): string[] {
  const names = text.split(',').map((p) => p.trim().toUpperCase());
  const bad = names.find((p) => !isName(p));
  if (bad !== undefined) throw new UserError(bad === '' ? `--pipelines: ${text.trim() ? `an empty name in \`${text}\`` : 'no pipeline named'}; name them separated by commas, e.g. P1,P3` : `--pipelines: \`${bad}\` is not a pipeline; they are P1, P2, P3, P4`);
  const twice = names.find((p, i) => names.indexOf(p) !== i);
  if (twice) throw new UserError(`--pipelines: \`${twice}\` is given twice; name each pipeline once`);
  return names;
}
