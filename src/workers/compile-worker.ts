// The compile worker: binaryen codegen and optimisation off the coordinator, so frames go on and
// other connections are answered while an edit compiles. Reached through comlink.

import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { parentPort } from 'node:worker_threads';
import { compileFunction } from '../codegen/index.js';
import type { IrFunction } from '../ir/ir.js';
import type { Tier } from '../codegen/plan.js';
import type { CompiledModule } from '../main/modules.js';

const api = {
  /** Compile each function to a WebAssembly module (modules pass between threads without copies) and its bytes. */
  compile(irs: IrFunction[], tier: Tier): CompiledModule[] {
    return irs.map((ir) => {
      const bytes = compileFunction(ir, { tier }) as Uint8Array<ArrayBuffer>;
      return { module: new WebAssembly.Module(bytes), bytes };
    });
  },
  ping(): true {
    return true;
  },
};

export type CompileApi = typeof api;

expose(api, nodeEndpoint(parentPort!));
