// The world a session runs, as one value: the checked scene, the documents it was checked from,
// the kernels published over the protocol, the registry with its generations, the pins, and the
// engine (which holds the fields, the params and the clock). A change never edits a world: it
// builds the next one and the session swaps it in whole (commit.ts).

import { loadScene, type Scene } from '../ir/check/scene.js';
import type { Engine } from './engine.js';
import { Engine as EngineClass } from './engine.js';
import type { FieldMemory } from './memory.js';
import type { WorldEvent } from './events.js';

/** A kernel the registry holds: its generation counts publications of its id. */
export interface RegistryEntry {
  id: string;
  generation: number;
  origin: string;
  source: string;
}

export type { WorldEvent } from './events.js';

export interface World {
  readonly scene: Scene;
  readonly engine: Engine;
  /** The text of each document the scene was checked from, by path. */
  readonly texts: ReadonlyMap<string, string>;
  /** Kernel sources published over the protocol, by id. */
  readonly published: ReadonlyMap<string, string>;
  readonly registry: ReadonlyMap<string, RegistryEntry>;
  readonly pins: ReadonlySet<string>;
  /** Counts the worlds swapped in; 0 is the empty world a session starts from. */
  readonly revision: number;
}

/** The world before any scene ran (or while the scene on disk does not check). */
export function emptyWorld(memory: FieldMemory, texts: ReadonlyMap<string, string> = new Map()): World {
  const scene = loadScene('(empty)', { read: () => '' });
  return { scene, engine: new EngineClass(scene, { memory }), texts, published: new Map(), registry: new Map(), pins: new Set(), revision: 0 };
}

/**
 * The registry of a new scene: a kernel whose source (or origin) changed, or that is new, gets
 * the next generation; one the scene no longer has is retired. `tell`: false when a session
 * opens (its first kernels are not news).
 */
export function nextRegistry(old: World, scene: Scene, published: ReadonlyMap<string, string>, tell: boolean): { registry: Map<string, RegistryEntry>; events: WorldEvent[] } {
  const registry = new Map(old.registry);
  const events: WorldEvent[] = [];
  const seen = new Set<string>();
  for (const k of scene.kernels.values()) {
    seen.add(k.id);
    const doc = scene.documents.find((d) => d.path === k.path);
    const source = published.get(k.id) ?? (doc ? doc.text.slice(k.statement.span.start, k.statement.span.end) : '');
    const origin = published.has(k.id) ? 'protocol' : k.path;
    const entry = registry.get(k.id);
    if (entry && entry.source === source && entry.origin === origin) continue;
    const generation = (entry?.generation ?? 0) + 1;
    registry.set(k.id, { id: k.id, generation, origin, source });
    // A protocol kernel withdrawn for a document's of the same id (retire, or composed into one).
    if (tell && entry?.origin === 'protocol' && origin !== 'protocol')
      events.push({ kind: 'retired', kernel: k.id, generation: entry.generation, message: `the generation ${entry.generation} of \`${k.id}\` published over the protocol gave way to the one \`${k.path}\` declares; \`history\` of a document does not hold it: publish its source again to have it back` });
    if (tell) events.push({ kind: 'published', kernel: k.id, generation, origin });
  }
  for (const id of [...registry.keys()]) {
    if (seen.has(id)) continue;
    registry.delete(id);
    events.push({ kind: 'retired', kernel: id });
  }
  return { registry, events };
}

/** The nodes in evaluation order (a change of it is `routed`). */
export function order(scene: Scene): string[] {
  return scene.nodes.map((n) => n.name);
}
