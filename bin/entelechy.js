#!/usr/bin/env node
import { availableParallelism } from 'node:os';
// zlib deflates a large PNG's strips on libuv's threads (src/main/png.ts): one per core, not 4.
// Set before anything starts that pool, so the CLI is imported after.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));
const { run } = await import('../dist/src/cli/cli.js');
await run(process.argv.slice(2));
