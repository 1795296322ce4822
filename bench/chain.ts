// The chain scene interpreted against compiled (issue 17: within 50x): bench/scenes/chain.esn, a
// seed and eight pointwise nodes with noise at 256 x 256, frames on the reference interpreter
// and frames of each compiled tier, all on the calling thread (each timed after its first frame,
// when V8 has optimised its code; the interpreter's first frame is reported too) (code against code: the
// interpreter has no pool), and whether every output element has the same bits.

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Tier } from '../src/codegen/plan.js';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { Engine, type EngineOptions } from '../src/main/engine.js';
import { readField } from '../src/main/field.js';
import { FieldMemory } from '../src/main/memory.js';
import { loadCompiler } from '../src/main/modules.js';
import { ROOT } from './corpus-scenes.js';
import { median } from './reference/measurement.js';
import { textTable } from './table.js';

export interface ChainFrames {
  measurement: 'chain';
  nodes: number;
  width: number;
  height: number;
  /** The first interpreted frame (V8 compiling the program meanwhile). */
  interp_first_ms: number;
  /** Median of the interpreted frames after the first, as for the tiers. */
  interp_ms: number;
  /** Median of the compiled frames after a first one (V8 has optimised the code by then). */
  fast_ms: number;
  optimised_ms: number;
  /** interp_ms over each tier's. */
  ratio_fast: number;
  ratio_optimised: number;
  /** Every output element's bits equal on the interpreter and both tiers. */
  same_bits: boolean;
  load: [number, number];
}

/** A frame of `scene` on a fresh engine, timed `frames` times: the milliseconds and the output's bits. */
async function frames(scene: Scene, options: EngineOptions, count: number): Promise<{ ms: number[]; bits: Uint32Array[] }> {
  const memory = new FieldMemory();
  const engine = new Engine(scene, { ...options, memory, cacheFrames: false });
  try {
    const ms: number[] = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await engine.evaluate({ time: 0.5 });
      ms.push(performance.now() - t0);
    }
    const field = engine.outputField(scene.outputs[0].name)!;
    return { ms, bits: readField(memory, field).map((p) => new Uint32Array(p.buffer)) };
  } finally {
    engine.dispose();
  }
}

export const sameBits = (a: Uint32Array[], b: Uint32Array[]) => a.length === b.length && a.every((p, i) => Buffer.from(p.buffer).equals(Buffer.from(b[i].buffer)));

/** The chain scene's frames; `size` replaces its 256 x 256 (the test's small run). */
export async function benchChain(size?: [number, number]): Promise<ChainFrames> {
  const path = join(ROOT, 'bench', 'scenes', 'chain.esn');
  const scene = loadScene(basename(path), { read: (p) => readFileSync(join(dirname(path), p), 'utf8'), ...(size ? { size } : {}) });
  if (scene.diagnostics.length) throw new Error(`the chain scene: ${scene.diagnostics[0].message}`);
  await loadCompiler();
  const load0 = loadavg()[0];
  const interp = await frames(scene, { backend: 'interp' }, 3);
  const tier = (t: Tier) => frames(scene, { backend: 'jit', tier: t, cacheModules: false }, 6);
  const fast = await tier('fast');
  const optimised = await tier('optimised');
  const interpMs = median(interp.ms.slice(1));
  const fastMs = median(fast.ms.slice(1));
  const optimisedMs = median(optimised.ms.slice(1));
  const [width, height] = scene.nodes[0].domain;
  return {
    measurement: 'chain', nodes: scene.nodes.length, width, height, interp_first_ms: interp.ms[0], interp_ms: interpMs, fast_ms: fastMs, optimised_ms: optimisedMs,
    ratio_fast: interpMs / fastMs, ratio_optimised: interpMs / optimisedMs, same_bits: sameBits(interp.bits, fast.bits) && sameBits(interp.bits, optimised.bits), load: [load0, loadavg()[0]],
  };
}

export function chainTable(c: ChainFrames): string {
  const f = (n: number) => n.toFixed(1);
  return textTable([
    ['chain scene', 'interpreted ms (first)', 'fast tier ms', 'optimised ms', 'interpreted / fast', 'interpreted / optimised', 'same bits', 'load'],
    [`${c.nodes} nodes, ${c.width} x ${c.height}`, `${f(c.interp_ms)} (${f(c.interp_first_ms)})`, f(c.fast_ms), f(c.optimised_ms), `${f(c.ratio_fast)}x`, `${f(c.ratio_optimised)}x`, c.same_bits ? 'yes' : 'NO', c.load.map((l) => l.toFixed(1)).join('-')],
  ]);
}
