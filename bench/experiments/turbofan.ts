// A module's functions compiled by V8's optimising compiler (TurboFan) at once, not first by its
// baseline compiler (Liftoff). By default V8 runs a new module's code as Liftoff made it and
// optimises a function once it has run a while, in the background: an edit's first frame ran
// part of its rows on the baseline code while TurboFan took a core from the pool (the first frame
// cost 10-30 ms of CPU more than the next; bench/RESULTS.md, issue 17). Compiled here, the
// pool's first call runs optimised code.
//
// An experiment, not the engine's: V8's flags are the process's, and a module compiled by any
// thread while they are set is compiled eagerly by TurboFan too. binaryen's own module, caught
// loading in a compile worker meanwhile, took 16 s (8.5 s of CPU) instead of 0.5 s.

import { setFlagsFromString } from 'node:v8';

/** `new WebAssembly.Module(bytes)` with V8's baseline compiler off for this compile only. */
export function optimisedModule(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module {
  setFlagsFromString('--no-liftoff --no-wasm-lazy-compilation');
  try {
    return new WebAssembly.Module(bytes);
  } finally {
    setFlagsFromString('--liftoff --wasm-lazy-compilation');
  }
}
