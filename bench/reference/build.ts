/**
 * Builds and runs the C reference (pipelines.c) with the system C compiler.
 *
 * buildReference(): compiles with `cc`, else `gcc`, else `clang` (or $CC first when
 * set) at -O3 -march=native -ffast-math -fopenmp into bench/reference/.build/,
 * reusing the binary while source, compiler and flags are unchanged (sha256 key).
 * If -fopenmp does not compile/link, retries without it and says so in `note` (a flag set
 * the compiler rejected is remembered in the cache as pipelines-<key>.failed).
 * runReference(): runs the binary, with OMP_NUM_THREADS set, and parses its JSON line.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { type Measurement, type PipelineName, isPipelineName } from './measurement.js';

export const BASE_FLAGS = ['-O3', '-march=native', '-ffast-math'] as const;
export const OPENMP_FLAG = '-fopenmp';

export interface ReferenceBuild {
  binary: string;
  compiler: string;
  /** the flags the binary was built with (without -o / sources / -lm) */
  flags: string[];
  openmp: boolean;
  /** true when an up-to-date binary was already in the cache */
  cached: boolean;
  /** compile time of this call, ms (0 when cached) */
  compile_ms: number;
  note?: string;
}

export type ReferenceBuildResult = ReferenceBuild | { skipped: string };

export interface BuildOptions {
  /** pipelines.c to compile (default: found next to this module or under bench/reference/ of the package) */
  source?: string;
  /** cache folder (default: bench/reference/.build/ next to the source) */
  cacheDir?: string;
  /** compilers to try, in order (default: $CC if set, then cc, gcc, clang) */
  compilers?: string[];
}

export interface RunOptions {
  /** P3 only: Life steps per run (default 10) */
  steps?: number;
  /** write the last run's output field to this file as raw float32 */
  dump?: string;
  /** P4 only: the one-pixel-at-a-time scalar loop instead of the (default) vectorisable lane blocks */
  p4Scalar?: boolean;
  /** kill the run after this many ms (default: none) */
  timeoutMs?: number;
}

interface Exec {
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<Exec> {
  return new Promise((ok, fail) => {
    execFile(cmd, args, { env: opts.env, timeout: opts.timeout ?? 0, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const e = err as Error & { stdout?: string; stderr?: string };
        e.stdout = String(stdout);
        e.stderr = String(stderr);
        fail(e);
      } else ok({ stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Locates pipelines.c whether this module runs from source or from dist/. */
export function findReferenceSource(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const direct = join(here, 'pipelines.c');
  if (existsSync(direct)) return direct;
  for (let dir = here; ; ) {
    const candidate = join(dir, 'bench', 'reference', 'pipelines.c');
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`bench/reference/pipelines.c not found above ${here}`);
}

export async function compilerIdentity(compiler: string): Promise<string | undefined> {
  try {
    const { stdout, stderr } = await run(compiler, ['--version'], { timeout: 20_000 });
    return (stdout || stderr).trim();
  } catch {
    return undefined; // not installed (ENOENT) or not a working compiler
  }
}

/** The first of `compilers` that answers `--version`, with that answer (its identity, for the build cache). */
export async function firstCompiler(compilers: string[]): Promise<{ compiler: string; identity: string } | undefined> {
  for (const compiler of compilers) {
    const identity = await compilerIdentity(compiler);
    if (identity !== undefined) return { compiler, identity };
  }
  return undefined;
}

export function errorText(e: unknown): string {
  const x = e as { stderr?: string; message?: string };
  const text = (x.stderr && x.stderr.trim()) || x.message || String(e);
  return text.length > 2000 ? text.slice(0, 2000) + '...' : text;
}

export interface CachedCompile {
  source: string;
  cacheDir: string;
  /** the binary's name in the cache, before its key */
  name: string;
  compiler: string;
  /** the compiler's `--version`, part of the key */
  identity: string;
  flags: string[];
  /** after the source on the command line (libraries) */
  libs: string[];
  /** more the binary depends on (libraries, their version), part of the key */
  extraKey?: string;
}

/**
 * Compiles `source` with `compiler flags -o BINARY source libs` into the cache, or finds it there:
 * the binary's name carries a key of source, compiler, flags and platform. A flag set the compiler
 * rejected (a normal non-zero exit) is remembered as NAME-KEY.failed and not retried.
 */
export async function compileCached(c: CachedCompile): Promise<{ binary: string; cached: boolean; compile_ms: number } | { error: string }> {
  const code = await readFile(c.source);
  await mkdir(c.cacheDir, { recursive: true });
  const exe = process.platform === 'win32' ? '.exe' : '';
  const key = createHash('sha256')
    .update(code)
    .update('\0' + c.compiler + '\0' + c.identity + '\0' + c.flags.join(' ') + '\0' + process.platform + '\0' + process.arch)
    .update(c.extraKey !== undefined ? '\0' + c.extraKey : '')
    .digest('hex')
    .slice(0, 16);
  const binary = join(c.cacheDir, `${c.name}-${key}${exe}`);
  if (existsSync(binary)) return { binary, cached: true, compile_ms: 0 };
  // A compiler that rejected these flags (normal non-zero exit) will reject them again for the
  // same source/compiler/flags: remember it, so machines without OpenMP do not retry every run.
  const failed = join(c.cacheDir, `${c.name}-${key}.failed`);
  if (existsSync(failed)) return { error: `${c.compiler} ${c.flags.join(' ')}: failed before (delete ${failed} to retry)` };
  // compile to a private name, then rename: concurrent builds never see a half-written binary
  const tmp = `${binary}.${process.pid}.${Date.now()}.tmp`;
  const t0 = performance.now();
  try {
    await run(c.compiler, [...c.flags, '-o', tmp, c.source, ...c.libs], { timeout: 300_000 });
    await rename(tmp, binary);
    return { binary, cached: false, compile_ms: performance.now() - t0 };
  } catch (e) {
    await rm(tmp, { force: true });
    const x = e as { code?: unknown; killed?: boolean; signal?: unknown };
    if (typeof x.code === 'number' && !x.killed && !x.signal) {
      await writeFile(failed, errorText(e) + '\n').catch(() => undefined);
    }
    return { error: `${c.compiler} ${c.flags.join(' ')}: ${errorText(e)}` };
  }
}

export async function buildReference(options: BuildOptions = {}): Promise<ReferenceBuildResult> {
  const source = options.source ?? findReferenceSource();
  const cacheDir = options.cacheDir ?? join(dirname(source), '.build');
  const compilers =
    options.compilers ?? [...(process.env.CC ? [process.env.CC] : []), 'cc', 'gcc', 'clang'];

  const found = await firstCompiler(compilers);
  if (!found) return { skipped: 'no C compiler found (cc, gcc, clang)' };
  const { compiler, identity } = found;

  // Flag ladder: the requested flags, then without OpenMP, then (last resort) without -march=native.
  const attempts: { flags: string[]; openmp: boolean; note?: string }[] = [
    { flags: [...BASE_FLAGS, OPENMP_FLAG], openmp: true },
    { flags: [...BASE_FLAGS], openmp: false, note: `compiled without ${OPENMP_FLAG} (it failed): single-threaded` },
    {
      flags: ['-O3', '-ffast-math'],
      openmp: false,
      note: `compiled without ${OPENMP_FLAG} and -march=native (both failed): single-threaded, generic ISA`,
    },
  ];
  const errors: string[] = [];
  for (const a of attempts) {
    const out = await compileCached({ source, cacheDir, name: 'pipelines', compiler, identity, flags: a.flags, libs: ['-lm'] });
    if ('error' in out) {
      errors.push(out.error);
      continue;
    }
    return { ...out, compiler, flags: a.flags, openmp: a.openmp, ...(a.note !== undefined ? { note: a.note } : {}) };
  }
  throw new Error(`cannot compile ${source}:\n${errors.join('\n')}`);
}

function num(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`reference output: ${what} is not a finite number`);
  return v;
}

/** Parses the JSON line the C binary (or, with system 'halide', the Halide one) prints. */
export function parseReferenceOutput(stdout: string, system: 'c' | 'halide' = 'c'): Measurement {
  const line = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .pop();
  if (line === undefined) throw new Error(`reference output has no JSON line: ${JSON.stringify(stdout.slice(0, 500))}`);
  const j = JSON.parse(line) as Record<string, unknown>;
  const pipeline = String(j.pipeline);
  if (!isPipelineName(pipeline)) throw new Error(`reference output: bad pipeline ${pipeline}`);
  if (j.system !== system) throw new Error(`reference output: system is ${String(j.system)}, expected ${system}`);
  if (!Array.isArray(j.runs)) throw new Error('reference output: runs is not an array');
  const m: Measurement = {
    pipeline,
    width: num(j.width, 'width'),
    height: num(j.height, 'height'),
    system,
    workers: num(j.workers, 'workers'),
    runs: j.runs.map((r, i) => num(r, `runs[${i}]`)),
    median_ms: num(j.median_ms, 'median_ms'),
    mpix_s: num(j.mpix_s, 'mpix_s'),
    checksum: num(j.checksum, 'checksum'),
  };
  if (typeof j.compile_ms === 'number') m.compile_ms = j.compile_ms;
  if (typeof j.note === 'string') m.note = j.note;
  return m;
}

/**
 * Runs the reference binary: one warm-up + `runs` timed runs of `pipeline` at
 * width x height on `threads` OpenMP threads (OMP_NUM_THREADS is set as well).
 */
export async function runReference(
  binary: string,
  pipeline: PipelineName,
  width: number,
  height: number,
  runs: number,
  threads: number,
  options: RunOptions = {},
): Promise<Measurement> {
  const args = [pipeline, String(width), String(height), String(runs), String(threads)];
  if (options.steps !== undefined) args.push('--steps', String(options.steps));
  if (options.dump !== undefined) args.push('--dump', resolve(options.dump));
  if (options.p4Scalar) args.push('--p4-scalar');
  return runBinary(binary, args, { OMP_NUM_THREADS: String(threads) }, 'c', options.timeoutMs);
}

/** Runs a reference binary with `env` added to ours and parses the JSON line it prints. */
export async function runBinary(binary: string, args: string[], env: NodeJS.ProcessEnv, system: 'c' | 'halide', timeoutMs?: number): Promise<Measurement> {
  let out: Exec;
  try {
    out = await run(binary, args, { env: { ...process.env, ...env }, timeout: timeoutMs });
  } catch (e) {
    throw new Error(`reference ${binary} ${args.join(' ')} failed: ${errorText(e)}`);
  }
  return parseReferenceOutput(out.stdout, system);
}
