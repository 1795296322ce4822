// Dry runs: `compose` and `publish` with `"dry_run": true`, and `prepare`, with `"evaluate":
// {frames?, time?, outputs?, thumbnail?, png?}`, run the change on a fork of the world
// (main/fork.ts) and answer what it would do: per output a thumbnail, the full PNG when asked,
// and the diff against the running world's same frames; per node the timings of both. Nothing
// is written, swapped in or counted as a generation.

import type { Scene } from '../../ir/check/scene.js';
import type { SceneChange } from '../../main/commit.js';
import type { ForkOutput, ForkPicture, ForkResult, ForkState } from '../../main/fork.js';
import { diffPicture, diffPlanes, fitInside } from '../../main/image-diff.js';
import type { Session } from '../../main/session.js';
import type { WorldEvent } from '../../main/world.js';
import { packedPlanes, pngPicture, thumbnail, thumbnailPixels, THUMBNAIL_MAX_SIDE, THUMBNAIL_SIDE, type PngPicture } from '../../main/thumbnail.js';
import { isF32Number } from '../envelope.js';
import { ProtocolError } from '../error.js';
import { mib, READ_LIMIT } from '../../main/budget.js';
import { crop, regionOf, tooLargeToRead } from '../read-region.js';

/** The most frames a dry run runs (each on two forks: the world's and the change's). */
export const DRY_RUN_MAX_FRAMES = 100;

/** What a dry run evaluates, checked (the request's `evaluate`). */
export interface EvaluateOptions {
  frames: number;
  time?: number;
  outputs?: string[];
  /** The longest side of thumbnails (and of the diff picture). */
  thumbnail: number;
  /** Also the full PNG of each output and of its diff. */
  png: boolean;
  /** Also each carried state's values, as `read` answers them with format f32: of `region` (default whole), of the states named (default all). */
  values?: { region?: Record<string, unknown>; states?: string[] };
  /** Also the running world's picture of the same frames, as a thumbnail (the Player's preview, side by side; not a request field). */
  before?: boolean;
}

const FIELDS = ['frames', 'time', 'outputs', 'thumbnail', 'png', 'values'];
const EXPECTED = '{frames?: 0..100, time?: number, outputs?: [names], thumbnail?: 1..1024, png?: boolean, values?: true | {region?: {x, y, z?, width, height, depth?}, states?: ["node.port"]}}';

/** The request's `evaluate` checked, or undefined when it has none. */
export function evaluateOptions(value: unknown): EvaluateOptions | undefined {
  if (value === undefined) return undefined;
  const bad = (message: string) => new ProtocolError(`${message}; \`evaluate\` is ${EXPECTED}`, { field: 'evaluate', expected: EXPECTED, fields: FIELDS });
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (unknown) throw bad(`\`evaluate\` has no member \`${unknown}\``);
  const frames = v.frames ?? 1;
  if (typeof frames !== 'number' || !Number.isInteger(frames) || frames < 0 || frames > DRY_RUN_MAX_FRAMES) throw bad(`\`evaluate.frames\` must be an integer from 0 to ${DRY_RUN_MAX_FRAMES}`);
  if (v.time !== undefined && !isF32Number(v.time)) throw bad('`evaluate.time` must be a finite number of seconds within ±3.4e38');
  if (v.outputs !== undefined && !(Array.isArray(v.outputs) && v.outputs.every((o) => typeof o === 'string'))) throw bad('`evaluate.outputs` must be an array of output names');
  const side = v.thumbnail ?? THUMBNAIL_SIDE;
  if (typeof side !== 'number' || !Number.isInteger(side) || side < 1 || side > THUMBNAIL_MAX_SIDE) throw bad(`\`evaluate.thumbnail\` must be an integer from 1 to ${THUMBNAIL_MAX_SIDE} (the longest side in pixels)`);
  if (v.png !== undefined && typeof v.png !== 'boolean') throw bad('`evaluate.png` must be true or false');
  return { frames, time: v.time as number | undefined, outputs: v.outputs as string[] | undefined, thumbnail: side, png: v.png === true, ...valuesOption(v.values, bad) };
}

/** `evaluate.values` checked: true, or {region?, states?}; false or absent: none. */
function valuesOption(value: unknown, bad: (message: string) => ProtocolError): Pick<EvaluateOptions, 'values'> {
  if (value === undefined || value === false) return {};
  if (value === true) return { values: {} };
  const v = value as Record<string, unknown>;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('`evaluate.values` is true (every state\'s values, whole) or {region?, states?}');
  const unknown = Object.keys(v).find((k) => k !== 'region' && k !== 'states');
  if (unknown) throw bad(`\`evaluate.values\` has no member \`${unknown}\` (it takes region and states)`);
  if (v.region !== undefined && (typeof v.region !== 'object' || v.region === null || Array.isArray(v.region))) throw bad('`evaluate.values.region` is {x, y, width, height}, as `read` takes it');
  // Its numbers checked before any fork runs; whether it lies inside each state, after.
  const region = (v.region ?? {}) as Record<string, unknown>;
  const keys = ['x', 'y', 'z', 'width', 'height', 'depth'] as const;
  const unknownKey = Object.keys(region).find((k) => !(keys as readonly string[]).includes(k));
  if (unknownKey) throw bad(`\`evaluate.values.region\` has no member \`${unknownKey}\` (it is {x, y, width, height}, and z, depth of a 3-D state, as \`read\` takes it)`);
  const least = (k: string) => (k === 'x' || k === 'y' || k === 'z' ? 0 : 1);
  const notCount = keys.find((k) => region[k] !== undefined && !(Number.isSafeInteger(region[k]) && (region[k] as number) >= least(k)));
  if (notCount) throw bad(`\`evaluate.values.region.${notCount}\` must be an integer of at least ${least(notCount)} (elements)`);
  if (v.states !== undefined && !(Array.isArray(v.states) && v.states.every((x) => typeof x === 'string'))) throw bad('`evaluate.values.states` is an array of "node.port" names');
  return { values: { ...(v.region ? { region: v.region as Record<string, unknown> } : {}), ...(v.states ? { states: v.states as string[] } : {}) } };
}

/** `evaluate` on compose or publish needs `dry_run`: a real change answers no preview. */
export function refuseEvaluateAlone(dry: boolean | undefined, evaluate: EvaluateOptions | undefined, op: string): void {
  if (evaluate && !dry) throw new ProtocolError(`\`evaluate\` runs the change on a fork before it is made: give \`"dry_run": true\` with it (then make the change with the same ${op} without either)`, { field: 'evaluate', fields: ['dry_run', 'evaluate'] });
}

/** A check of the changed scene: every output asked for is one of it. */
function outputsOf(options: EvaluateOptions, also?: (scene: Scene) => void): (scene: Scene) => void {
  return (scene) => {
    also?.(scene);
    for (const o of options.outputs ?? []) {
      if (!scene.outputs.some((x) => x.name === o)) throw new ProtocolError(`\`evaluate.outputs\` names \`${o}\`, not an output of the changed scene; its outputs: ${scene.outputs.map((x) => x.name).join(', ') || 'none'}`, { field: 'evaluate' });
    }
  };
}

/**
 * Run `change` on a fork (after the changes before it) and answer what it would do: the events it
 * would tell and, with `evaluate`, its `evaluation`. Without `evaluate` no frame runs.
 */
export async function dryRun(s: Session, change: SceneChange, options: EvaluateOptions | undefined): Promise<{ events: WorldEvent[]; evaluation?: Awaited<ReturnType<typeof evaluation>> }> {
  const run = options ?? { frames: 0, thumbnail: THUMBNAIL_SIDE, png: false };
  const result = await s.dryRun({ ...change, check: outputsOf(run, change.check) }, { frames: run.frames, time: run.time, outputs: run.outputs });
  return { events: result.events, ...(options ? { evaluation: await evaluation(result, run) } : {}) };
}

/** The fork's frames as the answer tells them: pictures encoded, diffs made. */
async function evaluation(r: ForkResult, o: EvaluateOptions) {
  const outputs = [];
  for (const out of r.outputs) outputs.push(await outputAnswer(out, o, r.beforeFailed));
  const states = [];
  const values = o.values ? stateValues(r.states, o.values) : new Map<ForkState, object>();
  for (const st of r.states) states.push({ ...(await stateAnswer(st, o)), ...(values.has(st) ? { values: values.get(st) } : {}) });
  const failed = r.beforeFailed === undefined ? {} : { note: `the running world's own frame fails (${r.beforeFailed}): the change's frames ran, with no frame of the running world to compare them with` };
  return { frames: r.frames, frame: r.frame, time: r.time, prepare_ms: r.prepare_ms, outputs, states, timings: r.timings, ...failed };
}

/** A state as the change would carry it: how, its layout, its digest and picture (before any frame). */
async function stateAnswer(st: ForkState, o: EvaluateOptions) {
  const base = { node: st.node, port: st.port, how: st.how, ...(st.reason ? { reason: st.reason } : {}), type: st.type, width: st.width, height: st.height, ...(st.depth > 1 ? { depth: st.depth } : {}) };
  if (st.tooLarge) return { ...base, note: 'too large to read back whole (as `read` refuses it): no digest or picture; read a region of it after the change' };
  // Its thumbnail made as an output's is (pictureThumbnail): reduced on the linear values.
  const pictures = st.rgba && st.planes ? { thumbnail: await pictureThumbnail({ ...st, planes: st.planes }, o.thumbnail), ...(o.png ? { png: await pngPicture(st.rgba, st.width, st.height) } : {}) } : { note: 'a 3-D state has no picture' };
  return { ...base, digest: st.digest, ...pictures };
}

/**
 * The values of the states asked for, as `read` answers a field with format f32 (width, height,
 * depth, components, data: base64 little-endian floats, component-major planes), each of the region
 * (checked as `read` checks it) and all of them together within what one read answers.
 */
function stateValues(states: ForkState[], asked: NonNullable<EvaluateOptions['values']>): Map<ForkState, object> {
  const name = (st: ForkState) => `${st.node}.${st.port}`;
  const unknown = asked.states?.find((n) => !states.some((st) => name(st) === n));
  if (unknown) throw new ProtocolError(`\`evaluate.values.states\` names \`${unknown}\`, not a state of the changed scene; its states: ${states.map(name).join(', ') || 'none'}`, { field: 'evaluate' });
  const out = new Map<ForkState, object>();
  let bytes = 0;
  for (const st of states) {
    if (asked.states && !asked.states.includes(name(st))) continue;
    if (!st.planes) continue; // too large to read back whole: its note says so
    let region;
    try {
      region = regionOf(st, asked.region, 'evaluate.values', { anyDepth: true });
      tooLargeToRead(name(st), st, region, 'f32');
    } catch (e) {
      if (e instanceof ProtocolError) throw new ProtocolError(`the state ${name(st)}: ${e.message}`, { ...e.data, field: 'evaluate' });
      throw e;
    }
    const { width, height, depth, planes } = crop(st, st.planes, region);
    const all = new Float32Array(planes.reduce((n, p) => n + p.length, 0));
    planes.reduce((o, p) => (all.set(p, o), o + p.length), 0);
    bytes += all.byteLength;
    if (bytes > READ_LIMIT)
      throw new ProtocolError(`the states' values together are more than a read answers (${mib(READ_LIMIT)}): name fewer in \`evaluate.values.states\`, or give a smaller \`region\``, { field: 'evaluate', limit: READ_LIMIT });
    out.set(st, { format: 'f32', width, height, ...(st.depth > 1 ? { depth } : {}), components: planes.length, data: Buffer.from(all.buffer).toString('base64') });
  }
  return out;
}

async function outputAnswer(out: ForkOutput, o: EvaluateOptions, beforeFailed?: string) {
  const base = { name: out.name, width: out.width, height: out.height, ...(out.depth > 1 ? { depth: out.depth } : {}) };
  if (out.tooLarge || !out.now) return { ...base, note: 'too large to read back whole (as `read` refuses it): no picture or diff; read a region of it after the change, or evaluate a smaller size' };
  const now = out.now;
  const pictures = now.rgba ? { thumbnail: await pictureThumbnail(now, o.thumbnail), ...(o.png ? { png: await pngPicture(now.rgba, now.width, now.height) } : {}) } : { note: 'a 3-D output has no picture; the diff below covers every element, its picture the largest change over z' };
  const was = out.before;
  const before = o.before && was?.rgba ? { before: await pictureThumbnail(was, o.thumbnail) } : {};
  const diff = beforeFailed === undefined ? await diffAnswer(out.before, now, o) : { note: 'the running world\'s frame fails: no diff' };
  return { ...base, ...pictures, ...before, diff };
}

/** A fork's 2-D picture (an output, or a state as the change carried it) as a thumbnail, reduced on its linear values (thumbnail.ts). */
function pictureThumbnail(p: ForkPicture, side: number): Promise<PngPicture> {
  const pixels = thumbnailPixels(p.comps, packedPlanes(p.planes, p.width), p.width, p.height, side, () => p.rgba!);
  return thumbnail(pixels.rgba, pixels.width, pixels.height, side);
}

/** The change against the running world's same frame, or why there is none to make. */
async function diffAnswer(before: ForkPicture | undefined, now: ForkPicture, o: EvaluateOptions) {
  if (!before) return { new_output: true, note: 'the running world has no such output' };
  if (before.width !== now.width || before.height !== now.height || before.depth !== now.depth)
    return { size_changed: true, before: [before.width, before.height, ...(before.depth > 1 ? [before.depth] : [])], note: 'the size changed: no element-wise diff' };
  const d = diffPlanes(before, now);
  const small = fitInside(now.width, now.height, o.thumbnail);
  const image: PngPicture = await pngPicture(diffPicture(d, now, small.width, small.height), small.width, small.height);
  const full = o.png ? { png: await pngPicture(diffPicture(d, now, now.width, now.height), now.width, now.height) } : {};
  return {
    elements: d.elements, changed: d.changed, max: d.max, mean: d.mean, box: d.box,
    ...(d.notFinite ? { not_finite: d.notFinite } : {}),
    ...(before.comps.length !== now.comps.length ? { components: { before: before.comps.length, now: now.comps.length }, note: `compared the first ${Math.min(before.comps.length, now.comps.length)} components` } : {}),
    image, ...full,
  };
}
