// binaryen module setup: features, the shared memory import, and the metadata section the host
// reads back. Validation, optimisation and emission are the last pass (optimise.ts).

import binaryen from 'binaryen';
import { META_SECTION, type ModuleMeta } from './instantiate.js';
import { MEMORY_MAX_PAGES } from './turbofan.js';

/** Features every module is built (and validated) with. */
const FEATURES =
  binaryen.Features.SIMD128 |
  binaryen.Features.Atomics |
  binaryen.Features.BulkMemory |
  binaryen.Features.MutableGlobals |
  binaryen.Features.NontrappingFPToInt |
  binaryen.Features.SignExt;

export { MEMORY_MAX_PAGES };


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
