// A dry run of a scene change: what the change would do, seen before it is made. The change is
// prepared as `commit` prepares it (commit.ts prepareChange: checked, compiled), then run on a
// fork of the world: a new engine of the changed scene started where the running world is
// (carryWorld: frame counter, clock, params, inputs, state, migrations included), and beside it
// a fork of the running world itself, so both run the same frames from the same start. The forks
// live in the running memory's spare room, in the frame slot (no frame of the world runs
// meanwhile), and are freed after; the running engine is only read. Nothing is written, swapped
// in or counted as a generation: the registry the change would make is computed (nextRegistry
// is a pure function) only to tell which kernels it would publish.

import { carryWorld } from './carry.js';
import { prepareChange, unpinnedEvents, type CommitSite, type SceneChange } from './commit.js';
import { Engine, type FrameReport } from './engine.js';
import { fieldToRgba } from './image.js';
import { packField, readField, type Field } from './field.js';
import { createHash } from 'node:crypto';
import type { Scalar } from '../ir/ir.js';
import { nextRegistry, type WorldEvent } from './world.js';
import { READ_LIMIT } from './budget.js';
import { EvaluationError } from './evaluation-error.js';

/** What to run on the forks. */
export interface ForkRun {
  /** Frames to run on each fork (0: none, only the change's carried state and events). */
  frames: number;
  /** The clock of every frame (default: the world's). */
  time?: number;
  /** The outputs of the changed scene to read back (default: all). */
  outputs?: string[];
}

/** One output read back from a fork after its frames. */
export interface ForkPicture {
  width: number;
  height: number;
  depth: number;
  comps: Scalar[];
  /** Component planes, unpadded ([c][z][y][x]). */
  planes: Float32Array[];
  /** RGBA bytes of a 2-D field (image.ts's mapping); none for a 3-D one. */
  rgba?: Uint8Array;
}

export interface ForkOutput {
  name: string;
  /** The changed scene's picture (none when the output is too large to read back: `tooLarge`). */
  now?: ForkPicture;
  /** The running world's picture of the same frames (none when the running scene has no such output). */
  before?: ForkPicture;
  width: number;
  height: number;
  depth: number;
  tooLarge?: boolean;
}

/** A state of the changed scene as the change would carry it, read back before any frame runs. */
export interface ForkState {
  node: string;
  port: string;
  /** How it was carried (the state_carried, state_reset or migrated event's `how`, or kept). */
  how: string[];
  reason?: string;
  type: string;
  width: number;
  height: number;
  depth: number;
  comps: Scalar[];
  /** Its elements packed as a snapshot packs them (component-major, row-major, 4 bytes little-endian each): sha256, 16 hex digits. */
  digest?: string;
  /** RGBA bytes of a 1-D or 2-D state (image.ts's mapping). */
  rgba?: Uint8Array;
  /** Past the read limit: no digest, picture or values. */
  tooLarge?: boolean;
  /** Its values, one plane per component ([c][z][y][x]): its thumbnail is reduced from them, as an output's is, and a dry run's `values` answers them. */
  planes?: Float32Array[];
}

export interface ForkResult {
  /** The events the change would tell (migrated, state_carried, state_reset, published, retired, ...). */
  events: WorldEvent[];
  /** Every state of the changed scene's running nodes right after the change carried it. */
  states: ForkState[];
  /** Frame counter and clock the forks reached. */
  frame: number;
  time: number;
  frames: number;
  /** Milliseconds per node (a fused group under its last node), summed over the frames: the running world's against the change's (the running world's last frame's, times the frames, when its frames would repeat it). */
  timings: { node: string; fused?: string[]; before?: number; now?: number }[];
  outputs: ForkOutput[];
  prepare_ms: number;
  /** The running world's own frame failed (its error): the change's frames ran, with nothing to compare them with. */
  beforeFailed?: string;
}

/** Where a fork runs: commit's site, its frame slot taking the request's signal. */
export interface ForkSite extends CommitSite {
  frame<T>(f: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** Run `change` on a fork of the world (see the top of this file); the world is untouched. */
export async function fork(site: ForkSite, change: SceneChange, run: ForkRun): Promise<ForkResult> {
  const { scene, published, pins, unpinned, prepare_ms } = await prepareChange(site, change);
  const wanted = run.outputs ?? scene.outputs.map((o) => o.name);
  return site.frame(async (signal) => {
    const old = site.world;
    const options = { memory: site.memory, pool: site.pool, fuse: site.fuse, bandRows: site.bandRows, prepared: true, cacheFrames: false };
    const forks: Engine[] = [];
    try {
      const now = new Engine(scene, { ...options, pins: [...pins] });
      forks.push(now);
      const events: WorldEvent[] = [...(change.events ?? []), ...unpinnedEvents(unpinned)];
      events.push(...(await carryWorld(published, old.engine, now, { pool: site.pool, signal })));
      events.push(...(change.adjust?.(now) ?? []));
      const states = carriedStates(old.engine, now, events);
      const time = run.time ?? now.time;
      // The running world's side, for the diff and timings: when its frames would only repeat its
      // last one (nothing has state, nothing they read changed: a cached frame), its fields hold
      // them now and are read as they are; otherwise a fork of it runs the same frames from the
      // same start. A heavy stateless scene's dry run then costs one frame, as the change does.
      const repeats = run.frames > 0 && old.engine.repeats({ time });
      const before = run.frames > 0 && !repeats ? new Engine(old.scene, { ...options, pins: [...old.pins] }) : undefined;
      if (before) {
        forks.push(before);
        await carryWorld(old.published, old.engine, before, { pool: site.pool, signal });
      }
      const timings = new Map<string, ForkResult['timings'][number]>();
      const add = (t: FrameReport['timings'][number], side: 'before' | 'now', times = 1) => {
        const entry = timings.get(t.node) ?? { node: t.node, ...(t.fused ? { fused: t.fused } : {}) };
        entry[side] = round((entry[side] ?? 0) + t.millis * times);
        timings.set(t.node, entry);
      };
      if (repeats) for (const t of old.engine.lastTimings) add(t, 'before', run.frames);
      // A running world whose frame fails (out of fuel) is what a change often mends: its failure
      // is said, and the change's frames run all the same (its failure was the dry run's answer).
      let beforeFailed: string | undefined;
      for (let i = 0; i < run.frames; i++) {
        if (before && beforeFailed === undefined) {
          try {
            for (const t of (await before.evaluate({ time }, signal)).timings) add(t, 'before');
          } catch (e) {
            if (!(e instanceof EvaluationError)) throw e;
            beforeFailed = e.message;
          }
        }
        for (const t of (await now.evaluate({ time }, signal)).timings) add(t, 'now');
      }
      const outputs = run.frames > 0 ? wanted.map((name) => readBack(name, now, beforeFailed === undefined ? (before ?? old.engine) : undefined)) : [];
      events.push(...now.events.map((e) => ({ ...e })));
      events.push(...nextRegistry(old, scene, published, true).events);
      return { events, states, frame: now.frame, time: now.time, frames: run.frames, timings: [...timings.values()], outputs, prepare_ms: round(prepare_ms), ...(beforeFailed !== undefined ? { beforeFailed } : {}) };
    } finally {
      for (const e of forks) e.dispose();
    }
  }, change.signal);
}

/** The output `name` of both forks, read back (the running world's only when it has one). */
function readBack(name: string, now: Engine, before: Engine | undefined): ForkOutput {
  const field = now.outputField(name)!;
  const base = { name, width: field.width, height: field.height, depth: field.depth };
  // Read back as `read` would answer it whole: a field past its limit is described, not copied.
  if (field.width * field.height * field.depth * 4 * field.comps.length > READ_LIMIT) return { ...base, tooLarge: true };
  const old = before?.outputField(name);
  return { ...base, now: picture(now, field, name), ...(old ? { before: picture(before!, old, name) } : {}) };
}

function picture(engine: Engine, field: Field, name: string): ForkPicture {
  return {
    width: field.width, height: field.height, depth: field.depth, comps: field.comps,
    planes: readField(engine.memory, field),
    ...(field.dims === 3 ? {} : { rgba: fieldToRgba(engine.memory, field, name) }),
  };
}

/** Each state `now` holds, read back as the change left it (before any frame), with how it got there. */
function carriedStates(old: Engine, now: Engine, events: WorldEvent[]): ForkState[] {
  const states: ForkState[] = [];
  for (const node of now.scene.nodes) {
    for (const port of node.kernel.ports) {
      const field = port.kind === 'state' ? now.fields.state(node.name, port.name)?.current : undefined;
      if (!field) continue;
      const told = events.find((e) => (e.kind === 'state_carried' || e.kind === 'state_reset') && e.node === node.name && e.port === port.name) ?? events.find((e) => e.kind === 'migrated' && e.node === node.name);
      const ran = old.fields.state(node.name, port.name);
      const how = told ? { how: told.how as string[], ...(told.reason ? { reason: told.reason as string } : {}) } : ran ? { how: ['kept'] } : { how: ['reset'], reason: old.scene.nodes.some((n) => n.name === node.name) ? 'did not run' : 'new node' };
      const base = { node: node.name, port: port.name, ...how, type: port.type.name, width: field.width, height: field.height, depth: field.depth, comps: field.comps };
      if (field.width * field.height * field.depth * 4 * field.comps.length > READ_LIMIT) {
        states.push({ ...base, tooLarge: true });
        continue;
      }
      const digest = createHash('sha256').update(packField(now.memory, field)).digest('hex').slice(0, 16);
      states.push({ ...base, digest, planes: readField(now.memory, field), ...(field.dims === 3 ? {} : { rgba: fieldToRgba(now.memory, field, `${node.name}.${port.name}`) }) });
    }
  }
  return states;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
