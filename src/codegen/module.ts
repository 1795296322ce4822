// binaryen module setup and finishing: features, the shared memory import, validation,
// optimisation and emission; plus the metadata section the host reads back.

import binaryen from 'binaryen';
import { META_SECTION, type ModuleMeta } from './instantiate.js';

/** Features every module is built (and validated) with. */
const FEATURES =
  binaryen.Features.SIMD128 |
  binaryen.Features.Atomics |
  binaryen.Features.BulkMemory |
  binaryen.Features.MutableGlobals |
  binaryen.Features.NontrappingFPToInt |
  binaryen.Features.SignExt;

/** Pages of the shared memory every module imports as env.memory. */
export const MEMORY_MAX_PAGES = 65536;


export function newModule(meta: ModuleMeta): binaryen.Module {
  const m = new binaryen.Module();
  m.setFeatures(FEATURES);
  m.setMemory(1, MEMORY_MAX_PAGES, null, [], true, false, 'mem');
  m.addMemoryImport('mem', 'env', 'memory', true);
  m.addCustomSection(META_SECTION, new TextEncoder().encode(JSON.stringify(meta)));
  return m;
}

/** A compiler bug: the module we built does not validate. */
export class InternalCompileError extends Error {
  constructor(message: string) {
    super(`internal compiler error: the generated module does not validate: ${message}`);
    this.name = 'InternalCompileError';
  }
}

/** Validate (always), optimise (unless told not to), emit, and free the module. */
export function finishModule(m: binaryen.Module, optimize: boolean): Uint8Array<ArrayBuffer> {
  try {
    const problems = captureOutput(() => m.validate());
    if (!problems.result) throw new InternalCompileError(problems.text.trim() || 'binaryen gave no message');
    if (optimize) {
      binaryen.setOptimizeLevel(3);
      binaryen.setShrinkLevel(0);
      binaryen.setFastMath(false);
      // -O3 does not hoist loop-invariant code; uniform loops (blur with a uniform radius)
      // recompute row addresses otherwise.
      m.runPasses(['licm']);
      m.optimize();
    }
    // binaryen copies the bytes out of its heap into a fresh ArrayBuffer.
    return m.emitBinary() as Uint8Array<ArrayBuffer>;
  } finally {
    m.dispose();
  }
}

/** binaryen's validator prints its findings; collect them instead. */
function captureOutput<T>(run: () => T): { result: T; text: string } {
  const chunks: string[] = [];
  const out = process.stdout.write;
  const err = process.stderr.write;
  const keep = (chunk: unknown): boolean => {
    chunks.push(String(chunk));
    return true;
  };
  process.stdout.write = keep as typeof process.stdout.write;
  process.stderr.write = keep as typeof process.stderr.write;
  try {
    return { result: run(), text: chunks.join('') };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}
