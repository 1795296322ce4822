// Running: param, evaluate, read, pause, trace, pin, unpin, cancel.

import { operation, type RequestFields } from '../operations.js';
import type { Session } from '../../main/session.js';
import type { World } from '../../main/world.js';
import { encodePng, inputField, outputField, portField, readPlanes, readRgba, stateField, type Field } from '../../main/world-fields.js';
import { clockOf, hasComputed, paramsChangedSinceComputed, setParam, takeEvents } from '../../main/world-state.js';
import { isF32Number, ProtocolError } from '../envelope.js';
import { Cancelled } from '../../main/cancel.js';
import { paramSetting } from '../../ir/check/params.js';
import type { SceneNode } from '../../ir/check/graph.js';
import type { RequestContext } from './index.js';
import { imagePath, summarise, writeImage, type ChannelSummary } from '../../main/image-out.js';
import { PathError } from '../../main/documents.js';
import { LIMITS, LimitError } from '../../main/limits.js';
import { THUMBNAIL_MAX_SIDE, type PngPicture } from '../../main/thumbnail.js';
import { crop, regionOf, tooLargeToRead } from '../read-region.js';
import { outputThumbnail } from '../../main/thumbnail-cache.js';

type Fields = Record<string, unknown>;

/** `param`: a value change (main/commit.ts), checked against the running scene's param before it is set. */
export async function param(s: Session, f: RequestFields<'param'>) {
  let name = f.name;
  const events = await s.commit({
    reason: 'param',
    prepare: (w) => {
      const setting = paramSetting(w.scene, f.name, f.value);
      if (!setting.ok) throw new ProtocolError(setting.message, setting.details);
      name = setting.name;
      return (engine) => {
        setParam(engine, setting.name, setting.value);
        return [];
      };
    },
  });
  return { events, name, value: f.value };
}

/** The fields `evaluate` takes, as a refusal of one of them lists them. */
const EVALUATE_FIELDS = operation('evaluate')!.fields.map((x) => x.name);

/**
 * A scene that never checked runs an empty world: a frame of it computes nothing and moved the
 * frame counter as if it had. It is refused instead, with why the scene is and how to mend it.
 */
export function refuseNeverLoaded(s: Session, op = 'evaluate'): void {
  if (s.revision > 0 || !s.refused) return;
  throw new ProtocolError(
    `the scene is refused, so there is nothing to ${op}: ${s.refused.message}\nMend it with \`compose\` (\`edits\` of the statement named above, or the whole \`text\`): it checks the scene before writing and answers the diagnostics, often with a \`fix\` to hand back; \`document\` shows the text as it is.`,
    { refused: true, request: { op: 'document', path: s.entry } },
  );
}

export async function evaluate(s: Session, f: RequestFields<'evaluate'>, conn: RequestContext) {
  refuseNeverLoaded(s);
  const wanted = Array.isArray(f.outputs) ? (f.outputs as string[]) : undefined;
  // Checked before the frame runs: a refused request runs none.
  const side = f.thumbnail;
  if (side !== undefined && (!Number.isInteger(side) || side < 1 || side > THUMBNAIL_MAX_SIDE))
    throw new ProtocolError(`\`thumbnail\` is the longest side of each output's thumbnail in pixels: an integer from 1 to ${THUMBNAIL_MAX_SIDE}`, { field: 'thumbnail', expected: `integer 1..${THUMBNAIL_MAX_SIDE}` });

  for (const o of wanted ?? []) {
    if (!s.scene.outputs.some((x) => x.name === o)) throw new ProtocolError(`no output \`${o}\`; the outputs: ${s.scene.outputs.map((x) => x.name).join(', ')}`, { field: 'outputs' });
  }
  if (Array.isArray(f.keys) && !f.keys.every((k) => typeof k === 'string'))
    throw new ProtocolError('`keys` are the names of keys held: an array of strings, e.g. ["a", "shift"]', { fields: EVALUATE_FIELDS, field: 'keys', expected: 'array of strings' });
  const pointer = f.pointer as { x?: unknown; y?: unknown; down?: unknown } | undefined;
  if (pointer && (['x', 'y'].some((k) => pointer[k as 'x'] !== undefined && !isF32Number(pointer[k as 'x'])) || (pointer.down !== undefined && typeof pointer.down !== 'boolean')))
    throw new ProtocolError('`pointer` is {x, y, down}: x and y finite numbers within ±3.4e38 (element coordinates), down true or false', { fields: EVALUATE_FIELDS, field: 'pointer', expected: '{x: number, y: number, down: boolean}' });
  const input = {
    time: typeof f.time === 'number' ? f.time : undefined,
    pointer: pointer ? { x: Number(pointer.x ?? 0), y: Number(pointer.y ?? 0), down: Boolean(pointer.down) } : undefined,
    keys: Array.isArray(f.keys) ? (f.keys as string[]) : undefined,
  };
  const frames = framesWanted(f);
  // Profiling runs the next frame on an unfused copy: the answer is that frame's, with a timing per node; the world does not move.
  const { report, events, slowest, ran } = f.profile === true ? { ...(await s.profile(input, conn.signal)), events: [], ran: 1 } : { ...(await runFrames(s, input, frames, conn.signal)), slowest: undefined };
  const outputs: { name: string; width: number; height: number; depth?: number; thumbnail?: PngPicture }[] = s.scene.outputs
    .filter((o) => !wanted || wanted.includes(o.name))
    .map((o) => {
      const field = outputField(s.world, o.name)!;
      return { name: o.name, width: field.width, height: field.height, ...(field.dims === 3 ? { depth: field.depth } : {}) };
    });
  if (f.thumbnail !== undefined) await addThumbnails(s, outputs, f.thumbnail, conn.signal);
  return { frame: report.frame, time: report.time, executed: report.executed, reused: report.reused, outputs, placements: report.placements, timings: report.timings, ...(f.frames !== undefined ? { frames_run: ran } : {}), ...(slowest ? { profiled: true, slowest } : {}), events: [...events, ...takeEvents(s.world)] };
}

/** `evaluate`'s `frames`, checked: 1 to the frames limit, and not with `profile` (which moves nothing). */
function framesWanted(f: RequestFields<'evaluate'>): number {
  if (f.frames === undefined) return 1;
  const n = f.frames as number;
  if (n < 1) throw new ProtocolError(`\`frames\` is how many frames to run: at least 1, not ${n}`, { fields: EVALUATE_FIELDS, field: 'frames', expected: 'integer >= 1' });
  const refused = LIMITS.frames.limit < n ? new LimitError('frames', LIMITS.frames, `asks for ${n}`) : undefined;
  if (refused) throw refused;
  if (f.profile === true && n > 1) throw new ProtocolError('`profile` times one frame and moves nothing: send it without `frames`, then `frames` on its own', { fields: EVALUATE_FIELDS, field: 'frames' });
  return n;
}

/** Frames one after another (each commits as it ends); the last one's report and every frame's events. */
async function runFrames(s: Session, input: Parameters<Session['evaluate']>[0], frames: number, signal?: AbortSignal) {
  const events: object[] = [];
  let last: Awaited<ReturnType<Session['evaluate']>> | undefined;
  let ran: typeof last;
  let count = 0;
  for (let i = 0; i < frames; i++) {
    try {
      last = await s.evaluate(input, signal);
    } catch (e) {
      // The frames before it were committed, each whole: the answer says so.
      if (e instanceof Cancelled && i > 0) e.framesKept = { ran: i, of: frames };
      throw e;
    }
    if (last.report.executed.length) (ran = last), count++;
    events.push(...last.events);
    // Between frames the engine's own events are taken, so each frame's are told once; and the
    // event loop turns, so other connections are answered while a long run goes on.
    if (i < frames - 1) {
      events.push(...takeEvents(s.world));
      await new Promise((r) => setImmediate(r));
    }
  }
  // Frames after the one that ran may repeat it (nothing changed: idle): the answer is of the
  // last frame that ran something (it said nothing ran when the first frame had run), at the
  // clock of the last; idle is told only when no frame ran anything, once, not once per frame.
  const report = ran ? { ...ran.report, frame: last!.report.frame, time: last!.report.time } : last!.report;
  const told = new Set<string>();
  const kept = ran ? events.filter((e) => (e as { kind?: string }).kind !== 'idle') : events;
  return { report, ran: count, events: kept.filter((e) => !told.has(JSON.stringify(e)) && told.add(JSON.stringify(e))) };
}

/**
 * A thumbnail of each 2-D output (thumbnail-cache.ts), its longest side at most `side`: the field
 * read (and reduced) in the frame slot, the PNG encoded after, so the next frame need not wait;
 * made once per frame for every request that asks.
 */
async function addThumbnails(s: Session, outputs: { name: string; depth?: number; thumbnail?: PngPicture }[], side: number, signal?: AbortSignal): Promise<void> {
  const flat = outputs.filter((o) => o.depth === undefined);
  // (Paused before any frame, nothing is computed: no thumbnail, as `read` would refuse.)
  const pictures: Promise<PngPicture>[] = await s.read((w) => (!hasComputed(w) ? [] : flat.map((o) => outputThumbnail(w, o.name, side))), signal);
  for (const [i, picture] of pictures.entries()) flat[i].thumbnail = await picture;
}

/** The field a read names: an output, a pinned node's port, or a scene input. */
function readable(s: World, f: Fields): { name: string; field: Field; state: boolean } {
  if (typeof f.input === 'string') {
    const inputs = [...s.scene.inputs.keys()];
    if (!s.scene.inputs.has(f.input)) throw new ProtocolError(`no input \`${f.input}\`; the inputs: ${inputs.join(', ') || 'none'}`, { field: 'input' });
    // An input holds its values before any frame (its declared value, or what was written): like a state.
    return { name: `input:${f.input}`, field: inputField(s, f.input)!, state: true };
  }
  if (typeof f.node === 'string') {
    const node = s.scene.nodes.find((n) => n.name === f.node);
    if (!node) throw ProtocolError.noNode(f.node, s.scene.nodes);
    const ports = node.kernel.ports.filter((p) => p.kind !== 'in').map((p) => p.name);
    const port = typeof f.port === 'string' ? f.port : ports[0];
    if (!ports.includes(port)) throw new ProtocolError(`node \`${node.name}\` has no out or state port \`${port}\`; its ports: ${ports.join(', ')}`, { field: 'port' });
    const field = portField(s, node.name, port);
    if (!field) throw new ProtocolError(`\`${node.name}.${port}\` is not kept: fusion computes it inside another loop. Pin it first: {"op": "pin", "node": "${node.name}"}`, { request: { op: 'pin', node: node.name } });
    return { name: `${node.name}.${port}`, field, state: stateField(s, node.name, port) !== undefined };
  }
  // A port with no node read the default output, as if `port` were not there.
  if (typeof f.port === 'string') throw new ProtocolError(`\`port\` names a port of a node: give \`node\` too, e.g. {"op": "read", "node": "${s.scene.nodes[0]?.name ?? 'NODE'}", "port": "${f.port}"}; without \`node\`, read reads an output`, { field: 'node' });
  const name = typeof f.output === 'string' ? f.output : s.scene.outputs[0]?.name;
  const field = name ? outputField(s, name) : undefined;
  if (!name || !field) throw new ProtocolError(name ? `no output \`${name}\`; the outputs: ${s.scene.outputs.map((o) => o.name).join(', ')}` : 'the scene has no output', { field: 'output' });
  return { name, field, state: false };
}

/** What `read` answers: the field's pixels as a PNG, or its components as f32, in base64. */
interface ReadAnswer {
  name: string;
  width: number;
  height: number;
  depth?: number;
  components?: number;
  format: string;
  frame: number;
  /** What the values are not: made before a param changed, or i32 integers rounded as f32. */
  note?: string;
  /** The PNG or floats in base64; not sent when the PNG went to `file`. */
  data?: string;
  /** With `file`: where the PNG was written (relative to the scene's folder), its bytes, and each channel's min, max and mean. */
  path?: string;
  bytes?: number;
  summary?: ChannelSummary[];
}

export async function read(s: Session, f: RequestFields<'read'>, conn: RequestContext): Promise<ReadAnswer> {
  const format = typeof f.format === 'string' ? f.format : 'png';
  if (format !== 'png' && format !== 'f32') throw new ProtocolError('`format` is png or f32', { field: 'format', expected: 'png | f32' });
  const file = typeof f.file === 'string' ? f.file : undefined;
  if (file !== undefined && format !== 'png') throw new ProtocolError('`file` writes a PNG: leave `format` out (or png) with `file`', { field: 'format', expected: 'png' });
  // Checked before the frame slot: a path outside the folder costs no wait.
  const full = file === undefined ? undefined : pathOf(() => imagePath(s.folder, file));
  let summary: ChannelSummary[] | undefined;
  // The field is read between frames; a PNG is encoded after, so that the next frame need not wait.
  let rgba: Uint8Array | undefined;
  // The world this request arrived to, read in the frame slot (a swap since frees it only after).
  const answer = await s.read(async (w): Promise<Omit<ReadAnswer, 'data'> & { data?: string }> => {
    const { name, field, state } = readable(w, f);
    // The region is checked first: a read past the limit is then one of the field's own sizes.
    const region = regionOf(field, f.region as Fields | undefined);
    tooLargeToRead(name, field, region, format);
    if (!hasComputed(w) && !state)
      throw new ProtocolError(`\`${name}\` holds nothing computed yet: no frame of the running version has run (the scene changed, or was pinned, since the last one, or the last frame failed or was cancelled). Evaluate first: {"op": "evaluate"}`, { request: { op: 'evaluate' } });
    // A picture of a 3-D field is one z-slice of it: a region of depth 1.
    // (One of depth 1 is its one slice: asking for it by region was refused.)
    if (format === 'png' && field.dims === 3 && region?.depth !== 1 && field.depth !== 1) {
      // The slice asked for, if one was (a region of depth 2 at z 128 was answered "z: 0").
      const z = Math.min(Math.max(0, Math.trunc(Number((f.region as { z?: unknown } | undefined)?.z) || 0)), field.depth - 1);
      throw new ProtocolError(`\`${name}\` is a 3-D field: an image needs a 2-D one, so a PNG shows one z-slice of its ${field.depth}, e.g. {"region": {"z": ${z}, "depth": 1}}; read every slice as f32 ({"format": "f32"}), or add a view kernel that renders it`, { field: 'region', expected: { z, depth: 1 } });
    }
    const { width, height, depth, planes } = crop(field, readPlanes(w, field), region);
    const { frame } = clockOf(w);
    // A param set since: the values are the frame's, made with its older value (an agent judged
    // the change by the picture before it).
    const changed = name.startsWith('input:') ? [] : paramsChangedSinceComputed(w);
    const notes = changed.length ? [`frame ${frame} was computed before ${changed.map((p) => `\`${p}\``).join(', ')} changed: this is what it made with the older value${changed.length > 1 ? 's' : ''}; evaluate to see the new`] : [];
    // An f32 holds integers exactly only up to 2^24: past it, an i32's value read as f32 is rounded.
    if (format === 'f32' && field.comps.some((c, i) => c === 'i32' && planes[i]!.some((v) => Math.abs(v) > 2 ** 24)))
      notes.push(`\`${name}\` holds integers past 2^24 (16777216), which f32 values round (16777217 reads as 16777216): \`trace\` an element for its exact value, or \`entelechy render -o NAME.npy\` for every value as int32`);
    const note = notes.length ? { note: notes.join('; ') } : {};
    if (file !== undefined) summary = summarise(planes);
    if (format === 'png') {
      rgba = readRgba(w, field, name, region || field.dims === 3 ? { planes, elements: width * height } : undefined);
      return { name, width, height, ...(field.dims === 3 ? { depth } : {}), format, frame, ...note };
    }
    const all = new Float32Array(planes.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of planes) {
      all.set(p, o);
      o += p.length;
    }
    // Of a 3-D field, the region's every slice: [c][z][y][x] (read-region.ts crop), `depth` of them.
    return { name, width, height, ...(field.dims === 3 ? { depth } : {}), components: planes.length, format, frame, ...note, data: Buffer.from(all.buffer).toString('base64') };
  }, conn.signal);
  if (!rgba) return { ...answer, data: answer.data! };
  const png = await encodePng(answer.width, answer.height, rgba);
  if (file === undefined) return { ...answer, data: png.toString('base64') };
  writeImage(full!, file, png);
  return { ...answer, path: s.folder.relative(full!), bytes: png.length, summary };
}

/** A path refusal as the protocol answers it, naming the field. */
function pathOf(resolve: () => string): string {
  try {
    return resolve();
  } catch (e) {
    if (e instanceof PathError) throw new ProtocolError(e.message, { field: 'file' });
    throw e;
  }
}

export async function pause(s: Session, f: RequestFields<'pause'>, conn: RequestContext) {
  return { paused: await s.pause(f.paused, conn.signal) };
}

export async function trace(s: Session, f: RequestFields<'trace'>, conn: RequestContext) {
  refuseNeverLoaded(s, 'trace');
  const x = Number(f.x);
  const y = Number(f.y ?? 0);
  const z = Number(f.z ?? 0);
  // With `output`: only the nodes that output needs (its node and, along the edges, their sources).
  let needed: Set<string> | undefined;
  if (typeof f.output === 'string') {
    const out = s.scene.outputs.find((o) => o.name === f.output);
    if (!out) throw new ProtocolError(`no output \`${f.output}\`; the outputs: ${s.scene.outputs.map((o) => o.name).join(', ')}`, { field: 'output' });
    needed = new Set();
    const visit = (name: string) => {
      const node = s.scene.nodes.find((n) => n.name === name);
      if (!node || needed!.has(name)) return;
      needed!.add(name);
      for (const src of node.edges.values()) if ('node' in src) visit(src.node);
    };
    visit(out.node);
  }
  // A 3-D scene traced without `z` traced z = 0 without a word.
  const nodes = needed ? s.scene.nodes.filter((n) => needed!.has(n.name)) : s.scene.nodes;
  const sizes = nodes.map((n) => `\`${n.name}\` ${n.domain.join(' x ')}`).join(', ');
  // A scene of 2-D and 3-D nodes traced the 3-D ones at z = 0, the answer naming no z: it says so now.
  const deep = nodes.filter((n) => n.domain.length === 3);
  if (f.z === undefined && deep.length && deep.length === nodes.length)
    throw new ProtocolError(`the scene's fields are 3-D (${sizes}): give \`z\` too, e.g. {"op": "trace", "x": ${x}, "y": ${y}, "z": 0}`, { field: 'z' });
  const zNote = f.z === undefined && deep.length ? { z: 0, note: `no \`z\` given: the 3-D fields (${deep.map((n) => `\`${n.name}\``).join(', ')}) are traced at z = 0; give \`z\` for another slice` } : {};
  const { frame, values, reads } = await s.trace({ x, y, z }, needed, conn.signal);
  if (!values.length) {
    // Which coordinate is past every field (it always said `x`), and the sizes there are.
    const axis = (['x', 'y', 'z'] as const).find((a, i) => nodes.every((n) => [x, y, z][i]! >= (n.domain[i] ?? 1) || [x, y, z][i]! < 0)) ?? 'x';
    throw new ProtocolError(`(${x}, ${y}${f.z !== undefined ? `, ${z}` : ''}) is outside every field of the scene: its ${axis} is past them all (the nodes: ${sizes})`, { field: axis });
  }
  return { frame, x, y, ...(f.z !== undefined ? { z } : {}), ...zNote, values, reads };
}

/** Stop this connection's evaluations (the doors answer `cancel` out of turn, so it reaches them). */
export async function cancel(s: Session, f: RequestFields<'cancel'>, conn: RequestContext) {
  const cancelled = s.evaluations.cancel(conn.id, f.request);
  // A request of that id running on another connection: a cancel reaches only its own connection's.
  const elsewhere = cancelled === 0 && s.evaluations.runsElsewhere(conn.id, f.request);
  const which = f.request === undefined ? 'an evaluation of another connection runs' : `request ${JSON.stringify(f.request)} runs on another connection`;
  return { cancelled, ...(elsewhere ? { note: `${which}: a cancel stops only its own connection's evaluations (send it there, or give the evaluation a \`deadline\`)` } : {}) };
}

/** The node `pin` and `unpin` name, with the port they may name checked (an out or state port of it). */
function pinnedNode(s: Session, f: { node?: unknown; port?: unknown }): SceneNode {
  const node = s.scene.nodes.find((n) => n.name === f.node);
  if (!node) throw ProtocolError.noNode(f.node, s.scene.nodes);
  if (typeof f.port === 'string' && !node.kernel.ports.some((p) => p.name === f.port && p.kind !== 'in'))
    throw new ProtocolError(`node \`${node.name}\` has no out or state port \`${f.port}\``, { field: 'port' });
  return node;
}

export async function pin(s: Session, f: RequestFields<'pin'>) {
  return s.change(async () => {
    const node = pinnedNode(s, f);
    if (!s.pins.has(node.name)) await s.commit({ reason: 'pin', texts: s.texts, pins: new Set(s.pins).add(node.name), refusal: 'the scene no longer checks' });
    return { pins: [...s.pins] };
  });
}

export async function unpin(s: Session, f: RequestFields<'unpin'>) {
  return s.change(async () => {
    if (!s.pins.has(String(f.node))) throw new ProtocolError(`\`${f.node}\` is not pinned; the pins: ${[...s.pins].join(', ') || 'none'}`, { field: 'node' });
    pinnedNode(s, f); // a port that is not the node's is refused, as pin refuses it
    const pins = new Set(s.pins);
    pins.delete(String(f.node));
    await s.commit({ reason: 'unpin', texts: s.texts, pins, refusal: 'the scene no longer checks' });
    return { pins: [...s.pins] };
  });
}
