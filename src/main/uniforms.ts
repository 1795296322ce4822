// What a group's uniform slots hold in one frame: the clock, the input devices, and each node's
// `in` values (members or params). The engine and the tiled renderer fill slots from this alone.

import type { UniformBinding, WorldUniform } from '../ir/bindings.js';
import type { Group } from '../ir/fuse.js';
import { unreachable } from '../ir/unreachable.js';

export interface FrameInput {
  time?: number;
  pointer?: { x: number; y: number; down: boolean };
  keys?: Iterable<string>;
}

/** The frame a group runs in: its clock, params and input. */
export interface FrameValues {
  time: number;
  frame: number;
  params: ReadonlyMap<string, number[]>;
  input: FrameInput;
}

/** Every uniform slot's value of group `g` in the frame. */
export function uniformValues(g: Group, at: FrameValues): number[] {
  const keys = new Set([...(at.input.keys ?? [])].map((k) => k.toLowerCase()));
  return g.uniforms.map((u) => uniformValue(g, u, at, keys));
}

function uniformValue(g: Group, u: UniformBinding, at: FrameValues, keys: Set<string>): number {
  if (u.kind !== 'value') return worldValue(u, at, keys);
  const node = g.nodes.find((n) => n.name === u.node);
  const src = node?.values.get(u.port);
  if (!src) throw new Error(`internal: node \`${u.node}\` has no value for \`${u.port}\``);
  return ('param' in src ? at.params.get(src.param)! : src.value)[u.comp] ?? 0;
}

function worldValue(u: WorldUniform, at: FrameValues, keys: Set<string>): number {
  switch (u.kind) {
    case 'time':
      return at.time;
    case 'frame':
      return at.frame;
    case 'pointer':
      if (u.axis === 'down') return at.input.pointer?.down ? 1 : 0;
      return at.input.pointer?.[u.axis] ?? -1;
    case 'key':
      return keys.has(u.key) ? 1 : 0;
    default:
      return unreachable(u, 'a binding');
  }
}
