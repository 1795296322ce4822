// What bisect searches for one document: every point of the session's history at which what runs
// changed, in the order the session saw them — each version of the document (history's
// `versions`) and each change of the kernels published over the protocol (history's
// `generations`: publish, retire, restore, a compose taking a published kernel into a document),
// which changes what runs without changing this document.
// A point runs the document as it was then and the protocol's kernels as they were then; the
// other documents are as the running world has them (bisect.ts).

import { versionOf } from '../main/documents.js';
import type { DocumentVersion, PublishedGeneration } from '../main/session.js';

interface Point {
  /** The document's version it runs: its position in history's versions, digest and text. */
  position: number;
  version: string;
  text: string;
  /** The kernels published over the protocol it runs, by id. */
  published: ReadonlyMap<string, string>;
  origin: string;
  at: string;
  /** What it runs, as one string: two points that run the same are replayed once. */
  key: string;
}

export type Candidate =
  | (Point & { kind: 'document' })
  | (Point & { kind: 'generation'; index: number; kernels: PublishedGeneration['kernels'] });

/** The protocol's kernels as one string (empty when none). */
export function publishedKey(published: ReadonlyMap<string, string>): string {
  return published.size ? versionOf(JSON.stringify([...published].sort(([a], [b]) => (a < b ? -1 : 1)))) : '';
}

/** The name of a generation as history's `generations` list it: `KERNEL gN` when it changed one kernel still held, else `pI`. */
export function generationName(g: { index: number; kernels: PublishedGeneration['kernels'] }): string {
  const [only, ...more] = g.kernels;
  return only && !more.length && only.generation !== null ? `${only.kernel} g${only.generation}` : `p${g.index}`;
}

/**
 * The points, in order. A generation published before the document's first version (a document
 * the session saw later) has no point of its own: it is in the published kernels of the next.
 * A compose that takes a published kernel into this document makes a version and a generation
 * that run the same: one replay serves both.
 */
export function candidatesOf(versions: readonly DocumentVersion[], generations: readonly PublishedGeneration[]): Candidate[] {
  const events = [
    ...versions.map((v, position) => ({ seq: v.seq, doc: { v, position } })),
    ...generations.map((g, index) => ({ seq: g.seq, gen: { g, index } })),
  ].sort((a, b) => a.seq - b.seq);
  const list: Candidate[] = [];
  let doc: { v: DocumentVersion; position: number } | undefined;
  for (const e of events) {
    if ('doc' in e && e.doc) doc = e.doc;
    if (!doc) continue;
    // What was published when the session saw the version, or the generation's own.
    const published = 'gen' in e && e.gen ? e.gen.g.published : doc.v.published;
    const point = { position: doc.position, version: doc.v.version, text: doc.v.text, published, key: `${doc.v.version}:${publishedKey(published)}` };
    if ('gen' in e && e.gen) list.push({ ...point, kind: 'generation', index: e.gen.index, kernels: e.gen.g.kernels, origin: e.gen.g.origin, at: e.gen.g.at });
    else list.push({ ...point, kind: 'document', origin: doc.v.origin, at: doc.v.at });
  }
  return list;
}

/** A candidate as answers show it: its kind, the name good and bad take for it, and where it stands. */
export function describe(c: Candidate) {
  const ran = { position: c.position, version: c.version, origin: c.origin, at: c.at };
  return c.kind === 'document'
    ? { kind: c.kind, name: String(c.position), ...ran }
    : { kind: c.kind, name: generationName(c), index: c.index, kernels: c.kernels, ...ran };
}

/** A candidate for people: `position 3, 0123456789abcdef` or `t.paint@1 g2 (published on position 3, 0123…)`. */
export function label(c: Candidate): string {
  return c.kind === 'document' ? `position ${c.position}, ${c.version}` : `${generationName(c)}, ${c.origin} over position ${c.position}, ${c.version}`;
}
