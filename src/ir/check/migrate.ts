// Lowering a `migrate from ID { ... }` body: the new kernel's state computed, per element, from the
// state the old kernel left (`old.PORT`, pointwise or gathered).

import type { Node as AcornNode } from 'acorn';
import { DEFAULT_FUEL, IR_VERSION, type Expr, type IrField, type IrFunction } from '../ir.js';
import { shareValues } from '../share.js';
import { cst } from '../lower/build.js';
import { BodyContext, LowerError, type Env, type PortView } from '../lower/context.js';
import { lowerStatements } from '../lower/statement.js';
import type { Diagnostic, Document, MigrateDecl } from '../syntax/tree.js';
import { components } from '../types.js';
import type { KernelInfo } from './kernel.js';
import { diagnostic } from './report.js';

/** Fields: the old kernel's state ports (read), then the new kernel's state ports (written). */
export interface Migration {
  ir: IrFunction;
  oldPorts: string[];
  newPorts: string[];
}

export function lowerMigration(doc: Document, kernel: KernelInfo, m: MigrateDecl, old: KernelInfo, env: Env, fuel = DEFAULT_FUEL): { migration?: Migration; diagnostics: Diagnostic[] } {
  const fields: IrField[] = [];
  const views = new Map<string, PortView>();
  const oldPorts = old.ports.filter((p) => p.kind === 'state');
  const newPorts = kernel.ports.filter((p) => p.kind === 'state');
  for (const p of oldPorts) {
    const readField = fields.push({ name: `old.${p.name}`, role: 'read', dims: p.dims!, comps: components(p.type) }) - 1;
    views.set(`old.${p.name}`, { name: `old.${p.name}`, kind: 'in', type: p.type, dims: p.dims, readField });
  }
  for (const p of newPorts) {
    const writeField = fields.push({ name: p.name, role: 'write', dims: p.dims!, comps: components(p.type) }) - 1;
    views.set(p.name, { name: p.name, kind: 'state', type: p.type, dims: p.dims, writeField });
  }
  const coords = ['x', 'y', 'z'].slice(0, kernel.dims);
  const ctx = new BodyContext(env, fields, views, coords, 0, fuel, new Set<AcornNode>());
  // New state starts as its declared value; the body assigns what it carries over.
  for (const p of newPorts) {
    const view = ctx.ports.get(p.name)!;
    view.locals = ctx.newLocals(p.type);
    const value = p.value ?? components(p.type).map(() => 0);
    view.locals.forEach((local, c) => ctx.emit({ k: 'set', local, e: cst(ctx.locals[local], value[c]) as Expr }));
  }
  const errors: LowerError[] = [];
  lowerStatements(ctx, m.body.statements as (AcornNode & Record<string, any>)[], errors);
  const diagnostics = errors.map((e) => diagnostic(doc, e.at, `in the migration from ${old.id}: ${e.message}`, e.fix));
  const used = [...ctx.grantsUsed.keys()].filter((g) => g !== 'field.read');
  if (used.length) diagnostics.push(diagnostic(doc, m.span, `a migration reads only the old state and the coordinates; it cannot use ${used.join(', ')}`));
  if (diagnostics.length) return { diagnostics };
  const stores: IrFunction['stores'] = [];
  for (const p of newPorts) {
    const view = ctx.ports.get(p.name)!;
    view.locals!.forEach((local, comp) => stores.push({ field: view.writeField!, comp, local }));
  }
  const ir = shareValues({ ir: IR_VERSION, dims: kernel.dims, nodes: [`migration ${old.id} -> ${kernel.id}`], locals: ctx.locals, fields, uniforms: ctx.uniforms, body: ctx.topLevel, stores, fuel });
  return { migration: { ir, oldPorts: oldPorts.map((p) => p.name), newPorts: newPorts.map((p) => p.name) }, diagnostics };
}
