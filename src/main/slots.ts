// An engine's fields, by what each holds: a scene input, a node's out port, or a node's state
// port with its two buffers (the current state, and the next one the frame writes). Looked up
// by input name or by node and port, never by a name built from them.

import { fillField, type Field } from './field.js';
import type { FieldMemory } from './memory.js';
import type { FieldBinding } from '../ir/bindings.js';
import type { InputInfo } from '../ir/check/scene.js';
import type { Group } from '../ir/fuse.js';
import type { Scalar } from '../ir/ir.js';
import { components } from '../ir/types.js';
import { unreachable } from '../ir/unreachable.js';

/** A state port's double buffer: a frame reads `current` and writes `next`; they swap when it succeeds. */
export interface StateBuffers {
  current: Field;
  next: Field;
}

export class FieldSlots {
  private readonly inputs = new Map<string, Field>();
  private readonly outs = new Map<string, Map<string, Field>>();
  private readonly states = new Map<string, Map<string, StateBuffers>>();

  setInput(name: string, f: Field): void {
    this.inputs.set(name, f);
  }

  setOut(node: string, port: string, f: Field): void {
    byNode(this.outs, node).set(port, f);
  }

  setState(node: string, port: string, buffers: StateBuffers): void {
    byNode(this.states, node).set(port, buffers);
  }

  input(name: string): Field | undefined {
    return this.inputs.get(name);
  }

  out(node: string, port: string): Field | undefined {
    return this.outs.get(node)?.get(port);
  }

  state(node: string, port: string): StateBuffers | undefined {
    return this.states.get(node)?.get(port);
  }

  /**
   * The field a group's binding reads or writes this frame: a write goes to the next state or the
   * out port; a read of a state port reads the state just computed this frame (its next buffer).
   */
  bound(b: FieldBinding): Field | undefined {
    switch (b.kind) {
      case 'write':
        return b.state ? this.state(b.node, b.port)?.next : this.out(b.node, b.port);
      case 'state':
        return this.state(b.node, b.port)?.current;
      case 'read':
        if ('input' in b.from) return this.input(b.from.input);
        return this.state(b.from.node, b.from.port)?.next ?? this.out(b.from.node, b.from.port);
      default:
        return unreachable(b, 'a binding');
    }
  }

  /** What reading `node.port` gives between frames: an out port's field or the current state. */
  port(node: string, port: string): Field | undefined {
    return this.out(node, port) ?? this.state(node, port)?.current;
  }

  /** Every out port held, with its field. */
  *outPorts(): Iterable<{ node: string; port: string; field: Field }> {
    for (const [node, ports] of this.outs) for (const [port, field] of ports) yield { node, port, field };
  }

  /** Every state port held, with its buffers. */
  *stateBuffers(): Iterable<{ node: string; port: string; buffers: StateBuffers }> {
    for (const [node, ports] of this.states) for (const [port, buffers] of ports) yield { node, port, buffers };
  }

  /** After a successful frame: every next state becomes current (and the old current the next back buffer). */
  swapStates(): void {
    for (const { buffers } of this.stateBuffers()) [buffers.current, buffers.next] = [buffers.next, buffers.current];
  }

  /** Every field held, once each. */
  all(): Field[] {
    const out: Field[] = [...this.inputs.values()];
    for (const ports of this.outs.values()) out.push(...ports.values());
    for (const { buffers } of this.stateBuffers()) out.push(buffers.current, buffers.next);
    return out;
  }

  /**
   * Gives each input, and each field the groups write or keep, a buffer from `alloc`: inputs and
   * states filled with their values. A state that already has buffers (carried from the previous
   * world) keeps them.
   */
  allocate(memory: FieldMemory, inputs: Iterable<InputInfo>, groups: Group[], alloc: Allocate): void {
    for (const input of inputs) {
      const f = alloc(input.size, components(input.type), `input \`${input.name}\``);
      fillField(memory, f, input.value);
      this.setInput(input.name, f);
    }
    for (const g of groups) {
      for (const o of ownedFields(g)) {
        const what = `\`${o.node}.${o.port}\``;
        if (!o.state) this.setOut(o.node, o.port, alloc(o.domain, o.comps, what));
        else if (!this.state(o.node, o.port)) {
          const current = alloc(o.domain, o.comps, what);
          fillField(memory, current, o.initial ?? o.comps.map(() => 0));
          this.setState(o.node, o.port, { current, next: alloc(o.domain, o.comps, what) });
        }
      }
    }
  }

  clear(): void {
    this.inputs.clear();
    this.outs.clear();
    this.states.clear();
  }
}

/** How an engine gets a field's buffer (with its own accounting: a `large` event, a budget). */
export type Allocate = (size: number[], comps: Scalar[], what: string) => Field;

/** A field a group owns: one of its nodes' out ports, or a state port (two buffers). */
export interface OwnedField {
  node: string;
  port: string;
  domain: number[];
  comps: Scalar[];
  state: boolean;
  /** A state's declared initial value. */
  initial?: number[];
}

/** The fields `g` writes or keeps, once each (a state's write binding is its state binding's). */
export function ownedFields(g: Group): OwnedField[] {
  const owned: OwnedField[] = [];
  for (const b of g.fields) {
    if (b.kind === 'read' || (b.kind === 'write' && b.state)) continue;
    const node = g.nodes.find((n) => n.name === b.node)!;
    const port = node.kernel.ports.find((p) => p.name === b.port)!;
    owned.push({ node: b.node, port: b.port, domain: node.domain, comps: components(port.type), state: b.kind === 'state', initial: port.value });
  }
  return owned;
}

function byNode<T>(map: Map<string, Map<string, T>>, node: string): Map<string, T> {
  let ports = map.get(node);
  if (!ports) map.set(node, (ports = new Map()));
  return ports;
}
