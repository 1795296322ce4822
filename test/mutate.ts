// Mutation testing of the core modules with StrykerJS (docs/testing.md, "Mutation testing").
// `npm run mutate` scores every module in MODULES in turn; `npm run mutate -- envelope graph`
// scores those. Not part of `npm test`: a module takes minutes.
//
// How: Stryker instruments the TypeScript of the module's `mutate` ranges once (every mutant in
// one file, switched on by an environment variable: "mutant switching"), the sandbox is built
// once with `tsc --noCheck` (the instrumented files do not type-check, and need not), and the
// tap runner runs the module's focused test files (compiled, in dist/test) once per mutant,
// only those whose run reached it (coverage per test file).

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Part of a file: from the first line holding `from` up to the line before the next holding `to`. */
type Range = { file: string; from: string; to: string };

interface Module {
  /** What Stryker mutates: whole files, or the parts that matter (found by text, so edits elsewhere do not move them). */
  mutate: (string | Range)[];
  /** The test files (test/NAME.test.ts) that cover it, fast ones: each runs once per mutant. */
  tests: string[];
  /** Mutators left out, with why (docs/testing.md repeats it). */
  exclude?: string[];
}

export const MODULES: Record<string, Module> = {
  // The operations table's entries are text that docs/protocol.md is generated from: docs.test
  // kills their mutants (docs/testing.md), at a minute's cost per 40; here, its lookups.
  envelope: {
    mutate: ['src/protocol/envelope.ts', { file: 'src/protocol/operations.ts', from: 'export const OPERATIONS', to: 'Keeps each event' }],
    tests: ['envelope'],
  },
  // documents.ts checks paths and names; journal.ts writes a set of them all or none.
  documents: { mutate: ['src/main/documents.ts', 'src/main/journal.ts', 'src/main/journal-disk.ts', 'src/main/journal-recovery.ts'], tests: ['documents', 'journal'] },
  graph: {
    mutate: ['src/ir/check/graph.ts', 'src/ir/grants.ts', { file: 'src/ir/check/scene.ts', from: 'const lacking =', to: 'kernels.set(' }],
    tests: ['graph-check'],
  },
  // The frame and its commit, reset, what a publication carries over (keepInputs, keepFrame) and
  // trace's replay.
  commit: {
    mutate: [
      'src/main/frame.ts',
      { file: 'src/main/group-runs.ts', from: 'private bound(', to: 'failure(gi: number' },
      { file: 'src/main/engine.ts', from: 'reset(): void', to: 'dispose(): void' },
    ],
    tests: ['frame-commit', 'frame-carry'],
  },
  // builtins.ts in three parts, each scored on its own (a part takes 10-40 minutes): its
  // formulas (clamp to the casts), the helpers before them, and the table's lowering functions.
  // The table's summaries and signatures are help text (StringLiteral), not what a kernel
  // computes; an op's name made "" is refused when the IR is built, so those say nothing either.
  builtins: { mutate: [{ file: 'src/ir/builtins.ts', from: 'function clampF', to: '---- the table' }], tests: ['builtins'], exclude: ['StringLiteral'] },
  'builtins-helpers': { mutate: [{ file: 'src/ir/builtins.ts', from: '---- helpers', to: 'function clampF' }], tests: ['builtins'], exclude: ['StringLiteral'] },
  'builtins-table': { mutate: [{ file: 'src/ir/builtins.ts', from: '---- the table', to: 'export const BUILTIN_CONSTANTS' }], tests: ['builtins'], exclude: ['StringLiteral'] },
  // math.test.ts checks MATH_REF against Math.* on 200k points a function, and compiles the SIMD versions.
  math: { mutate: [{ file: 'src/ir/mathref.ts', from: 'function horner', to: 'The accuracy MATH_REF' }], tests: ['math'] },
};

function usage(): never {
  console.error(`usage: npm run mutate [-- MODULE ...]; the modules are ${Object.keys(MODULES).join(', ')}`);
  process.exit(2);
}

/** Stryker's `file:from-to` (1-based lines, inclusive) for a Range. */
function lines(r: string | Range): string {
  if (typeof r === 'string') return r;
  const text = readFileSync(r.file, 'utf8').split('\n');
  const from = text.findIndex((l) => l.includes(r.from));
  const to = from < 0 ? -1 : text.findIndex((l, i) => i > from && l.includes(r.to));
  if (to < 0) throw new Error(`${r.file} has no \`${from < 0 ? r.from : r.to}\`: update its range in test/mutate.ts`);
  return `${r.file}:${from + 1}-${to}`;
}

type Mutant = { status: string; mutatorName: string; replacement?: string; location: { start: { line: number; column: number }; end: { line: number; column: number } } };
type Report = { files: Record<string, { mutants: Mutant[] }> };
const counted = (status: string) => status !== 'RuntimeError' && status !== 'CompileError' && status !== 'Ignored';
const dead = (status: string) => status === 'Killed' || status === 'Timeout';
const key = (file: string, m: Mutant) => `${file}:${m.location.start.line}:${m.location.start.column}:${m.mutatorName}:${m.replacement}`;

function mutants(report: string): (Mutant & { file: string })[] {
  const r = JSON.parse(readFileSync(report, 'utf8')) as Report;
  return Object.entries(r.files).flatMap(([file, f]) => f.mutants.map((m) => ({ file, ...m })));
}

/**
 * With `--survivors`: only the mutants the last full run of the module left alive (from its
 * report), to see which new tests kill, in seconds instead of minutes; the score is the last
 * run's with those now killed added. The source must not have changed since that run.
 */
function survivors(name: string): { mutate: string[]; alive: Set<string>; before: { killed: number; total: number } } {
  const all = mutants(join('reports', 'mutation', `${name}.json`));
  const alive = all.filter((m) => counted(m.status) && !dead(m.status));
  // A range a little wider than each mutant (the report's columns and Stryker's ranges count
  // from different bases); the mutants it also takes in are left out of the count below.
  const range = (m: Mutant) => `${m.location.start.line}:${Math.max(0, m.location.start.column - 1)}-${m.location.end.line}:${m.location.end.column + 1}`;
  return {
    mutate: alive.map((m) => `${m.file}:${range(m)}`),
    alive: new Set(alive.map((m) => key(m.file, m))),
    before: { killed: all.filter((m) => dead(m.status)).length, total: all.filter((m) => counted(m.status)).length },
  };
}

async function score(name: string, tests?: string[], again = false): Promise<void> {
  const m = { ...MODULES[name], ...(tests ? { tests } : {}) };
  const rerun = again ? survivors(name) : undefined;
  const report = join('reports', 'mutation', `${name}${again ? '.survivors' : ''}.json`);
  mkdirSync(join('reports', 'mutation'), { recursive: true });
  // Imported by a name tsc does not resolve: the build does not need Stryker installed (a
  // node_modules from before it was added still compiles the project).
  const core = '@stryker-mutator/core';
  const { Stryker } = (await import(core)) as { Stryker: new (options: object) => { runMutationTest(): Promise<{ status: string }[]> } };
  const stryker = new Stryker({
    testRunner: 'tap',
    plugins: ['@stryker-mutator/tap-runner'],
    tap: { testFiles: m.tests.map((t) => `dist/test/${t}.test.js`), nodeArgs: [], forceBail: true },
    mutate: rerun?.mutate ?? m.mutate.map(lines),
    mutator: { excludedMutations: m.exclude ?? [] },
    buildCommand: 'npx tsc -p tsconfig.json --noCheck',
    coverageAnalysis: 'perTest',
    // Two cores, shared: one test process at a time by default (STRYKER_CONCURRENCY to change).
    concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
    checkers: [],
    ignorePatterns: ['dist', 'reports', '.tap', 'tmp', 'out', 'bench/reference/.build', '*.png', '.stryker-tmp*'],
    // One folder per module, so that two modules can run at once without one removing the other's.
    tempDirName: `.stryker-tmp-${name}`,
    reporters: ['clear-text', 'progress-append-only', 'json'],
    jsonReporter: { fileName: report },
    clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
    timeoutMS: 20000,
    cleanTempDir: 'always',
    thresholds: { high: 90, low: 80, break: null },
  });
  const started = Date.now();
  const results = await stryker.runMutationTest();
  const seconds = Math.round((Date.now() - started) / 1000);
  let killed = results.filter((r) => dead(r.status)).length;
  let total = results.filter((r) => counted(r.status)).length;
  if (rerun) {
    const again = mutants(report).filter((m) => rerun.alive.has(key(m.file, m)));
    const now = again.filter((m) => dead(m.status)).length;
    console.log(`mutate ${name}: ${now} of the ${rerun.alive.size} survivors of the last run killed now (${rerun.alive.size - again.length} not found again)`);
    killed = rerun.before.killed + now;
    total = rerun.before.total;
  }
  const pct = total ? ((100 * killed) / total).toFixed(1) : '-';
  console.log(`mutate ${name}: ${killed} of ${total} mutants killed (${pct} %), ${seconds} s; report ${report}`);
}

process.chdir(join(import.meta.dirname, '..', '..')); // the repository's root
const args = process.argv.slice(2);
// `--tests a,b`: score against other test files (to measure what the older suite killed).
const at = args.indexOf('--tests');
const tests = at >= 0 ? args.splice(at, 2)[1]?.split(',') : undefined;
const again = args.includes('--survivors');
if (again) args.splice(args.indexOf('--survivors'), 1);
for (const n of args) if (!(n in MODULES)) usage();
for (const n of args.length ? args : Object.keys(MODULES)) await score(n, tests, again);
