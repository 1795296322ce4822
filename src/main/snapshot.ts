// Snapshots of a world: its protocol kernels, params, clock and state, packed (without the
// memory's row padding, so a snapshot does not depend on the layout), and setting a new engine to
// one. `snapshot` and `restore` (src/protocol/handlers/state.ts) read and check the text; a
// restore is a scene change (commit.ts) whose `adjust` is restoreInto.

import { packField, packedLayout, unpackField, type Field, type RowLayout } from './field.js';
import type { Engine } from './engine.js';
import type { WorldEvent } from './events.js';
import type { FieldMemory } from './memory.js';
import type { World } from './world.js';

export interface Snapshot {
  format: 'entelechy-snapshot';
  version: 1;
  scene: string;
  published: Record<string, string>;
  params: Record<string, number[]>;
  clock: { time: number; frame: number };
  /** data: base64 of the elements, component-major and row-major (`packed`), 4 bytes each. */
  state: { key: string; comps: string[]; size: number[]; packed?: boolean; data: string }[];
}

/** How snapshots without `packed` laid out a field: rows padded to 4 elements, planes back to back. */
function legacyLayout(f: Field): RowLayout {
  const stride = Math.ceil(f.width / 4) * 4;
  return { stride, planeBytes: stride * f.height * f.depth * 4 };
}

/** The snapshot of a world: its protocol kernels, params, clock and state, packed. */
export function snapshotOf(memory: FieldMemory, entry: string, w: World): string {
  const state: Snapshot['state'] = [];
  for (const node of w.scene.nodes) {
    for (const port of node.kernel.ports) {
      if (port.kind !== 'state') continue;
      const key = `${node.name}.${port.name}`;
      const field = w.engine.fields.state(node.name, port.name)?.current;
      if (!field) continue;
      const bytes = packField(memory, field);
      state.push({ key, comps: field.comps, size: [field.width, field.height, field.depth], packed: true, data: Buffer.from(bytes).toString('base64') });
    }
  }
  const snap: Snapshot = {
    format: 'entelechy-snapshot', version: 1, scene: entry, published: Object.fromEntries(w.published),
    params: Object.fromEntries(w.engine.params), clock: { time: w.engine.time, frame: w.engine.frame }, state,
  };
  return JSON.stringify(snap);
}

/** Set a new engine to a snapshot: its state where the layout fits (else said), params, clock. */
export function restoreInto(memory: FieldMemory, snap: Snapshot, engine: Engine): WorldEvent[] {
  const events: WorldEvent[] = [];
  // A snapshot names each state `node.port`, as `snapshot` wrote it.
  const held = new Map([...engine.fields.stateBuffers()].map((h) => [`${h.node}.${h.port}`, h.buffers.current]));
  for (const st of snap.state) {
    const field = held.get(st.key);
    const bytes = Buffer.from(st.data, 'base64');
    // Packed elements; snapshots from before the packed form hold the memory's padded rows
    // of that time (stride: width rounded up to 4; planes back to back).
    const layout = field && (st.packed ? packedLayout(field) : legacyLayout(field));
    const sameShape = field && field.comps.join() === st.comps.join() && (!Array.isArray(st.size) || st.size.join() === [field.width, field.height, field.depth].join());
    if (!field || !layout || !sameShape || bytes.length !== layout.planeBytes * field.comps.length) {
      events.push({ kind: 'state_reset', field: st.key, message: `the snapshot's \`${st.key}\` does not fit the running layout` });
      continue;
    }
    unpackField(memory, field, bytes, layout);
  }
  for (const [name, value] of Object.entries(snap.params ?? {})) engine.params.set(name, value);
  engine.time = snap.clock?.time ?? 0;
  engine.frame = snap.clock?.frame ?? 0;
  engine.version++;
  return events;
}

