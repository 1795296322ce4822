// Carrying state from one engine to the next when a scene is published: a node's state is copied
// where its layout is unchanged, computed by the new kernel's `migrate from OLD` where its kernel
// or layout changed and there is one (a failed migration rejects the whole publication: the old
// generation keeps running), else reset to its declared value. Migrations run once, on the pool
// (kernel code, not provably short: the coordinator answers other requests meanwhile, and the
// change's signal stops them); their modules are prepared beforehand, like every engine's
// (migrationIrs).

import type { SceneNode } from '../ir/check/graph.js';
import { lowerMigration } from '../ir/check/migrate.js';
import type { Scene } from '../ir/check/scene.js';
import type { IrFunction } from '../ir/ir.js';
import { parseDocument } from '../ir/syntax/index.js';
import type { MigrateDecl } from '../ir/syntax/tree.js';
import type { EvalPool } from '../workers/pool.js';
import { Cancelled } from './cancel.js';
import { runOnce, type Engine } from './engine.js';
import { carryParams } from './param-defaults.js';
import { allocField, copyField } from './field.js';
import type { WorldEvent as SessionEvent } from './events.js';
import { diagnosticsData, diagnosticsMessage, MigrationFailed } from './refusals.js';

/** Kernels published over the protocol, by id: a migration's own document when no file holds it. */
type Published = ReadonlyMap<string, string>;

/** Where migrations run: the pool over the old engine's memory, under the change's signal. */
export interface MigrationRun {
  pool?: EvalPool;
  signal?: AbortSignal;
}

/**
 * Start `engine` where `old` is: its frame counter, clock, params (param-defaults.ts: running
 * values kept, a default changed on disk moved to; the events say which),
 * the inputs whose declaration is unchanged, and each node's state (carryState). Every change
 * of the scene does this (commit.ts), and so does a fork of the world (fork.ts).
 */
export async function carryWorld(published: Published, old: Engine, engine: Engine, run: MigrationRun = {}): Promise<SessionEvent[]> {
  engine.frame = old.frame;
  engine.time = old.time;
  const params = carryParams({ scene: old.scene, engine: old }, engine.scene, engine);
  engine.keepInputs(old);
  return [...params, ...(await carryState(published, old, engine, run))];
}

/**
 * Carry each node's state from `old` into `engine` (in the same memory, or a fresh one the world
 * moves to: commit.ts); returns the events (migrated, state_reset).
 */
export async function carryState(published: Published, old: Engine, engine: Engine, run: MigrationRun = {}): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for (const node of engine.scene.nodes) {
    const states = node.kernel.ports.filter((p) => p.kind === 'state');
    if (!states.length) continue;
    const before = old.scene.nodes.find((n) => n.name === node.name);
    const current = (e: Engine, port: string) => e.fields.state(node.name, port)?.current;
    const same = (port: string) => {
      const from = current(old, port);
      const to = current(engine, port);
      return from && to && from.planeBytes === to.planeBytes && from.width === to.width && from.comps.join() === to.comps.join();
    };
    const migration = before && migrationFrom(node, before);
    const changed = !before || before.kernel.id !== node.kernel.id || states.some((p) => !same(p.name));
    if (before && migration && changed) {
      events.push(await migrate(published, old, engine, node, before.kernel.id, migration, run));
      continue;
    }
    for (const port of states) {
      const from = current(old, port.name);
      const to = current(engine, port.name);
      if (!from || !to) continue;
      if (same(port.name)) copyField(old.memory, from, to, engine.memory);
      else events.push({ kind: 'state_reset', node: node.name, port: port.name, message: `the layout of \`${node.name}.${port.name}\` changed and the kernel has no \`migrate from ${before?.kernel.id ?? '...'}\`: it starts from its declared value` });
    }
  }
  return events;
}

/** The functions of the migrations that publishing `scene` over `old` may run. */
export function migrationIrs(published: Published, old: Scene, scene: Scene): IrFunction[] {
  return scene.nodes.flatMap((node) => {
    const before = old.nodes.find((n) => n.name === node.name);
    const decl = before && migrationFrom(node, before);
    const lowered = decl ? lowerNodeMigration(published, old, scene, node, before.kernel.id, decl).m : undefined;
    return lowered ? [lowered.ir] : [];
  });
}

async function migrate(published: Published, old: Engine, engine: Engine, node: SceneNode, fromId: string, decl: MigrateDecl, run: MigrationRun): Promise<SessionEvent> {
  const { m, diagnostics, migration, port } = lowerNodeMigration(published, old.scene, engine.scene, node, fromId, decl);
  if (!m) {
    const lead = `the migration of node \`${node.name}\` does not check; the old generation keeps running`;
    throw new MigrationFailed(diagnosticsMessage(lead, diagnostics), { ...diagnosticsData(diagnostics), node: node.name, port, migration });
  }
  // The migration reads the old state and writes the new in one memory, the old engine's: when
  // the new engine has a memory of its own, it writes into fields of the old one, copied over after.
  const memory = old.memory;
  const targets = m.newPorts.map((p) => engine.fields.state(node.name, p)!.current);
  const written = memory === engine.memory ? targets : targets.map((f) => allocField(memory, [f.width, f.height, f.depth], f.comps, `the migration of \`${node.name}\``));
  try {
    await runOnce(memory, m.ir, node.domain, [...m.oldPorts.map((p) => old.fields.state(node.name, p)!.current), ...written], run);
    if (written !== targets) written.forEach((f, i) => copyField(memory, f, targets[i], engine.memory));
  } catch (e) {
    if (e instanceof Cancelled) throw new Cancelled(e.reason, `the migration of node \`${node.name}\` (${migration}) stopped: ${e.message}`, node.name);
    throw new MigrationFailed(`the migration of node \`${node.name}\` (${migration}) failed: ${(e as Error).message}; the old generation keeps running`, { node: node.name, port, migration });
  } finally {
    if (written !== targets) for (const f of written) memory.release(f.ptr);
  }
  return { kind: 'migrated', node: node.name, migration };
}

/** A node's `migrate from` the kernel it ran before, lowered against the old kernel. */
function lowerNodeMigration(published: Published, oldScene: Scene, scene: Scene, node: SceneNode, fromId: string, decl: MigrateDecl) {
  const k = node.kernel;
  const doc = scene.documents.find((d) => d.path === k.path) ?? parseDocument(k.path, published.get(k.id) ?? '').doc;
  const { migration: m, diagnostics } = lowerMigration(doc, k, decl, oldScene.kernels.get(fromId)!, scene.env);
  return { m, diagnostics, migration: `${fromId} -> ${k.id}`, port: k.ports.find((p) => p.kind === 'state')!.name };
}

/** The `migrate from` of a node's new kernel for the kernel the node ran before, if it has one. */
function migrationFrom(node: SceneNode, before: SceneNode): MigrateDecl | undefined {
  return node.kernel.migrations.find((m) => m.from.value === before.kernel.id);
}
