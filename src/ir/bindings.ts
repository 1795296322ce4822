// The bindings between the compiler and the engine: what the host puts in each uniform slot and
// each field slot of a function's argument block. Lowering records a kernel's uniforms as typed
// sources, fusion turns them (and the kernel's field ports) into a group's bindings, and the
// engine fills the slots from these records alone: it never reads a name back from a string, and
// a kind of binding it does not handle is a type error (its switches end in `never`).

import { unreachable } from './unreachable.js';

/** A value of the world, the same for every node: the clock and the input devices. */
export type WorldUniform =
  | { kind: 'time' }
  | { kind: 'frame' }
  | { kind: 'pointer'; axis: 'x' | 'y' | 'down' }
  /** Whether a key is down, by its name in lower case (`space`, `a`). */
  | { kind: 'key'; key: string };

/** What a kernel's uniform slot holds: a world value, or one component of an `in` port's value. */
export type UniformSource = WorldUniform | { kind: 'in'; port: string; comp: number };

/** What a group's uniform slot holds: a world value, or a component of a node's `in` value (its member or a param). */
export type UniformBinding = WorldUniform | { kind: 'value'; node: string; port: string; comp: number };

/** What one field of a group's function is bound to when it runs. */
export type FieldBinding =
  /** A node's out port, or the next state of a state port (written by the group). */
  | { kind: 'write'; node: string; port: string; state: boolean }
  /** The current state of a node's state port (read). */
  | { kind: 'state'; node: string; port: string }
  /** What a node's in port reads: another node's out (or freshly computed state) port, or an input. */
  | { kind: 'read'; node: string; port: string; from: { node: string; port: string } | { input: string } };

/** A uniform's name for people (IR dumps, messages): `time`, `pointer.x`, `keys.space`, `in.PORT.COMP`. */
export function uniformName(s: UniformSource): string {
  switch (s.kind) {
    case 'time':
    case 'frame':
      return s.kind;
    case 'pointer':
      return `pointer.${s.axis}`;
    case 'key':
      return `keys.${s.key}`;
    case 'in':
      return `in.${s.port}.${s.comp}`;
    default:
      return unreachable(s, 'a binding');
  }
}
