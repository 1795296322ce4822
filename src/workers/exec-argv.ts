// The flags our worker threads start with: none of the parent's.
//
// A Worker inherits its parent's execArgv by default, and refuses to start with V8 options and
// options of the whole process: `node --max-old-space-size=8192 bin/entelechy.js serve ...` ended
// with an internal error when the pool's first thread started. Under a test runner's loader
// (`--import`, tap's TypeScript hooks) each thread also took seconds to start. Our workers are
// plain JavaScript and need none of them; V8's flags belong to the process, so they apply to the
// workers' code anyway.

/** execArgv of every worker thread we start (the pools', the PNG threads', the compile worker's). */
export const WORKER_EXEC_ARGV: readonly string[] = [];
