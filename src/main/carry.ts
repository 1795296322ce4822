// Carrying state from one engine to the next when a scene is published: a node's state is copied
// where its layout is unchanged, computed by the new kernel's `migrate from OLD` where its kernel
// or layout changed and there is one (a failed migration rejects the whole publication: the old
// generation keeps running), else carried by an automatic migration (auto-migrate.ts: resized,
// resampled, widened, narrowed) or reset to its declared value. Migrations run once, on the pool
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
import type { Engine } from './engine.js';
import { runOnce } from './run-once.js';
import { carryParams } from './param-defaults.js';
import { allocField, copyField, type Field } from './field.js';
import { planState, type StatePlan } from './auto-migrate.js';
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
 * the inputs whose declaration is unchanged, the outputs of the groups that run unchanged
 * (Engine.keepOutputs: a frame does not recompute them), and each node's state (carryState). Every change
 * of the scene does this (commit.ts), and so does a fork of the world (fork.ts).
 */
export async function carryWorld(published: Published, old: Engine, engine: Engine, run: MigrationRun = {}): Promise<SessionEvent[]> {
  engine.frame = old.frame;
  engine.time = old.time;
  const params = carryParams({ scene: old.scene, engine: old }, engine.scene, engine);
  const inputs: SessionEvent[] = engine.keepInputs(old).map((input) => ({ kind: 'input_reset', input, message: `input \`${input}\` was redeclared: it holds its declared value now, and anything written into it is gone; write it again` }));
  engine.keepOutputs(old);
  return [...params, ...inputs, ...(await carryState(published, old, engine, run))];
}

/**
 * Carry each node's state from `old` into `engine` (in the same memory, or a fresh one the world
 * moves to: commit.ts); returns the events: per state, how it was carried (state_carried: kept,
 * copied, resized, ...), migrated by `migrate from` (migrated) or reset (state_reset). A state
 * of a new node, or of a node that did not run, starts from its declared value, untold.
 */
export async function carryState(published: Published, old: Engine, engine: Engine, run: MigrationRun = {}): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for (const node of engine.scene.nodes) {
    const states = node.kernel.ports.filter((p) => p.kind === 'state');
    const before = old.scene.nodes.find((n) => n.name === node.name);
    if (!states.length || !before) continue; // a new node's state starts from its declared value
    const plans = states.map((p) => planState(before, node, p));
    const migration = migrationFrom(node, before);
    const changed = before.kernel.id !== node.kernel.id || plans.some((p) => p.how[0] !== 'kept');
    if (migration && changed) {
      events.push(await migrate(published, old, engine, node, before.kernel.id, migration, run));
      continue;
    }
    for (const plan of plans) {
      const from = old.fields.state(node.name, plan.port)?.current;
      const to = engine.fields.state(node.name, plan.port)?.current;
      if (!to) continue; // the node does not run: its state is not held
      const told = { node: node.name, port: plan.port, how: plan.how };
      if ('reason' in plan) events.push({ kind: 'state_reset', ...told, reason: plan.reason, message: plan.message });
      if (!from || 'reason' in plan) continue; // it did not run before: its state starts from its declared value
      if ('ir' in plan) {
        const what = `the automatic migration of \`${node.name}.${plan.port}\``;
        try {
          await runOverOld(old, engine, plan.ir, node.domain, [from], [to], what, run);
        } catch (e) {
          if (e instanceof Cancelled) throw new Cancelled(e.reason, `${what} (${plan.how.join(', ')}) stopped: ${e.message}`, node.name);
          throw e;
        }
      } else copyField(old.memory, from, to, engine.memory);
      events.push({ kind: 'state_carried', ...told, ...carriedDetail(before, node, plan.port, plan) });
    }
  }
  return events;
}

/** What a state_carried event tells besides node, port and how: the layouts before and after, the filter, and a sentence. */
function carriedDetail(before: SceneNode, node: SceneNode, port: string, plan: StatePlan) {
  const type = (n: SceneNode) => n.kernel.ports.find((p) => p.name === port)!.type.name;
  const layout = (n: SceneNode) => ({ size: n.domain, type: type(n) });
  const filter = 'filter' in plan ? plan.filter : undefined;
  const says: Record<string, string> = {
    kept: 'kept as it was',
    copied: `copied as it was (kernel ${before.kernel.id} -> ${node.kernel.id}, same layout)`,
    resized: `resized ${before.domain.join(' x ')} -> ${node.domain.join(' x ')}, the overlap kept and the rest its declared value`,
    resampled: `resampled ${before.domain.join(' x ')} -> ${node.domain.join(' x ')} (${filter})`,
    widened: `widened ${type(before)} -> ${type(node)}, the old value in the first components and the rest its declared value`,
    narrowed: `narrowed ${type(before)} -> ${type(node)}, the first components kept`,
  };
  return { from: layout(before), to: layout(node), ...(filter ? { filter } : {}), message: `\`${node.name}.${port}\` ${plan.how.map((h) => says[h]).join('; ')}` };
}

/** The functions of the migrations that publishing `scene` over `old` may run: hand-written and automatic. */
export function migrationIrs(published: Published, old: Scene, scene: Scene): IrFunction[] {
  return scene.nodes.flatMap((node) => {
    const before = old.nodes.find((n) => n.name === node.name);
    if (!before) return [];
    const decl = migrationFrom(node, before);
    const lowered = decl ? lowerNodeMigration(published, old, scene, node, before.kernel.id, decl).m : undefined;
    const automatic = node.kernel.ports.filter((p) => p.kind === 'state').map((p) => planState(before, node, p));
    return [...(lowered ? [lowered.ir] : []), ...automatic.flatMap((p) => ('ir' in p ? [p.ir] : []))];
  });
}

async function migrate(published: Published, old: Engine, engine: Engine, node: SceneNode, fromId: string, decl: MigrateDecl, run: MigrationRun): Promise<SessionEvent> {
  const { m, diagnostics, migration, port } = lowerNodeMigration(published, old.scene, engine.scene, node, fromId, decl);
  if (!m) {
    const lead = `the migration of node \`${node.name}\` does not check; the old generation keeps running`;
    throw new MigrationFailed(diagnosticsMessage(lead, diagnostics), { ...diagnosticsData(diagnostics), node: node.name, port, migration });
  }
  const reads = m.oldPorts.map((p) => old.fields.state(node.name, p)!.current);
  const targets = m.newPorts.map((p) => engine.fields.state(node.name, p)!.current);
  try {
    await runOverOld(old, engine, m.ir, node.domain, reads, targets, `the migration of \`${node.name}\``, run);
  } catch (e) {
    if (e instanceof Cancelled) throw new Cancelled(e.reason, `the migration of node \`${node.name}\` (${migration}) stopped: ${e.message}`, node.name);
    throw new MigrationFailed(`the migration of node \`${node.name}\` (${migration}) failed: ${(e as Error).message}; the old generation keeps running`, { node: node.name, port, migration });
  }
  return { kind: 'migrated', node: node.name, ports: m.newPorts, how: ['migrate from'], migration };
}

/**
 * Run a migration's function once over `domain`, reading the old engine's fields `reads` and
 * writing the new engine's `targets`. It runs in one memory, the old engine's (where the old
 * state is): when the new engine has a memory of its own, it writes into fields of the old one,
 * copied over after.
 */
async function runOverOld(old: Engine, engine: Engine, ir: IrFunction, domain: number[], reads: Field[], targets: Field[], what: string, run: MigrationRun): Promise<void> {
  const memory = old.memory;
  const written = memory === engine.memory ? targets : targets.map((f) => allocField(memory, [f.width, f.height, f.depth].slice(0, f.dims), f.comps, what));
  try {
    await runOnce(memory, ir, domain, [...reads, ...written], run);
    if (written !== targets) written.forEach((f, i) => copyField(memory, f, targets[i], engine.memory));
  } finally {
    if (written !== targets) for (const f of written) memory.release(f.ptr);
  }
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
