// Checking a whole scene: its documents, the kernels, and the graph of nodes that run them.

import { grantOption, type Grant } from '../grants.js';
import { DEFAULT_FUEL } from '../ir.js';
import type { Env } from '../lower/context.js';
import { LowerError } from '../lower/context.js';
import { lowerFnAlone } from '../lower/statement.js';
import { closest } from '../suggest.js';
import { parseDocument } from '../syntax/index.js';
import type { Diagnostic, Document, FnStatement, InputStatement, NodeStatement, ParamStatement, Span, Statement, StructStatement, TypeRef, TypeStatement } from '../syntax/tree.js';
import { builtinElemType, components, sameType, type ElemType } from '../types.js';
import { checkKernel, type KernelInfo } from './kernel.js';
import { diagnostic } from './report.js';
import { checkGraph, type SceneNode } from './graph.js';
import { checkParamDeclaration } from './params.js';
import { literalValue } from './literal.js';

export interface ParamInfo {
  name: string;
  type: ElemType;
  value: number[];
  range?: { lo: number; hi: number };
  path: string;
  statement: ParamStatement;
}

export interface InputInfo {
  name: string;
  type: ElemType;
  dims: 1 | 2 | 3;
  size: number[];
  value: number[];
  path: string;
  statement: InputStatement;
}

export interface OutputInfo {
  name: string;
  node: string;
  port: string;
  path: string;
}

export interface Scene {
  /** The entry document's path; every document path is relative to the scene's folder. */
  entry: string;
  documents: Document[];
  kernels: Map<string, KernelInfo>;
  params: Map<string, ParamInfo>;
  inputs: Map<string, InputInfo>;
  /** Nodes in an order where every node comes after the nodes it reads. */
  nodes: SceneNode[];
  outputs: OutputInfo[];
  diagnostics: Diagnostic[];
  /** The scene's structs, type aliases and fns (what a migration body is lowered with). */
  env: Env;
}

export interface SceneOptions {
  /** Reads a document by its path under the scene's folder; undefined when it does not exist. */
  /** A document's text; undefined when there is none; `refused`: why it may not be read (a link that leads out of the folder). */
  read: (path: string) => string | undefined | { refused: string };
  /** Replace the size of every node whose domain has as many axes (`render --size`). */
  size?: number[];
  /** The size of an input that declares none, by name: an image read into it (`render --input`). */
  inputSizes?: Record<string, number[]>;
  fuel?: number;
  /**
   * Kernels published over the protocol, as source texts: each replaces the documents' kernel of
   * the same id in the running world (their fns, structs and types join the scene's).
   */
  overrides?: { path: string; text: string }[];
  /** The grants the session holds; a kernel needing another is refused. Default: all. */
  grants?: readonly Grant[];
}

/** Type names of GLSL and TypeScript, which no edit distance leads to ours: what they are here. */
const OTHER_LANGUAGES: Record<string, string> = { float: 'f32', double: 'f32', half: 'f32', number: 'f32', int: 'i32', uint: 'i32', boolean: 'bool' };

/** Load, parse and check a scene. The result holds diagnostics; it is usable when there are none. */
export function loadScene(entry: string, options: SceneOptions): Scene {
  const diagnostics: Diagnostic[] = [];
  const documents = loadDocuments(entry, options.read, diagnostics);

  // Top-level names share one namespace per kind across the scene's documents.
  const byKind = new Map<string, Map<string, { doc: Document; st: Statement }>>();
  for (const doc of documents) {
    for (const st of doc.statements) {
      if (st.kind === 'use') continue;
      let table = byKind.get(st.kind);
      if (!table) byKind.set(st.kind, (table = new Map()));
      const seen = table.get(st.name.value);
      if (seen) {
        const where = `${seen.doc.path}:${lineOf(seen.doc, seen.st.span)}`;
        diagnostics.push(diagnostic(doc, st.name.span, `${st.kind} \`${st.name.value}\` is declared twice (first at ${where}); rename one of them`));
        continue;
      }
      table.set(st.name.value, { doc, st });
    }
  }
  for (const { path, text } of options.overrides ?? []) {
    const { doc, diagnostics: parsed } = parseDocument(path, text);
    diagnostics.push(...parsed);
    for (const st of doc.statements) {
      if (st.kind === 'use') continue;
      let table = byKind.get(st.kind);
      if (!table) byKind.set(st.kind, (table = new Map()));
      if (st.kind === 'kernel' || !table.has(st.name.value)) table.set(st.name.value, { doc, st });
    }
  }
  const all = <T extends Statement>(kind: T['kind']) => [...(byKind.get(kind)?.values() ?? [])] as { doc: Document; st: T }[];

  const env = makeEnv(all<StructStatement>('struct'), all<TypeStatement>('type'), all<FnStatement>('fn'), diagnostics);

  // Statements that did not parse or check are reported once, where they are: what names them
  // (a node running the kernel, an edge or output reading the node) says nothing more.
  const unchecked = brokenNames(documents);
  // A call of a fn that did not parse: its parse error says what is wrong ("unknown function
  // `tone`; did you mean `tan`?" pointed away from it).
  env.brokenFns = unchecked.fns;
  const kernels = new Map<string, KernelInfo>();
  for (const { doc, st } of all<Extract<Statement, { kind: 'kernel' }>>('kernel')) {
    const result = checkKernel(doc, st, env, options.fuel ?? DEFAULT_FUEL);
    diagnostics.push(...result.diagnostics);
    if (!result.kernel) {
      unchecked.kernels.add(st.name.value);
      continue;
    }
    const lacking = options.grants ? result.kernel.grants.filter((g) => !options.grants!.includes(g)) : [];
    if (lacking.length) {
      diagnostics.push(diagnostic(doc, st.name.span, `kernel ${result.kernel.id} needs ${lacking.join(', ')}, which this session does not grant (its grants: ${options.grants!.join(', ') || 'none'}); start the session with ${grantOption(options.grants!, lacking)} (what it holds and what the kernel needs), or change the kernel not to need it`));
      unchecked.kernels.add(st.name.value);
      continue;
    }
    kernels.set(result.kernel.id, result.kernel);
  }
  // A fn no kernel calls is checked on its own: its mistakes were told only once a kernel called it.
  // (A fn it calls that failed alone fails again inside it: told once.)
  for (const { doc, st } of all<FnStatement>('fn')) {
    if (env.inlined!.has(st.name.value)) continue;
    const found: Diagnostic[] = [];
    guard(doc, found, () => lowerFnAlone(env, st, options.fuel ?? DEFAULT_FUEL));
    diagnostics.push(...found.filter((d) => !diagnostics.some((o) => o.path === d.path && o.line === d.line && o.column === d.column && o.message === d.message)));
  }

  const params = new Map<string, ParamInfo>();
  for (const { doc, st } of all<ParamStatement>('param')) {
    const info = guard(doc, diagnostics, () => paramInfo(doc, st, env));
    if (!info) {
      unchecked.params.add(st.name.value); // said here: a node naming it says nothing more
      continue;
    }
    // A value that does not fit is reported, and the param still known to the nodes that name it.
    params.set(info.name, info);
    guard(doc, diagnostics, () => checkParamDeclaration(doc, st, info));
  }
  const inputs = new Map<string, InputInfo>();
  for (const { doc, st } of all<InputStatement>('input')) {
    const info = guard(doc, diagnostics, () => inputInfo(doc, st, env, options.inputSizes?.[st.name.value]));
    if (info) inputs.set(info.name, info);
    else unchecked.nodes.add(st.name.value); // said here: a node reading it says nothing more
  }

  const nodeStatements = all<NodeStatement>('node');
  const outputStatements = all<Extract<Statement, { kind: 'output' }>>('output');
  const graph = checkGraph({ nodes: nodeStatements, outputs: outputStatements, kernels, params, inputs, size: options.size, unchecked });
  diagnostics.push(...graph.diagnostics);
  return { entry, documents, kernels, params, inputs, nodes: graph.nodes, outputs: graph.outputs, diagnostics, env };
}

function lineOf(doc: Document, span: Span): number {
  return diagnostic(doc, span, '').line;
}

function guard<T>(doc: Document, diagnostics: Diagnostic[], f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    if (e instanceof LowerError) {
      diagnostics.push(diagnostic(doc, e.at, e.message, e.fix));
      return undefined;
    }
    throw e;
  }
}

/** Parse the entry document and every document it `use`s, transitively, each once. */
/**
 * The documents of a scene, parsed: the entry and what it uses, transitively (loadScene's first
 * step, which is the only one that reads). Problems go to `diagnostics`.
 */
export function loadDocuments(entry: string, read: SceneOptions['read'], diagnostics: Diagnostic[] = []): Document[] {
  const documents: Document[] = [];
  const seen = new Set<string>();
  const visit = (path: string, from?: { doc: Document; span: Span }) => {
    if (seen.has(path)) return;
    seen.add(path);
    const text = read(path);
    if (typeof text !== 'string') {
      const message = text === undefined ? `cannot read \`${path}\`: no such document under the scene's folder` : `cannot read \`${path}\`: ${text.refused}`;
      if (from) diagnostics.push(diagnostic(from.doc, from.span, message));
      else diagnostics.push({ severity: 'error', message, path, span: { start: 0, end: 0 }, line: 1, column: 1 });
      return;
    }
    const { doc, diagnostics: parsed } = parseDocument(path, text);
    documents.push(doc);
    diagnostics.push(...parsed);
    for (const st of doc.statements) {
      if (st.kind !== 'use') continue;
      const target = resolveUse(path, st.name.value);
      if (!target) {
        diagnostics.push(diagnostic(doc, st.name.span, `\`use "${st.name.value}"\` leaves the scene's folder: documents must live under it`));
        continue;
      }
      visit(target, { doc, span: st.name.span });
    }
  };
  visit(entry);
  return documents;
}

/** A `use` path, relative to the using document, as a path under the scene's folder (or null). */
export function resolveUse(from: string, path: string): string | null {
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path)) return null;
  const parts = from.split('/').slice(0, -1);
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join('/');
}

function makeEnv(
  structs: { doc: Document; st: StructStatement }[],
  aliases: { doc: Document; st: TypeStatement }[],
  fns: { doc: Document; st: FnStatement }[],
  diagnostics: Diagnostic[],
): Env {
  const structTypes = new Map<string, ElemType>();
  const aliasRefs = new Map(aliases.map(({ st }) => [st.name.value, st.type]));
  const structRefs = new Map(structs.map(({ st }) => [st.name.value, st]));
  const resolving = new Set<string>();
  const known = () => ['f32', 'i32', 'bool', 'vec2', 'vec3', 'vec4', ...structRefs.keys(), ...aliasRefs.keys()];

  const resolveType = (ref: TypeRef): ElemType => {
    const name = ref.name.value;
    const builtin = builtinElemType(name);
    if (builtin) return builtin;
    if (resolving.has(name)) throw new LowerError(`type \`${name}\` is defined in terms of itself`, ref.name.span);
    const cached = structTypes.get(name);
    if (cached) return cached;
    resolving.add(name);
    try {
      const alias = aliasRefs.get(name);
      if (alias) {
        if (alias.fieldDims) throw new LowerError(`type \`${name}\` names a field type; a type alias names an element type`, alias.span);
        return resolveType(alias);
      }
      const st = structRefs.get(name);
      if (st) {
        const t: ElemType = { kind: 'struct', name, fields: st.fields.map((f) => ({ name: f.name.value, type: resolveType(f.type) })) };
        structTypes.set(name, t);
        return t;
      }
    } finally {
      resolving.delete(name);
    }
    const near = OTHER_LANGUAGES[name] ?? closest(name, known());
    throw new LowerError(`unknown type \`${name}\`${near ? `; did you mean \`${near}\`?` : ''}`, ref.name.span);
  };

  for (const { doc, st } of structs) guard(doc, diagnostics, () => resolveType({ name: st.name, span: st.name.span }));
  for (const { doc, st } of aliases) guard(doc, diagnostics, () => resolveType(st.type));
  const structMap = new Map<string, ElemType>();
  for (const name of structRefs.keys()) {
    const t = structTypes.get(name);
    if (t) structMap.set(name, t);
  }
  for (const { doc, st } of fns) {
    for (const p of st.params) guard(doc, diagnostics, () => resolveType(p.type));
    if (st.returns) guard(doc, diagnostics, () => resolveType(st.returns!));
  }
  return { structs: structMap, fns: new Map(fns.map(({ st }) => [st.name.value, st])), resolveType, inlined: new Set() };
}

function paramInfo(doc: Document, st: ParamStatement, env: Env): ParamInfo {
  if (st.type.fieldDims) throw new LowerError(`param \`${st.name.value}\` must have an element type (f32, vec3, ...), not a field`, st.type.span);
  const type = env.resolveType(st.type);
  if (type.kind === 'struct') throw new LowerError(`param \`${st.name.value}\` must be a number, bool or vector, not a struct`, st.type.span);
  const value = st.value ? literalValue(type, st.value, `param \`${st.name.value}\``, false) : components(type).map(() => 0);
  const info: ParamInfo = { name: st.name.value, type, value, path: doc.path, statement: st };
  if (st.range) info.range = { lo: st.range.lo, hi: st.range.hi };
  return info;
}

function inputInfo(doc: Document, st: InputStatement, env: Env, given?: number[]): InputInfo {
  if (!st.type.fieldDims) throw new LowerError(`input \`${st.name.value}\` must be a field type, e.g. \`field2<f32>\``, st.type.span);
  const type = env.resolveType(st.type);
  const dims = st.type.fieldDims;
  const size = st.size?.dims ?? (given?.length === dims ? given : new Array(dims).fill(dims === 3 ? 64 : 256));
  if (size.length !== dims) throw new LowerError(`input \`${st.name.value}\` is a field${dims}: its size needs ${dims} numbers`, st.size!.span);
  const value = st.value ? literalValue(type, st.value, `input \`${st.name.value}\``) : components(type).map(() => 0);
  return { name: st.name.value, type, dims, size, value, path: doc.path, statement: st };
}

export { sameType };

/** The kernels and nodes of statements that failed to parse, by the names they were meant to have. */
function brokenNames(documents: Document[]): { kernels: Set<string>; nodes: Set<string>; params: Set<string>; fns: Set<string> } {
  const names = { kernels: new Set<string>(), nodes: new Set<string>(), params: new Set<string>(), fns: new Set<string>() };
  for (const doc of documents)
    for (const item of doc.items) {
      const broken = item.kind === 'trivia' ? item.broken : undefined;
      if (broken?.name && broken.kind === 'kernel') names.kernels.add(broken.name.value);
      if (broken?.name && broken.kind === 'node') names.nodes.add(broken.name.value);
      if (broken?.name && broken.kind === 'param') names.params.add(broken.name.value);
      if (broken?.name && broken.kind === 'fn') names.fns.add(broken.name.value);
    }
  return names;
}
