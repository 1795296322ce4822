// An engine's fields, by what each holds: a scene input, a node's out port, or a node's state
// port with its two buffers (the current state, and the next one the frame writes). Looked up
// by input name or by node and port, never by a name built from them.

import type { Field } from './field.js';

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

  clear(): void {
    this.inputs.clear();
    this.outs.clear();
    this.states.clear();
  }
}

function byNode<T>(map: Map<string, Map<string, T>>, node: string): Map<string, T> {
  let ports = map.get(node);
  if (!ports) map.set(node, (ports = new Map()));
  return ports;
}
