// Snapshots of a world: its protocol kernels, params, clock and state, packed (without the
// memory's row padding, so a snapshot does not depend on the layout), and setting a new engine to
// one. `snapshot` and `restore` (src/protocol/handlers/state.ts) read and check the text; a
// restore is a scene change (commit.ts) whose `adjust` is restoreInto.

import { readSync } from 'node:fs';
import { readingFile } from './files.js';
import { packField, packedLayout, unpackField, type Field, type RowLayout } from './field.js';
import type { Engine } from './engine.js';
import type { FieldMemory } from './memory.js';
import type { World } from './world.js';
import { versionOf } from './documents.js';

export interface Snapshot {
  format: 'entelechy-snapshot';
  version: 1;
  scene: string;
  published: Record<string, string>;
  params: Record<string, number[]>;
  clock: { time: number; frame: number };
  /** data: base64 of the elements, component-major and row-major (`packed`), 4 bytes each. */
  state: { key: string; comps: string[]; size: number[]; packed?: boolean; data: string }[];
  /** The version of each document the world ran (path -> version): where a layout that no longer fits came from. */
  documents?: Record<string, string>;
}

/** How snapshots without `packed` laid out a field: rows padded to 4 elements, planes back to back. */
function legacyLayout(f: Field): RowLayout {
  const stride = Math.ceil(f.width / 4) * 4;
  return { stride, planeBytes: stride * f.height * f.depth * 4 };
}

/**
 * Whether `file` holds something other than a snapshot, which a snapshot must not replace (the
 * scene's photograph, a replay test): its first bytes do not say `entelechy-snapshot`. False when
 * there is no file.
 */
export function holdsOtherThanSnapshot(file: string): boolean {
  return (
    readingFile(file, (fd) => {
      const head = Buffer.alloc(256);
      const n = readSync(fd, head, 0, head.length, 0);
      return !/^\s*\{\s*"format"\s*:\s*"entelechy-snapshot"/.test(head.subarray(0, n).toString('latin1'));
    }) ?? false
  );
}

/** The snapshot of a world: its protocol kernels, params, clock and state, packed. */
export function snapshotOf(memory: FieldMemory, entry: string, w: World): string {
  const state: Snapshot['state'] = [];
  for (const node of w.scene.nodes) {
    for (const port of node.kernel.ports) {
      if (port.kind !== 'state') continue;
      const key = `${node.name}.${port.name}`;
      const field = w.engine.fields.state(node.name, port.name)?.current;
      if (!field) continue;
      const bytes = packField(memory, field);
      state.push({ key, comps: field.comps, size: [field.width, field.height, field.depth], packed: true, data: Buffer.from(bytes).toString('base64') });
    }
  }
  const snap: Snapshot = {
    format: 'entelechy-snapshot', version: 1, scene: entry, published: Object.fromEntries(w.published),
    params: Object.fromEntries(w.engine.params), clock: { time: w.engine.time, frame: w.engine.frame }, state,
    documents: Object.fromEntries([...w.texts].map(([path, text]) => [path, versionOf(text)])),
  };
  return JSON.stringify(snap);
}

/** A snapshot's state item that fits a running field: the field, its layout and the bytes to unpack; else why it does not. */
type Fit = { field: Field; layout: RowLayout; bytes: Buffer } | { why: string };

function fitOf(st: Snapshot['state'][number], held: Map<string, Field>, engine: Engine): Fit {
  const field = held.get(st.key);
  if (!field) {
    const [node, port] = st.key.split('.');
    const runs = engine.scene.nodes.find((n) => n.name === node)?.kernel.ports.some((p) => p.kind === 'state' && p.name === port);
    return { why: runs ? `node \`${node}\` does not run now (no output or pin needs it), so its state \`${st.key}\` is not held: \`pin\` it, then restore` : `the scene has no state \`${st.key}\`` };
  }
  const bytes = Buffer.from(st.data, 'base64');
  // Packed elements; snapshots from before the packed form hold the memory's padded rows
  // of that time (stride: width rounded up to 4; planes back to back).
  const layout = st.packed ? packedLayout(field) : legacyLayout(field);
  const size = (Array.isArray(st.size) ? st.size : [field.width, field.height, field.depth]).join(' x ');
  const running = [field.width, field.height, field.depth].join(' x ');
  if (field.comps.join() !== st.comps.join()) return { why: `the snapshot's \`${st.key}\` has components ${st.comps.join(', ')}, the running one ${field.comps.join(', ')}` };
  if (size !== running) return { why: `the snapshot's \`${st.key}\` is ${size}, the running one ${running}` };
  if (bytes.length !== layout.planeBytes * field.comps.length) return { why: `the snapshot's \`${st.key}\` holds ${bytes.length} bytes, not the ${layout.planeBytes * field.comps.length} of its size (cut short or changed)` };
  return { field, layout, bytes };
}

/** The running states of an engine, by `node.port` (as `snapshot` names them). */
function heldStates(engine: Engine): Map<string, Field> {
  return new Map([...engine.fields.stateBuffers()].map((h) => [`${h.node}.${h.port}`, h.buffers.current]));
}

/**
 * Set a new engine to a snapshot: its state, params and clock. A state that does not fit (another
 * size, components or length, or no such state held) puts nothing and answers why; else the keys
 * (`node.port`) of the states put.
 */
/**
 * Where the layout a snapshot's state needs came from: the documents it was taken with that differ
 * from those running now, by version (history keeps them: `document` gives each back).
 */
export function takenWith(snap: Snapshot, texts: ReadonlyMap<string, string>, known: (path: string, version: string) => boolean = () => true): string {
  const other = changedSince(snap, texts);
  if (!other.length) return '';
  const taken = `; it was taken with ${other.map(([p, v]) => `\`${p}\` at version ${v}`).join(', ')}`;
  // `document` gives back only versions this session has seen (a snapshot of another session's scene: none).
  const back = other.find(([p, v]) => known(p, v as string));
  if (!back) return `${taken}, which this session's history does not hold: compose the sizes the snapshot's state has, then restore`;
  const [path, version] = back;
  return `${taken}: {"op":"document","path":"${path}","version":"${version}"} gives that text, and a compose of it (or of the sizes in it) brings the layout back, then restore`;
}

/** The documents of the snapshot whose text is not the one it was taken with, and their versions then. */
function changedSince(snap: Snapshot, texts: ReadonlyMap<string, string>): [string, string][] {
  return Object.entries(snap.documents ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string' && (texts.get(e[0]) === undefined || versionOf(texts.get(e[0])!) !== e[1]));
}

/**
 * What a restore that took leaves as it is, when the snapshot says so: documents changed since it
 * was taken (a restore brings back state, params and clock, not texts), another scene's snapshot.
 */
export function restoredNote(snap: Snapshot, entry: string, texts: ReadonlyMap<string, string>, known: (path: string, version: string) => boolean): string | undefined {
  const notes: string[] = [];
  if (typeof snap.scene === 'string' && snap.scene !== entry) notes.push(`it was taken of \`${snap.scene}\`, and this session runs \`${entry}\``);
  const other = changedSince(snap, texts);
  if (other.length) {
    const back = other.find(([p, v]) => known(p, v));
    notes.push(`the documents are not restored, and ${other.map(([p, v]) => `\`${p}\` is not at version ${v}`).join(', ')} as when it was taken${back ? ` ({"op":"document","path":"${back[0]}","version":"${back[1]}"} gives that text)` : ''}`);
  }
  return notes.length ? `state, params and clock were restored; ${notes.join('; ')}` : undefined;
}

export function restoreInto(memory: FieldMemory, snap: Snapshot, engine: Engine): { why: string } | { restored: string[] } {
  const held = heldStates(engine);
  const fits: Exclude<Fit, { why: string }>[] = [];
  for (const st of snap.state) {
    const fit = fitOf(st, held, engine);
    if ('why' in fit) return { why: fit.why };
    fits.push(fit);
  }
  for (const fit of fits) unpackField(memory, fit.field, fit.bytes, fit.layout);
  for (const [name, value] of Object.entries(snap.params ?? {})) engine.params.set(name, value);
  engine.time = snap.clock?.time ?? 0;
  engine.frame = snap.clock?.frame ?? 0;
  engine.version++;
  return { restored: snap.state.map((st) => st.key) };
}

