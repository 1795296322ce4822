// `trace`: what each node read and computed at one element in the last frame. The last frame is
// run again, unfused, on a copy of the world (from the state it started from, with its input;
// before any frame of the running version, the next frame: unfused-copy.ts), and every node's
// ports are read at the element: what it computed (`values`) and what it read (`reads`): the
// fields its in ports read, the state it started from, its plain in values (a param or the
// document's value) and the world's uniforms its code reads (time, frame, pointer, keys).

import type { Field } from './field.js';
import type { FieldMemory } from './memory.js';
import type { Engine } from './engine.js';
import type { Session } from './session.js';
import { onUnfusedCopy } from './unfused-copy.js';
import { uniformValues } from './uniforms.js';
import { uniformName } from '../ir/bindings.js';

export interface TracedValue {
  node: string;
  port: string;
  value: number | number[];
}

/**
 * One thing a node read at the element. `kind`: `field` (an in port's field; `from` its source,
 * `node.port` or `input:NAME`), `state` (a state port's value the frame started from), `param`
 * (an in value bound to a param; `from` the param), `value` (an in value the document gives) or
 * `uniform` (a world value: time, frame, pointer.x, pointer.y, pointer.down, keys.NAME).
 */
export interface TracedRead {
  node: string;
  name: string;
  kind: 'field' | 'state' | 'param' | 'value' | 'uniform';
  from?: string;
  /** What it read: absent for a field read only by gathers, or that the element is outside of (a 3-D field under a 2-D node): see `note`. */
  value?: number | number[];
  /** A field read only by gathers: its value at the element (what the kernel read is where its code computes). */
  here?: number | number[];
  note?: string;
}

type At = { x: number; y: number; z: number };

/** A field's components at element `at` (one number for one component); undefined outside it. */
function valueAt(memory: FieldMemory, field: Field | undefined, { x, y, z }: At): number | number[] | undefined {
  if (!field || x < 0 || y < 0 || z < 0 || x >= field.width || y >= field.height || z >= field.depth) return undefined;
  const word = (field.ptr + 4 * (x + y * field.stride + z * field.stride * field.height)) / 4;
  const comps = field.comps.map((t, c) => (t === 'f32' ? memory.f32 : memory.i32)[word + (c * field.planeBytes) / 4]);
  return comps.length === 1 ? comps[0] : comps;
}

const one = (v: number[]) => (v.length === 1 ? v[0] : v);

/** What each node of `copy` (after its frame) read at `at`. */
function readsAt(copy: Engine, memory: FieldMemory, at: At, node: Engine['scene']['nodes'][number], frame: { time: number; frame: number; input: Parameters<typeof uniformValues>[1]['input'] }): TracedRead[] {
  const reads: TracedRead[] = [];
  for (const [port, src] of node.edges) {
    const from = 'input' in src ? copy.fields.input(src.input) : copy.fields.port(src.node, src.port);
    const value = valueAt(memory, from, at);
    const name = 'input' in src ? `input:${src.input}` : `${src.node}.${src.port}`;
    // Read only by gathers (`.at`, `sample`, neighbours): what the kernel read is elsewhere, and
    // the value here was shown as if it were what it read (a 2-D node's `.at(x, y, 20)` of a 3-D
    // field was told with the value at z = 0).
    if (value !== undefined && node.kernel.gathered.includes(port) && !node.kernel.pointwise.includes(port))
      reads.push({ node: node.name, name: port, kind: 'field', from: name, here: value, note: 'read by gathers (`.at`, `sample`, neighbours): the kernel reads it where its code computes, not only here; `here` is its value at this element' });
    else if (value !== undefined) reads.push({ node: node.name, name: port, kind: 'field', from: name, value });
    // A field the element is outside of is still read, where the kernel's code computes (`.at`,
    // `sample`): say so, rather than leave it out as if the node did not read it.
    else if (from) reads.push({ node: node.name, name: port, kind: 'field', from: name, note: `a field of ${[from.width, from.height, from.depth].slice(0, from.dims).join(' x ')}; this element is outside it: the kernel reads it where its code computes (\`.at\`, \`sample\`), not here` });
  }
  for (const port of node.kernel.ports) {
    if (port.kind !== 'state') continue;
    // After the frame the back buffer holds the state it started from.
    const value = valueAt(memory, copy.fields.state(node.name, port.name)?.next, at);
    if (value !== undefined) reads.push({ node: node.name, name: port.name, kind: 'state', value });
  }
  for (const [port, src] of node.values) {
    if ('param' in src) reads.push({ node: node.name, name: port, kind: 'param', from: src.param, value: one(copy.params.get(src.param) ?? []) });
    else reads.push({ node: node.name, name: port, kind: 'value', value: one(src.value) });
  }
  // Unfused, the node's group is its own: its world uniforms are what its code reads, filled as the frame filled them.
  const g = copy.groups.find((gr) => gr.nodes.some((n) => n.name === node.name));
  if (g) {
    const values = uniformValues(g, { ...frame, params: copy.params });
    const seen = new Set<string>();
    g.uniforms.forEach((u, i) => {
      if (u.kind === 'value') return;
      const name = uniformName(u);
      if (seen.has(name)) return;
      seen.add(name);
      reads.push({ node: node.name, name, kind: 'uniform', value: values[i] });
    });
  }
  return reads;
}

/**
 * The values of every out and state port (of the `needed` nodes, or all) at element `at`, and what
 * each of those nodes read there; none where it is outside them all.
 */
export function traceElement(s: Session, at: At, needed: ReadonlySet<string> | undefined, signal?: AbortSignal): Promise<{ frame: number; values: TracedValue[]; reads: TracedRead[] }> {
  return onUnfusedCopy(s, { last: true }, ({ copy, report, input }) => {
    const values: TracedValue[] = [];
    const reads: TracedRead[] = [];
    for (const node of copy.scene.nodes) {
      if (needed && !needed.has(node.name)) continue;
      let inside = false;
      for (const port of node.kernel.ports) {
        if (port.kind === 'in') continue;
        const value = valueAt(s.memory, copy.fields.port(node.name, port.name), at);
        if (value === undefined) continue;
        values.push({ node: node.name, port: port.name, value });
        inside = true;
      }
      if (inside) reads.push(...readsAt(copy, s.memory, at, node, { time: input.time ?? copy.time, frame: report.frame - 1, input }));
    }
    return { frame: report.frame, values, reads };
  }, signal);
}
