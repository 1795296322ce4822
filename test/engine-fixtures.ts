// Small scenes on a bare Engine, shared by the engine's fast tests (frame-commit, frame-carry).

import t from 'tap';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { Engine, type EngineOptions } from '../src/main/engine.js';
import { readField } from '../src/main/field.js';

export function scene(text: string): Scene {
  const s = loadScene('scene.esn', { read: (p) => (p === 'scene.esn' ? text : undefined), fuel: 2000 });
  if (s.diagnostics.length) throw new Error(s.diagnostics.map((d) => `${d.line}:${d.column}: ${d.message}`).join('\n'));
  return s;
}

/** An engine of `text`, disposed when the test file ends. */
export function engine(text: string, options: EngineOptions = { backend: 'interp' }): Engine {
  const e = new Engine(scene(text), options);
  t.teardown(() => e.dispose());
  return e;
}

/** The first element of each plane of an output. */
export function first(e: Engine, output: string): number[] {
  return readField(e.memory, e.outputField(output)!).map((p) => p[0]);
}

/** The current state of node.port, every element of its first plane. */
export function state(e: Engine, node: string, port: string): number[] {
  return [...readField(e.memory, e.fields.state(node, port)!.current)[0]];
}

export const all = (n: number, v: number) => new Array(n).fill(v);
