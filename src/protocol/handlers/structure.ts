// Structure: compose (the one door for documents) and sync (edits saved on disk).

import { existsSync, readFileSync, statSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import type { RequestFields } from '../operations.js';
import type { Session, SessionEvent } from '../../main/session.js';
import { connectionKey } from '../../main/session-types.js';
import { CheckFailed, diagnosticsData } from '../../main/refusals.js';
import { versionOf } from '../../main/documents.js';
import { parseDocument } from '../../ir/syntax/index.js';
import type { Scene } from '../../ir/check/scene.js';
import { ProtocolError } from '../envelope.js';
import { inputWritesGranted } from '../../main/grants.js';
import type { RequestContext } from './index.js';
import { addresses, applyEdits, EditError, validateEditItem, type EditItem } from '../edits.js';
import { dryRun, evaluateOptions, refuseEvaluateAlone } from './speculate.js';
import { parseReplay, replayScene, ReplayError } from '../replay.js';

type Fields = Record<string, unknown>;

/** One document of a compose: its new text, what the file held before, and whether `edits` made it from that. */
interface Target {
  path: string;
  text: string;
  before?: string;
  edited?: boolean;
}

/** One document of a compose: its new text from `text`, or from `edits` of the text on disk. */
function target(s: Session, path: string, item: Fields, index?: number): Target {
  s.folder.resolve(path); // a path outside the folder, or through a link that leads out, is refused as that (not as absent)
  const before = s.folder.read(path);
  const where = index === undefined ? '' : ` (documents[${index}])`;
  if (typeof item.expect === 'string' && item.expect !== (before === undefined ? 'none' : versionOf(before))) {
    const current = before === undefined ? null : versionOf(before);
    // The current text travels with the refusal: no `document` request is needed to compose against it.
    throw new ProtocolError(
      `\`${path}\` is at version ${current ?? '(absent)'}, not ${item.expect}${where}: nothing was written; ${current ? `its current text is this error's \`text\`: compose against version ${current}` : 'it does not exist: compose it without `expect`, or with "expect": "none"'}`,
      { path, version: current, expected: item.expect, ...(before !== undefined ? { text: before } : {}) },
    );
  }
  // Both given: the edits were dropped without a word.
  if (item.text !== undefined && item.edits !== undefined) throw new ProtocolError(`give \`text\` (the whole document) or \`edits\`, not both${where}`, { fields: ['text', 'edits'], field: 'edits' });
  if (typeof item.text === 'string') return { path, text: item.text, before };
  if (Array.isArray(item.edits)) {
    if (before === undefined) throw new ProtocolError(`\`${path}\` does not exist${where}: compose it with \`text\` first`, { field: 'edits' });
    // Bytes that are not UTF-8 read as U+FFFD: the edits would write those over them, on lines they did not touch.
    if (before.includes('\uFFFD') && !isUtf8(readFileSync(s.folder.resolve(path))))
      throw new ProtocolError(`\`${path}\` holds bytes that are not UTF-8: edits would write it back with each replaced by U+FFFD (\ufffd), lines they do not touch included; nothing was written: save \`${path}\` as UTF-8 first, or send \`text\` to replace it whole`, { path, field: 'edits', written: false });
    // An editor that truncates before it writes shows an empty file for a moment: edits applied to
    // it made a scene of the edits alone (every node, output and param gone).
    const running = s.scene.documents.find((d) => d.path === path)?.statements.length ?? 0;
    if (before.trim() === '' && running > 0)
      throw new ProtocolError(
        `\`${path}\` is empty on disk (${before.length} bytes${before.length ? ', all white space' : ''}), while the running version has ${running} statement${running > 1 ? 's' : ''}: an editor may be saving it; nothing was written: compose again in a moment, or send \`text\` to replace the document whole`,
        { path, field: 'edits', written: false },
      );
    let edits: EditItem[];
    try {
      edits = item.edits.map((e, i) => validateEditItem(e, i));
      return { path, text: applyEdits(path, before, edits), before, edited: true };
    } catch (e) {
      if (e instanceof EditError) throw new ProtocolError(`${e.message}${where}`, { edit: e.edit, field: e.field, expected: e.expected, fields: ['node', 'output', 'param', 'input', 'kernel', 'struct', 'type', 'fn', 'use', 'member', 'text'] });
      throw e;
    }
  }
  throw new ProtocolError(`compose needs \`text\` (the whole document) or \`edits\`${where ? where : ', or `documents` (several at once)'}`, { fields: ['text', 'edits', 'documents', 'path', 'expect'], field: 'text', expected: 'string' });
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

/**
 * Refuse documents whose nodes run a kernel only the protocol published: written, they would not
 * load on their own (the next `serve`, `check` or `render` of the scene says no document declares
 * it). The fix composes the kernel into the document with them.
 */
function refuseProtocolOnly(scene: Scene, published: ReadonlyMap<string, string>): void {
  const declared = new Set(scene.documents.flatMap((d) => d.statements.filter((st) => st.kind === 'kernel').map((st) => st.name.value)));
  const node = scene.nodes.find((n) => !declared.has(n.kernel.id));
  if (!node) return;
  const id = node.kernel.id;
  const source = published.get(id);
  throw new ProtocolError(
    `node \`${node.name}\` runs \`${id}\`, which only the protocol published: the documents written would not load on their own (no document declares it); compose the kernel into a document of the scene with the node (this error's \`fix\` is that edit), nothing was written`,
    { node: node.name, kernel: id, written: false, ...(source !== undefined ? { fix: { kernel: id, text: source } } : {}) },
  );
}

export async function compose(s: Session, f: RequestFields<'compose'>, ctx: RequestContext) {
  const evaluate = evaluateOptions(f.evaluate);
  refuseEvaluateAlone(f.dry_run, evaluate, 'compose');
  return s.change(async () => {
    const targets: Target[] = [];
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
    const main = targets[0];
    const asked = main.path; // the answer names it as asked
    // Each document by its one name (`./scene.esn` is `scene.esn`); a path outside the folder is refused before anything.
    for (const t of targets) {
      s.folder.resolve(t.path);
      t.path = t.path.split(/[\\/]+/).filter((p) => p !== '' && p !== '.').join('/');
    }
    // A file there that is no document (the scene's photograph, its licence) is not compose's to
    // replace: its bytes would be gone, and no version of it kept.
    for (const t of targets) {
      // A new file is a document or a replay test, never a script or a dot-folder's file (.git/hooks).
      const hidden = t.path.split('/').find((part) => part.startsWith('.'));
      if (hidden !== undefined && s.documentAt(t.path) === undefined)
        throw new ProtocolError(`\`${t.path}\` is under \`${hidden}\`, a hidden name: compose writes the scene's documents and replay tests, never hidden files or folders; name a path without a leading dot`, { path: t.path, field: 'path' });
      if (t.before === undefined && !/\.(esn|replay)$/.test(t.path))
        throw new ProtocolError(`\`${t.path}\` is not a document: compose writes documents (.esn) and replay tests (.replay); name it NAME.esn`, { path: t.path, field: 'path', expected: 'NAME.esn or NAME.replay' });
      if (t.before === undefined || /\.(esn|replay)$/.test(t.path) || s.documentAt(t.path) !== undefined) continue;
      throw new ProtocolError(`\`${t.path}\` is a file of the scene's folder but not one of its documents: compose writes documents (.esn) and replay tests (.replay), and would replace it for good; name a document, or move the file away first`, { path: t.path, field: 'path' });
    }
    // A text on disk the session has not seen (a saved edit not yet synced) is kept in history, and the answer says so.
    const unseen = (path: string, before?: string) => before !== undefined && !s.history.get(path)?.some((v) => v.version === versionOf(before));
    // Edits are applied to that text, so it goes live with them (`included`); a whole text replaces it.
    const writes: { path: string; text: string; base: string | null; replaced?: string; included?: string }[] = targets.map(({ path, text, before, edited }) => ({ path, text, base: before ?? null, ...(unseen(path, before) && before !== text ? (edited ? { included: before } : { replaced: before }) : {}) }));
    // A replay test is checked as `entelechy test` reads it: one it could not read is not written
    // (a compose put `garbage` over a recorded test, with nothing to say so).
    const written = new Set(targets.map((t) => s.folder.resolve(t.path)));
    for (const t of targets) if (t.path.endsWith('.replay')) refuseUnreadableReplay(s.folder.resolve(t.path), t.path, t.text, (p) => written.has(p) || (existsSync(p) && statSync(p).isFile()));
    if (targets.every((t) => t.path.endsWith('.replay')) && f.dry_run) {
      if (evaluate) throw new ProtocolError('replay files are tests, not part of the world: a dry run of them has nothing to evaluate; drop `evaluate`', { field: 'evaluate' });
      return { path: asked, version: versionOf(main.text), written: false, dry_run: true, events: [] };
    }
    if (targets.every((t) => t.path.endsWith('.replay'))) {
      // Replay files are tests, not part of the world: written as they are, nothing recompiles;
      // kept in `history` as documents are (the text replaced, too), so `document` gives it back.
      await s.write(writes);
      for (const t of targets) {
        if (t.before !== undefined) s.remember(t.path, t.before, 'disk');
        s.remember(t.path, t.text, 'compose');
      }
      return { path: asked, version: versionOf(main.text), written: true, events: targets.map((t) => ({ kind: 'wrote', path: t.path, version: versionOf(t.text) })) };
    }
    // Check everything together (the scene with every changed document); write nothing on failure.
    const overrides = new Map(targets.filter((t) => !t.path.endsWith('.replay')).map((t) => [t.path, t.text]));
    // A kernel published over the protocol and now composed into a document belongs to it.
    const composedIds = new Set([...overrides].flatMap(([path, text]) => parseDocument(path, text).doc.statements.filter((st) => st.kind === 'kernel').map((st) => st.name.value)));
    const published = new Map([...s.published].filter(([id]) => !composedIds.has(id)));
    // Texts the documents already hold, which the running world runs: nothing to write or reload
    // (`edits: []` wrote the same bytes and loaded a new revision).
    const unchanged = targets.every((t) => t.before === t.text && s.texts.get(t.path) === t.text) && ![...composedIds].some((id) => s.published.has(id));
    if (unchanged && !f.dry_run) return { path: asked, version: versionOf(main.text), written: false, events: [{ kind: 'idle', reason: 'the documents already hold these texts, and the world runs them: nothing was written or reloaded' }] };
    // Statements and members an edit removed (`text: null`).
    const edits = Array.isArray(f.documents) ? (f.documents as Fields[]).flatMap((d) => ((d.edits as Fields[]) ?? []).map((e) => ({ path: d.path, e }))) : ((f.edits as Fields[]) ?? []).map((e) => ({ path: main.path, e }));
    const removed: SessionEvent[] = edits.filter(({ e }) => e.text === null).map(({ path, e }) => ({ kind: 'removed', path, ...Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'text')) }));
    try {
      const change = {
        reason: 'compose' as const, texts: s.readAll(overrides), published, writes, events: removed, refusal: 'compose refused: nothing was written', signal: ctx.signal,
        // An input the compose adds or redeclares gets its declared value: a write into it.
        check: (scene: Scene) => {
          inputWritesGranted(s, '`compose`')(scene);
          refuseProtocolOnly(scene, published);
          refuseUnparsed(scene, overrides);
        },
      };
      if (f.dry_run) return { path: asked, version: versionOf(main.text), written: false, dry_run: true, ...(await dryRun(s, change, evaluate)), ...unsyncedNote(writes) };
      const events = await s.commit(change);
      return { path: asked, version: versionOf(main.text), written: true, events };
    } catch (e) {
      if (e instanceof CheckFailed) {
        // Told again at this connection's next sync (the event listeners of a client hear it), to no other.
        if (!f.dry_run) {
          const { path, line, column, message } = e.diagnostics[0];
          s.pending.tellOnly(connectionKey(ctx), { kind: 'scene_rejected', message, path, line, column });
        }
        // Edits applied to a saved edit the world does not run (seen by a `history` or a refused `sync`, or not).
        const included = new Map(targets.flatMap((t) => (t.edited && t.before !== undefined && t.before !== s.texts.get(t.path) ? [[t.path, t.before] as const] : [])));
        throw new ProtocolError(`${e.message}${savedEditBlames(s, e, overrides, included)}`, { ...diagnosticsData(e.diagnostics), written: false });
      }
      throw e;
    }
  });
}

/**
 * A document the compose writes that no `use` reaches is not checked with the scene: it must at
 * least parse, or it was written broken (and a later `use` of it fails far from this compose).
 */
function refuseUnparsed(scene: Scene, overrides: Map<string, string>): void {
  for (const [path, text] of overrides) {
    if (scene.documents.some((d) => d.path === path)) continue;
    const { diagnostics } = parseDocument(path, text);
    if (diagnostics.length) throw new CheckFailed(`compose refused: nothing was written: \`${path}\` (no \`use\` of the scene reaches it yet) does not parse`, diagnostics);
  }
}

/**
 * Why a compose that did not touch the failing document failed: that document holds a saved edit
 * the world does not run (compose checks the scene with every document as it is on disk).
 */
function savedEditBlames(s: Session, e: CheckFailed, composed: ReadonlyMap<string, string>, included: ReadonlyMap<string, string>): string {
  const path = e.diagnostics[0]?.path;
  // The edits were applied to a saved edit the world does not run: the error may be the saved edit's.
  const base = path && included.get(path);
  if (base) return ` (\`${path}\` holds a saved edit not yet synced, version ${versionOf(base)}, and the edits were applied to it: the error may be in that edit; mend it on disk, or compose the whole \`text\` with "expect": "${versionOf(base)}" to replace it)`;
  if (!path || composed.has(path)) return '';
  const disk = s.folder.read(path);
  if (disk === undefined || disk === s.texts.get(path)) return '';
  return ` (\`${path}\` holds a saved edit the world does not run, and compose checks the scene with every document as it is on disk: mend or revert \`${path}\`, or compose it too)`;
}

export async function sync(s: Session, _f: RequestFields<'sync'>, ctx: RequestContext) {
  const events: SessionEvent[] = s.pending.take(connectionKey(ctx));
  const syncing = s.syncing;
  // What this sync saw on disk (a document removed or renamed, a saved edit preparing) is news to
  // every connection: the others hear it at their next sync, as they hear a compose's events.
  const seen = s.syncDisk(ctx.signal);
  events.push(...seen);
  if (seen.length) s.pending.tellOthers(connectionKey(ctx), seen);
  // A saved edit this sync started runs on after the answer, still under the request's signal.
  if (s.syncing && s.syncing !== syncing) ctx.hold?.(s.syncing);
  return { events };
}

/**
 * Refuse a replay test `entelechy test` could not run, with its line and column (replay.ts's own
 * message): one it cannot read, one with no request, one whose scene is not there (`exists`: the
 * files on disk and those this compose writes).
 */
function refuseUnreadableReplay(full: string, path: string, text: string, exists: (path: string) => boolean): void {
  try {
    replayScene(path, parseReplay(text, path), exists, full);
  } catch (e) {
    if (!(e instanceof ReplayError)) throw e;
    const at = /^.*?:(\d+):(\d+): /.exec(e.message);
    throw new ProtocolError(`${e.message}; nothing was written: a replay test is written only when \`entelechy test\` can read it (docs/agents.md#finding-the-change-that-broke-a-replay)`, { path, ...(at ? { line: Number(at[1]), column: Number(at[2]) } : {}), written: false });
  }
}

/**
 * A dry run's word on a saved edit the session has not synced: the compose would take it in (its
 * edits apply to the text on disk) or replace it. The real compose tells it in `wrote`; the dry run
 * said nothing, and its diff showed the saved edit's change as if it were the compose's.
 */
function unsyncedNote(writes: { path: string; replaced?: string; included?: string }[]): { note?: string } {
  const told = writes.flatMap((w) =>
    w.included !== undefined
      ? [`\`${w.path}\` on disk holds an edit this session has not synced (version ${versionOf(w.included)}): the edits apply to it, so the compose takes it in too, and this dry run ran with it`]
      : w.replaced !== undefined
        ? [`\`${w.path}\` on disk holds an edit this session has not synced (version ${versionOf(w.replaced)}): the compose's text replaces it (history keeps it)`]
        : [],
  );
  return told.length ? { note: told.join('; ') } : {};
}
