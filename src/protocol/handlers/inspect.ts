// Inspect: status, kernels, kernel, graph, document, history, bisect, help.

import type { RequestFields } from '../operations.js';
import type { DocumentVersion, Session } from '../../main/session.js';
import { generationName } from '../bisect-candidates.js';
import { LineIndex } from '../../ir/syntax/position.js';
import { parseDocument } from '../../ir/syntax/index.js';
import { components } from '../../ir/types.js';
import { IR_VERSION } from '../../ir/ir.js';
import { ProtocolError } from '../envelope.js';
import { helpEntry } from '../help.js';
import { bisect as bisectHistory } from '../bisect.js';
import type { RequestContext } from './index.js';
import { versionOf } from '../../main/documents.js';
import { backendOf, clockOf, groupNodes, groupTiers, paramValues } from '../../main/world-state.js';

type Fields = Record<string, unknown>;

export const VERSIONS = { api: 1, entelechy: '0.1.0', ir: IR_VERSION, language: 1, package: 1 };

function portsOf(s: Session, id: string) {
  const k = s.scene.kernels.get(id)!;
  return k.ports.map((p) => ({ name: p.name, kind: p.kind, type: p.dims ? `field${p.dims}<${p.type.name}>` : p.type.name, ...(p.value ? { default: p.value } : {}) }));
}

export async function status(s: Session) {
  const w = s.world;
  return {
    backend: backendOf(w), ...clockOf(w), paused: s.paused, fusion: s.fuse, grants: s.grants,
    kernels: s.scene.kernels.size, loaded: s.revision > 0, natives: 0, nodes: s.scene.nodes.length,
    outputs: s.scene.outputs.map((o) => o.name), params: Object.fromEntries(paramValues(w)), pins: [...s.pins],
    refused: s.refused, revision: s.revision, scene: s.entry, session: s.id, versions: VERSIONS, workers: s.pool?.workers ?? 1,
    memory: { bytes: s.memory.bytes, allocated: s.memory.allocatedBytes },
    // Which compiled tier runs each group: `fast` until the optimised one is swapped in.
    tiers: groupTiers(w),
  };
}

export async function kernels(s: Session) {
  return {
    kernels: [...s.scene.kernels.values()].map((k) => {
      const r = s.registry.get(k.id);
      return { id: k.id, generation: r?.generation ?? 1, origin: r?.origin ?? k.path, ports: portsOf(s, k.id), grants: k.grants };
    }),
  };
}

function needKernel(s: Session, id: string) {
  const k = s.scene.kernels.get(id);
  if (!k) {
    const ids = [...s.scene.kernels.keys()];
    throw new ProtocolError(`no kernel \`${id}\` in the registry; it holds ${ids.join(', ') || 'none'}`, { kernels: ids });
  }
  return k;
}

export async function kernel(s: Session, f: RequestFields<'kernel'>) {
  const k = needKernel(s, String(f.kernel));
  const r = s.registry.get(k.id)!;
  const state = k.ports.filter((p) => p.kind === 'state').map((p) => ({ port: p.name, type: p.type.name, components: components(p.type).length }));
  return { id: k.id, generation: r.generation, origin: r.origin, source: r.source, ports: portsOf(s, k.id), grants: k.grants, state };
}

export async function graph(s: Session) {
  const scene = s.scene;
  return {
    nodes: scene.nodes.map((n) => ({
      name: n.name, kernel: n.kernel.id, size: n.domain,
      members: Object.fromEntries([...n.values].map(([port, v]) => [port, 'param' in v ? { param: v.param } : v.value])),
      edges: Object.fromEntries([...n.edges].map(([port, src]) => [port, 'input' in src ? src.input : `${src.node}.${src.port}`])),
    })),
    outputs: scene.outputs.map((o) => ({ name: o.name, node: o.node, port: o.port })),
    params: [...scene.params.values()].map((p) => ({ name: p.name, type: p.type.name, value: paramValues(s.world).get(p.name), default: p.value, ...(p.range ? { range: [p.range.lo, p.range.hi] } : {}) })),
    inputs: [...scene.inputs.values()].map((i) => ({ name: i.name, type: `field${i.dims}<${i.type.name}>`, size: i.size })),
    order: scene.nodes.map((n) => n.name),
    groups: groupNodes(s.world),
  };
}

function docPath(s: Session, f: Fields): string {
  return typeof f.path === 'string' ? f.path : s.entry;
}

export async function document(s: Session, f: RequestFields<'document'>) {
  const path = docPath(s, f);
  let text: string | undefined;
  if (typeof f.version === 'string') {
    // A digest or its first 4 or more characters, as bisect takes them, when they begin one version only.
    const asked = f.version.toLowerCase();
    const versions = new Map((s.history.get(path) ?? []).filter((v) => asked.length >= 4 && v.version.startsWith(asked)).map((v) => [v.version, v.text]));
    if (versions.size > 1) throw new ProtocolError(`\`${f.version}\` begins ${versions.size} versions of \`${path}\` (${[...versions.keys()].join(', ')}): give more of the digest`, { field: 'version' });
    text = [...versions.values()][0];
    if (text === undefined) throw new ProtocolError(`\`${path}\` has no version ${f.version} in this session's history; \`history\` lists them`, { field: 'version' });
  } else {
    if (!s.texts.has(path)) s.folder.resolve(path); // a path outside the folder is refused as that, not as absent
    text = s.texts.get(path) ?? s.folder.read(path);
    if (text === undefined) throw new ProtocolError(`no document \`${path}\` under the scene's folder`, { field: 'path' });
    // A photograph's bytes are no text: documents are .esn (and replay tests .replay).
    if (!s.texts.has(path) && !/\.(esn|replay)$/.test(path))
      throw new ProtocolError(`\`${path}\` is a file of the scene's folder but not a document: \`document\` reads documents (.esn) and replay tests (.replay)`, { field: 'path', path });
  }
  const { doc } = parseDocument(path, text);
  const index = new LineIndex(text);
  return {
    path, version: versionOf(text), text,
    statements: doc.statements.map((st) => ({ kind: st.kind, name: st.name.value, ...index.positionAt(st.span.start) })),
  };
}

/**
 * Where a document stands: the version the running world was built from and the one the file
 * holds now (they differ after a publish over it, a refused edit, or a save not yet picked up by
 * `sync`), and the kernels it declares that run a generation published over the protocol instead
 * (the document's version then runs everything but those).
 */
function standing(s: Session, path: string) {
  const runningText = s.texts.get(path);
  const diskText = s.folder.read(path);
  const declared = runningText === undefined ? [] : parseDocument(path, runningText).doc.statements.filter((st) => st.kind === 'kernel').map((st) => st.name.value);
  const published = declared.flatMap((id) => {
    const r = s.registry.get(id);
    return r && r.origin !== path ? [{ kernel: id, generation: r.generation, origin: r.origin }] : [];
  });
  return { running: runningText === undefined ? null : versionOf(runningText), disk: diskText === undefined ? null : versionOf(diskText), published };
}

export async function history(s: Session, f: RequestFields<'history'>) {
  const path = docPath(s, f);
  const list = s.history.get(path);
  if (!list) throw new ProtocolError(`this session has seen no document \`${path}\`; its documents: ${[...s.history.keys()].join(', ')}`, { field: 'path' });
  const { running, disk, published } = standing(s, path);
  return {
    path, running, disk, ...(published.length ? { published } : {}),
    versions: list.map(({ version, origin, at, bytes }) => ({ version, origin, at, bytes, ...(version === running ? { running: true } : {}), ...(version === disk ? { disk: true } : {}) })),
    ...(s.generations.length ? { generations: generationsOf(s, list) } : {}),
  };
}

/**
 * The changes of the kernels published over the protocol, each with the name bisect takes for it
 * and `after`, the position of the document's version it came after (null: before the session
 * saw the document).
 */
function generationsOf(s: Session, list: readonly DocumentVersion[]) {
  return s.generations.map((g, index) => {
    const after = list.filter((v) => v.seq < g.seq).length - 1;
    return { name: generationName({ index, kernels: g.kernels }), kernels: g.kernels, origin: g.origin, at: g.at, after: after < 0 ? null : after };
  });
}

export async function bisect(s: Session, f: RequestFields<'bisect'>, conn: RequestContext) {
  if ((f.test === undefined) === (f.replay === undefined))
    throw new ProtocolError('give the replay to bisect with: `test` (a .replay file under the scene\'s folder) or `replay` (its text), one of them', { fields: ['test', 'replay'] });
  let replay = f.replay;
  if (f.test !== undefined) {
    replay = s.folder.read(f.test);
    if (replay === undefined) throw new ProtocolError(`no file \`${f.test}\` under the scene's folder; name a .replay file there, or send its text as \`replay\``, { field: 'test' });
  }
  const path = docPath(s, f);
  // A kernel published over the protocol is not in the document's history: the versions tried run the document's.
  const { running, disk, published } = s.history.has(path) ? standing(s, path) : { running: null, disk: null, published: [] };
  const answer = await bisectHistory(s, { path, good: f.good, bad: f.bad, replay: replay!, test: f.test, words: { running, disk, published: s.published }, signal: conn.signal });
  return { ...answer, ...(published.length ? { published, note: 'the running world runs these kernels as published over the protocol, not as the document declares them; each point tried ran the kernels published at it (`history`\'s generations)' } : {}) };
}

export async function help(s: Session, f: RequestFields<'help'>) {
  return helpEntry(typeof f.name === 'string' ? f.name : undefined, [...s.scene.kernels.keys()]);
}
