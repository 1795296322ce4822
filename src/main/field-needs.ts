// What the fields of an engine need in bytes, known before anything is allocated: a scene whose
// fields do not fit the memory is refused with the largest one named (engine.ts), and a change
// checks the same sum against the session's budget (commit.ts).

import type { Scene } from '../ir/check/scene.js';
import type { Group } from '../ir/fuse.js';
import { components } from '../ir/types.js';
import { mib } from './budget.js';
import { fieldBytes } from './field.js';
import { MemoryLimitError, type FieldMemory } from './memory.js';

/** The fields an engine of `scene` running `groups` allocates: what each is, its size and bytes (state twice: double-buffered). */
export function fieldNeeds(scene: Scene, groups: Group[]): { what: string; size: number[]; bytes: number }[] {
  const needs: { what: string; size: number[]; bytes: number }[] = [];
  for (const input of scene.inputs.values()) needs.push({ what: `input \`${input.name}\``, size: input.size, bytes: fieldBytes(input.size, components(input.type).length) });
  const seen = new Set<string>();
  for (const g of groups) {
    for (const b of g.fields) {
      if (b.kind === 'read' || seen.has(`${b.node}.${b.port}`)) continue;
      seen.add(`${b.node}.${b.port}`);
      const node = g.nodes.find((n) => n.name === b.node)!;
      const port = node.kernel.ports.find((p) => p.name === b.port)!;
      const bytes = fieldBytes(node.domain, components(port.type).length);
      needs.push({ what: `\`${b.node}.${b.port}\` of node \`${b.node}\``, size: node.domain, bytes: b.kind === 'state' || (b.kind === 'write' && b.state) ? 2 * bytes : bytes });
    }
  }
  return needs;
}

/**
 * Refuse, before anything is allocated, fields that do not fit what the memory has left (the
 * session's budget less the running world's fields): the error names the largest field, its
 * node and size, and what the whole scene needs.
 */
export function checkFieldBudget(memory: FieldMemory, scene: Scene, groups: Group[]): void {
  const needs = fieldNeeds(scene, groups);
  const total = needs.reduce((n, x) => n + x.bytes, 0);
  const free = memory.limitBytes - memory.allocatedBytes;
  if (total <= free) return;
  const largest = needs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const inUse = memory.allocatedBytes > 0 ? ` (${mib(memory.allocatedBytes)} of it in use by the running world)` : '';
  throw new MemoryLimitError(
    `the scene's fields need ${mib(total)}, more than the memory budget of ${mib(memory.limitBytes)}${inUse}: ${largest.what}, ${largest.size.join(' x ')}, alone needs ${mib(largest.bytes)}. Use a smaller size, or give the session more memory (--memory)`,
  );
}
