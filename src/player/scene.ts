// The scene as a page shows it: its params (with type and range, for sliders), what it can show
// (outputs, and the ports of pinned nodes), its nodes, and whether it runs.

import { basename } from 'node:path';
import type { Session } from '../main/session.js';
import type { Field } from '../main/field.js';

export interface ParamDescription {
  name: string;
  type: string;
  /** The current value, one number per component. */
  value: number[];
  range?: { lo: number; hi: number };
  /** i32 and bool params step by whole numbers. */
  integer: boolean;
}

export interface SourceDescription {
  /** What the page asks to show: an output's name, or `node.port`. */
  name: string;
  kind: 'output' | 'pinned' | 'input';
  width: number;
  height: number;
  depth?: number;
}

export interface InputDescription {
  name: string;
  type: string;
  width: number;
  height: number;
  depth?: number;
}

export interface SceneDescription {
  revision: number;
  /** The entry document, under its folder's name (what the window's title says). */
  entry: string;
  params: ParamDescription[];
  /** The scene's inputs (a dropped image fills one). */
  inputs: InputDescription[];
  sources: SourceDescription[];
  nodes: string[];
  pins: string[];
  paused: boolean;
  /** Why the scene does not run, when it does not check at all. */
  refused: string | null;
}

export function describeScene(s: Session): SceneDescription {
  const params = [...s.scene.params.values()].map((p) => ({
    name: p.name,
    type: p.type.name,
    value: [...(s.engine.params.get(p.name) ?? p.value)],
    ...(p.range ? { range: { ...p.range } } : {}),
    integer: p.type.name === 'i32' || p.type.name === 'bool',
  }));
  const sources: SourceDescription[] = [];
  const size = (f: Field | undefined) => (f ? { width: f.width, height: f.height, ...(f.dims === 3 ? { depth: f.depth } : {}) } : undefined);
  for (const o of s.scene.outputs) {
    const z = size(s.engine.outputField(o.name));
    if (z) sources.push({ name: o.name, kind: 'output', ...z });
  }
  // Inputs too (as `input:NAME`): what a dropped image or `write` put there, as kernels see it.
  for (const i of s.scene.inputs.values()) {
    const z = size(s.engine.fields.input(i.name));
    if (z) sources.push({ name: `input:${i.name}`, kind: 'input', ...z });
  }
  for (const node of s.scene.nodes) {
    if (!s.pins.has(node.name)) continue;
    for (const port of node.kernel.ports) {
      if (port.kind === 'in') continue;
      const z = size(s.engine.fields.port(node.name, port.name));
      if (z) sources.push({ name: `${node.name}.${port.name}`, kind: 'pinned', ...z });
    }
  }
  const inputs = [...s.scene.inputs.values()].flatMap((i) => {
    const z = size(s.engine.fields.input(i.name));
    return z ? [{ name: i.name, type: i.type.name, ...z }] : [];
  });
  return {
    revision: s.revision, entry: `${basename(s.folder.root)}/${s.entry}`, params, inputs, sources, nodes: s.scene.nodes.map((n) => n.name), pins: [...s.pins],
    paused: s.paused, refused: s.refused?.message ?? null,
  };
}
