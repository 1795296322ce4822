// The flags a pool's worker threads start with.

/** Flags that install module hooks (a test runner's TypeScript loader...): the worker needs none. */
const HOOK_FLAGS = ['--import', '--loader', '--experimental-loader', '--require', '-r'];

/**
 * The parent's execArgv without module hooks. Workers inherit the parent's flags by default, and
 * under a loader such as tap's each worker takes seconds to start; the worker is plain JS.
 */
export function workerExecArgv(argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (HOOK_FLAGS.includes(a)) {
      i++; // the flag's value is the next argument
      continue;
    }
    if (HOOK_FLAGS.some((f) => a.startsWith(`${f}=`))) continue;
    out.push(a);
  }
  return out;
}
