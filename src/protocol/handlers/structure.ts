// Structure: compose (the one door for documents) and sync (edits saved on disk).

import type { Session, SessionEvent } from '../../main/session.js';
import { diagnosticsError } from '../../main/session.js';
import { versionOf } from '../../main/documents.js';
import { parseDocument } from '../../ir/syntax/index.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError } from '../envelope.js';
import { changedInputs, needGrant } from './grants.js';
import { addresses, applyEdits, EditError, validateEditItem, type EditItem } from '../edits.js';

type Fields = Record<string, unknown>;

/** One document of a compose: its new text from `text`, or from `edits` of the text on disk. */
function target(s: Session, path: string, item: Fields, index?: number): { path: string; text: string; before?: string } {
  const before = s.folder.read(path);
  const where = index === undefined ? '' : ` (documents[${index}])`;
  if (typeof item.expect === 'string' && item.expect !== (before === undefined ? 'none' : versionOf(before))) {
    const current = before === undefined ? null : versionOf(before);
    throw new ProtocolError(`\`${path}\` is at version ${current ?? '(absent)'}, not ${item.expect}${where}: nothing was written; read it again (document) and compose against version ${current}`, { path, version: current, expected: item.expect });
  }
  if (typeof item.text === 'string') return { path, text: item.text, before };
  if (Array.isArray(item.edits)) {
    if (before === undefined) throw new ProtocolError(`\`${path}\` does not exist${where}: compose it with \`text\` first`, { field: 'edits' });
    let edits: EditItem[];
    try {
      edits = item.edits.map((e, i) => validateEditItem(e, i));
      return { path, text: applyEdits(path, before, edits), before };
    } catch (e) {
      if (e instanceof EditError) throw new ProtocolError(`${e.message}${where}`, { edit: e.edit, field: e.field, expected: e.expected, fields: ['node', 'output', 'param', 'input', 'kernel', 'struct', 'type', 'fn', 'use', 'member', 'text'] });
      throw e;
    }
  }
  throw new ProtocolError(`compose needs \`text\` (the whole document) or \`edits\`${where}`, { fields: ['text', 'edits', 'documents', 'path', 'expect'], field: 'text', expected: 'string' });
}

/**
 * The document `edits` without a `path` change: the scene's own, unless every statement they
 * name is declared in one other document of the scene (a kernel in kernels.esn, say), which is
 * then the one edited. Edits that name statements of another document beside ones of the scene's
 * own (or new ones) are refused: which document a new statement belongs to is the agent's call.
 */
function editedDocument(s: Session, f: Fields): string {
  if (!Array.isArray(f.edits) || f.expect !== undefined) return s.entry;
  let edits: EditItem[];
  try {
    edits = f.edits.map((e, i) => validateEditItem(e, i));
  } catch {
    return s.entry; // target() reports what is wrong with them
  }
  const others = s.scene.documents.filter((d) => d.path !== s.entry);
  const entry = s.scene.documents.find((d) => d.path === s.entry);
  const homes = edits.map((e) => (e.use !== undefined || (entry && addresses(entry, e)) ? undefined : others.find((d) => addresses(d, e))?.path));
  const elsewhere = [...new Set(homes.filter((h) => h !== undefined))];
  if (!elsewhere.length) return s.entry;
  if (elsewhere.length === 1 && homes.every((h) => h === elsewhere[0])) return elsewhere[0];
  const i = homes.findIndex((h) => h !== undefined);
  throw new ProtocolError(`edits[${i}] names a statement of \`${homes[i]}\`, but the other edits are not all of that document: give \`"path": "${homes[i]}"\` to edit it there, or \`documents: [{path, edits}, ...]\` to change several documents at once`, { field: 'edits', edit: i, path: homes[i] });
}

export async function compose(s: Session, f: Fields) {
  return s.change(async () => {
    const targets: { path: string; text: string; before?: string }[] = [];
    if (Array.isArray(f.documents)) {
      if (f.text !== undefined || f.edits !== undefined) throw new ProtocolError('give `documents` or `text`/`edits`, not both', { field: 'documents' });
      const loose = f.path !== undefined ? 'path' : f.expect !== undefined ? 'expect' : undefined;
      if (loose) throw new ProtocolError(`with \`documents\`, each item names its own \`path\` and \`expect\`: [{path, expect?, text | edits}]; \`${loose}\` beside \`documents\` would be ignored`, { field: loose, expected: null });
      if (f.documents.length === 0) throw new ProtocolError('`documents` is empty: give at least one {path, text} or {path, edits}', { field: 'documents', expected: '[{path, text | edits}, ...]' });
      f.documents.forEach((d, i) => {
        if (!d || typeof d !== 'object' || typeof (d as Fields).path !== 'string')
          throw new ProtocolError(`documents[${i}] must be {path, text} or {path, edits}`, { field: 'documents', expected: '{path, text | edits}' });
        targets.push(target(s, (d as Fields).path as string, d as Fields, i));
      });
    } else {
      targets.push(target(s, typeof f.path === 'string' ? f.path : editedDocument(s, f), f));
    }
    for (const t of targets) s.folder.resolve(t.path); // a path outside the folder is refused before anything
    if (targets.every((t) => t.path.endsWith('.replay'))) {
      // Replay files are tests, not part of the world: written as they are, nothing recompiles.
      await s.write(targets.map(({ path, text }) => ({ path, text })));
      const main = targets[0];
      return { path: main.path, version: versionOf(main.text), written: true, events: targets.map((t) => ({ kind: 'wrote', path: t.path, version: versionOf(t.text) })) };
    }
    // Check everything together (the scene with every changed document); write nothing on failure.
    const overrides = new Map(targets.filter((t) => !t.path.endsWith('.replay')).map((t) => [t.path, t.text]));
    // A kernel published over the protocol and now composed into a document belongs to it.
    const composedIds = new Set([...overrides].flatMap(([path, text]) => parseDocument(path, text).doc.statements.filter((st) => st.kind === 'kernel').map((st) => st.name.value)));
    const kept = new Map([...s.published].filter(([id]) => !composedIds.has(id)));
    const scene = s.check(s.readAll(overrides), kept);
    if (scene.diagnostics.length) {
      const { path, line, column, message } = scene.diagnostics[0];
      s.pending.push({ kind: 'scene_rejected', message, path, line, column });
      const err = diagnosticsError('compose refused: nothing was written', scene.diagnostics);
      (err.data as Record<string, unknown>).written = false;
      throw err;
    }
    // An input the compose adds or redeclares gets its declared value: a write into it.
    for (const name of changedInputs(s.scene, scene)) needGrant(s, 'field.write', `\`compose\` of input \`${name}\``, { input: name });
    await s.prepareScene(scene);
    // Publish first (a failed migration refuses the change), then write: all documents or none.
    const before = new Map(s.published);
    for (const id of composedIds) s.published.delete(id);
    let published: SessionEvent[];
    try {
      published = await s.publishScene(scene, 'compose');
    } catch (e) {
      for (const [id, src] of before) s.published.set(id, src);
      throw e;
    }
    await s.write(targets.map(({ path, text }) => ({ path, text })));
    const events: SessionEvent[] = targets.map((t) => ({ kind: 'wrote', path: t.path, version: versionOf(t.text) }));
    // Statements and members an edit removed (`text: null`).
    const edits = Array.isArray(f.documents) ? (f.documents as Fields[]).flatMap((d) => ((d.edits as Fields[]) ?? []).map((e) => ({ path: d.path, e }))) : ((f.edits as Fields[]) ?? []).map((e) => ({ path: targets[0].path, e }));
    for (const { path, e } of edits) if (e.text === null) events.push({ kind: 'removed', path, ...Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'text')) });
    for (const t of targets) s.remember(t.path, t.text, 'compose');
    events.push(...published);
    const main = targets[0];
    return { path: main.path, version: versionOf(main.text), written: true, events };
  });
}

/** What changed on disk since the session last saw each of its documents. */
function diskChanges(s: Session): { texts: Map<string, string>; changed: string[] } {
  const texts = s.readAll();
  const changed: string[] = [];
  for (const [path, text] of texts) {
    const seen = s.history.get(path);
    if (!seen || seen[seen.length - 1].version !== versionOf(text)) changed.push(path);
  }
  return { texts, changed };
}

/** Documents the running world uses that left their path: renamed when their text stands elsewhere. */
const reportedRenames = new WeakMap<Session, Set<string>>();

function renames(s: Session): SessionEvent[] {
  const reported = reportedRenames.get(s) ?? new Set<string>();
  reportedRenames.set(s, reported);
  const events: SessionEvent[] = [];
  for (const [path, text] of s.texts) {
    if (s.folder.read(path) !== undefined) {
      reported.delete(path);
      continue;
    }
    if (reported.has(path)) continue;
    reported.add(path);
    const version = versionOf(text);
    const to = listDocuments(s.folder.root).find((p) => versionOf(s.folder.read(p) ?? '') === version);
    events.push(to ? { kind: 'renamed', from: path, to } : { kind: 'removed', path, message: `\`${path}\` is gone from disk; the running world keeps its last version` });
  }
  return events;
}

function listDocuments(root: string, under = ''): string[] {
  return readdirSync(join(root, under), { withFileTypes: true }).flatMap((d) => {
    const rel = under ? `${under}/${d.name}` : d.name;
    if (d.name.startsWith('.') || d.name === 'node_modules') return [];
    return d.isDirectory() ? listDocuments(root, rel) : d.name.endsWith('.esn') ? [rel] : [];
  });
}

export async function sync(s: Session) {
  const events: SessionEvent[] = s.pending.splice(0);
  events.push(...syncDisk(s));
  return { events };
}

/**
 * Look at the disk: documents renamed or removed, and saved edits, which start compiling in the
 * background (their `published` or `rejected` comes later, in `pending`). Returns what it saw at
 * once. `sync` calls it; so does the Player when the folder changes.
 */
export function syncDisk(s: Session): SessionEvent[] {
  // A compose is writing: its documents land before it remembers them; look again after.
  if (s.writing) return [];
  const events = renames(s);
  if (!s.syncing) {
    const { texts, changed } = diskChanges(s);
    if (changed.length) {
      for (const path of changed) {
        // History records the saved version; `texts` (what runs) changes only once it is published.
        const running = s.texts.get(path);
        s.remember(path, texts.get(path)!, 'disk');
        if (running !== undefined) s.texts.set(path, running);
        else s.texts.delete(path);
        events.push({ kind: 'preparing', path, version: versionOf(texts.get(path)!) });
      }
      s.syncing = s
        .change(async () => {
          // Nothing may escape: no one awaits this, and what went wrong is told on a later sync.
          try {
            const scene = s.check(texts);
            if (scene.diagnostics.length) {
              const err = diagnosticsError('the saved edit does not check; the previous version keeps running', scene.diagnostics);
              s.refused = { message: err.message, at: new Date().toISOString() };
              s.pending.push({ kind: 'rejected', paths: changed, message: err.message, ...err.data });
              return;
            }
            const published = await s.publishScene(scene, 'disk');
            for (const path of changed) s.texts.set(path, texts.get(path)!);
            s.pending.push(...published, { kind: 'published', paths: changed, revision: s.revision });
          } catch (e) {
            const message = `the saved edit was not published; the previous version keeps running: ${(e as Error)?.message ?? e}`;
            s.refused = { message, at: new Date().toISOString() };
            s.pending.push({ kind: 'rejected', paths: changed, message });
          }
        })
        .finally(() => {
          s.syncing = undefined;
        });
    }
  }
  return events;
}
