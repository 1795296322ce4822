// The groups an engine runs for a scene: its nodes that the outputs and pins need, planned into
// groups (fused or not, src/ir/fuse.ts). Made once per scene, pins and fusion.

import type { SceneNode } from '../ir/check/graph.js';
import type { Scene } from '../ir/check/scene.js';
import { dumpAfter } from '../ir/dump.js';
import { buildGroup, planGroups, type Group } from '../ir/fuse.js';
import { printFunction } from '../ir/print-ir.js';

/**
 * The groups of a scene, by its pins and fusion: made once. A change prepared the groups' modules
 * and then built its engine from the groups again, fusing and digesting each group's IR twice
 * (new IR objects have no digest yet: modules.ts); a Scene and its groups are never changed.
 */
const groupsMade = new WeakMap<Scene, Map<string, Group[]>>();

/** The groups an engine for this scene runs (what the compile worker compiles ahead). */
export function sceneGroups(scene: Scene, pins: string[], fuse: boolean): Group[] {
  const key = JSON.stringify([fuse, ...pins]);
  let made = groupsMade.get(scene);
  if (!made) groupsMade.set(scene, (made = new Map()));
  let groups = made.get(key);
  if (!groups) made.set(key, (groups = groupsOf(scene, pins, fuse)));
  return groups;
}

function groupsOf(scene: Scene, pins: string[], fuse: boolean): Group[] {
  const keep = new Set([...scene.outputs.map((o) => o.node), ...pins]);
  const nodes = neededNodes(scene, pins);
  dumpAfter('lower', () => [...new Set(nodes.map((n) => n.kernel))].map((k) => printFunction(k.ir)).join('\n\n'));
  const groups = planGroups(nodes, keep, fuse).map(buildGroup);
  dumpAfter('fuse', () => groups.map((g) => printFunction(g.ir)).join('\n\n'));
  return groups;
}

/** The nodes the outputs and pins need, in order. */
function neededNodes(scene: Scene, pins: string[]): SceneNode[] {
  const byName = new Map(scene.nodes.map((n) => [n.name, n]));
  const need = new Set<string>();
  const visit = (name: string) => {
    if (need.has(name)) return;
    const n = byName.get(name);
    if (!n) return;
    need.add(name);
    for (const src of n.edges.values()) if ('node' in src) visit(src.node);
  };
  for (const o of scene.outputs) visit(o.node);
  for (const p of pins) visit(p);
  return scene.nodes.filter((n) => need.has(n.name));
}
