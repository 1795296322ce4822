// `trace`: what each node computed at one element in the last frame. The last frame is run again,
// unfused, on a copy of the world (from the state it started from, with its input), and every
// port is read at the element; before any frame of the running version, the next frame. The
// running world is not touched: the copy has fields of its own, freed after.

import { Engine } from './engine.js';
import type { Session } from './session.js';

export interface TracedValue {
  node: string;
  port: string;
  value: number | number[];
}

/** The values of every out and state port (of the `needed` nodes, or all) at element `at`; none where it is outside them all. */
export function traceElement(s: Session, at: { x: number; y: number; z: number }, needed: ReadonlySet<string> | undefined, signal?: AbortSignal): Promise<{ frame: number; values: TracedValue[] }> {
  const { x, y, z } = at;
  return s.frame(async (running) => {
    const scene = s.scene;
    const pins = scene.nodes.map((n) => n.name);
    await s.prepareScene(scene, pins, false);
    // On the pool like any frame: the copy's kernels are no shorter than the world's.
    const copy = new Engine(scene, { memory: s.memory, fuse: false, pins, cacheFrames: false, prepared: true, pool: s.pool });
    try {
      const input = s.engine.replayInto(copy);
      await copy.evaluate(input ?? { time: copy.time }, running);
      const values: TracedValue[] = [];
      for (const node of scene.nodes) {
        if (needed && !needed.has(node.name)) continue;
        for (const port of node.kernel.ports) {
          if (port.kind === 'in') continue;
          const field = copy.fields.port(node.name, port.name);
          if (!field) continue;
          if (x < 0 || y < 0 || z < 0 || x >= field.width || y >= field.height || z >= field.depth) continue;
          const word = (field.ptr + 4 * (x + y * field.stride + z * field.stride * field.height)) / 4;
          const comps = field.comps.map((t, c) => (t === 'f32' ? s.memory.f32 : s.memory.i32)[word + (c * field.planeBytes) / 4]);
          values.push({ node: node.name, port: port.name, value: comps.length === 1 ? comps[0] : comps });
        }
      }
      return { frame: copy.frame, values };
    } finally {
      copy.dispose();
    }
  }, signal);
}
