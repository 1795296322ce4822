// Automatic state migrations: how a node's state is carried to a new layout when its kernel has no
// `migrate from` the kernel it ran before (carry.ts). Each is exact (docs/language.md):
//
//   - size changed: the overlap is kept and the rest filled with the declared value (`resized`),
//     or, when the state says `resample nearest|bilinear`, the old field is resampled to the new
//     size (`resampled`);
//   - element type widened (f32 -> vecN, vecN -> a wider vecM, T -> a struct whose first member
//     holds T): the old value fills the first components, the rest the declared value (`widened`);
//   - element type narrowed (the reverse): only when the state says `narrow`, the first components
//     kept (`narrowed`); else it is reset, and the event says why;
//   - any other change (axes, i32 <-> f32, ...): reset to the declared value.
//
// A carry is a small IR function (one per state), run once over the new domain on the pool like a
// hand-written migration: field 0 is the old state (read), field 1 the new (written).

import type { SceneNode } from '../ir/check/graph.js';
import type { PortInfo } from '../ir/check/kernel.js';
import { DEFAULT_FUEL, IR_VERSION, type Expr, type IrFunction, type Scalar, type Stmt } from '../ir/ir.js';
import { cst, f32, i32, op } from '../ir/lower/build.js';
import { components, type ElemType } from '../ir/types.js';

/** What happened to one state, in order: the size's step, then the type's. */
export type CarryStep = 'kept' | 'copied' | 'resized' | 'resampled' | 'widened' | 'narrowed';

/** Why a state was reset instead. */
export type ResetReason = 'new port' | 'axes changed' | 'type changed' | 'narrowing not declared';

export type StatePlan =
  /** The bytes as they are (same size, same components). */
  | { port: string; how: ['kept' | 'copied'] }
  /** Run `ir` over the new domain. */
  | { port: string; how: CarryStep[]; ir: IrFunction; filter?: 'nearest' | 'bilinear' }
  | { port: string; how: ['reset']; reason: ResetReason; message: string };

/** How state `port` of `node` is carried from the node as it was (`before`, same name). */
export function planState(before: SceneNode, node: SceneNode, port: PortInfo): StatePlan {
  const name = `\`${node.name}.${port.name}\``;
  const reset = (reason: ResetReason, why: string): StatePlan => ({ port: port.name, how: ['reset'], reason, message: `${name} starts from its declared value: ${why}` });
  const old = before.kernel.ports.find((p) => p.kind === 'state' && p.name === port.name);
  if (!old) return reset('new port', `the node's kernel ${before.kernel.id} had no such state`);
  if (old.dims !== port.dims) return reset('axes changed', `it had ${old.dims} axes and has ${port.dims}`);
  const from = components(old.type);
  const to = components(port.type);
  const sameSize = before.domain.join() === node.domain.join();
  const sameComps = from.join() === to.join();
  if (sameSize && sameComps) return { port: port.name, how: [before.kernel.id === node.kernel.id ? 'kept' : 'copied'] };
  const type = sameComps ? 'same' : relation(old.type, port.type);
  if (type === 'other') return reset('type changed', `its element type changed from ${old.type.name} to ${port.type.name}, which no automatic migration carries (write \`migrate from ${before.kernel.id}\` in kernel ${node.kernel.id})`);
  if (type === 'narrower' && !port.narrow)
    return reset('narrowing not declared', `${old.type.name} -> ${port.type.name} drops components; add \`narrow\` to the state's declaration to keep the first ones`);
  const how: CarryStep[] = [];
  if (!sameSize) how.push(port.resample ? 'resampled' : 'resized');
  if (type === 'wider') how.push('widened');
  if (type === 'narrower') how.push('narrowed');
  const initial = port.value ?? to.map(() => 0);
  const ir = carryIr(`${node.name}.${port.name}`, port.dims!, before.domain, node.domain, from, to, initial, sameSize ? 'keep' : (port.resample ?? 'keep'));
  return { port: port.name, how, ir, ...(port.resample && !sameSize ? { filter: port.resample } : {}) };
}

/** How `to` holds a value of `from`: in its first components (wider), `from` holds it (narrower), or neither. */
function relation(from: ElemType, to: ElemType): 'same' | 'wider' | 'narrower' | 'other' {
  if (sameElem(from, to)) return 'same';
  if (holds(to, from)) return 'wider';
  if (holds(from, to)) return 'narrower';
  return 'other';
}

/** `outer` holds `inner` in its first components: f32 in any vector, a vector in a longer one, T in a struct whose first member holds T (or is T). */
function holds(outer: ElemType, inner: ElemType): boolean {
  if (outer.kind === 'vec') return (inner.kind === 'scalar' && inner.name === 'f32') || (inner.kind === 'vec' && inner.size < outer.size);
  if (outer.kind === 'struct') {
    const first = outer.fields[0]?.type;
    return !!first && (sameElem(first, inner) || holds(first, inner));
  }
  return false;
}

/** The same element type: the same name and, for a struct, the same members (a struct redeclared with others is another type). */
function sameElem(a: ElemType, b: ElemType): boolean {
  if (a.kind !== b.kind || a.name !== b.name) return false;
  if (a.kind !== 'struct' || b.kind !== 'struct') return true;
  return a.fields.length === b.fields.length && a.fields.every((f, i) => f.name === b.fields[i].name && sameElem(f.type, b.fields[i].type));
}

/**
 * The IR of one carry. Per new element and component c: the old component c (when there is one)
 * read where `filter` says, else the declared value's component c.
 *
 *   keep: at the same coordinates when they are inside the old field, else the declared value;
 *   nearest: at floor((i + 0.5) * OLD / NEW) along each axis (the old element under the new
 *     element's centre);
 *   bilinear: u = (i + 0.5) * OLD / NEW - 0.5 along each axis, i0 = floor(u), t = u - i0, the
 *     elements i0 and i0 + 1 (clamped to the edge) blended a + (b - a) * t, along x first, then y,
 *     then z. Every step in f32.
 */
function carryIr(name: string, dims: 1 | 2 | 3, oldSize: number[], newSize: number[], from: Scalar[], to: Scalar[], initial: number[], filter: 'keep' | 'nearest' | 'bilinear'): IrFunction {
  const locals: Scalar[] = [];
  const body: Stmt[] = [];
  const local = (t: Scalar, e: Expr): Expr => {
    const i = locals.push(t) - 1;
    body.push({ k: 'set', local: i, e });
    return { k: 'local', t, i };
  };
  const axes = [0, 1, 2].slice(0, dims) as (0 | 1 | 2)[];
  const coord = (axis: 0 | 1 | 2): Expr => ({ k: 'coord', t: 'i32', axis });
  // The old position of the new element's centre along an axis, in old elements.
  const centre = (a: 0 | 1 | 2) => op('f32.div', op('f32.mul', op('f32.add', op('i32.to_f32', coord(a)), f32(0.5)), f32(oldSize[a])), f32(newSize[a]));
  const load = (c: number, at: Expr[]): Expr => ({ k: 'load', t: from[c], field: 0, comp: c, at: { mode: 'clamp', coords: at } });

  let read: (c: number) => Expr;
  if (filter === 'keep') {
    const inside = axes.map((a) => op('i32.lt', coord(a), i32(oldSize[a]))).reduce((p, q) => op('bool.and', p, q));
    const inOld = local('bool', inside);
    read = (c) => ({ k: 'select', t: to[c], c: inOld, a: load(c, axes.map(coord)), b: cst(to[c], initial[c]) });
  } else if (filter === 'nearest') {
    const at = axes.map((a) => local('i32', op('f32.to_i32', op('f32.floor', centre(a)))));
    read = (c) => load(c, at);
  } else {
    const i0: Expr[] = [];
    const t: Expr[] = [];
    for (const a of axes) {
      const u = local('f32', op('f32.sub', centre(a), f32(0.5)));
      const floor = local('f32', op('f32.floor', u));
      i0.push(local('i32', op('f32.to_i32', floor)));
      t.push(local('f32', op('f32.sub', u, floor)));
    }
    // Along the last axis outermost, so x is blended first.
    const blend = (c: number, axis: number, at: Expr[]): Expr => {
      if (axis < 0) return load(c, at);
      const next = (d: number) => at.map((e, a) => (a === axis ? (d ? op('i32.add', e, i32(1)) : e) : e));
      const p = blend(c, axis - 1, next(0));
      const q = blend(c, axis - 1, next(1));
      return op('f32.add', p, op('f32.mul', op('f32.sub', q, p), t[axis]));
    };
    read = (c) => blend(c, dims - 1, i0);
  }
  const stores: IrFunction['stores'] = [];
  to.forEach((type, c) => {
    const value = c < from.length ? read(c) : cst(type, initial[c]);
    const i = locals.push(type) - 1;
    body.push({ k: 'set', local: i, e: value });
    stores.push({ field: 1, comp: c, local: i });
  });
  return {
    ir: IR_VERSION, dims, nodes: [`the automatic migration of \`${name}\``], locals, body, stores, uniforms: [], fuel: DEFAULT_FUEL,
    fields: [{ name: `old.${name}`, role: 'read', dims, comps: from }, { name, role: 'write', dims, comps: to }],
  };
}

