// What each member of an answer means, for `help NAME`. Which operations answer a member comes
// from the operations table (`returns`), not from here; test/help-answers.test.ts sends every
// operation to a real session and fails on any member of an answer (or of the objects inside
// one) that this table does not describe.

export interface AnswerField {
  name: string;
  meaning: string;
  /** The member of the answer holding it, for members of the objects inside an answer. */
  within?: string;
  /** Where the docs say more. */
  doc?: string;
}

const a = (name: string, meaning: string, more: { within?: string; doc?: string } = {}): AnswerField => ({ name, meaning, ...more });

export const ANSWER_FIELDS: readonly AnswerField[] = [
  // status
  a('backend', 'what runs the kernels: jit (compiled WebAssembly) or interp (the reference interpreter)', { doc: 'docs/architecture.md#the-compiler-as-passes' }),
  a('backend', 'what ran this node: jit or interp', { within: 'placements' }),
  a('frame', 'the frame counter: frames evaluated since the clock was last reset (0 before the first); read and trace say which frame they show'),
  a('time', 'the world clock in seconds (evaluate\'s `time` sets it)'),
  a('paused', 'whether the clock and frames are paused (the `pause` operation)'),
  a('fusion', 'whether pointwise chains are fused into one loop (see help fusion)', { doc: 'docs/architecture.md#the-compiler-as-passes' }),
  a('grants', 'the capabilities the session holds (status), or a kernel declares (kernel, prepare): help field.read and the other grants'),
  a('kernels', 'status: how many kernels the registry holds; the kernels operation: each one with id, generation, origin, ports and grants'),
  a('loaded', 'whether the scene loaded and runs (false: `refused` says why)'),
  a('natives', 'how many native (C) kernels are loaded'),
  a('nodes', 'status: how many nodes run; graph: each node with its kernel, members, edges and size'),
  a('outputs', 'the scene\'s outputs: names (status), with the node and port they name (graph), or with the size computed (evaluate)'),
  a('params', 'the graph params: current values by name (status), or each with type, default, range and value (graph)'),
  a('pins', 'the pinned nodes: their ports stay materialised and readable (help pin)'),
  a('refused', 'why the scene did not load (its diagnostics), or null when it runs'),
  a('revision', 'the world\'s revision: it grows by one with every change that builds a new world (compose, sync, publish, retire, pin, unpin, restore); param, write, reset and a tier swap keep it', { doc: 'docs/architecture.md#the-session-srcmainsessionts-and-the-protocol-srcprotocol' }),
  a('scene', 'the scene document\'s path under its folder'),
  a('session', 'an id of this session, random, made when it opened: a client that reconnects and finds another has lost what it set (params, state, kernels published over the protocol)'),
  a('versions', 'status: the versions of the api, language, IR and package; history: the document versions this session has seen (version, origin, at, bytes)'),
  a('workers', 'status: the worker threads evaluating; a placement: the workers that ran the node\'s group'),
  a('memory', 'the fields\' memory: bytes reserved and allocated (help limits; serve --memory sets the budget)', { doc: 'docs/protocol.md#time-and-memory' }),
  a('allocated', 'bytes of fields in use', { within: 'memory' }),
  a('bytes', 'a size in bytes: of the fields\' memory (status.memory), of a document version (history), of a snapshot'),
  a('tiers', 'which compiled tier runs which nodes: fast (compiled in milliseconds) or optimised (swapped in when ready, same results); help tier', { doc: 'docs/architecture.md#tiers-every-edit-live-at-once-the-optimised-code-after' }),
  a('tier', 'the compiled tier: fast or optimised (help tiers)', { within: 'placements, tiers, published events', doc: 'docs/architecture.md#tiers-every-edit-live-at-once-the-optimised-code-after' }),
  // kernels, kernel, prepare, publish, retire
  a('id', 'a kernel id, package.name@version (e.g. demo.tint@1)'),
  a('generation', 'counts the versions of this kernel id the registry has run: 1 when first loaded, one more each time its source or origin changes (compose, a saved edit, publish, retire); publish and retire take it as `expect`', { doc: 'docs/architecture.md#the-session-srcmainsessionts-and-the-protocol-srcprotocol' }),
  a('published', 'history and bisect: the kernels the document declares that run a generation published over the protocol instead of its text (kernel, generation, origin); `retire` goes back to the document\'s. Bisect replays the document\'s versions only'),
  a('kernel', 'the kernel id', { within: 'published' }),
  a('origin', 'kernels: where the running version came from, a document path or "protocol" (published); history: how a document version came, load, compose, disk, or rollback (a text seen earlier in the session, come back by compose or on disk)'),
  a('source', 'the kernel\'s text as it runs'),
  a('ports', 'a kernel\'s ports: name, kind (in, out, state), type and default'),
  a('kind', 'a port\'s kind (in, out, state), a statement\'s kind (document), or an event\'s kind (help events)'),
  a('default', 'the declared default of a port or param'),
  a('type', 'an element or field type (help f32, help field2)'),
  a('state', 'the kernel\'s state ports: kept from frame to frame, written with `write`, read after `pin`'),
  // graph
  a('inputs', 'the scene\'s inputs (fields a host writes with `write`)'),
  a('order', 'the evaluation order of the nodes'),
  a('groups', 'the fused groups: nodes run as one loop, in order (help fusion)', { doc: 'docs/architecture.md#the-compiler-as-passes' }),
  a('members', 'a node\'s own values (count = 8.0) or params it names ({param: NAME})', { within: 'nodes' }),
  a('edges', 'a node\'s inputs wired to other nodes\' ports (port: "node.port")', { within: 'nodes' }),
  a('size', 'a node\'s domain: width, height[, depth]', { within: 'nodes' }),
  a('range', 'a param\'s declared range', { within: 'params' }),
  a('node', 'a node of the scene: the one a placement, timing or traced value belongs to, or the one an output names'),
  a('port', 'a port of a node (traced values, outputs)'),
  // document, history, compose
  a('path', 'a document (or snapshot) path under the scene\'s folder'),
  a('version', 'a document version: a digest of its text; compose and document take it as `expect`, document as `version`'),
  a('text', 'a document\'s whole text'),
  a('statements', 'a document\'s statements: kind, name, line, column'),
  a('at', 'when this session saw the version (ISO time)', { within: 'versions' }),
  a('running', 'history: the version the running world was built from (and `running: true` on that version)'),
  a('disk', 'history: the version the file holds now, null when there is none (and `disk: true` on that version)'),
  a('written', 'whether compose wrote the document (false: refused, or nothing to change: nothing written)'),
  a('dry_run', 'true: compose or publish only saw what the change would do (nothing written, published or counted as a generation); `events` are the ones it would tell'),
  a('evaluation', 'a dry run\'s frames on a fork of the world (`evaluate`: frames, time, outputs, thumbnail, png): per output a thumbnail and the diff against the running world\'s same frames (changed, max, mean, box, image), per state how the change carried it (states: how, digest, thumbnail, before any frame), per node the timings before and now', { doc: 'docs/agents.md#judging-a-change-before-committing-it' }),
  a('events', 'what happened because of the request (help events lists their kinds)', { doc: 'docs/protocol.md#events' }),
  // bisect
  a('first_bad', 'bisect: the first point of the history at which the replay fails: kind (document, or generation published over the protocol), name (what good and bad take for it), position and version (the document version it ran), origin, at; a generation\'s index in `history`\'s generations and kernels', { doc: 'docs/agents.md#finding-the-change-that-broke-a-replay' }),
  a('last_good', 'bisect: the point just before it, at which the replay passes (as first_bad)'),
  a('generations', 'history: each change of the kernels published over the protocol in this session, in order (publish, retire, restore, or a compose taking a published kernel into a document): name (what bisect takes for it: `KERNEL gN` or `pI`), kernels (kernel, generation after it; null: gone), origin, at, after (the position in versions it came after)', { doc: 'docs/agents.md#generations-published-over-the-protocol' }),
  a('kernels_diff', 'bisect: the change of the kernels published over the protocol from the last good point to the first bad, as a unified diff (one file per kernel); absent when they are the same'),
  a('position', 'a version\'s place in `history`\'s versions, counted from 0 (bisect takes it as `good` or `bad`)', { within: 'first_bad, last_good, runs' }),
  a('diff', 'bisect: the document\'s change from the last good version to the first bad, as a unified diff; empty when the document is the same at both (the change is in `kernels_diff`)'),
  a('failure', 'bisect: the first bad version\'s failed step: its line and column in the replay, the request, the message, expected and actual, and the answer'),
  a('candidates', 'bisect: how many points it replayed (the bad one, the good one, then about log2 of those between)'),
  a('runs', 'bisect: each point of the history replayed, in order: kind, name, position, version, passed, and the line of the first failed expectation'),
  a('passed', 'whether the replay passed at this version', { within: 'runs' }),
  a('line', 'the line of the replay\'s first failed expectation', { within: 'runs' }),
  a('note', 'bisect: the running world runs kernels the document declares as published over the protocol instead; each point tried ran those published at it. trace: no `z` was given in a scene of 2-D and 3-D fields, so the 3-D ones were traced at z = 0. read: a param was set after the frame it shows was computed (evaluate to see the new value), or an i32 field holds integers past 2^24, which f32 rounds. restore: what the snapshot was taken with that is not restored (documents changed since, another scene). compose (a dry run): a saved edit on disk the session has not synced, which the compose would take in or replace. cancel: the request named runs on another connection, which a cancel does not reach'),
  // param, evaluate
  a('name', 'the param (param), the output, node or input read (read)'),
  a('value', 'the value: of the param as set, or of a traced port at the element'),
  a('executed', 'the nodes this frame ran (those not needed by an output or pin are left out)'),
  a('reused', 'the nodes this frame did not run: nothing they read (clock, pointer, keys, params, inputs, the nodes before them) changed since they ran, in an earlier frame or before an edit, so their values are kept', { doc: 'docs/architecture.md#reuse-recompute-only-what-changed' }),
  a('reused', 'true: the node did not run this frame (0 tiles, 0 workers): its value is kept from an earlier one; `tier` names the module that runs it when it runs', { within: 'placements' }),
  a('placements', 'where each node ran this frame: backend, tier, its fused group, tiles and workers (help fusion, help tiers); a node kept has `reused` and no tiles', { doc: 'docs/architecture.md#memory-and-evaluation' }),
  a('group', 'the fused group a node ran in (an index into graph.groups)', { within: 'placements' }),
  a('fused', 'the nodes that ran as one loop with this one: a timing of a fused group is the whole group\'s; evaluate with `"profile": true` times each node apart (help fusion)', { within: 'placements, timings' }),
  a('tiles', 'how many tiles the node\'s domain was run in', { within: 'placements' }),
  a('timings', 'milliseconds per group this frame: one entry per fused group, under its last node, with `fused` naming the group; with `"profile": true`, one per node', { doc: 'docs/architecture.md#memory-and-evaluation' }),
  a('frames_run', 'evaluate with `frames`: how many frames ran something (a frame that would repeat the last, nothing having changed, is idle and not counted); the answer is the last such frame\'s'),
  a('profiled', 'true: the frame ran once on an unfused copy to time every node on its own (evaluate with `"profile": true`); the world did not move: `frame` and `time` are those of the frame it profiled (the next), which was not committed, so `status` still shows the last'),
  a('slowest', 'with `"profile": true`: the node that took longest, and its millis'),
  a('millis', 'milliseconds the group took this frame', { within: 'timings' }),
  // read, write, snapshot
  a('width', 'the field\'s width in elements'),
  a('height', 'the field\'s height in elements'),
  a('depth', 'the field\'s depth (3-D fields)'),
  a('components', 'values per element: 1 (f32), 2, 3 or 4 (vec4)'),
  a('format', 'png (8-bit sRGB, base64) or f32 (little-endian floats, component-major planes, base64)'),
  a('summary', 'read with `file`: per channel of the field, min, max and mean (nan: how many NaNs were left out)'),
  a('channel', 'which channel (component) of the field: 0 for x or red, 1, 2, 3', { within: 'summary' }),
  a('min', 'the smallest value of the channel', { within: 'summary' }),
  a('max', 'the largest value of the channel', { within: 'summary' }),
  a('mean', 'the mean of the channel', { within: 'summary' }),
  a('nan', 'how many NaN values the channel holds (left out of min, max and mean)', { within: 'summary' }),
  a('data', 'base64 bytes: the image or floats (read), or the snapshot (snapshot without a path)'),
  // trace
  a('x', 'the element traced'), a('y', 'the element traced'), a('z', 'the element traced'),
  a('values', 'trace: what each node computed at the element: node, port, value; a dry run\'s state (with `evaluate.values`): its values as `read` answers them with format f32 (format, width, height, components, data)'),
  a('reads', 'what each node read at the element: node, name, kind (field, state, param, value, uniform), from (the edge or param) and value; a field the element is outside of (a 3-D field under a 2-D node, read with `.at` or `sample`) has a note instead of a value'),
  a('note', 'why a read has no value: the element is outside that field (a 3-D field under a 2-D node), or the field is read only by gathers (`.at`, `sample`, neighbours); the kernel reads it where its code computes', { within: 'reads' }),
  a('here', 'a field read only by gathers: its value at the traced element (what the kernel read is where its code computes)', { within: 'reads' }),
  a('from', 'where a read value came from: the node.port of an edge, or the param', { within: 'reads' }),
  // cancel
  a('cancelled', 'how many evaluations were stopped (cancel), or true on the error of one that was'),
];

/** The members of an error answer ({"error": {...}}): what acts on the error, as data. */
export const ERROR_MEMBERS: readonly AnswerField[] = [
  a('message', 'what is wrong and what to do next, in words'),
  a('operations', 'an unknown op: the operations there are'),
  a('similar', 'an unknown name: the known names nearest to it'),
  a('fields', 'a field of the wrong type, not taken or missing: the fields the operation takes'),
  a('field', 'the field at fault (a limit: the field past it)'),
  a('expected', 'what the field takes: its type, or the name it most likely meant'),
  a('fix', 'an edit item that mends it: hand it back to compose as one of `edits`'),
  a('request', 'a request that mends it, to send first (e.g. a `pin` before reading a fused node)'),
  a('diagnostics', 'a scene or kernel that does not check: each problem with path, line, column and message'),
  a('line', 'the line of the first problem (of the request line, when it is not JSON)'),
  a('column', 'the column of the first problem'),
  a('written', 'false: nothing was written'),
  a('cancelled', 'true: the evaluation was stopped and nothing of it kept (`reason` says why); with `frames`, the frames before the one stopped were kept (`frames_kept`)'),
  a('frames_kept', 'evaluate with `frames`, cancelled: how many of its frames had run and were kept, each whole'),
  a('reason', 'why an evaluation was cancelled: cancel, deadline, closed or changed', { doc: 'docs/protocol.md#time-and-memory' }),
  a('grant', 'the grant the session lacks for this'),
  a('limit', 'the limit the request is past (help NAME describes it)', { doc: 'docs/protocol.md#limits' }),
  a('max', 'the largest value the limit allows'),
  a('failure', 'bisect: the good version fails too: its failed step (line, column, request, message, expected, actual, answer)'),
  a('candidates', 'bisect: how many points it replayed before it stopped'),
  a('versions', 'bisect: the digests a too-short prefix begins'),
];

/** Members of the events (see help events): besides `kind`, what each says. */
export const EVENT_MEMBERS: readonly AnswerField[] = [
  a('kernel', 'the kernel id the event is about', { within: 'events' }),
  a('compile_ms', 'milliseconds the compile took', { within: 'events' }),
  a('budget_ms', 'the optimised compile\'s budget in milliseconds', { within: 'events' }),
  a('paths', 'the documents a saved edit changed', { within: 'events' }),
  a('how', 'how a change carried a state (state_carried, state_reset, migrated; a dry run\'s `states`): kept, copied, resized, resampled, widened, narrowed, migrate from, or reset', { within: 'events', doc: 'docs/language.md#carrying-state-automatically' }),
  a('filter', 'the filter a resampled state went through: nearest or bilinear', { within: 'events' }),
  a('to', 'the size and type a state was carried to (from: the ones it had)', { within: 'events' }),
  a('ports', 'the state ports a `migrate from` wrote', { within: 'events' }),
  a('migration', 'the migration that ran: `OLD -> NEW` kernel ids', { within: 'events' }),
];
