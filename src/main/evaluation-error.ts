// How a group's failure is told: an EvaluationError naming the node that failed, whichever thread
// ran it (a worker's fuel trap comes back as a node index, turned here into the node's name).

import { moduleMeta } from '../codegen/instantiate.js';
import type { Group } from '../ir/fuse.js';
import { FuelTrap } from '../ir/fuel-trap.js';
import { PoolTrap } from '../workers/pool.js';
import { Cancelled } from './cancel.js';
import { UserError } from './user-error.js';
import type { Scene } from '../ir/check/scene.js';
import { LineIndex } from '../ir/syntax/position.js';
import { runawayLoopsOf } from './loop-places.js';

/** A failed evaluation: names the node; the world is as it was before the frame. */
export class EvaluationError extends UserError {
  override name = 'EvaluationError';
  constructor(
    message: string,
    readonly node?: string,
  ) {
    super(message);
  }
}

/** A group's run failed: the EvaluationError naming the node (a fuel trap names the node that ran out). */
export function groupFailure(g: Group, module: WebAssembly.Module | undefined, e: unknown): EvaluationError | Cancelled {
  if (e instanceof Cancelled) return e;
  if (e instanceof PoolTrap && module) e = fuelTrapOf(e, module);
  if (e instanceof FuelTrap) return new EvaluationError(e.message, e.node);
  const node = g.nodes[g.nodes.length - 1].name;
  const message = e instanceof Error ? e.message : String(e);
  // A trap that crossed a thread as a plain Error already names its node: "node `n` failed: node `n` ran out of fuel".
  const named = /^node `([^`]+)` /.exec(message);
  if (named && g.nodes.some((n) => n.name === named[1])) return new EvaluationError(message, named[1]);
  return new EvaluationError(`node \`${node}\` failed: ${message}`, node);
}

/**
 * A pool run's fuel trap as the FuelTrap the calling thread throws: the node by its index in the
 * module's table, else `unnamed` (left undefined by a group, which names none then either).
 */
export function fuelTrapOf(e: PoolTrap, module: WebAssembly.Module, unnamed?: string): FuelTrap {
  const meta = moduleMeta(module);
  return new FuelTrap((meta.nodes[e.trap] ?? unnamed)!, meta.fuel, e.element);
}

/**
 * A render's failed frame, as every renderer tells it (local, tiled, the farm's workers): where
 * the failing node is declared (`path:line:column: `, the path under the scene's folder), the
 * frame, and the error.
 */
export function frameFailure(scene: Scene, frame: number, e: EvaluationError): string {
  const { place, message } = failureTold(scene, e);
  return `${place ? `${place.path}:${place.line}:${place.column}: ` : ''}frame ${frame}: ${message}`;
}

/**
 * Where a failure is mended, and its words: a loop out of fuel is placed at its loop when the
 * node runs one (a kernel's `each` body and the fns it calls), its loops listed when several;
 * anything else at the node's statement.
 */
export function failureTold(scene: Scene, e: EvaluationError): { place?: { path: string; line: number; column: number }; message: string } {
  const loops = /ran out of fuel/.test(e.message) ? runawayLoopsOf(scene, e.node) : [];
  if (loops.length === 1) {
    const { path, line, column } = loops[0];
    return { place: { path, line, column }, message: e.message };
  }
  const listed = loops.length > 1 ? `; its loops: ${loops.map((l) => `${l.path}:${l.line}:${l.column} (${l.keyword})`).join(', ')}` : '';
  return { place: nodeDeclared(scene, e.node), message: e.message + listed };
}

/** Where a node's statement is (the path under the scene's folder), if the scene has it. */
export function nodeDeclared(scene: Scene, node: string | undefined): { path: string; line: number; column: number } | undefined {
  const n = scene.nodes.find((x) => x.name === node);
  const doc = n && scene.documents.find((d) => d.path === n.path);
  if (!n || !doc) return undefined;
  return { path: doc.path, ...new LineIndex(doc.text).positionAt(n.statement.span.start) };
}
