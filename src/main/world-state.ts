// What the protocol reads and changes of a world beyond its fields' elements (world-fields.ts):
// its clock, params and groups, the engine's own events, and the value changes `param` and
// `reset` store. The handlers go through these, never through the engine object, so what the
// engine holds and how stays its business.

import type { SceneNode } from '../ir/check/graph.js';
import type { Backend, Engine, EngineEvent } from './engine.js';
import type { Tier } from './modules.js';
import type { World } from './world.js';

/** The world's clock: the frames run and the time of the last. */
export function clockOf(world: World): { frame: number; time: number } {
  return { frame: world.engine.frame, time: world.engine.time };
}

/** Whether a frame of this world has run: before one, its out ports hold nothing computed. */
export function hasComputed(world: World): boolean {
  return world.engine.computed;
}

/** Params set since the world's out ports were computed: what `read` shows was made with their older values. */
export function paramsChangedSinceComputed(world: World): string[] {
  return world.engine.paramsChangedSinceComputed();
}

/** Which backend runs the world's groups. */
export function backendOf(world: World): Backend {
  return world.engine.backend;
}

/** Each param's current value, by name. */
export function paramValues(world: World): ReadonlyMap<string, readonly number[]> {
  return world.engine.params;
}

/** The nodes of each group (one compiled loop), in evaluation order. */
export function groupNodes(world: World): string[][] {
  return world.engine.groups.map((g) => g.nodes.map((n) => n.name));
}

/** Which compiled tier runs each group. */
export function groupTiers(world: World): { nodes: string[]; tier: Tier }[] {
  return world.engine.groupTiers().map((g) => ({ nodes: g.nodes, tier: g.tier }));
}

/** The engine's own events since they were last taken (each is told once). */
export function takeEvents(world: World): EngineEvent[] {
  return world.engine.events.splice(0);
}

// The value changes, applied by commit.ts to the running engine (an ApplyValues' argument).

/** A param set to a value already checked against the scene. */
export function setParam(engine: Engine, name: string, value: number[]): void {
  engine.params.set(name, value);
}

/** Every state back to its declared values and the clock to zero. */
export function resetAll(engine: Engine): void {
  engine.reset();
}

/** One node's state back to its declared values. */
export function resetNode(engine: Engine, node: SceneNode): void {
  engine.resetNode(node);
}
