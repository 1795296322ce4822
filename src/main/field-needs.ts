// What the fields of an engine need in bytes, known before anything is allocated: a scene whose
// fields do not fit the memory is refused with the largest one named (engine.ts), and a change
// checks the same sum against the session's budget (commit.ts).

import type { Scene } from '../ir/check/scene.js';
import type { Group } from '../ir/fuse.js';
import { components } from '../ir/types.js';
import { mib, moreMemoryHint } from './budget.js';
import { fieldBytes } from './field.js';
import { MemoryLimitError, type FieldMemory } from './memory.js';
import { LineIndex } from '../ir/syntax/position.js';

/** One field an engine allocates: what it is (and its node's name), its size and bytes. */
export interface FieldNeed {
  what: string;
  node?: string;
  size: number[];
  bytes: number;
}

/** The fields an engine of `scene` running `groups` allocates: what each is, its size and bytes (state twice: double-buffered). */
export function fieldNeeds(scene: Scene, groups: Group[]): FieldNeed[] {
  const needs: FieldNeed[] = [];
  for (const input of scene.inputs.values()) needs.push({ what: `input \`${input.name}\``, size: input.size, bytes: fieldBytes(input.size, components(input.type).length) });
  const seen = new Set<string>();
  for (const g of groups) {
    for (const b of g.fields) {
      if (b.kind === 'read' || seen.has(`${b.node}.${b.port}`)) continue;
      seen.add(`${b.node}.${b.port}`);
      const node = g.nodes.find((n) => n.name === b.node)!;
      const port = node.kernel.ports.find((p) => p.name === b.port)!;
      const bytes = fieldBytes(node.domain, components(port.type).length);
      needs.push({ what: `\`${b.node}.${b.port}\` of node \`${b.node}\``, node: b.node, size: node.domain, bytes: b.kind === 'state' || (b.kind === 'write' && b.state) ? 2 * bytes : bytes });
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
  const at = largest.node !== undefined ? sizeDeclared(scene, largest.node) : undefined;
  const from = at && at.node !== largest.node ? ` (its size is node \`${at.node}\`'s, ${at.path}:${at.line}:${at.column})` : '';
  throw new MemoryLimitError(
    `the scene's fields need ${mib(total)}, more than the memory budget of ${mib(memory.limitBytes)}${inUse}: ${largest.what}, ${largest.size.join(' x ')}${from}, alone needs ${mib(largest.bytes)}. Use a smaller size${moreMemoryHint(total + memory.allocatedBytes, 'session')}`,
    at,
  );
}

/**
 * Where a node's size is declared: its own `size` member, or that of the node it takes its size
 * from (through its field edges), else the node statement itself.
 */
function sizeDeclared(scene: Scene, name: string): { path: string; line: number; column: number; node: string } | undefined {
  const nodes = new Map(scene.nodes.map((n) => [n.name, n]));
  const start = nodes.get(name);
  let node = start;
  for (let hops = 0; node && hops < nodes.size; hops++) {
    const size = node.statement.members.find((m) => m.form === 'size');
    if (size) return { ...placeOf(scene, node.path, size.span.start), node: node.name };
    const from = [...node.edges.values()].find((src) => 'node' in src);
    node = from && 'node' in from ? nodes.get(from.node) : undefined;
  }
  return start && { ...placeOf(scene, start.path, start.statement.span.start), node: start.name };
}

function placeOf(scene: Scene, path: string, offset: number): { path: string; line: number; column: number } {
  const doc = scene.documents.find((d) => d.path === path);
  return { path, ...(doc ? new LineIndex(doc.text).positionAt(offset) : { line: 1, column: 1 }) };
}
