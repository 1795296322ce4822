// Checking the graph: nodes against their kernels' ports, edges, cycles, domains and outputs.

import { closest } from '../suggest.js';
import type { Diagnostic, Document, NodeMember, NodeStatement, OutputStatement } from '../syntax/tree.js';
import { aType, sameType } from '../types.js';
import type { KernelInfo, PortInfo } from './kernel.js';
import { diagnostic } from './report.js';
import { literalValue } from './literal.js';
import { LowerError } from '../lower/context.js';
import type { InputInfo, OutputInfo, ParamInfo } from './scene.js';

/** Where a node's field input comes from: another node's port, or a scene `input`. */
export type Source = { node: string; port: string } | { input: string };

export interface SceneNode {
  name: string;
  path: string;
  kernel: KernelInfo;
  statement: NodeStatement;
  /** The domain: one extent per axis of the kernel's each. */
  domain: number[];
  /** Field in-ports: where each reads from. */
  edges: Map<string, Source>;
  /** Plain in-ports: a value (the document's) or a graph param's name. */
  values: Map<string, { value: number[] } | { param: string }>;
  /** Its domain is the size given for the whole scene (`render --size`), not its own. */
  resized?: true;
}

interface GraphInput {
  nodes: { doc: Document; st: NodeStatement }[];
  outputs: { doc: Document; st: OutputStatement }[];
  kernels: Map<string, KernelInfo>;
  params: Map<string, ParamInfo>;
  inputs: Map<string, InputInfo>;
  size?: number[];
  /** Kernels and nodes whose statements did not parse or check: their own diagnostics say why. */
  unchecked?: { kernels: Set<string>; nodes: Set<string>; params?: Set<string> };
}

const DEFAULT_EXTENT = { 1: [256], 2: [256, 256], 3: [64, 64, 64] } as const;

export function checkGraph(g: GraphInput): { nodes: SceneNode[]; outputs: OutputInfo[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const nodes = new Map<string, SceneNode>();
  const docOf = new Map<string, Document>();
  /** Nodes that are not in the graph because of an error reported elsewhere: reading them adds none. */
  const unchecked = new Set(g.unchecked?.nodes);
  /** Edges (`node.port`) whose field type is wrong: reported once, not again for their extents. */
  const mistyped = new Set<string>();

  for (const { doc, st } of g.nodes) {
    const err = (span: { start: number; end: number }, message: string, fix?: Diagnostic['fix']) => diagnostics.push(diagnostic(doc, span, message, fix));
    const kernel = g.kernels.get(st.kernel.value);
    if (!kernel && g.unchecked?.kernels.has(st.kernel.value)) {
      unchecked.add(st.name.value);
      continue;
    }
    if (!kernel) {
      unchecked.add(st.name.value); // said here: what reads the node says nothing more
      const near = closest(st.kernel.value, g.kernels.keys());
      const text = doc.text.slice(st.span.start, st.span.end);
      const at = st.kernel.span.start - st.span.start;
      err(st.kernel.span, `node \`${st.name.value}\` runs \`${st.kernel.value}\`, which no document of the scene declares${near ? `; did you mean \`${near}\`?` : ''}`,
        near ? { node: st.name.value, text: text.slice(0, at) + near + text.slice(at + st.kernel.value.length) } : undefined);
      continue;
    }
    const node: SceneNode = { name: st.name.value, path: doc.path, kernel, statement: st, domain: [], edges: new Map(), values: new Map() };
    let sizeMember: number[] | undefined;
    /** In ports a member names: one that is wrong says so itself, not again as missing. */
    const named = new Set<string>();
    /** Each member once: a second one of the same name was taken silently, the last winning. */
    const given = new Map<string, NodeMember>();
    for (const m of st.members) {
      const first = given.get(m.name.value);
      if (first) {
        const line = diagnostic(doc, first.span, '').line;
        err(m.name.span, `node \`${node.name}\` sets \`${m.name.value}\` twice (first at line ${line}); keep one`, { node: node.name, member: m.name.value, text: null });
        continue;
      }
      given.set(m.name.value, m);
      if (m.form === 'size') {
        sizeMember = m.size.dims;
        continue;
      }
      const port = kernel.ports.find((p) => p.name === m.name.value);
      if (!port || port.kind !== 'in') {
        const ins = kernel.ports.filter((p) => p.kind === 'in').map((p) => p.name);
        const near = closest(m.name.value, ins);
        const why = port ? `\`${m.name.value}\` is ${port.kind === 'in' || port.kind === 'out' ? 'an' : 'a'} ${port.kind} port of ${kernel.id}; a node sets only in ports` : `${kernel.id} has no in port \`${m.name.value}\``;
        err(m.name.span, `${why}${near ? `; did you mean \`${near}\`?` : ins.length ? ` (its in ports: ${ins.join(', ')})` : ' (it has no in ports)'}`,
          near ? { node: node.name, member: m.name.value, text: memberText(doc, m, near) } : undefined);
        continue;
      }
      named.add(port.name);
      checkMember(doc, node, port, m, g, err, mistyped);
    }
    for (const port of kernel.ports) {
      if (port.kind !== 'in' || named.has(port.name)) continue;
      if (port.dims && !node.edges.has(port.name)) {
        err(st.name.span, `node \`${node.name}\` leaves the in port \`${port.name}\` (field${port.dims}<${port.type.name}>) unconnected: add \`${port.name} <- NODE.PORT;\``);
      } else if (!port.dims && !node.values.has(port.name)) {
        if (port.value) node.values.set(port.name, { value: port.value });
        else err(st.name.span, `node \`${node.name}\` gives no value to the in port \`${port.name}\`, which has no default: add \`${port.name} = ...;\``);
      }
    }
    node.domain = sizeMember ?? [];
    if (sizeMember && sizeMember.length !== kernel.dims) {
      const m = st.members.find((x) => x.form === 'size')!;
      err(m.span, `node \`${node.name}\` runs a ${kernel.dims}-D kernel; its size needs ${kernel.dims} extent${kernel.dims > 1 ? 's' : ''}`);
    }
    if (nodes.has(node.name)) continue;
    nodes.set(node.name, node);
    docOf.set(node.name, doc);
  }

  // Edges must name nodes and their out or state ports, of the same field type.
  for (const node of nodes.values()) {
    const doc = docOf.get(node.name)!;
    for (const [portName, src] of node.edges) {
      const port = node.kernel.ports.find((p) => p.name === portName)!;
      const member = node.statement.members.find((m) => m.name.value === portName)!;
      const err = (message: string, fix?: Diagnostic['fix']) => diagnostics.push(diagnostic(doc, member.span, message, fix));
      if ('input' in src) continue; // checked with the member
      const from = nodes.get(src.node);
      if (!from && unchecked.has(src.node)) {
        node.edges.delete(portName);
        continue;
      }
      if (!from) {
        const near = closest(src.node, [...nodes.keys(), ...g.inputs.keys()]);
        err(`node \`${node.name}\` reads \`${src.node}\`, which is neither a node nor an input of the scene${near ? `; did you mean \`${near}\`?` : ''}`,
          near ? { node: node.name, member: portName, text: `${portName} <- ${near}${src.port ? `.${src.port}` : ''};` } : undefined);
        node.edges.delete(portName);
        continue;
      }
      const outs = from.kernel.ports.filter((p) => p.kind !== 'in');
      if (!src.port) src.port = (outs.find((p) => p.kind === 'out') ?? outs[0])?.name ?? ''; // `src <- rings;`
      const out = outs.find((p) => p.name === src.port);
      if (!out) {
        const near = closest(src.port, outs.map((p) => p.name)) ?? (outs.length === 1 ? outs[0].name : undefined);
        err(`node \`${from.name}\` (${from.kernel.id}) has no out or state port \`${src.port}\`${outs.length ? `; its ports: ${outs.map((p) => p.name).join(', ')}` : ''}`,
          near ? { node: node.name, member: portName, text: `${portName} <- ${from.name}.${near};` } : undefined);
        node.edges.delete(portName);
        continue;
      }
      if (!sameType(out.type, port.type) || out.dims !== port.dims) {
        mistyped.add(`${node.name}.${portName}`);
        err(`\`${portName}\` of node \`${node.name}\` is a field${port.dims}<${port.type.name}>, but \`${from.name}.${out.name}\` is a field${out.dims}<${out.type.name}>`);
      }
    }
  }

  const order = topologicalOrder(nodes, docOf, diagnostics);

  // Domains: the node's size, else its first field input's, else the kernel's, else the default.
  for (const node of order) {
    const k = node.kernel;
    if (!node.domain.length || node.domain.length !== k.dims) {
      const first = [...node.edges.values()].map((s) => domainOf(s, nodes, g.inputs)).find((d) => d && d.length === k.dims);
      node.domain = first ?? (k.size?.length === k.dims ? k.size : [...DEFAULT_EXTENT[k.dims]]);
    }
    if (g.size && g.size.length === k.dims && (node.statement.members.some((m) => m.form === 'size') || !node.edges.size)) {
      node.domain = [...g.size];
      node.resized = true;
    }
    // Pointwise reads need the source to have the node's own extents.
    const doc = docOf.get(node.name)!;
    for (const [portName, src] of node.edges) {
      if (!k.pointwise.includes(portName) || mistyped.has(`${node.name}.${portName}`)) continue;
      const d = domainOf(src, nodes, g.inputs);
      // A source with no domain is in a cycle, reported as such.
      if (d?.length && d.join('x') !== node.domain.join('x')) {
        const member = node.statement.members.find((m) => m.name.value === portName)!;
        const sample = `${portName}.sample(${['u', 'v', 'w'].slice(0, d.length).join(', ')})`;
        // A field of other axes than the kernel's: no size of the node makes them one (it advised one the checker refused).
        const fix = d.length !== node.domain.length
          ? `a ${k.dims}-D kernel's element is not one of a ${d.length}-D field: read it with ${sample}, or make the kernel ${d.length}-D`
          : `give the node \`size = ${d.join(' x ')};\`, or read with ${sample}`;
        diagnostics.push(diagnostic(doc, member.span,
          `node \`${node.name}\` reads \`${portName}\` at its own element, but \`${portName}\` is ${d.join(' x ')} while the node's domain is ${node.domain.join(' x ')}: ${fix}`));
      }
    }
  }

  const outputs: OutputInfo[] = [];
  for (const { doc, st } of g.outputs) {
    const src = st.from;
    const node = nodes.get(src.node.value);
    if (!node && unchecked.has(src.node.value)) continue;
    if (!node) {
      const near = closest(src.node.value, nodes.keys());
      diagnostics.push(diagnostic(doc, src.node.span, `output \`${st.name.value}\` reads \`${src.node.value}\`, which is not a node of the scene${near ? `; did you mean \`${near}\`?` : ''}`,
        near ? { output: st.name.value, text: `output ${st.name.value} <- ${near}${src.port ? `.${src.port.value}` : ''};` } : undefined));
      continue;
    }
    const outs = node.kernel.ports.filter((p) => p.kind !== 'in');
    const portName = src.port?.value ?? (outs.length === 1 ? outs[0].name : outs.find((p) => p.kind === 'out')?.name);
    if (!portName || !outs.some((p) => p.name === portName)) {
      diagnostics.push(diagnostic(doc, (src.port ?? src.node).span, `node \`${node.name}\` has no out or state port \`${portName ?? ''}\`; its ports: ${outs.map((p) => p.name).join(', ')}`));
      continue;
    }
    outputs.push({ name: st.name.value, node: node.name, port: portName, path: doc.path });
  }
  return { nodes: order, outputs, diagnostics };
}

function domainOf(src: Source, nodes: Map<string, SceneNode>, inputs: Map<string, InputInfo>): number[] | undefined {
  if ('input' in src) return inputs.get(src.input)?.size;
  return nodes.get(src.node)?.domain;
}

function memberText(doc: Document, m: NodeMember, name: string): string {
  const text = doc.text.slice(m.span.start, m.span.end);
  return name + text.slice(m.name.value.length);
}

function checkMember(
  doc: Document,
  node: SceneNode,
  port: PortInfo,
  m: NodeMember,
  g: GraphInput,
  err: (span: { start: number; end: number }, message: string, fix?: Diagnostic['fix']) => void,
  mistyped: Set<string>,
): void {
  if (port.dims) {
    if (m.form !== 'edge') {
      err(m.span, `\`${port.name}\` is a field${port.dims}<${port.type.name}> in port: connect it with \`${port.name} <- NODE.PORT;\``);
      return;
    }
    if (!m.from.port) {
      const input = g.inputs.get(m.from.node.value);
      if (!input) {
        // `src <- rings;` names a node: take its only out port.
        node.edges.set(port.name, { node: m.from.node.value, port: '' });
        return;
      }
      if (!sameType(input.type, port.type) || input.dims !== port.dims) {
        mistyped.add(`${node.name}.${port.name}`);
        err(m.span, `\`${port.name}\` is a field${port.dims}<${port.type.name}>, but input \`${input.name}\` is a field${input.dims}<${input.type.name}>`);
      }
      node.edges.set(port.name, { input: input.name });
      return;
    }
    node.edges.set(port.name, { node: m.from.node.value, port: m.from.port.value });
    return;
  }
  if (m.form === 'edge') {
    err(m.span, `\`${port.name}\` is a plain ${port.type.name} value, not a field: set it with \`${port.name} = ...;\``);
    return;
  }
  if (m.form === 'param') {
    const param = g.params.get(m.param.value);
    if (!param && g.unchecked?.params?.has(m.param.value)) return; // its declaration's error says it
    if (!param) {
      const near = closest(m.param.value, g.params.keys());
      err(m.param.span, `\`${m.param.value}\` is not a param of the scene${near ? `; did you mean \`${near}\`?` : `: declare \`param ${m.param.value}: ${port.type.name} = ...;\``}`,
        near ? { node: node.name, member: port.name, text: `${port.name} = ${near};` } : undefined);
      return;
    }
    if (!sameType(param.type, port.type) && !(param.type.kind === 'scalar' && port.type.kind === 'scalar'))
      err(m.param.span, `param \`${param.name}\` is ${aType(param.type.name)}, but \`${port.name}\` takes ${aType(port.type.name)}`);
    node.values.set(port.name, { param: param.name });
    return;
  }
  if (m.form === 'value') {
    try {
      node.values.set(port.name, { value: literalValue(port.type, m.value, `\`${port.name}\``) });
    } catch (e) {
      if (!(e instanceof LowerError)) throw e;
      err(e.at, e.message);
    }
  }
}

function topologicalOrder(nodes: Map<string, SceneNode>, docOf: Map<string, Document>, diagnostics: Diagnostic[]): SceneNode[] {
  const order: SceneNode[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (node: SceneNode, path: string[]): void => {
    const s = state.get(node.name);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...path.slice(path.indexOf(node.name)), node.name];
      diagnostics.push(diagnostic(docOf.get(node.name)!, node.statement.name.span,
        `the nodes ${cycle.join(' -> ')} form a cycle: a node cannot read its own result in the same frame; keep it in a \`state\` port instead`));
      return;
    }
    state.set(node.name, 'visiting');
    for (const src of node.edges.values()) {
      if (!('node' in src)) continue;
      const from = nodes.get(src.node);
      if (!from) continue;
      visit(from, [...path, node.name]);
      if (state.get(node.name) !== 'visiting') return;
    }
    state.set(node.name, 'done');
    order.push(node);
  };
  for (const node of nodes.values()) visit(node, []);
  return order;
}
