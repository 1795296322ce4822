// Our modules' code made by V8's optimising compiler (TurboFan) before their first frame.
//
// By default V8 (11.3, Node 20) compiles a module's functions lazily, at their first call, with
// its baseline compiler (Liftoff), and optimises a function in the background once it has run a
// while: an edit's first frame ran its early rows on slow baseline code while TurboFan took a core
// from the pool (10-14 ms of CPU more than the next frame; bench/RESULTS.md, issue 17).
//
// V8's flags belong to the process, so turning Liftoff off around a compile would catch any
// module another thread compiles meanwhile (binaryen's own took 16 s that way). Instead each of
// our modules carries V8's `compilationHints` section (--experimental-wasm-compilation-hints,
// set here for the process: it changes nothing for a module without the section, binaryen's
// included). A function hinted eager and optimised is compiled by TurboFan in
// `new WebAssembly.Module` itself, where the module is made (the compile worker), never by
// Liftoff; V8 shares a module's code with the threads it is passed to, so the pool's first call
// runs optimised code.

import { uleb } from './wasm-asm.js';
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--experimental-wasm-compilation-hints');

/** Pages of the shared memory every module imports as env.memory (its declared maximum). */
export const MEMORY_MAX_PAGES = 65536;

/** The custom section V8 reads hints from; it must come before the code section. */
const HINTS_SECTION = 'compilationHints';
/** A function's hint, one byte: strategy (bits 0-1) eager = 2, baseline tier (2-3) and top tier (4-5) optimised = 2. */
const TURBOFAN = 2 | (2 << 2) | (2 << 4);
const CODE_SECTION = 10;
const FUNCTION_SECTION = 3;

function readLeb(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value |= (b & 0x7f) << shift;
    if (!(b & 0x80)) return { value: value >>> 0, next: at };
    shift += 7;
  }
}

/** The module's bytes with a hint for each of its functions (TurboFan) before its code section. */
export function withCompileHints(bytes: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  let at = 8; // magic and version
  let functions = 0;
  while (at < bytes.length) {
    const id = bytes[at];
    const size = readLeb(bytes, at + 1);
    if (id === FUNCTION_SECTION) functions = readLeb(bytes, size.next).value;
    if (id === CODE_SECTION) break;
    at = size.next + size.value;
  }
  if (at >= bytes.length || functions === 0) return bytes;
  const name = [...new TextEncoder().encode(HINTS_SECTION)];
  const payload = [...uleb(name.length), ...name, ...uleb(functions), ...new Array<number>(functions).fill(TURBOFAN)];
  const section = [0, ...uleb(payload.length), ...payload];
  const out = new Uint8Array(bytes.length + section.length);
  out.set(bytes.subarray(0, at));
  out.set(section, at);
  out.set(bytes.subarray(at), at + section.length);
  return out;
}
