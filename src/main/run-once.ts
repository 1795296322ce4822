// One function run over a domain once, outside any frame (a migration, carry.ts).

import { instantiate } from '../codegen/instantiate.js';
import { argsBytes, writeArgs } from '../codegen/layout.js';
import type { IrFunction } from '../ir/ir.js';
import { bandRowsFor, PoolTrap, type EvalPool } from '../workers/pool.js';
import { throwIfCancelled } from './cancel.js';
import { fuelTrapOf } from './evaluation-error.js';
import { placement, type Field } from './field.js';
import type { FieldMemory } from './memory.js';
import { compileModule } from './modules.js';

/**
 * Run one function over a domain once (a migration), its module prepared and its fields bound:
 * on the pool when there is one, like any frame that is not provably short, so the coordinator
 * goes on answering meanwhile and `signal` stops it (the pool ends the workers running it);
 * without a pool (render, tools), on the calling thread.
 */
export async function runOnce(memory: FieldMemory, ir: IrFunction, domain: number[], fields: Field[], options: { pool?: EvalPool; signal?: AbortSignal } = {}): Promise<void> {
  const [width, height = 1, depth = 1] = domain;
  const args = memory.alloc(argsBytes(ir), 'an argument block');
  try {
    throwIfCancelled(options.signal);
    const { module, key } = compileModule(ir, { prepared: true });
    writeArgs(memory.memory, args, ir, { width, height, depth }, fields.map(placement), []);
    if (!options.pool) return instantiate(module, memory.memory)(args, 0, height * depth);
    try {
      await options.pool.run(module, key, args, height * depth, bandRowsFor(height * depth), options.signal);
    } catch (e) {
      if (!(e instanceof PoolTrap)) throw e;
      throw fuelTrapOf(e, module, 'the migration');
    }
  } finally {
    memory.release(args);
  }
}
