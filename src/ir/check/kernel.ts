// Checking a kernel statement and lowering its `each` body to an IrFunction.

import type { Node as AcornNode } from 'acorn';
import type { UniformSource } from '../bindings.js';
import { isGrant, type Grant } from '../grants.js';
import { DEFAULT_FUEL, IR_VERSION, type IrField, type IrFunction } from '../ir.js';
import { shareValues } from '../share.js';
import { BodyContext, LowerError, type Env, type PortView } from '../lower/context.js';
import { lowerStatements, needsReturnBlock } from '../lower/statement.js';
import { blockOrStatements } from '../lower/blocks.js';
import type { Diagnostic, Document, EachDecl, KernelStatement, MigrateDecl, PortDecl, SizeDecl, Span } from '../syntax/tree.js';
import { components, type ElemType } from '../types.js';
import { diagnostic } from './report.js';
import { literalValue } from './literal.js';

export interface PortInfo {
  name: string;
  kind: 'in' | 'out' | 'state';
  type: ElemType;
  /** Axes of a field-typed port; absent for a plain value (an `in` number or vector). */
  dims?: 1 | 2 | 3;
  /** The declared default, as components. */
  value?: number[];
  /** A state's `resample` clause: on a size change it is resampled with this filter (else its overlap is kept). */
  resample?: 'nearest' | 'bilinear';
  /** A state's `narrow` clause: a narrower element type keeps the first components (else it is reset). */
  narrow?: boolean;
  decl: PortDecl;
}

export interface KernelInfo {
  id: string;
  path: string;
  statement: KernelStatement;
  grants: Grant[];
  dims: 1 | 2 | 3;
  size?: number[];
  ports: PortInfo[];
  ir: IrFunction;
  /** What each of ir.uniforms holds. */
  uniformSources: UniformSource[];
  /** What each of ir.fields binds to. */
  fieldPorts: { port: string; role: 'in' | 'out' | 'state-read' | 'state-write' }[];
  /** Field ports read at the own element (fusable) and ports gathered. */
  pointwise: string[];
  gathered: string[];
  migrations: MigrateDecl[];
}

export function checkKernel(doc: Document, k: KernelStatement, env: Env, fuel = DEFAULT_FUEL): { kernel?: KernelInfo; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const id = k.name.value;
  const error = (span: { start: number; end: number }, message: string, fix?: Diagnostic['fix']) => diagnostics.push(diagnostic(doc, span, message, fix));

  const grants: Grant[] = [];
  const ports: PortInfo[] = [];
  const eachs: EachDecl[] = [];
  const migrations: MigrateDecl[] = [];
  let size: number[] | undefined;
  for (const part of k.parts) {
    if (part.part === 'grants') {
      for (const g of part.grants) {
        if (isGrant(g.value)) grants.push(g.value);
        else error(g.span, `unknown grant \`${g.value}\`; the grants are field.read, field.write, time.read, input.read`);
      }
    } else if (part.part === 'port') {
      if (ports.some((p) => p.name === part.name.value)) {
        error(part.name.span, `kernel ${id} declares the port \`${part.name.value}\` twice`);
        continue;
      }
      try {
        const port = portInfo(part, env);
        carryClauseProblems(port).forEach(([span, message]) => error(span, message));
        ports.push(port);
      } catch (e) {
        if (e instanceof LowerError) error(e.at, e.message);
        else throw e;
      }
    } else if (part.part === 'size') size = part.size.dims;
    else if (part.part === 'each') eachs.push(part);
    else migrations.push(part);
  }
  if (eachs.length !== 1) {
    error(eachs[1]?.span ?? k.name.span, eachs.length ? `kernel ${id} has more than one each body` : `kernel ${id} has no \`each (x, y) { ... }\` body`);
    return { diagnostics };
  }
  const each = eachs[0];
  const dims = each.coords.length as 1 | 2 | 3;
  // A kernel's default size with another count of extents was ignored without a word (its nodes ran the default).
  const sizeDecl = k.parts.find((p): p is SizeDecl => p.part === 'size');
  if (sizeDecl && size && size.length !== dims)
    error(sizeDecl.span, `kernel ${id} has ${dims} coordinate${dims > 1 ? 's' : ''} (each (${each.coords.map((c) => c.value).join(', ')})), so its size needs ${dims} extent${dims > 1 ? 's' : ''}, e.g. \`size ${[64, 64, 64].slice(0, dims).join(' x ')};\``);
  for (const p of ports) {
    if (p.kind !== 'in' && p.dims !== dims)
      error(p.decl.type.span, `${p.kind} port \`${p.name}\` must be a field${dims}<${p.type.name}>: the kernel's each has ${dims} coordinate${dims > 1 ? 's' : ''}`);
  }
  if (diagnostics.length) return { diagnostics };

  // Fields: in-fields read, outs written, state read (current) and written (next).
  const fields: IrField[] = [];
  const fieldPorts: KernelInfo['fieldPorts'] = [];
  const views = new Map<string, PortView>();
  for (const p of ports) {
    const view: PortView = { name: p.name, kind: p.kind, type: p.type, dims: p.dims };
    const comps = components(p.type);
    if (p.dims && (p.kind === 'in' || p.kind === 'state')) {
      view.readField = fields.push({ name: p.name, role: 'read', dims: p.dims, comps }) - 1;
      fieldPorts.push({ port: p.name, role: p.kind === 'in' ? 'in' : 'state-read' });
    }
    if (p.kind !== 'in') {
      view.writeField = fields.push({ name: p.name, role: 'write', dims: p.dims!, comps }) - 1;
      fieldPorts.push({ port: p.name, role: p.kind === 'out' ? 'out' : 'state-write' });
    }
    views.set(p.name, view);
  }

  // Lower; if an assignment showed a variable must hold floats, lower again with that known.
  const widen = new Set<AcornNode>();
  let ctx: BodyContext;
  let errors: LowerError[];
  let body;
  for (let attempt = 0; ; attempt++) {
    ctx = new BodyContext(env, fields, cloneViews(views), each.coords.map((c) => c.value), 0, fuel, widen);
    errors = [];
    body = lowerEach(ctx, each, errors);
    if (!ctx.widened || attempt > 4) break;
  }
  for (const e of errors) error(e.at, e.message, e.fix);

  // Each missing grant where the body first needs it; each fix adds all of them, so taking any
  // one leaves none missing.
  const missing = requiredGrants(ctx, ports).filter(([grant]) => !grants.includes(grant));
  const more = missing.length > 1 ? ` (the fix adds all ${missing.length} it lacks: ${missing.map(([g]) => g).join(', ')})` : '';
  for (const [grant, why, at] of missing) {
    error(at, `kernel ${id} ${why} but does not hold the grant ${grant}: add it to the kernel's grants${more}`, {
      kernel: id,
      text: withGrants(doc, k, missing.map(([g]) => g)),
    });
  }
  if (diagnostics.length) return { diagnostics };

  const stores: IrFunction['stores'] = [];
  for (const view of ctx.ports.values()) {
    if (view.writeField === undefined) continue;
    view.locals!.forEach((local, comp) => stores.push({ field: view.writeField!, comp, local }));
  }
  const ir = shareValues({ ir: IR_VERSION, dims, nodes: [id], locals: ctx.locals, fields, uniforms: ctx.uniforms, body, stores, fuel });
  return {
    diagnostics,
    kernel: { id, path: doc.path, statement: k, grants, dims, size, ports, ir, uniformSources: ctx.uniformSources, fieldPorts, pointwise: [...ctx.pointwise], gathered: [...ctx.gathered], migrations },
  };
}

function cloneViews(views: Map<string, PortView>): Map<string, PortView> {
  return new Map([...views].map(([k, v]) => [k, { ...v }]));
}

function lowerEach(ctx: BodyContext, each: EachDecl, errors: LowerError[]) {
  // Out and state ports are locals until the element ends; state starts as the current value.
  for (const view of ctx.ports.values()) {
    if (view.writeField === undefined) continue;
    view.locals = ctx.newLocals(view.type);
    if (view.readField !== undefined) {
      const f = ctx.fields[view.readField];
      view.locals.forEach((local, comp) => ctx.emit({ k: 'set', local, e: { k: 'load', t: f.comps[comp], field: view.readField!, comp } }));
    }
  }
  const statements = each.body.statements as (AcornNode & Record<string, any>)[];
  if (needsReturnBlock(statements) || statements.some((s) => s.type === 'ReturnStatement')) {
    blockOrStatements(ctx.inConstruct('return', () => lowerStatements(ctx, statements, errors))).forEach((s) => ctx.emit(s));
  } else {
    lowerStatements(ctx, statements, errors);
  }
  return ctx.topLevel;
}

/** The grants a kernel needs: each with why, and where it is first needed (a state port's declaration for field.write). */
function requiredGrants(ctx: BodyContext, ports: PortInfo[]): [Grant, string, Span][] {
  const why: Record<Grant, string> = {
    'field.read': 'reads a field at other elements (at, wrap or sample)',
    'field.write': 'holds state',
    'time.read': 'reads time or frame',
    'input.read': 'reads the pointer or keys',
  };
  const out: [Grant, string, Span][] = [...ctx.grantsUsed].map(([g, at]) => [g, why[g], at]);
  const state = ports.find((p) => p.kind === 'state');
  if (state) out.push(['field.write', why['field.write'], state.decl.span]);
  return out;
}

/** The kernel statement's text with grants added (to its grants line, or a new one). */
function withGrants(doc: Document, k: KernelStatement, added: Grant[]): string {
  const text = doc.text.slice(k.span.start, k.span.end);
  const existing = k.parts.find((p) => p.part === 'grants');
  if (existing && existing.part === 'grants') {
    const names = [...existing.grants.map((g) => g.value), ...added];
    const s = existing.span.start - k.span.start;
    const e = existing.span.end - k.span.start;
    return text.slice(0, s) + `grants ${names.join(', ')};` + text.slice(e);
  }
  const brace = text.indexOf('{');
  const firstPart = k.parts[0];
  const indent = firstPart ? /[ \t]*$/.exec(doc.text.slice(0, firstPart.span.start))![0] : '  ';
  return text.slice(0, brace + 1) + `\n${indent}grants ${added.join(', ')};` + text.slice(brace + 1);
}

function portInfo(decl: PortDecl, env: Env): PortInfo {
  const type = env.resolveType(decl.type);
  const info: PortInfo = { name: decl.name.value, kind: decl.kind, type, decl };
  if (decl.type.fieldDims) info.dims = decl.type.fieldDims;
  if (decl.kind !== 'in' && !decl.type.fieldDims)
    throw new LowerError(`${decl.kind} port \`${decl.name.value}\` must be a field type, e.g. \`field2<${type.name}>\``, decl.type.span);
  if (decl.value) info.value = literalValue(type, decl.value, `in port \`${decl.name.value}\``);
  if (decl.resample) info.resample = decl.resample.filter.value as PortInfo['resample'];
  if (decl.narrow) info.narrow = true;
  return info;
}

/** Where a port's `resample` or `narrow` clause does not belong: on a port that is not a state, or a blend of non-float components. */
function carryClauseProblems(p: PortInfo): [Span, string][] {
  const problems: [Span, string][] = [];
  const clauses = [...(p.decl.resample ? [['resample', p.decl.resample.span] as const] : []), ...(p.decl.narrow ? [['narrow', p.decl.narrow] as const] : [])];
  if (p.kind !== 'state') {
    for (const [word, span] of clauses) problems.push([span, `\`${word}\` says how a state is carried to a new layout; \`${p.name}\` is an \`${p.kind}\` port, which holds nothing across changes: remove it`]);
    return problems;
  }
  const comps = components(p.type);
  if (p.resample === 'bilinear' && comps.some((c) => c !== 'f32'))
    problems.push([p.decl.resample!.span, `\`resample bilinear\` blends neighbouring values, and \`${p.name}\` (${p.type.name}) has ${comps.includes('bool') ? 'bool' : 'i32'} components: write \`resample nearest\`, which picks one`]);
  return problems;
}
