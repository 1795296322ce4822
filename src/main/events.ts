// The events a session tells (in answers, and to `sync`): one table of their kinds and meanings,
// which `help` and docs/protocol.md list, and from which every event's type is checked: an event
// of a kind the table does not hold is a compile error where it is made.

/** Keeps each event's kind as a literal type (EventKind below); at runtime the list as given. */
const eventTable = <K extends string>(list: { kind: K; meaning: string }[]) => list;

/** The events answers carry, for help and docs. */
const EVENT_TABLE = eventTable([
  { kind: 'preparing', meaning: 'a saved edit was read and is compiling on the compile worker' },
  { kind: 'held', meaning: 'a saved edit waits at the Player (preview before publishing): the person there publishes it (then `published`) or discards it' },
  { kind: 'discarded', meaning: 'a saved edit held at the Player was discarded: the previous version keeps running, the file keeps the edit' },
  { kind: 'published', meaning: 'a kernel or scene change now runs (with its generation, the compiled tier it runs on and compile_ms)' },
  { kind: 'optimised', meaning: 'the optimised modules of these nodes replaced the fast tier between frames (compile_ms; results are the same bits)' },
  { kind: 'optimise_abandoned', meaning: 'an optimised compile went past its budget (budget_ms) or failed: the fast tier keeps running' },
  { kind: 'rejected', meaning: 'a change did not check or compile: the previous version keeps running (diagnostics say why)' },
  { kind: 'retired', meaning: 'a kernel left the world: one published over the protocol was withdrawn (retire), or no document declares it any more' },
  { kind: 'scene_loaded', meaning: 'the scene (re)loaded: a new revision runs' },
  { kind: 'scene_rejected', meaning: 'a scene change was refused; the previous revision keeps running' },
  { kind: 'routed', meaning: 'edges changed: the evaluation order or fused groups are new' },
  { kind: 'large', meaning: 'a field past the large-field size was allocated' },
  { kind: 'idle', meaning: 'evaluate ran nothing (the world is paused or nothing changed), or compose changed nothing (the documents already held its texts, and the world ran them)' },
  { kind: 'unrun', meaning: 'a node is in the scene but no output or pin needs it' },
  { kind: 'unpinned', meaning: 'a pinned node was removed by a change of the scene: its pin went with it (node)' },
  { kind: 'wrote', meaning: 'compose wrote a document (path, version); `replaced`: the version of a saved edit on disk, never synced, that a whole `text` wrote over (history keeps it: `document` with that version gives it back); `included`: the version of such a saved edit that `edits` were applied to, which is live now with them' },
  { kind: 'removed', meaning: 'a statement or member was removed by compose; or, from `sync`, a document the world runs is gone from disk (path, message: the world keeps its last version)' },
  { kind: 'renamed', meaning: 'a document was renamed on disk' },
  { kind: 'waiting', meaning: "from `sync`, a saved edit not taken because the scene's entry document is gone from disk (renamed or removed): it is taken once the entry is back (path, message)" },
  { kind: 'write_refused', meaning: 'a write was refused (a grant the session lacks, a path outside the folder, a version that moved): `input`, or `node` and `port`, name what it was into; reason' },
  { kind: 'state_reset', meaning: "a node's state was reset to its declared value: by `reset`, or because a change could not carry it to its new layout (node, port, reason: new port, axes changed, type changed, narrowing not declared)" },
  { kind: 'input_reset', meaning: 'a change of the scene redeclared an input (its type, size or value): it holds its declared value now, and what was written into it is gone (input, message); write it again' },
  { kind: 'state_carried', meaning: "a change of the scene carried a node's state: kept as it was, or to its new kernel or layout automatically (node, port, how: kept, copied, resized, resampled, widened, narrowed; from and to: size and type; filter); by `restore`, set from the snapshot (how: restored)" },
  { kind: 'migrated', meaning: "a node's state was carried to a new layout by its kernel's `migrate from` (node, ports, migration)" },
  { kind: 'param_moved', meaning: "a change of the scene changed a param's declared default, and its running value (still the old default) moved with it (param, value, from)" },
  { kind: 'param_kept', meaning: "a change of the scene changed a param's declared default, but its running value was set with `param` and is kept (param, value, default); `request` is the `param` request that applies the new default" },
  { kind: 'param_fitted', meaning: "a change of the scene changed a param's declaration so that its running value no longer fits (a narrower range, a new type): the value is now the nearest one the declaration allows, clamped into the range, rounded for an i32, 0 or 1 for a bool (param, value, from; with the default changed too, default and `request` as in param_kept)" },
  { kind: 'missed', meaning: 'first in a `sync` answer: more events came while this connection did not sync than are kept for it (1000); `count` of the oldest are not told' },
  { kind: 'recovered', meaning: 'when the session opened, a write a crash interrupted was finished (written) or turned back (turnedBack)' },
]);

/** The events, for help and docs. */
export const EVENTS: { kind: string; meaning: string }[] = EVENT_TABLE;

/** The kinds of event the session tells. */
export type EventKind = (typeof EVENT_TABLE)[number]['kind'];

/** One event: its kind and what it says (paths, kernel, generation, message...). */
export interface WorldEvent {
  kind: EventKind;
  [detail: string]: unknown;
}
