// The words of the docs that no table of the code holds (the operations, fields, answers, events,
// builtins and the rest have their own): for `help NAME`, each pointing at the section of the docs
// that says more. test/help.test.ts checks that every `doc` names a file and heading that exist.

export interface Concept {
  name: string;
  /** Other words for it, which help finds it by too. */
  aliases?: string[];
  summary: string;
  doc: string;
}

export const CONCEPTS: readonly Concept[] = [
  { name: 'envelope', aliases: ['request', 'answer', 'line', 'json'],
    summary: 'One JSON object a line: {"id": ANY, "op": OPERATION, ...fields}; the answer is {"id", "ok": {...}} or {"error": {"message", ...}, "id"}. Errors carry what acts on them as data: `fields`, `field` and `expected` for a wrong field, `similar` names, a `fix` edit to hand to compose, a `request` to send first.',
    doc: 'docs/protocol.md#the-agent-protocol' },
  { name: 'docs', aliases: ['documentation', 'manual'], summary: 'docs/protocol.md (every operation, field, answer and event), docs/language.md (the .esn language), docs/architecture.md (passes, tiers, fusion, the session), docs/mcp.md, docs/player.md, docs/rendering.md, docs/distributed.md; `help` with no name says where they are on this machine.', doc: 'docs/protocol.md' },
  { name: 'scene', aliases: ['esn', '.esn'], summary: 'A text document (.esn) of statements: kernels, nodes running them, edges wiring them, params, inputs and outputs; `use` brings in other documents under the scene\'s folder. `document` reads one, `compose` changes them.', doc: 'docs/language.md#statements' },
  { name: 'node', aliases: ['nodes', 'member', 'members'], summary: 'A node runs one kernel over its domain (size = W x H); its members are its own values (count = 8.0;), params it names (warmth = warmth;) and edges (src <- rings.result;). Change a member with compose: {"node": N, "member": M, "text": "M = V;"}.', doc: 'docs/language.md#statements' },
  { name: 'edge', aliases: ['edges', 'wire'], summary: 'An input port of a node fed by another node\'s output port: `src <- rings.result;` in the node. The evaluation order follows the edges (graph.order).', doc: 'docs/language.md#statements' },
  { name: 'domain', aliases: ['element', 'elements', 'pixel'], summary: 'The elements a node computes, one kernel call each: its size (W x H, or W x H x D); x, y (and z) name the element. `trace` shows one element, `read` with `region` a block of them.', doc: 'docs/language.md#kernels' },
  { name: 'fusion', aliases: ['fuse', 'fused groups', 'group'], summary: 'A producer read only pointwise by one consumer of the same domain is fused into it: the group runs as one loop and the producer\'s field is never stored. graph.groups lists the groups; evaluate\'s timings are per group (`fused` names its nodes), and per node with `"profile": true`; `pin` a node to keep its ports readable; `render --no-fuse` runs every node alone.', doc: 'docs/architecture.md#the-compiler-as-passes' },
  { name: 'tiers', aliases: ['fast', 'optimised', 'optimized'], summary: 'A change runs first on the fast tier (compiled in milliseconds), then on the optimised tier once a compile worker has it ready (an `optimised` event; the same results, bit for bit). status.tiers and each placement\'s `tier` say which runs; serve --optimise-budget bounds the optimised compile.', doc: 'docs/architecture.md#tiers-every-edit-live-at-once-the-optimised-code-after' },
  { name: 'state', aliases: ['state port', 'seed'], summary: 'A kernel\'s state ports keep their field from frame to frame (e.g. a board of life). `write` sets them, `pin` then `read` with node and port reads them, `reset` sets them back to their declared values and the clock to zero, `snapshot`/`restore` save and load them.', doc: 'docs/language.md#kernels' },
  { name: 'registry', aliases: ['optimistic concurrency'], summary: 'The kernels the world runs, each with a generation and an origin (a document path, or "protocol" for one published over the protocol). publish and retire take `expect`, the generation you read: a change based on a stale read is refused.', doc: 'docs/architecture.md#the-session-srcmainsessionts-and-the-protocol-srcprotocol' },
  { name: 'replay', aliases: ['replays', '.replay', 'replay file', 'replay files', 'test file'], summary: 'A .replay file holds requests (`> {...}`) and the answers expected of them (`< {...}`, a partial match); `entelechy test FILE.replay` (or a folder) replays each against a fresh session on a copy of its scene\'s folder and names the line of each failed expectation. `help "replay line"` lists the line forms.', doc: 'docs/protocol.md#replay-files' },
  { name: 'doors', aliases: ['connect', 'transport', 'transports'], summary: 'How a session is reached: stdin of `entelechy serve SCENE`, TCP and WebSocket on `serve --listen HOST:PORT`, `entelechy mcp SCENE` (MCP tools), dispatch(session, line) in process, the Player window. `help door` lists them.', doc: 'docs/protocol.md#the-agent-protocol' },
];
