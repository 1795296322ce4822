#!/usr/bin/env node
import { runPlayer } from '../dist/src/player/cli.js';
await runPlayer(process.argv.slice(2));
