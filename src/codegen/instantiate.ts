// Instantiating a compiled module over the shared memory, and turning its fuel trap back into
// the interpreter's FuelTrap. No binaryen here: a module compiled elsewhere (the compile worker,
// the disk cache) runs without loading the compiler.

import { fuelTrapIn } from '../ir/fuel-trap.js';
// Every thread that makes our modules has V8 read their compilation hints (turbofan.ts).
import './turbofan.js';

/** The custom section holding {nodes, fuel}, for trap messages. */
export const META_SECTION = 'entelechy.ir';

export interface ModuleMeta {
  nodes: string[];
  fuel: number;
}

export type RunFunction = (args: number, r0: number, r1: number) => void;

/** Read the {nodes, fuel} a module was compiled with. */
export function moduleMeta(module: WebAssembly.Module): ModuleMeta {
  const sections = WebAssembly.Module.customSections(module, META_SECTION);
  if (sections.length !== 1) throw new Error(`not an Entelechy module: no ${META_SECTION} section`);
  return JSON.parse(new TextDecoder().decode(sections[0])) as ModuleMeta;
}

/**
 * Instantiate `wasm` (bytes or an already compiled module, e.g. passed to a worker) importing
 * `memory`. The returned function runs rows [r0, r1); a fuel trap throws FuelTrap.
 */
export function instantiate(wasm: Uint8Array | WebAssembly.Module, memory: WebAssembly.Memory): RunFunction {
  const module = wasm instanceof WebAssembly.Module ? wasm : new WebAssembly.Module(wasm as Uint8Array<ArrayBuffer>);
  const meta = moduleMeta(module);
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  const run = instance.exports.run as RunFunction;
  return (args, r0, r1) => {
    try {
      run(args, r0, r1);
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) {
        // The module claims the trap word with the node index, and records the element, before `unreachable`.
        const trap = fuelTrapIn(new Int32Array(memory.buffer), args, meta.nodes, meta.fuel);
        if (trap) throw trap;
      }
      throw e;
    }
  };
}
