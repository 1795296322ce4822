// The operations table: the one source of request validation, `help`, the unknown-op list, the
// MCP tool schemas, docs/protocol.md and the typed requests of bridges/host. Each entry names its
// group, its fields (type, whether required, meaning) and what it answers; the session supplies
// the handlers by name.

import type { Grant } from '../ir/grants.js';

export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'string|null' | 'number|array' | 'any';

export interface FieldSpec {
  name: string;
  type: FieldType;
  required?: boolean;
  meaning: string;
}

export type Group = 'Inspect' | 'Structure' | 'Kernels' | 'Parameters' | 'Running' | 'State' | 'Session';

/**
 * A grant an operation needs, and when: `kernels` stands for the grants its kernels declare (a
 * kernel needing one the session lacks is refused). The handlers check what this table says
 * (handlers/grants.ts), docs/protocol.md and help list it, and test/grants.test.ts has a case per row.
 */
export interface GrantRule {
  grant: Grant | 'kernels';
  when: string;
}

export interface OperationSpec {
  name: string;
  group: Group;
  summary: string;
  fields: FieldSpec[];
  /** Pairs of fields that ask for one thing two ways: either may be given, not both (validation refuses both; docs and help list them). */
  exclusive?: readonly (readonly [string, string])[];
  /** What `ok` holds. */
  answer: string;
  /** The grants it needs (none: it reaches nothing a grant guards). */
  grants?: GrantRule[];
  /** What it does to the world and the disk (MCP's tool annotations and docs/protocol.md read it). */
  effect: Effect;
  /** Whether the same request again, with nothing else in between, changes nothing more. */
  idempotent: boolean;
  /**
   * The members `ok` may hold and their types (MCP's output schemas): each is optional, since
   * some answers hold one member or another; an answer may hold members not listed.
   */
  returns: Record<string, FieldType>;
}

/**
 * `read`: looks and changes nothing. `change`: changes the world or writes files, and what it
 * replaced can be had back (an earlier document version from `history`, a param set again, a
 * kernel retired). `destroy`: may replace what cannot be had back (state, the registry's kernels).
 */
export type Effect = 'read' | 'change' | 'destroy';

// The helpers keep the names and types of the table as literal types (at runtime they only build
// the plain objects), so requests can be typed from this one table: see OperationName and
// RequestFields below.
const f = <N extends string, T extends FieldType, R extends boolean = false>(name: N, type: T, meaning: string, required?: R) =>
  ({ name, type, meaning, required: (required ?? false) as R });

type Spec<N, F> = { name: N; group: Group; summary: string; fields: F; exclusive?: readonly (readonly [string, string])[]; answer: string; grants?: GrantRule[]; effect: Effect; idempotent: boolean; returns: Record<string, FieldType> };
const op = <N extends string, F extends FieldSpec[]>(spec: Spec<N, [...F]>) => spec as Spec<N, F>;

/** Kernels a change would run must need only grants the session holds. */
const KERNELS = (what: string): GrantRule => ({ grant: 'kernels', when: `${what} needs only grants the session holds; otherwise it is refused and nothing changes` });

const TABLE = [
  op({ name: 'status', group: 'Inspect', summary: 'The world at a glance.', fields: [],
    answer: 'backend, frame, time, paused, fusion, grants, kernels, loaded, natives, nodes, outputs, params, pins, refused, revision, scene, session (an id of this session: a client that reconnects to another has lost its params and state), versions, workers',
    effect: 'read', idempotent: true, returns: { backend: 'string', frame: 'integer', time: 'number', paused: 'boolean', fusion: 'boolean', grants: 'array', kernels: 'integer', loaded: 'boolean', natives: 'integer', nodes: 'integer', outputs: 'array', params: 'object', pins: 'array', refused: 'any', revision: 'integer', scene: 'string', session: 'string', versions: 'object', workers: 'integer', memory: 'object' } }),
  op({ name: 'kernels', group: 'Inspect', summary: 'Every kernel the registry holds.', fields: [],
    answer: 'kernels: [{id, generation, origin (a document path or "protocol"), ports, grants}]',
    effect: 'read', idempotent: true, returns: { kernels: 'array' } }),
  op({ name: 'kernel', group: 'Inspect', summary: 'One kernel: its source, ports, grants and state.', fields: [f('kernel', 'string', 'the kernel id, e.g. demo.tint@1', true)],
    answer: 'id, generation, origin, source, ports, grants, state',
    effect: 'read', idempotent: true, returns: { id: 'string', generation: 'integer', origin: 'string', source: 'string', ports: 'array', grants: 'array', state: 'array' } }),
  op({ name: 'graph', group: 'Inspect', summary: 'The nodes, their members and edges, the outputs, params, the evaluation order and fused groups.', fields: [],
    answer: 'nodes (name, kernel, members, edges, size), outputs, params, order, groups',
    effect: 'read', idempotent: true, returns: { nodes: 'array', outputs: 'array', params: 'array', inputs: 'array', order: 'array', groups: 'array' } }),
  op({ name: 'document', group: 'Inspect', summary: "A document's text and statements (the scene's, or another under its folder).",
    fields: [f('path', 'string', "a document path under the scene's folder (default: the scene)"), f('version', 'string', 'an earlier version digest (from history), or its first 4 or more characters when they begin one version only')],
    answer: 'path, version, text, statements (kind, name, line, column)',
    effect: 'read', idempotent: true, returns: { path: 'string', version: 'string', text: 'string', statements: 'array' } }),
  op({ name: 'history', group: 'Inspect', summary: "A document's versions this session has seen.", fields: [f('path', 'string', 'a document path (default: the scene)')],
    answer: 'path, running (the version the running world was built from), disk (the version the file holds now; null: none), versions (version, origin: load/compose/disk/rollback, at, bytes, running: true, disk: true); published (kernel, generation, origin) when a kernel the document declares runs a generation published over the protocol instead; generations, when kernels were published over the protocol in this session: each publish, retire or restore of them in order (name: what bisect takes for it, `KERNEL gN` or `pI`; kernels: kernel and the generation it runs after, null when gone; origin; at; after: the position in versions it came after, null when before the document was seen)',
    effect: 'read', idempotent: true, returns: { path: 'string', running: 'string|null', disk: 'string|null', versions: 'array', published: 'array', generations: 'array' } }),
  op({ name: 'bisect', group: 'Inspect', summary: "The first point of a document's history at which a replay starts failing: its versions and the generations published over the protocol meanwhile (publish, retire, restore), in the order `history` lists them. Each point tried is replayed against a fresh session on a scratch copy of the scene's folder holding that version of the document, with the kernels then published over the protocol published in it (as `entelechy test` replays); binary search between a good and a bad point; the running world, the folder, the history and the generations are untouched.",
    fields: [
      f('good', 'string', 'a point at which the replay passes: a position in `history`\'s versions ("0" = the first; one to three digits), a version digest from it (or its first 4 or more characters), `running`, `disk`, or a generation published over the protocol: `KERNEL gN` (e.g. "t.paint@1 g2") or `pI` (the position in `history`\'s generations)', true),
      f('bad', 'string', 'a later point at which it fails, named as `good` is', true),
      f('test', 'string', "a .replay file under the scene's folder"),
      f('replay', 'string', 'the text of a replay instead of `test` (what `entelechy bisect` sends)'),
      f('path', 'string', 'the document whose versions are searched (default: the scene); the others are as the running world has them'),
      f('deadline', 'number', 'milliseconds the whole bisect may take; past them (or on `cancel`, or the connection closing) it stops and answers that it was cancelled'),
    ],
    answer: 'path, first_bad and last_good (kind: document or generation; name: what good and bad take for it; position, version: the document version it ran; origin, at; a generation\'s index in `history`\'s generations and kernels), diff (unified, of the document between them), kernels_diff (unified, of the kernels published over the protocol between them, when they differ), failure (the first bad point\'s failed step: line and column in the replay, request, message, expected, actual, answer), candidates (how many points were replayed), runs (kind, name, position, version, passed, line); published and a note when the running world runs a kernel of the document as published over the protocol',
    effect: 'read', idempotent: true, returns: { path: 'string', first_bad: 'object', last_good: 'object', diff: 'string', kernels_diff: 'string', failure: 'object', candidates: 'integer', runs: 'array', published: 'array', note: 'string' } }),
  op({ name: 'compose', group: 'Structure', summary: 'Change documents: a whole text, or edits of statements and node members; checked and compiled before anything is written.',
    fields: [
      f('text', 'string', 'the whole new text of the document (an empty one, or only white space, for the entry document of a scene with statements is refused as a saved one is: compose a comment to clear the scene)'),
      f('edits', 'array', 'edit items: {node|output|param|input|kernel|struct|type|fn|use: NAME, member?: NAME, text: TEXT or null to remove}'),
      f('documents', 'array', 'several documents at once, all written or none: [{path, text | edits}] (.replay tests are checked as `entelechy test` reads them, line and column, then written as they are, nothing recompiled; `history` keeps their versions)'),
      f('path', 'string', "the document to change (default: the scene; `edits` that all name statements of one other document of the scene change that one); a file there that is no document of the scene (a photograph, a licence) is not replaced unless it is .esn or .replay"),
      f('expect', 'string', "the document's version you read: write only if it still is (refused otherwise, the error carrying the current `version` and `text`)"),
      f('deadline', 'number', 'milliseconds the compose may take before it writes (its migrations run on the pool); past them it is cancelled and nothing changes'),
      f('dry_run', 'boolean', 'check, compile and (with `evaluate`) run the change on a fork, answering what it would do: nothing is written, published or counted as a generation; an `expect` is checked as for the change'),
      f('evaluate', 'object', 'run the change on a fork of the world and answer what it would do: {frames? (default 1, at most 100), time? (the clock of every frame; default the world\'s), outputs? (default all), thumbnail? (longest side, default 128), png? (also full PNGs), values? (true, or {region?: {x, y, width, height; of a 3-D state z?, depth?}, states?: ["node.port"]}: each carried state\'s values as `read` answers them with format f32, of the region; at most what one read answers)}; per output a thumbnail, the diff against the running world\'s same frames (changed, max, mean, box, image), per state how the change carries it (states: node, port, how, reason, digest and thumbnail of its values before any frame, and with `values` the values: format, width, height, depth of a 3-D state, components, data) and per node the timings of both'),
    ],
    answer: 'path, version, written, events (with dry_run: the events it would tell, dry_run, evaluation)',
    effect: 'change', idempotent: false, returns: { path: 'string', version: 'string', written: 'boolean', events: 'array', dry_run: 'boolean', evaluation: 'object' },
    grants: [KERNELS('every kernel of the changed scene'), { grant: 'field.write', when: 'an `input` statement it adds or redeclares (type, size or value): the input is set as `write` would set it' }] }),
  op({ name: 'sync', group: 'Structure', summary: 'Pick up edits saved on disk: reports preparing, then published or rejected on a later sync (a save made while another compiles is taken when that one is done). A document of the scene (the entry, or one it uses) saved empty (0 bytes or only white space, as an editor that truncates before it writes leaves it for a moment) over statements it had is rejected, the running version keeping its state: a scene is cleared on purpose by leaving a comment in its entry document.', fields: [
      f('deadline', 'number', 'milliseconds the saved edit it starts may take (its migrations run on the pool; it goes on after the answer, and `cancel` or a closed connection stop it too); past them it is rejected and nothing changes')],
    answer: "this connection's events since its last sync (each connection is told every event once, from its first request)",
    effect: 'change', idempotent: false, returns: { events: 'array' },
    grants: [KERNELS('every kernel of the saved scene'), { grant: 'field.write', when: 'a saved `input` statement that adds or redeclares an input (type, size or value), as for compose: the edit is `rejected` (the Player\'s folder watcher takes the same path)' }] }),
  op({ name: 'prepare', group: 'Kernels', summary: 'Check and compile a kernel without changing anything.',
    fields: [f('source', 'string', 'the kernel statement (and any fn/struct/type it needs)', true), f('path', 'string', 'the document it is meant for (for messages)'), f('evaluate', 'object', 'run the scene with the kernel published on a fork of the world and answer what it would do: {frames? (default 1, at most 100), time? (the clock of every frame; default the world\'s), outputs? (default all), thumbnail? (longest side, default 128), png? (also full PNGs), values? (true, or {region?: {x, y, width, height; of a 3-D state z?, depth?}, states?: ["node.port"]}: each carried state\'s values as `read` answers them with format f32, of the region; at most what one read answers)}; per output a thumbnail, the diff against the running world\'s same frames (changed, max, mean, box, image), per state how the change carries it (states: node, port, how, reason, digest and thumbnail of its values before any frame, and with `values` the values: format, width, height, depth of a 3-D state, components, data) and per node the timings of both')],
    answer: 'id, ports, grants (with evaluate: events publishing it would tell, evaluation)',
    effect: 'read', idempotent: true, returns: { id: 'string', ports: 'array', grants: 'array', events: 'array', evaluation: 'object' },
    grants: [KERNELS('the kernel')] }),
  op({ name: 'publish', group: 'Kernels', summary: 'Replace or add a kernel in the running world (not in a file).',
    fields: [f('source', 'string', 'the kernel statement', true), f('expect', 'integer', 'the generation you expect the registry to hold (optimistic concurrency; refused otherwise, the error carrying the current `generation`, `origin` and `source`)'), f('dry_run', 'boolean', 'check, compile and (with `evaluate`) run the change on a fork, answering what it would do: nothing is written, published or counted as a generation; an `expect` is checked as for the change'), f('evaluate', 'object', 'run the change on a fork of the world and answer what it would do: {frames? (default 1, at most 100), time? (the clock of every frame; default the world\'s), outputs? (default all), thumbnail? (longest side, default 128), png? (also full PNGs), values? (true, or {region?: {x, y, width, height; of a 3-D state z?, depth?}, states?: ["node.port"]}: each carried state\'s values as `read` answers them with format f32, of the region; at most what one read answers)}; per output a thumbnail, the diff against the running world\'s same frames (changed, max, mean, box, image), per state how the change carries it (states: node, port, how, reason, digest and thumbnail of its values before any frame, and with `values` the values: format, width, height, depth of a 3-D state, components, data) and per node the timings of both')],
    answer: 'id, generation, events (with dry_run: the generation and events it would make, dry_run, evaluation)',
    effect: 'change', idempotent: false, returns: { id: 'string', generation: 'integer', events: 'array', dry_run: 'boolean', evaluation: 'object' }, grants: [KERNELS('the kernel')] }),
  op({ name: 'retire', group: 'Kernels', summary: 'Withdraw a kernel published over the protocol (the document version, if any, runs again).',
    fields: [f('kernel', 'string', 'the kernel id', true), f('expect', 'integer', 'the generation you expect')],
    answer: 'id, generation, events',
    effect: 'destroy', idempotent: false, returns: { id: 'string', generation: 'integer', events: 'array' } }),
  op({ name: 'param', group: 'Parameters', summary: 'Set a graph param (a `param` statement of the scene) for the running world.',
    fields: [f('name', 'string', 'the param', true), f('value', 'number|array', 'a number, or numbers for a vector', true)],
    answer: 'name, value, events',
    effect: 'change', idempotent: true, returns: { name: 'string', value: 'number|array', events: 'array' } }),
  op({ name: 'evaluate', group: 'Running', summary: 'Evaluate a frame.',
    fields: [f('time', 'number', 'the world clock in seconds (default: as it is)'), f('outputs', 'array', 'output names to report (default: all)'),
      f('pointer', 'object', 'pointer {x, y, down} for kernels holding input.read'), f('keys', 'array', 'names of keys held'),
      f('deadline', 'number', 'milliseconds the evaluation may take; past them it is cancelled and nothing of it kept'),
      f('profile', 'boolean', 'true: time every node on its own: the next frame runs once on an unfused copy, the answer is that frame\'s (a timing per node, `profiled`, `slowest`), and the world (state, clock, frame counter) does not move'),
      f('frames', 'integer', 'how many frames to run, one after another, with the same time, pointer and keys (default 1; state advances each frame); the answer is the last frame\'s, with `frames_run`. A frame in which nothing it reads changed (no state, and the clock, the frame number and the params as they were) would repeat the one before: it runs nothing and is not counted in `frames_run`. Each frame commits as it ends: a cancel or deadline keeps the frames already done'),
      f('thumbnail', 'integer', "also a thumbnail of each 2-D output: a PNG (base64) whose longest side is at most this many pixels (1..1024), in the output's `thumbnail`")],
    answer: 'frame, time, executed, reused, outputs (name, width, height[, depth][, thumbnail {width, height, data}]), placements, timings, events; with frames also frames_run; with profile also profiled: true and slowest (node, millis)',
    effect: 'change', idempotent: false, returns: { frame: 'integer', time: 'number', executed: 'array', reused: 'array', outputs: 'array', placements: 'array', timings: 'array', events: 'array', frames_run: 'integer', profiled: 'boolean', slowest: 'object' } }),
  op({ name: 'read', group: 'Running', summary: "An output's field, a pinned node's port or an input: a PNG (base64) or raw f32.",
    fields: [f('output', 'string', 'the output (default: the first)'), f('node', 'string', 'a pinned node (with port)'), f('port', 'string', "the node's port (with `node`)"),
      f('input', 'string', 'a scene input (instead of output or node): what kernels see of it'),
      f('format', 'string', 'png (default) or f32 (little-endian floats, component-major planes)'), f('region', 'object', '{x, y, width, height} to read part of it (x and y default to 0, width and height to the rest of the field from there); of a 3-D field also z and depth, the slices (default all): f32 answers each component\'s plane as the region\'s slices in increasing z, each slice\'s rows in increasing y, and `depth`; a PNG shows one slice (depth 1)'),
      f('deadline', 'number', 'milliseconds the read may wait for the frame before it; past them it is cancelled and nothing of it kept'),
      f('file', 'string', "write the PNG to this file under the scene's folder (ending in .png; replaced whole or not at all) instead of answering it in base64")],
    exclusive: [['output', 'node'], ['output', 'port'], ['input', 'output'], ['input', 'node'], ['input', 'port']],
    answer: 'name, width, height (and depth, of a 3-D field: the slices answered), format, data (base64), frame; with file: path, bytes and summary (channel, min, max, mean of the field\'s finite values; nan and infinite: how many NaNs and infinities were left out) instead of data',
    effect: 'read', idempotent: true, returns: { name: 'string', width: 'integer', height: 'integer', depth: 'integer', components: 'integer', format: 'string', data: 'string', frame: 'integer', path: 'string', bytes: 'integer', summary: 'array' } }),
  op({ name: 'write', group: 'State', summary: "Write into a node's state or a scene input (needs field.write). Floats are kept bit for bit (NaN payloads and infinities too). A write into a state before the first frame is the state frame 0 starts from (a kernel that seeds its state at frame 0 overwrites it).",
    fields: [f('node', 'string', 'the node (or an input name)'), f('input', 'string', 'a scene input (instead of node)'), f('port', 'string', 'the state port (may be omitted when the node has only one; omit for an input)'),
      f('data', 'string', 'base64 little-endian f32, component-major planes'), f('value', 'number|array', 'one value (a number or components) for every element'),
      f('file', 'string', "an image (PNG, JPEG) under the scene's folder, its sRGB decoded to linear and resized to the field"),
      f('region', 'object', '{x, y, width, height} to write part of it (x and y default to 0, width and height to the rest of the field from there); of a 3-D field also z and depth, the slices (default all)')],
    exclusive: [['data', 'value'], ['file', 'data'], ['file', 'value'], ['input', 'node']],
    answer: 'events',
    effect: 'destroy', idempotent: true, returns: { events: 'array' }, grants: [{ grant: 'field.write', when: 'always' }] }),
  op({ name: 'snapshot', group: 'State', summary: 'Save the whole world: protocol-published kernels, params, state, clock.',
    fields: [f('path', 'string', "a file under the scene's folder (default: answer the data, unless `restore` could not take it back in one request line: then give a path); it replaces a snapshot there, never a document, a .replay, a picture or another file")], answer: 'path or data, bytes',
    effect: 'change', idempotent: false, returns: { path: 'string', data: 'string', bytes: 'integer' } }),
  op({ name: 'restore', group: 'State', summary: 'Load a snapshot; a snapshot that does not load leaves the world as it was.',
    fields: [f('path', 'string', "a snapshot file under the scene's folder"), f('data', 'string', 'snapshot data as snapshot answered it'),
      f('deadline', 'number', 'milliseconds the restore may take (its migrations run on the pool); past them it is cancelled and nothing changes')],
    exclusive: [['path', 'data']], answer: 'events',
    effect: 'destroy', idempotent: true, returns: { events: 'array' },
    grants: [KERNELS('every kernel the snapshot publishes')] }),
  op({ name: 'pause', group: 'Running', summary: 'Pause or resume the clock and frames.', fields: [f('paused', 'boolean', 'true to pause, false to resume (default: toggle what the last pause request asked for)')],
    answer: 'paused (a pause answers once the frame running has ended: from then on the frame counter stands still; the last request wins, so a pause whose turn comes after a resume answers false)',
    effect: 'change', idempotent: false, returns: { paused: 'boolean' } }),
  op({ name: 'reset', group: 'State', summary: 'Reset state to its declared values: one node\'s, or every node\'s and the clock to zero.', fields: [f('node', 'string', 'one node')],
    answer: 'events (state_reset for each state port reset); after a reset of every node, the outputs hold nothing computed until the next frame',
    effect: 'destroy', idempotent: true, returns: { events: 'array' } }),
  op({ name: 'help', group: 'Inspect', summary: 'Describe an operation, field, answer field, error member, concept of the docs, type, builtin, form, reserved word, grant, event, door, replay line or package of the session (a kind, e.g. `events`, lists them); without a name, a quick start (how to connect, a request and its answer, every operation and its fields, where the docs are) and the index of names.',
    fields: [f('name', 'string', 'what to describe')], answer: 'the entry (or entries, when several share the name; an unknown name is refused with `similar` ones), or without a name quickstart (lines), docs and index',
    effect: 'read', idempotent: true, returns: {} }),
  op({ name: 'trace', group: 'Running', summary: 'What each node read and computed at one element in the last frame (run again on a copy, unfused, from the state it started from, with its input; before any frame of the running version, the next frame), for debugging.',
    fields: [f('x', 'integer', 'x', true), f('y', 'integer', 'y'), f('z', 'integer', 'z (needed when the fields traced are 3-D)'), f('output', 'string', 'trace the nodes this output needs (default: all)'),
      f('deadline', 'number', 'milliseconds the evaluation may take; past them it is cancelled and nothing of it kept')],
    answer: 'frame, values (node, port, value: what each node computed), reads (node, name, kind: field/state/param/value/uniform, from, value: what it read there: its in fields, the state it started from, its params and in values, and the time, frame, pointer and keys its code reads)',
    effect: 'read', idempotent: true, returns: { frame: 'integer', x: 'integer', y: 'integer', z: 'integer', values: 'array', reads: 'array' } }),
  op({ name: 'pin', group: 'Running', summary: "Keep a node's ports materialised and readable even where fusion would skip them.",
    fields: [f('node', 'string', 'the node', true), f('port', 'string', 'the port you mean to read (checked; a pin keeps all of the node\'s ports)')], answer: 'pins (node names)',
    effect: 'change', idempotent: true, returns: { pins: 'array' } }),
  op({ name: 'unpin', group: 'Running', summary: 'Undo a pin.', fields: [f('node', 'string', 'the node', true), f('port', 'string', 'the port')], answer: 'pins',
    effect: 'change', idempotent: true, returns: { pins: 'array' } }),
  op({ name: 'cancel', group: 'Running', summary: "Stop this connection's evaluations (evaluate, read, trace; compose and restore until they write, their migrations included) now running or waiting: each answers that it was cancelled, and nothing of it is kept (state, clock and frame counter as before the frame). Answered at once, not after the connection's earlier requests.",
    fields: [f('request', 'any', 'the id of the one request to cancel (default: all of this connection)')], answer: 'cancelled (how many were stopped)',
    effect: 'change', idempotent: true, returns: { cancelled: 'integer' } }),
  op({ name: 'quit', group: 'Session', summary: 'End this connection (on stdin: the process).', fields: [], answer: '{} (then the door closes)',
    effect: 'change', idempotent: false, returns: {} }),
];

/** In the order the protocol lists them (an unknown op's error lists them so). */
export const OPERATIONS: OperationSpec[] = TABLE;

export const OPERATION_NAMES = OPERATIONS.map((o) => o.name);

export function operation(name: string): OperationSpec | undefined {
  return OPERATIONS.find((o) => o.name === name);
}

export { EVENTS, type EventKind } from '../main/events.js';

// ---------------------------------------------------------------------------------------------
// Types derived from the tables (for clients such as bridges/host; nothing here exists at runtime)
// ---------------------------------------------------------------------------------------------

type TableEntry = (typeof TABLE)[number];

/** The operation names, as a union of literal types. */
export type OperationName = TableEntry['name'];

/** The TypeScript type of a value of each FieldType (what envelope.ts accepts for it). */
export type FieldValue<T extends FieldType> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'object'
        ? Record<string, unknown>
        : T extends 'array'
          ? unknown[]
          : T extends 'string|null'
            ? string | null
            : T extends 'number|array'
              ? number | number[]
              : unknown;

type FieldsOf<Op extends OperationName> = Extract<TableEntry, { name: Op }>['fields'][number];

/** The fields of a request for `Op`: required ones required, the rest optional (none: none). */
export type RequestFields<Op extends OperationName> = [FieldsOf<Op>] extends [never] ? Record<string, never> : {
  [F in FieldsOf<Op> as F['required'] extends true ? F['name'] : never]: FieldValue<F['type']>;
} & {
  [F in FieldsOf<Op> as F['required'] extends true ? never : F['name']]?: FieldValue<F['type']>;
};

/** The operations a request needs no fields for (every field optional, or none). */
export type OperationWithoutRequiredFields = {
  [Op in OperationName]: Extract<FieldsOf<Op>, { required: true }> extends never ? Op : never;
}[OperationName];
