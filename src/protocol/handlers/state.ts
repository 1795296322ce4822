// State: write, reset, snapshot, restore; and quit.

import type { Session, SessionEvent } from '../../main/session.js';
import type { Engine } from '../../main/engine.js';
import type { World } from '../../main/world.js';
import { fillField, packField, packedLayout, unpackField, type Field, type RowLayout } from '../../main/field.js';
import { isF32Number, ProtocolError } from '../envelope.js';
import { needGrant } from './grants.js';
import type { RequestContext } from './index.js';
import { InputImageError, readImageInto } from '../../main/image-input.js';
import { paramValueProblem } from '../../ir/check/params.js';

type Fields = Record<string, unknown>;

/** The field a write targets: a node's state port (current state) or a scene input. */
function writable(s: Session, f: Fields): { key: string; field: Field } {
  if (typeof f.input === 'string' && !s.scene.inputs.has(f.input))
    throw new ProtocolError(`no input \`${f.input}\`; the inputs: ${[...s.scene.inputs.keys()].join(', ') || 'none'}`, { field: 'input' });
  if (typeof f.input !== 'string' && typeof f.node !== 'string') throw new ProtocolError('`write` names the field it writes: `input` (a scene input) or `node` (with `port`, a state)', { field: 'node', fields: ['node', 'input'] });
  const name = String(f.input ?? f.node);
  if (s.scene.inputs.has(name) && f.port === undefined) return { key: `input:${name}`, field: s.engine.fields.input(name)! };
  const node = s.scene.nodes.find((n) => n.name === name);
  if (!node) throw new ProtocolError(`no node or input \`${name}\`; the nodes: ${s.scene.nodes.map((n) => n.name).join(', ')}; the inputs: ${[...s.scene.inputs.keys()].join(', ') || 'none'}`, { field: 'node' });
  const states = node.kernel.ports.filter((p) => p.kind === 'state').map((p) => p.name);
  const port = typeof f.port === 'string' ? f.port : states[0];
  if (!port || !states.includes(port))
    throw states.length
      ? new ProtocolError(`\`write\` writes a state port or an input; node \`${name}\` has the state ports ${states.join(', ')}`, { field: 'port', expected: states.join(' | ') })
      : new ProtocolError(`\`write\` writes a state port or an input; node \`${name}\` has no state (the inputs: ${[...s.scene.inputs.keys()].join(', ') || 'none'})`, { field: 'port' });
  const field = s.engine.fields.state(name, port)?.current;
  if (!field) throw new ProtocolError(`node \`${name}\` does not run (no output needs it), so its state is not held`, { field: 'node' });
  return { key: `${name}.${port}`, field };
}

export async function write(s: Session, f: Fields) {
  needGrant(s, 'field.write', '`write`', { node: f.input ?? f.node });
  return s.frame(async () => {
    const { key, field } = writable(s, f);
    if (typeof f.file === 'string') return writeImage(s, f.file, key, field);
    const n = field.comps.length;
    const region = (f.region as Fields | undefined) ?? {};
    const x0 = Number(region.x ?? 0), y0 = Number(region.y ?? 0), z0 = Number(region.z ?? 0);
    const w = Number(region.width ?? field.width - x0), h = Number(region.height ?? field.height - y0), d = Number(region.depth ?? field.depth - z0);
    if (![x0, y0, z0, w, h, d].every(Number.isInteger) || x0 < 0 || y0 < 0 || z0 < 0 || w < 1 || h < 1 || d < 1 || x0 + w > field.width || y0 + h > field.height || z0 + d > field.depth)
      throw new ProtocolError(`region is not inside the ${field.width} x ${field.height}${field.dims === 3 ? ` x ${field.depth}` : ''} field \`${key}\``, { field: 'region' });
    let values: Float32Array;
    if (typeof f.data === 'string') {
      const bytes = Buffer.from(f.data, 'base64');
      const want = w * h * d * n * 4;
      if (bytes.length !== want) throw new ProtocolError(`data holds ${bytes.length} bytes; ${w} x ${h}${field.dims === 3 ? ` x ${d}` : ''} elements of ${n} f32 need ${want} (component-major planes, little-endian)`, { field: 'data', expected: `${want} bytes` });
      values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
      const bad = values.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) throw new ProtocolError(`data holds ${values[bad]} at element ${bad}: write finite numbers`, { field: 'data', expected: 'finite f32' });
    } else if (f.value !== undefined) {
      const v = Array.isArray(f.value) ? (f.value as number[]) : new Array(n).fill(f.value as number);
      if (v.length !== n) throw new ProtocolError(`\`${key}\` has ${n} component${n > 1 ? 's' : ''}: give ${n} number${n > 1 ? 's' : ''}`, { field: 'value' });
      if (!f.region) {
        fillField(s.memory, field, v);
        s.engine.version++;
        return { events: [{ kind: 'wrote', field: key }] };
      }
      values = new Float32Array(w * h * d * n);
      for (let c = 0; c < n; c++) values.fill(v[c], c * w * h * d, (c + 1) * w * h * d);
    } else {
      throw new ProtocolError('`write` needs `data` (base64 f32) or `value`', { fields: ['node', 'port', 'data', 'value', 'region'], field: 'value', expected: 'number | array' });
    }
    const plane = w * h * d;
    for (let c = 0; c < n; c++) {
      const base = (field.ptr + c * field.planeBytes) / 4;
      const view = field.comps[c] === 'f32' ? s.memory.f32 : s.memory.i32;
      for (let z = 0; z < d; z++)
        for (let y = 0; y < h; y++)
          for (let x = 0; x < w; x++) {
            const v = values[c * plane + (z * h + y) * w + x];
            view[base + (x0 + x) + (y0 + y) * field.stride + (z0 + z) * field.stride * field.height] = field.comps[c] === 'f32' ? v : field.comps[c] === 'bool' ? (v ? 1 : 0) : v | 0;
          }
    }
    s.engine.version++;
    return { events: [{ kind: 'wrote', field: key }] };
  });
}

/** `write` with `file`: an image under the scene's folder, decoded to linear values (image-input.ts). */
async function writeImage(s: Session, file: string, key: string, field: Field) {
  let full: string;
  try {
    full = s.folder.resolve(file);
  } catch {
    throw new ProtocolError(`\`${file}\` is not under the scene's folder: \`write\` reads an image only from there; name it relative to the scene, like \`photo.png\``, { field: 'file' });
  }
  try {
    await readImageInto(s.memory, field, key, full);
  } catch (e) {
    if (e instanceof InputImageError) throw new ProtocolError(e.message.replaceAll(full, file), { field: 'file' });
    throw e;
  }
  s.engine.version++;
  return { events: [{ kind: 'wrote', field: key, file }] };
}

export async function reset(s: Session, f: Fields) {
  return s.frame(async () => {
    if (typeof f.node === 'string') {
      const node = s.scene.nodes.find((n) => n.name === f.node);
      if (!node) throw new ProtocolError(`no node \`${f.node}\``, { field: 'node' });
      for (const port of node.kernel.ports) {
        const field = port.kind === 'state' ? s.engine.fields.state(node.name, port.name)?.current : undefined;
        if (field) fillField(s.memory, field, port.value ?? field.comps.map(() => 0));
      }
      s.engine.version++;
      return { events: [{ kind: 'state_reset', node: node.name }] };
    }
    s.engine.reset();
    s.lastFrame = undefined;
    return { events: [{ kind: 'state_reset', node: null }] };
  });
}

interface Snapshot {
  format: 'entelechy-snapshot';
  version: 1;
  scene: string;
  published: Record<string, string>;
  params: Record<string, number[]>;
  clock: { time: number; frame: number };
  /** data: base64 of the elements, component-major and row-major (`packed`), 4 bytes each. */
  state: { key: string; comps: string[]; size: number[]; packed?: boolean; data: string }[];
}

/** How snapshots without `packed` laid out a field: rows padded to 4 elements, planes back to back. */
function legacyLayout(f: Field): RowLayout {
  const stride = Math.ceil(f.width / 4) * 4;
  return { stride, planeBytes: stride * f.height * f.depth * 4 };
}

/** The snapshot of a world: its protocol kernels, params, clock and state, packed. */
function snapshotOf(s: Session, w: World): string {
  const state: Snapshot['state'] = [];
  for (const node of w.scene.nodes) {
    for (const port of node.kernel.ports) {
      if (port.kind !== 'state') continue;
      const key = `${node.name}.${port.name}`;
      const field = w.engine.fields.state(node.name, port.name)?.current;
      if (!field) continue;
      const bytes = packField(w.engine.memory, field);
      state.push({ key, comps: field.comps, size: [field.width, field.height, field.depth], packed: true, data: Buffer.from(bytes).toString('base64') });
    }
  }
  const snap: Snapshot = {
    format: 'entelechy-snapshot', version: 1, scene: s.entry, published: Object.fromEntries(w.published),
    params: Object.fromEntries(w.engine.params), clock: { time: w.engine.time, frame: w.engine.frame }, state,
  };
  return JSON.stringify(snap);
}

export async function snapshot(s: Session, f: Fields) {
  if (typeof f.path === 'string') s.refuseDocument(f.path, 'a snapshot');
  const text = await s.read((w) => snapshotOf(s, w));
  if (typeof f.path === 'string') {
    await s.writeFile(f.path, text, 'a snapshot');
    return { path: f.path, bytes: Buffer.byteLength(text) };
  }
  return { data: text, bytes: Buffer.byteLength(text) };
}

/** A snapshot's text, from `path` or `data`, checked for its shape: nothing changes. */
function parseSnapshot(s: Session, f: Fields): Snapshot {
  let text: string | undefined;
  if (typeof f.path === 'string') {
    text = s.folder.read(f.path);
    if (text === undefined) throw new ProtocolError(`no snapshot \`${f.path}\` under the scene's folder`, { field: 'path' });
  } else if (typeof f.data === 'string') text = f.data;
  else throw new ProtocolError('`restore` needs `path` or `data`', { fields: ['path', 'data'], field: 'path', expected: 'string' });
  let snap: Snapshot;
  try {
    snap = JSON.parse(text);
  } catch {
    throw new ProtocolError('the snapshot is not JSON: nothing was restored', {});
  }
  if (snap?.format !== 'entelechy-snapshot' || snap.version !== 1 || !Array.isArray(snap.state))
    throw new ProtocolError('not an entelechy snapshot (version 1): nothing was restored', {});
  // Its shape, before anything changes: a malformed part must not leave the world half restored.
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const malformed =
    (snap.published !== undefined && (!isObject(snap.published) || !Object.values(snap.published).every((v) => typeof v === 'string'))) ? 'published' :
    (snap.params !== undefined && !isObject(snap.params)) ? 'params' :
    (snap.clock !== undefined && (!isObject(snap.clock) || !isF32Number(snap.clock.time) || !Number.isInteger(snap.clock.frame) || snap.clock.frame < 0)) ? 'clock' :
    !snap.state.every((st) => isObject(st) && typeof st.key === 'string' && typeof st.data === 'string' && Array.isArray(st.comps) && st.comps.every((c) => typeof c === 'string')) ? 'state' :
    undefined;
  if (malformed) throw new ProtocolError(`the snapshot's \`${malformed}\` is malformed: nothing was restored`, { field: malformed });
  return snap;
}

/** Set a new engine to a snapshot: its state where the layout fits (else said), params, clock. */
function restoreInto(s: Session, snap: Snapshot, engine: Engine): SessionEvent[] {
  const events: SessionEvent[] = [];
  // A snapshot names each state `node.port`, as `snapshot` wrote it.
  const held = new Map([...engine.fields.stateBuffers()].map((h) => [`${h.node}.${h.port}`, h.buffers.current]));
  for (const st of snap.state) {
    const field = held.get(st.key);
    const bytes = Buffer.from(st.data, 'base64');
    // Packed elements; snapshots from before the packed form hold the memory's padded rows
    // of that time (stride: width rounded up to 4; planes back to back).
    const layout = field && (st.packed ? packedLayout(field) : legacyLayout(field));
    const sameShape = field && field.comps.join() === st.comps.join() && (!Array.isArray(st.size) || st.size.join() === [field.width, field.height, field.depth].join());
    if (!field || !layout || !sameShape || bytes.length !== layout.planeBytes * field.comps.length) {
      events.push({ kind: 'state_reset', field: st.key, message: `the snapshot's \`${st.key}\` does not fit the running layout` });
      continue;
    }
    unpackField(engine.memory, field, bytes, layout);
  }
  for (const [name, value] of Object.entries(snap.params ?? {})) engine.params.set(name, value);
  engine.time = snap.clock?.time ?? 0;
  engine.frame = snap.clock?.frame ?? 0;
  engine.version++;
  return events;
}

export async function restore(s: Session, f: Fields, ctx: RequestContext) {
  return s.change(async () => {
    const snap = parseSnapshot(s, f);
    const events = await s.commit({
      reason: 'restore',
      texts: s.texts,
      signal: ctx.signal,
      published: new Map(Object.entries(snap.published ?? {})),
      refusal: "the snapshot's kernels do not check with the scene: nothing was restored",
      check: (scene) => {
        for (const [name, value] of Object.entries(snap.params ?? {})) {
          const p = scene.params.get(name);
          const problem = p && (Array.isArray(value) ? paramValueProblem(p, value) : { why: `\`${name}\` is not a list of numbers` });
          if (!p || problem) throw new ProtocolError(`the snapshot's param \`${name}\` does not fit the scene${problem ? ` (${problem.why})` : ' (it declares no such param)'}: nothing was restored`, {});
        }
      },
      adjust: (engine) => restoreInto(s, snap, engine),
    });
    return { events };
  });
}

export async function quit() {
  return {};
}
