#!/usr/bin/env node
import { run } from '../dist/src/main/cli.js';
await run(process.argv.slice(2));
