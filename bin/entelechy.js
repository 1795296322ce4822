#!/usr/bin/env node
import { availableParallelism } from 'node:os';
// zlib deflates a large PNG's strips on libuv's threads (src/main/png.ts): one per core, not 4.
// Set before anything starts that pool, so the CLI is imported after.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));
const { mark } = await import('../dist/src/main/timeline.js');
mark('node started');
const { run } = await import('../dist/src/cli/cli.js');
mark('command line imported');
await run(process.argv.slice(2));
