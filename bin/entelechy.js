#!/usr/bin/env node
import { availableParallelism } from 'node:os';
// zlib deflates a large PNG's strips on libuv's threads (src/main/png.ts): one per core, not 4.
// Set before anything starts that pool, so the CLI is imported after.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));
const { mark } = await import('../dist/src/main/timeline.js');
mark('node started');
const args = process.argv.slice(2);
// A render that will likely compile starts its compile worker now: binaryen loads on it while
// the command line's code and the scene load here (src/main/compile-ahead.ts).
const ahead = args[0] === 'render' ? await import('../dist/src/main/compile-ahead.js') : undefined;
ahead?.compileAhead(args);
const { run } = await import('../dist/src/cli/cli.js');
mark('command line imported');
await run(args);
await ahead?.renderDone(args, !process.exitCode);
