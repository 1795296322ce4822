/**
 * Builds and runs the Halide reference (pipelines.cpp): a C++ driver that JIT-compiles each
 * pipeline with Halide 14 at run time. Built with the system C++ compiler against Debian's
 * libhalide14-0-dev (header /usr/include/halide14/Halide.h, library libHalide14.so), cached in
 * bench/reference/.build/ like the C reference. Without the package the bench goes on without
 * Halide: buildHalide() answers { skipped } with one line naming the package.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compileCached, findReferenceSource, firstCompiler, runBinary } from '../build.js';
import type { Measurement, PipelineName } from '../measurement.js';

/** Where Debian's libhalide14-0-dev puts Halide.h; ENTELECHY_HALIDE_INCLUDE overrides it (a test names a missing one). */
export const HALIDE_INCLUDE = '/usr/include/halide14';
export const HALIDE_PACKAGE = 'libhalide14-0-dev';
/** The driver itself does little (the pipelines are JIT-compiled), so -O2 and no -march. */
const FLAGS = ['-O2', '-std=c++17'];
const LIBS = ['-lHalide14', '-lpthread', '-ldl'];

export interface HalideBuild {
  binary: string;
  compiler: string;
  flags: string[];
  cached: boolean;
  /** compile time of the driver in this call, ms (0 when cached); each run's JIT compile is its own compile_ms */
  compile_ms: number;
}

export type HalideBuildResult = HalideBuild | { skipped: string };

export interface HalideBuildOptions {
  /** the folder holding Halide.h (default: $ENTELECHY_HALIDE_INCLUDE, else HALIDE_INCLUDE) */
  include?: string;
  /** cache folder (default: bench/reference/.build/, shared with the C reference) */
  cacheDir?: string;
}

/** First line of a compiler's complaint that says something (g++ starts with the file's name). */
function firstError(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines.find((l) => /error/i.test(l)) ?? lines[0] ?? 'no output').slice(0, 300);
}

export async function buildHalide(options: HalideBuildOptions = {}): Promise<HalideBuildResult> {
  const include = options.include ?? process.env.ENTELECHY_HALIDE_INCLUDE ?? HALIDE_INCLUDE;
  const header = join(include, 'Halide.h');
  if (!existsSync(header)) return { skipped: `Halide 14 is not installed (no ${header}): install Debian's ${HALIDE_PACKAGE} to compare with Halide` };
  const compilers = [...(process.env.CXX ? [process.env.CXX] : []), 'g++', 'c++', 'clang++'];
  const found = await firstCompiler(compilers);
  if (!found) return { skipped: `no C++ compiler found (${compilers.join(', ')}) to build the Halide reference` };
  const { compiler, identity } = found;
  const source = join(dirname(findReferenceSource()), 'halide', 'pipelines.cpp');
  const flags = [...FLAGS, `-I${include}`];
  // a new Halide.h (package upgrade) is a new binary: the JIT and its runtime live in the library
  const { size, mtimeMs } = statSync(header);
  const out = await compileCached({
    source, cacheDir: options.cacheDir ?? join(dirname(findReferenceSource()), '.build'), name: 'pipelines-halide', compiler, identity, flags, libs: LIBS,
    extraKey: `${LIBS.join(' ')} ${size} ${mtimeMs}`,
  });
  if ('error' in out) return { skipped: `the Halide reference did not compile (${firstError(out.error)})` };
  return { binary: out.binary, compiler, flags, cached: out.cached, compile_ms: out.compile_ms };
}

/**
 * Runs the Halide reference: one JIT compile (its time is the measurement's compile_ms), a
 * warm-up and `runs` timed runs of `pipeline` at width x height on `threads` threads of Halide's
 * thread pool (HL_NUM_THREADS).
 */
export function runHalide(
  binary: string,
  pipeline: PipelineName,
  width: number,
  height: number,
  runs: number,
  threads: number,
  options: { steps?: number; timeoutMs?: number } = {},
): Promise<Measurement> {
  const args = [pipeline, String(width), String(height), String(runs), String(threads)];
  if (options.steps !== undefined) args.push('--steps', String(options.steps));
  return runBinary(binary, args, { HL_NUM_THREADS: String(threads) }, 'halide', options.timeoutMs);
}
