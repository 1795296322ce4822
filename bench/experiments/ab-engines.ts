// Two modules of one group run against each other on the calling thread, in one process
// (p3-ab, p3-wat, corpus-ab): each engine over its own memory, warmed, its output summed (the
// checksums must be equal), then batches alternating A and B, the order reversing each round, so
// both meet the same moments of a noisy machine. CPU ms per step of the process (one thread runs:
// its CPU is the module's) and wall ms.

import { loadavg } from 'node:os';
import type { Scene } from '../../src/ir/check/scene.js';
import type { Group } from '../../src/ir/fuse.js';
import type { Tier } from '../../src/codegen/plan.js';
import { Engine } from '../../src/main/engine.js';
import { readField } from '../../src/main/field.js';
import { FieldMemory } from '../../src/main/memory.js';
import { seedModule } from '../../src/main/modules.js';

export type Side = 'A' | 'B';

/** An engine on the calling thread (no pool) running `bytes` for the scene's one group. */
export function engineWith(scene: Scene, group: Group, bytes: Uint8Array<ArrayBuffer>, tier?: Tier): Engine {
  seedModule(group.ir, new WebAssembly.Module(bytes), tier);
  return new Engine(scene, { memory: new FieldMemory(), poolThreshold: 0, prepared: true, cacheFrames: false, tier });
}

/** min / median / max of `xs`, printed with `digits`. */
export function spread(xs: number[], digits = 3): string {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(digits)} / ${s[s.length >> 1].toFixed(digits)} / ${s[s.length - 1].toFixed(digits)}`;
}

export interface Alternated {
  checksums: Record<Side, number>;
  cpu: Record<Side, number[]>;
  wall: Record<Side, number[]>;
  load: [number, number];
}

/**
 * Warm each engine (`warmSteps` steps, then `warmMs` of steps), sum its first output after the
 * warm steps, then run `rounds` rounds of a batch of `steps` on each, alternating.
 */
export async function alternate(scene: Scene, engines: Record<Side, Engine>, o: { steps: number; rounds: number; warmSteps: number; warmMs?: number }): Promise<Alternated> {
  const step = (e: Engine) => e.evaluate({ time: 0.5 });
  const checksums = { A: 0, B: 0 };
  for (const side of ['A', 'B'] as Side[]) {
    const e = engines[side];
    for (let i = 0; i < o.warmSteps; i++) await step(e);
    const [values] = readField(e.memory, e.outputField(scene.outputs[0].name)!);
    checksums[side] = values.reduce((a, b) => a + b, 0);
    for (const until = performance.now() + (o.warmMs ?? 0); performance.now() < until; ) await step(e);
  }
  const cpu: Record<Side, number[]> = { A: [], B: [] };
  const wall: Record<Side, number[]> = { A: [], B: [] };
  const load0 = loadavg()[0];
  for (let r = 0; r < o.rounds; r++) {
    for (const side of (r % 2 ? ['B', 'A'] : ['A', 'B']) as Side[]) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < o.steps; i++) await step(engines[side]);
      const used = process.cpuUsage(c0);
      wall[side].push((performance.now() - t0) / o.steps);
      cpu[side].push((used.user + used.system) / 1000 / o.steps);
    }
  }
  return { checksums, cpu, wall, load: [load0, loadavg()[0]] };
}

/** B / A per round, min / median / max. */
export const ratio = (x: Record<Side, number[]>, digits = 3) => spread(x.B.map((b, i) => b / x.A[i]), digits);
