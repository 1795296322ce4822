// The one path of every change to a session's world: compose, saved edits picked up by sync,
// publish, retire, restore, pins, and the scene a session opens with (scene changes); params,
// writes into fields and state resets (value changes). A scene change is a value (what the next
// world runs and which documents to write); `commit` carries it in three steps:
//
//   1. prepare: check the scene (with the protocol's kernels), the change's own checks, compile
//      every module on the compile worker (the engine's, the migrations');
//   2. with no frame running: build the new engine, carry state into it (migrations run here),
//      set it up (restore), then write the documents through the journal (journal.ts);
//   3. only then swap the new world in, whole, and free the old one once nothing reads it.
//
// Anything that fails before step 3 (a check, a compile, memory, a migration, a full or read-only
// disk) throws with the world and the disk exactly as they were: nothing was swapped, and the
// journal left every document as it was. The events of a change come out of here, in order.
//
// A value change keeps the world's scene and engine and changes values in its fields and params,
// which every frame changes too. It is carried in two steps in the frame slot (no frame runs
// meanwhile): prepare checks everything against the running world (and reads what it needs, such
// as an image) and may refuse, with nothing changed; apply then only stores values already
// checked, so it cannot fail halfway and nothing needs undoing.

import type { Scene } from '../ir/check/scene.js';
import type { IrFunction } from '../ir/ir.js';
import { carryWorld, migrationIrs } from './carry.js';
import { collectSoon } from './collect.js';
import { throwIfCancelled } from './cancel.js';
import { CheckFailed } from './refusals.js';
import { versionOf } from './documents.js';
import { Engine } from './engine.js';
import { fieldNeeds } from './field-needs.js';
import { sceneGroups } from './scene-groups.js';
import { RENEW_ABOVE, shouldRenew, type FieldMemory } from './memory.js';
import type { EvalPool } from '../workers/pool.js';
import { nextRegistry, order, type World, type WorldEvent } from './world.js';
import { withTiers } from './optimiser.js';
import type { DocumentWrite, PreparedWrite } from './journal.js';

export type Change = SceneChange | ValueChange;

/** A change that runs a new scene (or the same with other kernels or pins): a new world. */
export interface SceneChange {
  /** What changes the world. */
  reason: 'compose' | 'disk' | 'publish' | 'retire' | 'restore' | 'pin' | 'unpin' | 'open' | 'optimise';
  /** The text of every document the new world runs. */
  texts: ReadonlyMap<string, string>;
  /** The kernels published over the protocol (default: the world's). */
  published?: ReadonlyMap<string, string>;
  /** The pinned nodes (default: the world's). */
  pins?: ReadonlySet<string>;
  /**
   * Documents written before the swap, all or none (compose). `replaced`: a text on disk the
   * session had not seen (a saved edit not yet synced) that the write replaces: history keeps it;
   * `included`: such a text that the written one was made from (edits applied to it), kept too.
   */
  writes?: (DocumentWrite & { replaced?: string; included?: string })[];
  /** The lead of the error when the new scene does not check. */
  refusal: string;
  /** More checks of the new scene, before anything changes (restore: its params). */
  check?(scene: Scene): void;
  /** Set the new engine up before it runs (restore: state, params, clock); its events. */
  adjust?(engine: Engine): WorldEvent[];
  /** Events told before the swap's own (compose: the statements its edits removed). */
  events?: WorldEvent[];
  /**
   * Stops the change before it writes (its request's `cancel`, deadline or closed connection):
   * a migration running on the pool is ended, and nothing changes.
   */
  signal?: AbortSignal;
  /**
   * The optimised tier swapped in for the fast one (optimiser.ts): the same scene, so it waits
   * for a running frame instead of stopping it, and keeps the revision.
   */
  tierSwap?: boolean;
}

/** Stores values already checked into the running engine; cannot fail. Its events. */
export type ApplyValues = (engine: Engine) => WorldEvent[];

/** A change of the running world's values: a param, a field's elements, state reset (see the top of this file). */
export interface ValueChange {
  reason: 'param' | 'write' | 'reset';
  /** Every check against the running world, and every read (an image); throws to refuse, changing nothing. */
  prepare(world: World): ApplyValues | Promise<ApplyValues>;
  /** It sets the clock back to 0 (reset of every state): the last frame is no longer the world's. */
  restarts?: boolean;
}

/** What commit needs of the session. */
export interface CommitSite {
  readonly world: World;
  readonly memory: FieldMemory;
  readonly pool?: EvalPool;
  readonly fuse: boolean;
  /** Rows per tile of a frame on the pool (default the engine's). */
  readonly bandRows?: number;
  check(texts: ReadonlyMap<string, string>, published: ReadonlyMap<string, string>): Scene;
  prepareScene(scene: Scene, pins: string[]): Promise<void>;
  prepare(irs: IrFunction[]): Promise<void>;
  frame<T>(f: () => Promise<T>): Promise<T>;
  /** Stop the frame running now: it commits nothing (a change does not wait for it). */
  interrupt(why: string): void;
  /** Write documents through the journal (a WriteError leaves them as they were). */
  write(files: DocumentWrite[]): Promise<void>;
  /** The journal's steps 1-2 of such a write, every document left as it was (journal.ts): begun while the change is checked and compiled. */
  prepareWrite?(files: DocumentWrite[]): Promise<PreparedWrite>;
  /** A fresh memory of `bytes` and a pool over it, for a world that moves out of a memory far larger than it needs (memory.ts). */
  renew?(bytes: number): Renewed;
}

/** The memory and pool a world moved to. */
export interface Renewed {
  memory: FieldMemory;
  pool?: EvalPool;
}

/**
 * Carry a change (see the top of this file). `swap` installs the new world; it runs inside the
 * frame slot, so no frame sees half of it. Returns the new world and the change's events.
 */
export async function commit(site: CommitSite, change: Change, swap: (world: World, moved?: Renewed) => void): Promise<{ world: World; events: WorldEvent[] }> {
  if ('prepare' in change) return commitValues(site, change);
  const old = site.world;
  // 1. Prepare. The documents' write begins at once, beside the check and the compile: the
  // journal's steps 1-2 leave every document as it was, and are abandoned if the change is not
  // made. Their fsyncs took 3-14 ms here; begun after the check, they were most of a literal
  // edit's time to commit once its module was reused (src/ir/literals.ts).
  const writing = change.writes?.length && site.prepareWrite ? site.prepareWrite(change.writes) : undefined;
  writing?.catch(() => undefined); // a WriteError is thrown below, once the compile has settled
  const abandon = async () => (await writing?.catch(() => undefined))?.abandon().catch(() => undefined);
  let prepared: PreparedChange;
  let write: PreparedWrite | undefined;
  try {
    prepared = await prepareChange(site, change);
    write = await writing;
  } catch (e) {
    await abandon();
    throw e;
  }
  const { scene, published, pins, unpinned, prepare_ms } = prepared;
  // A frame of the old world still running is not waited for: it stops and commits nothing.
  if (!change.tierSwap) site.interrupt(`a change swapped the world (revision ${old.revision + 1}) while it ran`);
  // Whatever stops the change before its write is committed abandons the write.
  const made = site.frame(async () => {
    // 2. Build, carry, write: no frame runs meanwhile, so the state carried is the last frame's.
    const events: WorldEvent[] = [];
    // A WebAssembly memory never shrinks: a world needing a small part of a large one moves to a
    // fresh memory (and a pool over it), and the old one goes with the old world.
    const moved = site.renew && renewal(site.memory, scene, [...pins], site.fuse, (bytes) => site.renew!(bytes));
    let engine: Engine;
    try {
      engine = new Engine(scene, { memory: moved?.memory ?? site.memory, pool: moved ? moved.pool : site.pool, pins: [...pins], fuse: site.fuse, bandRows: site.bandRows, prepared: true });
    } catch (e) {
      void moved?.pool?.destroy();
      throw e;
    }
    try {
      // A tier swap changes only the code: the last frame's outputs stay readable.
      if (change.tierSwap) engine.keepFrame(old.engine);
      // Migrations run on the pool over the old memory, where the old state is.
      const carried = await carryWorld(published, old.engine, engine, { pool: site.pool, signal: change.signal });
      const adjusted = change.adjust?.(engine) ?? [];
      throwIfCancelled(change.signal);
      if (change.writes?.length) {
        if (write) {
          const committing = write;
          write = undefined; // committed or turned back by the journal: nothing to abandon after
          await committing.commit();
        } else {
          await site.write(change.writes);
        }
        events.push(...change.writes.map((w) => ({ kind: 'wrote' as const, path: w.path, version: versionOf(w.text), ...(w.replaced !== undefined ? { replaced: versionOf(w.replaced) } : {}), ...(w.included !== undefined ? { included: versionOf(w.included) } : {}) })));
      }
      // A state kept is told to the request that changed the scene, not on opening or a tier swap;
      // one the change then set itself (restore) is told as that alone.
      const set = new Set(adjusted.filter((e) => e.kind === 'state_carried').map((e) => `${e.node}.${e.port}`));
      const quiet = change.reason === 'open' || change.tierSwap;
      const told = carried.filter((e) => !(e.kind === 'state_carried' && (set.has(`${e.node}.${e.port}`) || (quiet && (e.how as string[])[0] === 'kept'))));
      events.push(...(change.events ?? []), ...told, ...adjusted, ...unpinnedEvents(unpinned));
    } catch (e) {
      engine.dispose();
      void moved?.pool?.destroy();
      throw e;
    }
    // 3. Swap.
    for (const e of engine.events) events.push({ ...e });
    const tell = change.reason !== 'open';
    const { registry, events: generations } = nextRegistry(old, scene, published, tell);
    events.push(...withTiers(generations, { engine, scene }, prepare_ms));
    const world: World = { scene, engine, texts: change.texts, published, registry, pins, revision: old.revision + (change.tierSwap ? 0 : 1) };
    const oldPool = site.pool;
    swap(world, moved);
    if (tell && JSON.stringify(order(old.scene)) !== JSON.stringify(order(scene))) events.push({ kind: 'routed', order: order(scene) });
    events.push({ kind: 'scene_loaded', revision: world.revision });
    for (const n of scene.nodes) if (!engine.groups.some((g) => g.nodes.includes(n))) events.push({ kind: 'unrun', node: n.name });
    // Requests that took the old world before the swap read it in frames queued before this one.
    const freed = site.frame(async () => old.engine.dispose());
    // A memory left behind goes once its pool's threads (which hold it) have ended, and is
    // returned to the system when collected (collect.ts).
    if (moved) void freed.then(() => oldPool?.destroy()).then(collectSoon, collectSoon);
    return { world, events };
  });
  return made.catch(async (e) => {
    await write?.abandon().catch(() => undefined);
    throw e;
  });
}

/** The pins a change dropped with their nodes, told. */
export function unpinnedEvents(unpinned: string[]): WorldEvent[] {
  return unpinned.map((node) => ({ kind: 'unpinned', node, reason: 'the change removed the node' }));
}

/** A scene change checked and compiled (step 1): what the new world runs. */
export interface PreparedChange {
  scene: Scene;
  published: ReadonlyMap<string, string>;
  pins: ReadonlySet<string>;
  /** Pins of nodes the new scene no longer has: dropped (a pin outlived its node, and `unpin` could not name it). */
  unpinned: string[];
  prepare_ms: number;
}

/**
 * Step 1 of a scene change, changing nothing: check the scene and the change's own checks,
 * compile the engine's modules and the migrations'. A dry run (fork.ts) takes the same step.
 */
export async function prepareChange(site: CommitSite, change: SceneChange): Promise<PreparedChange> {
  const old = site.world;
  const published = change.published ?? old.published;
  const asked = change.pins ?? old.pins;
  refuseEmptiedDocuments(old.scene, change);
  // A tier swap runs the running world's texts and kernels again: its scene is that world's, not
  // checked again (the check and lowering of the corpus's inline scene took 10 ms of this thread
  // while the frames after an edit ran), and its groups and digests are the ones already made.
  const same = change.tierSwap && change.texts === old.texts && published === old.published;
  const scene = same ? old.scene : site.check(change.texts, published);
  if (scene.diagnostics.length) throw new CheckFailed(change.refusal, scene.diagnostics);
  change.check?.(scene);
  const unpinned = [...asked].filter((p) => !scene.nodes.some((n) => n.name === p));
  const pins = unpinned.length ? new Set([...asked].filter((p) => !unpinned.includes(p))) : asked;
  const preparing = performance.now();
  await site.prepareScene(scene, [...pins]);
  await site.prepare(migrationIrs(published, old.scene, scene));
  const prepare_ms = performance.now() - preparing;
  throwIfCancelled(change.signal);
  return { scene, published, pins, unpinned, prepare_ms };
}

/**
 * A compose or saved edit that leaves a document of the scene (the entry, or one it uses) blank
 * over statements it had: refused (CheckFailed, at 1:1), the running world and its state kept. An editor that truncates
 * before it writes shows a sync an empty file for a moment, which would otherwise tear the world
 * down; a scene is cleared on purpose by leaving a comment in its entry document.
 */
function refuseEmptiedDocuments(running: Scene, change: SceneChange): void {
  if (change.reason !== 'compose' && change.reason !== 'disk') return;
  // Any document the scene uses (a `use`d kernels.esn emptied read as "no document declares" its kernels).
  for (const doc of running.documents) refuseEmptied(running, change, doc.path);
}

function refuseEmptied(running: Scene, change: SceneChange, path: string): void {
  const text = change.texts.get(path);
  const statements = running.documents.find((d) => d.path === path)?.statements.length ?? 0;
  if (text === undefined || text.trim() !== '' || statements === 0) return;
  const which = path === running.entry ? `\`${path}\`, the scene's entry document,` : `\`${path}\`, a document of the scene,`;
  const what = change.reason === 'disk' ? `${which} is empty on disk (${text.length} bytes${text.length ? ', all white space' : ''})` : `compose would leave ${which} empty`;
  const message = `${what}: the running version (${statements} statement${statements > 1 ? 's' : ''}) keeps running, with its state; ${change.reason === 'disk' ? 'save the document again to go on, or, to clear the scene for good, leave only a comment in it' : 'to clear the scene for good, compose a text that holds only a comment'} (e.g. \`// empty\`)`;
  throw new CheckFailed(change.refusal, [{ severity: 'error', message, path, span: { start: 0, end: text.length }, line: 1, column: 1 }]);
}

/** A fresh memory for `scene` when the running one holds far more than it needs (shouldRenew), else undefined. */
function renewal(memory: FieldMemory, scene: Scene, pins: string[], fuse: boolean, renew: (bytes: number) => Renewed): Renewed | undefined {
  if (memory.bytes <= RENEW_ABOVE) return undefined;
  const need = fieldNeeds(scene, sceneGroups(scene, pins, fuse)).reduce((n, f) => n + f.bytes, 0);
  return shouldRenew(memory.bytes, need) ? renew(need) : undefined;
}

/** Carry a value change: in the frame slot, prepare (may refuse) and then apply (cannot fail). */
function commitValues(site: CommitSite, change: ValueChange): Promise<{ world: World; events: WorldEvent[] }> {
  return site.frame(async () => {
    const world = site.world;
    const apply = await change.prepare(world);
    return { world, events: apply(world.engine) };
  });
}
