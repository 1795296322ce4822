// Fusion: a producer that one consumer reads only at its own element is compiled into the
// consumer's loop, and the field between them is never stored. This pass plans the groups and
// merges each group's kernels into one IrFunction (a pure function from kernels to IR).

import type { FieldBinding, UniformBinding, UniformSource } from './bindings.js';
import type { SceneNode } from './check/graph.js';
import type { Expr, IrField, IrFunction, IrUniform, Stmt } from './ir.js';
import { mapStmts, someStmt, unreachable } from './walk.js';

export type { FieldBinding, UniformBinding };

export interface Group {
  nodes: SceneNode[];
  domain: number[];
  ir: IrFunction;
  fields: FieldBinding[];
  uniforms: UniformBinding[];
}

/** Split nodes (in order) into groups; `keep` holds nodes whose ports must stay readable. */
export function planGroups(nodes: SceneNode[], keep: Set<string>, fuse: boolean): SceneNode[][] {
  const consumers = new Map<string, { node: SceneNode; port: string }[]>();
  for (const n of nodes) {
    for (const [port, src] of n.edges) {
      if (!('node' in src)) continue;
      const list = consumers.get(src.node) ?? [];
      list.push({ node: n, port });
      consumers.set(src.node, list);
    }
  }
  const leader = new Map<string, string>();
  for (let i = nodes.length - 1; i >= 0; i--) {
    const p = nodes[i];
    const uses = consumers.get(p.name) ?? [];
    const c = uses[0]?.node;
    const fusable =
      fuse &&
      c !== undefined &&
      !keep.has(p.name) &&
      !p.kernel.ports.some((port) => port.kind === 'state') &&
      uses.every((u) => u.node === c && c.kernel.pointwise.includes(u.port) && !c.kernel.gathered.includes(u.port)) &&
      p.domain.join('x') === c.domain.join('x');
    leader.set(p.name, fusable ? leader.get(c.name)! : p.name);
  }
  const groups = new Map<string, SceneNode[]>();
  for (const n of nodes) {
    const l = leader.get(n.name)!;
    if (!groups.has(l)) groups.set(l, []);
    groups.get(l)!.push(n);
  }
  // A group runs where its leader (its last node) stands in the order.
  return nodes.filter((n) => leader.get(n.name) === n.name).map((n) => groups.get(n.name)!);
}

/** Merge a group's kernels into one function: fused edges become locals, not fields. */
export function buildGroup(members: SceneNode[]): Group {
  const names = new Set(members.map((m) => m.name));
  const locals: IrFunction['locals'] = [];
  const fields: IrField[] = [];
  const bindings: FieldBinding[] = [];
  const uniforms: IrUniform[] = [];
  const uniformBindings: UniformBinding[] = [];
  const uniformSlot = new Map<string, number>();
  const body: Stmt[] = [];
  const stores: IrFunction['stores'] = [];
  /** `node.port` -> the locals holding that port's value at the element (for fused readers). */
  const portLocals = new Map<string, number[]>();
  let fuel = 0;

  members.forEach((node, nodeIndex) => {
    const k = node.kernel;
    const ir = k.ir;
    fuel = Math.max(fuel, ir.fuel);
    const localBase = locals.length;
    locals.push(...ir.locals);

    // Fields: fused reads map to the producer's locals; the rest become the group's fields.
    const fieldMap: (number | { locals: number[] })[] = ir.fields.map((f, i) => {
      const fp = k.fieldPorts[i];
      if (fp.role === 'in') {
        const src = node.edges.get(fp.port)!;
        if ('node' in src && names.has(src.node)) return { locals: portLocals.get(`${src.node}.${src.port}`)! };
        bindings.push({ kind: 'read', node: node.name, port: fp.port, from: 'node' in src ? { node: src.node, port: src.port } : { input: src.input } });
      } else if (fp.role === 'state-read') {
        bindings.push({ kind: 'state', node: node.name, port: fp.port });
      } else {
        bindings.push({ kind: 'write', node: node.name, port: fp.port, state: fp.role === 'state-write' });
      }
      fields.push({ ...f, name: `${node.name}.${f.name}` });
      return fields.length - 1;
    });

    // World values are shared by the members; an `in` value is the node's own.
    const uniformMap = ir.uniforms.map((u, i) => {
      const source: UniformSource = k.uniformSources[i];
      const binding: UniformBinding = source.kind === 'in' ? { kind: 'value', node: node.name, port: source.port, comp: source.comp } : source;
      const name = source.kind === 'in' ? `${node.name}.${u.name}` : u.name;
      let slot = uniformSlot.get(name);
      if (slot === undefined) {
        slot = uniforms.push({ name, t: u.t }) - 1;
        uniformSlot.set(name, slot);
        uniformBindings.push(binding);
      }
      return slot;
    });

    // The member's locals, uniforms and fields renumbered into the group's; fused reads become
    // the producer's locals (bottom-up: a load's coordinates are renumbered before the load).
    const expr = (e: Expr): Expr => {
      switch (e.k) {
        case 'local':
          return { ...e, i: e.i + localBase };
        case 'uniform':
          return { ...e, slot: uniformMap[e.slot] };
        case 'extent': {
          if (e.field === undefined) return e;
          const f = fieldMap[e.field];
          if (typeof f === 'number') return { ...e, field: f };
          return { k: 'extent', t: 'i32', axis: e.axis }; // a fused field has the group's domain
        }
        case 'load': {
          const f = fieldMap[e.field];
          return typeof f === 'number' ? { ...e, field: f } : { k: 'local', t: e.t, i: f.locals[e.comp] };
        }
        case 'const':
        case 'coord':
        case 'op':
        case 'select':
          return e; // the walker has rewritten their sub-expressions
        default:
          return unreachable(e);
      }
    };
    const stmt = (s: Stmt): Stmt => {
      if (s.k === 'set') return { ...s, local: s.local + localBase };
      if (s.k === 'loop') return { ...s, node: nodeIndex };
      return s;
    };
    // A renumbering that changes nothing (a group of one node, the most common) keeps the body
    // as it is: rebuilding the inline corpus kernel's IR took ~2 ms per change.
    const same =
      localBase === 0 &&
      uniformMap.every((slot, i) => slot === i) &&
      fieldMap.every((f, i) => f === i) &&
      !someStmt(ir.body, (s) => s.k === 'loop' && s.node !== nodeIndex);
    body.push(...(same ? ir.body : mapStmts(ir.body, { expr, stmt })));

    // Outputs: record their locals for fused readers; store those still needed as fields.
    const isLeader = nodeIndex === members.length - 1;
    const byPort = new Map<string, number[]>();
    for (const st of ir.stores) {
      const port = k.fieldPorts[st.field].port;
      const list = byPort.get(port) ?? [];
      list[st.comp] = st.local + localBase;
      byPort.set(port, list);
      const target = fieldMap[st.field];
      const stateful = k.fieldPorts[st.field].role === 'state-write';
      if (typeof target === 'number' && (isLeader || stateful)) stores.push({ field: target, comp: st.comp, local: st.local + localBase });
    }
    for (const [port, ls] of byPort) portLocals.set(`${node.name}.${port}`, ls);
  });

  // Drop the write fields of fused producers: nothing stores to them.
  const stored = new Set(stores.map((s) => s.field));
  const keepField = fields.map((f, i) => f.role === 'read' || stored.has(i));
  const renumber: number[] = [];
  let next = 0;
  keepField.forEach((keep, i) => (renumber[i] = keep ? next++ : -1));
  const remapFields = (e: Expr): Expr =>
    e.k === 'load' || (e.k === 'extent' && e.field !== undefined) ? { ...e, field: renumber[e.field!] } : e;
  const leader = members[members.length - 1];
  const ir: IrFunction = {
    ir: 1,
    dims: leader.kernel.dims,
    nodes: members.map((m) => m.name),
    locals,
    fields: fields.filter((_, i) => keepField[i]),
    uniforms,
    body: renumber.every((f, i) => f === i) ? body : mapStmts(body, { expr: remapFields }),
    stores: stores.map((s) => ({ ...s, field: renumber[s.field] })),
    fuel,
  };
  return { nodes: members, domain: leader.domain, ir, fields: bindings.filter((_, i) => keepField[i]), uniforms: uniformBindings };
}
