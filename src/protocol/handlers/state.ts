// State: write, reset, snapshot, restore; and quit.

import type { RequestFields } from '../operations.js';
import type { Session } from '../../main/session.js';
import type { World, WorldEvent } from '../../main/world.js';
import type { ApplyValues } from '../../main/commit.js';
import { decodeImageFor, fillValue, holdsOtherThanSnapshot, inputField, InputImageError, restoreSnapshot, restoredNote, snapshotText, stateField, storeBox, storeImage, takenWith, type Field, type Picture, type Snapshot } from '../../main/world-fields.js';
import { resetAll, resetNode } from '../../main/world-state.js';
import { isF32Number, ProtocolError } from '../envelope.js';
import { regionOf } from '../read-region.js';
import { refuseNeverLoaded } from './running.js';
import { closest } from '../../ir/suggest.js';
import type { FileKind } from '../../main/documents.js';

const SNAPSHOT: FileKind = { noun: 'snapshot', like: 'state.snapshot.json' };
import { LIMITS } from '../limits.js';
import { needGrant } from '../../main/grants.js';
import type { RequestContext } from './index.js';
import { I32_MAX, I32_MIN, paramValueProblem } from '../../ir/check/params.js';
import type { Scalar } from '../../ir/ir.js';

/** Whether a write is into a scene input: named `input`, or `node` naming an input and no node. */
function writesInput(scene: World['scene'], f: RequestFields<'write'>): boolean {
  const name = String(f.input ?? f.node);
  return scene.inputs.has(name) && (typeof f.input === 'string' || !scene.nodes.some((n) => n.name === name));
}

/** The field a write targets in world `w`: a node's state port (current state) or a scene input. */
function writable(w: World, f: RequestFields<'write'>): { key: string; field: Field } {
  if (typeof f.input === 'string' && !w.scene.inputs.has(f.input))
    throw new ProtocolError(`no input \`${f.input}\`; the inputs: ${[...w.scene.inputs.keys()].join(', ') || 'none'}`, { field: 'input' });
  if (typeof f.input !== 'string' && typeof f.node !== 'string') throw new ProtocolError('`write` names the field it writes: `input` (a scene input) or `node` (with `port`, a state)', { field: 'node', fields: ['node', 'input'] });
  const name = String(f.input ?? f.node);
  if (writesInput(w.scene, f)) {
    if (f.port !== undefined) throw new ProtocolError(`\`${name}\` is an input, which has no ports: drop \`port\``, { field: 'port' });
    return { key: `input:${name}`, field: inputField(w, name)! };
  }
  const node = w.scene.nodes.find((n) => n.name === name);
  if (!node) {
    const near = closest(name, [...w.scene.nodes.map((n) => n.name), ...w.scene.inputs.keys()]);
    throw new ProtocolError(`no node or input \`${name}\`${near ? `; did you mean \`${near}\`?` : ''}; the nodes: ${w.scene.nodes.map((n) => n.name).join(', ') || 'none'}; the inputs: ${[...w.scene.inputs.keys()].join(', ') || 'none'}`, { field: 'node' });
  }
  const states = node.kernel.ports.filter((p) => p.kind === 'state').map((p) => p.name);
  if (f.port === undefined && states.length > 1)
    throw new ProtocolError(`node \`${name}\` has ${states.length} state ports (${states.join(', ')}): name the one to write with \`port\``, { field: 'port', expected: states.join(' | ') });
  const port = typeof f.port === 'string' ? f.port : states[0];
  if (!port || !states.includes(port))
    throw states.length
      ? new ProtocolError(`\`write\` writes a state port or an input; node \`${name}\` has the state ports ${states.join(', ')}`, { field: 'port', expected: states.join(' | ') })
      : new ProtocolError(`\`write\` writes a state port or an input; node \`${name}\` has no state (the inputs: ${[...w.scene.inputs.keys()].join(', ') || 'none'})`, { field: 'port' });
  const field = stateField(w, name, port);
  if (!field) throw new ProtocolError(`node \`${name}\` does not run (no output needs it), so its state is not held`, { field: 'node' });
  return { key: `${name}.${port}`, field };
}

/**
 * `write`: a value change (main/commit.ts). Every check, and the image's decoding, comes before
 * the first element is stored, so a refused write leaves the field exactly as it was.
 */
export async function write(s: Session, f: RequestFields<'write'>) {
  refuseNeverLoaded(s, 'write into');
  // The event names what the write was into as every write_refused does: an input, or a node's state.
  needGrant(s, 'field.write', '`write`', writesInput(s.scene, f) ? { input: f.input ?? f.node } : { node: f.node, ...(f.port !== undefined ? { port: f.port } : {}) });
  const events = await s.commit({ reason: 'write', prepare: (w) => writeValues(s, w, f) });
  return { events };
}

/** What a field's component of each type holds (an i32's value stored wrapped, or a bool's 0.5, was no value it could hold). */
const COMPONENT_VALUES: Record<Scalar, string> = { f32: 'number', i32: `integer ${I32_MIN}..${I32_MAX}`, bool: '0 | 1' };

/** Why a value is not one a component of `comp` holds (an i32's fraction, past its range, a bool's 0.5). */
function componentProblem(comp: Scalar, v: number): string | undefined {
  if (comp === 'i32' && !(Number.isInteger(v) && v >= I32_MIN && v <= I32_MAX)) return `not an i32: write an integer from ${I32_MIN} to ${I32_MAX}`;
  if (comp === 'bool' && v !== 0 && v !== 1) return 'not a bool: write 0 or 1 (false or true)';
  return undefined;
}

/** The checked values of a write, and how they are stored. */
async function writeValues(s: Session, world: World, f: RequestFields<'write'>): Promise<ApplyValues> {
  const { key, field } = writable(world, f);
  if (typeof f.file === 'string') {
    const picture = await readImage(s, f.file, key, field);
    return (engine) => {
      storeImage(engine, field, picture);
      return [{ kind: 'wrote', field: key, file: f.file }];
    };
  }
  const n = field.comps.length;
  // Checked as `read` checks its region: the same members, the same messages.
  const box = regionOf(field, f.region as Record<string, unknown> | undefined) ?? { x: 0, y: 0, z: 0, width: field.width, height: field.height, depth: field.depth };
  const { width: w, height: h, depth: d } = box;
  const wrote: WorldEvent[] = [{ kind: 'wrote', field: key }];
  let values: Float32Array;
  if (typeof f.data === 'string') {
    const bytes = base64Bytes(f.data);
    const want = w * h * d * n * 4;
    if (bytes.length !== want) throw new ProtocolError(`data holds ${bytes.length} bytes; ${w} x ${h}${field.dims === 3 ? ` x ${d}` : ''} elements of ${n} f32 need ${want} (component-major planes, little-endian)`, { field: 'data', expected: `${want} bytes` });
    values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    // Floats are stored bit for bit (NaN payloads and infinities too); an integer or bool component has no such values.
    const plane = w * h * d;
    for (let c = 0; c < n; c++) {
      const comp = field.comps[c]!;
      if (comp === 'f32') continue;
      const at = values.subarray(c * plane, (c + 1) * plane).findIndex((v) => componentProblem(comp, v) !== undefined);
      if (at >= 0) throw new ProtocolError(`data holds ${values[c * plane + at]} at element ${at} of component ${c}, ${componentProblem(comp, values[c * plane + at]!)}`, { field: 'data', expected: `${COMPONENT_VALUES[comp]} for component ${c}` });
    }
  } else if (f.value !== undefined) {
    const v = Array.isArray(f.value) ? f.value : new Array<number>(n).fill(f.value);
    if (v.length !== n) throw new ProtocolError(`\`${key}\` has ${n} component${n > 1 ? 's' : ''}: give ${n} number${n > 1 ? 's' : ''}`, { field: 'value' });
    v.forEach((x, c) => {
      const problem = componentProblem(field.comps[c]!, x);
      if (problem) throw new ProtocolError(`\`${key}\`${n > 1 ? ` component ${c}` : ''}: ${x} is ${problem}`, { field: 'value', expected: COMPONENT_VALUES[field.comps[c]!] });
    });
    if (!f.region) {
      return (engine) => {
        fillValue(engine, field, v);
        return wrote;
      };
    }
    values = new Float32Array(w * h * d * n);
    for (let c = 0; c < n; c++) values.fill(v[c], c * w * h * d, (c + 1) * w * h * d);
  } else {
    throw new ProtocolError('`write` needs `data` (base64 f32) or `value`', { fields: ['node', 'port', 'data', 'value', 'region'], field: 'value', expected: 'number | array' });
  }
  return (engine) => {
    storeBox(engine, field, box, values);
    return wrote;
  };
}

/**
 * `data` as bytes. Buffer.from skips what is not base64, so a mistaken text would be refused for
 * its length only: say it is not base64 (its padding may be left off).
 */
function base64Bytes(data: string): Buffer {
  const bad = /[^A-Za-z0-9+/=]/.exec(data);
  const body = data.replace(/=+$/, '');
  // Padding, when there is any, fills the last group of four.
  if (bad || body.includes('=') || body.length % 4 === 1 || (data.length > body.length && data.length % 4 !== 0))
    throw new ProtocolError(`\`data\` is not base64${bad ? ` (\`${bad[0]}\` at character ${bad.index + 1})` : ''}: encode the little-endian f32 values as base64 (A-Z, a-z, 0-9, +, / and = padding), or give \`value\` for one value everywhere`, { field: 'data', expected: 'base64' });
  return Buffer.from(data, 'base64');
}

/** `write` with `file`: an image under the scene's folder, decoded and resized to the field (image-input.ts); nothing is stored yet. */
async function readImage(s: Session, file: string, key: string, field: Field): Promise<Picture> {
  let full: string;
  try {
    full = s.folder.resolve(file);
  } catch {
    throw new ProtocolError(`\`${file}\` is not under the scene's folder: \`write\` reads an image only from there; name it relative to the scene, like \`photo.png\``, { field: 'file' });
  }
  try {
    return await decodeImageFor(field, key, full);
  } catch (e) {
    if (e instanceof InputImageError) throw new ProtocolError(e.message.replaceAll(full, file), { field: 'file' });
    throw e;
  }
}

/** `reset`: a value change (main/commit.ts): one node's state, or every state and the clock. */
export async function reset(s: Session, f: RequestFields<'reset'>) {
  const node = f.node;
  const events = await s.commit({
    reason: 'reset',
    restarts: node === undefined,
    prepare: (w) => {
      // An event per state port reset, as a change that cannot carry one tells it (node, port, reason).
      const told = (nodes: typeof w.scene.nodes): WorldEvent[] => nodes.flatMap((n) => n.kernel.ports.filter((p) => p.kind === 'state').map((p) => ({ kind: 'state_reset' as const, node: n.name, port: p.name, reason: 'reset' })));
      if (node === undefined) {
        return (engine) => {
          resetAll(engine);
          return told(w.scene.nodes);
        };
      }
      const found = w.scene.nodes.find((n) => n.name === node);
      if (!found) throw ProtocolError.noNode(node, w.scene.nodes);
      // Nothing to reset: it told state_reset as if something had been.
      const stateful = w.scene.nodes.filter((n) => n.kernel.ports.some((p) => p.kind === 'state')).map((n) => n.name);
      if (!found.kernel.ports.some((p) => p.kind === 'state'))
        throw new ProtocolError(`node \`${node}\` has no state to reset (${found.kernel.id} declares no \`state\` port); the nodes with state: ${stateful.join(', ') || 'none'}; \`reset\` without \`node\` resets every state and the clock`, { field: 'node', node });
      return (engine) => {
        resetNode(engine, found);
        return told([found]);
      };
    },
  });
  return { events };
}

export async function snapshot(s: Session, f: RequestFields<'snapshot'>) {
  const instead = typeof f.path === 'string' ? `${f.path.replace(/\.[^./\\]*$/, '')}.snapshot.json` : undefined;
  if (typeof f.path === 'string') {
    const full = s.folder.resolve(f.path, SNAPSHOT); // refused in a snapshot's words, before asking what it names
    s.refuseDocument(f.path, 'a snapshot', instead);
    if (holdsOtherThanSnapshot(full))
      throw new ProtocolError(`\`${f.path}\` holds something other than a snapshot; a snapshot would replace it: name another path, like \`${instead}\`, or remove it first`, { path: f.path });
    // Files other tools read as scenes, tests or pictures (`entelechy test` failed on a snapshot named y.replay).
    if (/\.(esn|replay|png|jpe?g|gif|mp4|webm)$/i.test(f.path))
      throw new ProtocolError(`\`${f.path}\` names a ${/\.esn$/i.test(f.path) ? 'scene document' : /\.replay$/i.test(f.path) ? 'replay test' : 'picture or video'}, not a snapshot (JSON): name it like \`${instead}\``, { path: f.path, field: 'path' });
  }
  const text = await s.read((w) => snapshotText(w, s.entry));
  if (typeof f.path === 'string') {
    await s.writeFile(f.path, text, 'a snapshot', instead);
    return { path: f.path, bytes: Buffer.byteLength(text) };
  }
  // Inline data `restore` could not take back: its request line would pass the line limit (the
  // client sent it, and waited for an answer that never came).
  const line = Buffer.byteLength(JSON.stringify({ op: 'restore', data: text }));
  if (line > LIMITS.line.limit)
    throw new ProtocolError(
      `the snapshot is ${Buffer.byteLength(text)} bytes, too many for \`restore\` to take back inline (a request line holds at most ${LIMITS.line.limit} bytes): give \`path\` to save it to a file under the scene's folder, e.g. {"op": "snapshot", "path": "scene.snapshot.json"}, and restore it by that \`path\``,
      { field: 'path', limit: LIMITS.line.name, max: LIMITS.line.limit },
    );
  return { data: text, bytes: Buffer.byteLength(text) };
}

/** A snapshot's text, from `path` or `data`, checked for its shape: nothing changes. */
function parseSnapshot(s: Session, f: RequestFields<'restore'>): Snapshot {
  let text: string | undefined;
  if (typeof f.path === 'string') {
    s.folder.resolve(f.path, SNAPSHOT); // a path outside the folder is refused as that, not as absent
    text = s.folder.read(f.path);
    if (text === undefined) throw new ProtocolError(`no snapshot \`${f.path}\` under the scene's folder`, { field: 'path' });
  } else if (typeof f.data === 'string') text = f.data;
  else throw new ProtocolError('`restore` needs `path` or `data`', { fields: ['path', 'data'], field: 'path', expected: 'string' });
  let snap: Snapshot;
  const from = typeof f.path === 'string' ? `\`${f.path}\`` : '`data`';
  const what = `restore a file \`snapshot\` wrote (by \`path\`), or \`data\` as \`snapshot\` answered it`;
  try {
    snap = JSON.parse(text);
  } catch {
    throw new ProtocolError(`${from} is not JSON${text.length ? '' : ' (it is empty)'}, so not a snapshot: nothing was restored; ${what}`, { field: typeof f.path === 'string' ? 'path' : 'data' });
  }
  if (snap?.format !== 'entelechy-snapshot' || !Array.isArray(snap.state))
    throw new ProtocolError(`${from} is not an entelechy snapshot (it has no \`"format": "entelechy-snapshot"\` and \`state\`): nothing was restored; ${what}`, { field: typeof f.path === 'string' ? 'path' : 'data' });
  if (snap.version !== 1)
    throw new ProtocolError(`${from} is a snapshot of version ${JSON.stringify(snap.version)}; this Entelechy restores version 1: nothing was restored`, { field: 'version', expected: 1 });
  // Its shape, before anything changes: a malformed part must not leave the world half restored.
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const malformed =
    (snap.published !== undefined && (!isObject(snap.published) || !Object.values(snap.published).every((v) => typeof v === 'string'))) ? 'published' :
    (snap.params !== undefined && !isObject(snap.params)) ? 'params' :
    (snap.documents !== undefined && (!isObject(snap.documents) || !Object.values(snap.documents).every((v) => typeof v === 'string'))) ? 'documents' :
    // A snapshot without its clock restored frame 0, where a scene seeds its state again.
    (!isObject(snap.clock) || !isF32Number(snap.clock.time) || !Number.isInteger(snap.clock.frame) || snap.clock.frame < 0) ? 'clock' :
    !snap.state.every((st) => isObject(st) && typeof st.key === 'string' && typeof st.data === 'string' && Array.isArray(st.comps) && st.comps.every((c) => typeof c === 'string')) ? 'state' :
    new Set(snap.state.map((st) => st.key)).size !== snap.state.length ? 'state' :
    undefined;
  if (malformed) throw new ProtocolError(`the snapshot's \`${malformed}\` is malformed: nothing was restored`, { field: malformed });
  return snap;
}

export async function restore(s: Session, f: RequestFields<'restore'>, ctx: RequestContext) {
  return s.change(async () => {
    const snap = parseSnapshot(s, f);
    const known = (path: string, version: string) => s.history.get(path)?.some((v) => v.version === version) ?? false;
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
      adjust: (engine) =>
        restoreSnapshot(engine, snap, (why) => {
          throw new ProtocolError(`${why}: nothing was restored (a snapshot's state is restored into the layout it was taken from)${takenWith(snap, s.texts, known)}`, { field: 'state' });
        }),
    });
    const note = restoredNote(snap, s.entry, s.texts, known);
    return { events, ...(note ? { note } : {}) };
  });
}

export async function quit() {
  return {};
}
