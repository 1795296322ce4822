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

/**
 * What a page can show, each under the name the page knows it by: the outputs by name, the inputs
 * as `input:NAME` (what a dropped image or \`write\` put there, as kernels see it), and the out and
 * state ports whose fields are kept as `node.port` (\`pinned\` when pinned: those the page lists).
 * The names are made here only; a name from a page is looked up among them, never taken apart.
 */
export function sourceFields(s: Session): { name: string; kind: 'output' | 'input' | 'pinned' | 'kept'; field: Field }[] {
  const found: { name: string; kind: 'output' | 'input' | 'pinned' | 'kept'; field: Field }[] = [];
  const add = (name: string, kind: 'output' | 'input' | 'pinned' | 'kept', field: Field | undefined) => field && found.push({ name, kind, field });
  for (const o of s.scene.outputs) add(o.name, 'output', s.engine.outputField(o.name));
  for (const i of s.scene.inputs.values()) add(`input:${i.name}`, 'input', s.engine.fields.input(i.name));
  for (const node of s.scene.nodes) {
    for (const port of node.kernel.ports) {
      if (port.kind !== 'in') add(`${node.name}.${port.name}`, s.pins.has(node.name) ? 'pinned' : 'kept', s.engine.fields.port(node.name, port.name));
    }
  }
  return found;
}

export function describeScene(s: Session): SceneDescription {
  const params = [...s.scene.params.values()].map((p) => ({
    name: p.name,
    type: p.type.name,
    value: [...(s.engine.params.get(p.name) ?? p.value)],
    ...(p.range ? { range: { ...p.range } } : {}),
    integer: p.type.name === 'i32' || p.type.name === 'bool',
  }));
  const size = (f: Field) => ({ width: f.width, height: f.height, ...(f.dims === 3 ? { depth: f.depth } : {}) });
  const sources: SourceDescription[] = sourceFields(s)
    .filter((src) => src.kind !== 'kept')
    .map((src) => ({ name: src.name, kind: src.kind as SourceDescription['kind'], ...size(src.field) }));
  const inputs = [...s.scene.inputs.values()].flatMap((i) => {
    const field = s.engine.fields.input(i.name);
    return field ? [{ name: i.name, type: i.type.name, ...size(field) }] : [];
  });
  return {
    revision: s.revision, entry: `${basename(s.folder.root)}/${s.entry}`, params, inputs, sources, nodes: s.scene.nodes.map((n) => n.name), pins: [...s.pins],
    paused: s.paused, refused: s.refused?.message ?? null,
  };
}
