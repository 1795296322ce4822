// docs/protocol.md, generated from the operations table (a test fails when the file is stale):
// `npm run docs` writes it.

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ALL_GRANTS } from '../ir/grants.js';
import { LIMIT_LIST } from './limits.js';
import { EVENTS, OPERATIONS, type Effect, type Group } from './operations.js';
import { REPLAY_LINES } from './replay.js';

/** What each effect of the table means, as docs/protocol.md says it (MCP's tool annotations read the same column). */
const EFFECTS: Record<Effect, string> = {
  read: 'Reads only',
  change: 'Changes the world or writes files; what it replaced can be had back',
  destroy: 'May replace what cannot be had back',
};

const GROUPS: Group[] = ['Inspect', 'Structure', 'Kernels', 'Parameters', 'Running', 'State', 'Session'];

/** How long evaluations may run, how they stop, and what memory a session may take. */
const TIME_AND_MEMORY = [
  '## Time and memory', '',
  'Kernel code runs on the session\'s worker threads (one with `--workers 1`), never on the thread that answers',
  'requests, unless a frame of it is provably short: a domain below 131072 elements whose work, bound from its code',
  'before it runs (no loop, or loops whose fuel bounds them), is a few milliseconds at most. So every other',
  'connection is answered while a long frame runs: what reads the session (`status`, `document`, `history`, `help`, ...) at once;',
  'a change of the code or the scene (`compose`, `publish`, `retire`, `restore`, `sync`) at once too, stopping that frame (reason',
  '`changed`); a change of values (`param`, `write`, `reset`, `pause`) and a `read` or `trace` of the frame wait for it to end, as',
  'the frame runs with the values it began with (a `read` or `trace` takes a `deadline` for that wait; the long frame\'s own connection can `cancel` it). One connection\'s requests are answered in order: its `status`',
  'after an `evaluate` waits for that frame; only `cancel` is answered out of turn. To watch a long frame,',
  'ask from a second connection (TCP or WebSocket), or send the `evaluate` with a `deadline`.', '',
  'An evaluation (`evaluate`, `read` waiting for the frame before it, `trace`) stops, commits nothing (state, clock',
  'and frame counter stay as before the frame) and answers an error with `cancelled: true`, `reason` and `frame` when:',
  '',
  '| reason | what stopped it |', '|---|---|',
  '| `cancel` | a `cancel` request on the same connection (answered at once, out of turn) |',
  '| `deadline` | its request\'s `deadline` (milliseconds) passed, counted from when the request arrived: the time it waited behind its connection\'s earlier requests counts (the message says how much) |',
  '| `closed` | its connection closed: a WebSocket closed, a TCP peer closed its side (a FIN: its queued requests are still answered, their evaluations cancelled), or the answer could not be written. On `serve`\'s stdin, the end of a pipe or terminal is a client going away, as a FIN is (its queued requests answered, their evaluations cancelled, then the process ends), unless a `quit` came before it (the client said goodbye: every request before it is answered, on TCP too); the end of a regular file of requests (`entelechy serve SCENE < requests.jsonl`) stops nothing: a script gets every answer. A closed standard output stops them too |',
  '| `changed` | a change (`compose`, `publish`, `retire`, `sync`, `pin`, `restore`) swapped the world while it ran: a change never waits for a frame of the old world, and the requests after it run on the new one |',
  '',
  'Worker threads running a stopped frame are ended and replaced. A `read` of a field the stopped frame had begun',
  'to overwrite answers that nothing is computed yet (evaluate again); state ports read as before the frame.', '',
  'A session\'s fields have a memory budget: `--memory` on serve, mcp, render and entelechy-player (e.g. `512M`, `2G`;',
  'default an eighth of the machine\'s memory, at most 4 GiB, WebAssembly\'s limit). A change whose fields do not fit',
  'beside the running world\'s is refused before anything is allocated or written, naming the largest field, its node',
  'and size, and what the whole scene needs; the running world stays. A `read` whose answer would pass 256 MiB',
  '(before base64) is refused with a `region` to read instead (`expected`).', '',
  'Memory freed by a change is reused by later fields. The fields live in one shared WebAssembly.Memory, which can grow',
  'and never shrink: when a change leaves a memory of more than 256 MiB whose next world needs under a quarter of it,',
  'the new world is built in a fresh memory sized for it, with a new pool over it (the workers instantiate their',
  'modules on it); state is copied across (a migration runs over the old memory and its result is copied), and the',
  'old memory, its pool and its world are dropped once the reads that took them are done, then collected and',
  'returned to the system (test/memory-return.test.ts: a 384 MiB field composed away, resident memory falls by it).', '',
];

export function renderProtocolDoc(): string {
  const out: string[] = [];
  out.push('# The agent protocol', '');
  out.push('<!-- Generated from src/protocol/operations.ts by `npm run docs`; do not edit by hand. -->', '');
  out.push(
    'One JSON object a line: `{"id": 1, "op": "status", ...fields}`. The answer is `{"id", "ok": {...}}` or',
    '`{"error": {"message", ...}, "id"}`; `id` is optional and echoed back. Errors carry what acts on them as data:',
    'an unknown op lists `operations`; an unknown help name lists `similar` ones; a field of the wrong type, one not',
    'taken, or one missing answers `fields`, `field` and `expected`; a failed evaluation names its `node`; a line that',
    'is not JSON answers `line` and `column`; where one mends it, `fix` is an edit item to hand back to `compose`, and where',
    'a request mends it (`pin` before reading a fused node), `request` is that request to send.',
    '',
    '`entelechy help` (and `help` with no name) prints a quick start: how to connect, a request and its answer, every',
    'operation with its fields, and where these docs are. `help NAME` describes any operation, field, member of an answer',
    'or error, event, CLI command (`serve`, `test`) or concept of the docs (fusion, tiers, replay, ...); a kind (`events`, `replay lines`)',
    'lists its names, and an unknown word is answered with its nearest neighbours.',
    '',
    'Doors: `entelechy serve SCENE` reads requests on stdin and writes answers on stdout (`quit` ends the process);',
    'with `--listen host:port` (default 127.0.0.1:7788; port 0 picks a free one and stderr says `listening on HOST:PORT`)',
    'the same lines are served over every TCP connection, and over WebSocket (one request per message; a message of several lines is several requests, in order; a blank line is skipped, a blank message answered with an error) by HTTP',
    'upgrade on the same port; `quit` ends only that connection. There is no password: an address that is not loopback',
    '(`--listen 0.0.0.0:7788`) is served as asked, with a warning on stderr that whoever reaches the port may use every operation. WebSocket upgrades from foreign browser origins are',
    'refused unless `--allow-origin http://host:port` names them. `entelechy-player SCENE --serve` serves the same doors beside its window: there `evaluate` answers with',
    "the window's next frame and `read` returns the frame it shows (docs/player.md). `entelechy mcp SCENE` offers the",
    'operations as Model Context Protocol tools over stdio, and `--listen` serves them over Streamable HTTP at `/mcp`',
    '(docs/mcp.md). Clients: bridges/ (Python and Blender, a',
    'TypeScript host client, C, a web page). In process, `dispatch(session, line)` answers a line (see docs/architecture.md).',
    '',
  );
  out.push('| group | operations |', '|---|---|');
  for (const g of GROUPS) out.push(`| ${g} | ${OPERATIONS.filter((o) => o.group === g).map((o) => o.name).join(', ')} |`);
  out.push('');
  for (const g of GROUPS) {
    out.push(`## ${g}`, '');
    for (const o of OPERATIONS.filter((x) => x.group === g)) {
      out.push(`### \`${o.name}\``, '', o.summary, '');
      if (o.fields.length) {
        out.push('| field | type | required | meaning |', '|---|---|---|---|');
        for (const f of o.fields) out.push(`| \`${f.name}\` | ${f.type} | ${f.required ? 'yes' : ''} | ${f.meaning.replace(/\|/g, '\\|')} |`);
        out.push('');
      } else out.push('No fields.', '');
      if (o.exclusive?.length) out.push(`Not together: ${o.exclusive.map(([a, b]) => `\`${a}\` and \`${b}\``).join('; ')} (either, not both).`, '');
      out.push(`Answers: ${o.answer}.`, '', `${EFFECTS[o.effect]}${o.idempotent ? '; the same request again changes nothing more' : ''}.`, '');
    }
  }
  out.push('## Grants', '',
    'A session holds grants (`--grant G` grants only those named, `--deny G` withholds one; default all: ' + ALL_GRANTS.map((g) => `\`${g}\``).join(', ') + ').',
    'A kernel declares the grants its body uses (docs/language.md); an operation that would load a kernel needing one the session lacks is refused',
    'with the checker\'s diagnostic. Every path that sets a field only `write` may set under `field.write` is refused without it: the error',
    'answers `grant`, and a `write_refused` event is pushed. The other operations need no grant: those that run kernels (`evaluate`, `trace`,',
    '`pin`, `read`) run only kernels checked against the session\'s grants when they were loaded, whether an output needs them or not.',
    'Numbers in requests are finite and within f32\'s range (±3.4e38): kernels receive them as f32. A number of an answer that is not finite (a NaN or infinity a kernel computed, as `trace` tells it) is the string `"NaN"`, `"Infinity"` or `"-Infinity"`: JSON has no such numbers.', '');
  out.push('| operation | needs | when |', '|---|---|---|');
  for (const o of OPERATIONS) for (const g of o.grants ?? []) out.push(`| \`${o.name}\` | ${g.grant === 'kernels' ? "its kernels' grants" : `\`${g.grant}\``} | ${g.when} |`);
  out.push('');
  out.push(...TIME_AND_MEMORY);
  out.push('## Limits', '');
  out.push(
    'Requests are answered one at a time on the session\'s coordinator, so each request is held to limits that bound the',
    'time it can take there; one past a limit is refused before any work, its error naming the `field`, the `limit` and its',
    '`max`, and what to do instead. `help` describes each limit by name.',
    '',
  );
  out.push('| limit | max | bounds | instead |', '|---|---|---|---|');
  for (const l of LIMIT_LIST) out.push(`| \`${l.name}\` | ${l.limit} ${l.unit} | ${l.applies.replace(/\|/g, '\\|')} | ${l.remedy.replace(/\|/g, '\\|')} |`);
  out.push('');
  out.push('## Events', '', 'Answers carry `events` wherever something happened; `sync` returns those that came since this connection\'s last `sync`: each connection is told every event once, from its first request on (the first connection also those from before it, such as `recovered`), and a compose\'s refusal only to the connection that composed. The events a change\'s answer carries (`compose`, `publish`, `retire`, `restore`, `param`, `write`, ...; not a dry run\'s, and not `idle`) are told to every other connection at its `sync`, so each client hears of the others\' changes.', '');
  out.push('| kind | meaning |', '|---|---|');
  for (const e of EVENTS) out.push(`| \`${e.kind}\` | ${e.meaning} |`);
  out.push('', '## Replay files', '', '`.replay` files hold requests and the answers expected of them; `entelechy test [paths]` replays each against a fresh session on a copy of its scene\'s folder (its files and folders: pipes and sockets are left out).',
    'An expectation is a partial match of the answer, with numbers within a tolerance after `within`, or a comparison with the answer of',
    'an earlier step named by `> NAME: {...}` (`equals`, `differs`), of the whole answer but its `id` or of one member by its path. A failed one',
    'is reported at its own line, `FILE:LINE:COLUMN` (the column of the value that failed), with the expected and the actual value one',
    'above the other and the start of the answer. A replay that cannot check its scene fails before any request, named by `FILE:LINE:COLUMN`',
    'where a line is at fault: a `>` or `<` line that is not JSON, a second `@scene` line, no requests at all (it would check nothing), or a',
    'scene file that is not there (a session on no scene would pass it having checked nothing).',
    'A request the session refuses fails its replay unless a `<` line follows it (`< {"error": {}}` expects the refusal): a misspelt setup',
    'step would otherwise leave the test checking something else. `quit` is refused in a replay. A request that runs longer than',
    '`--timeout` (60000 ms unless given; 0: no limit) is stopped, fails, and ends its replay. When the scene did not check as the session',
    'opened, the failure says so first, with the check\'s line and column. `entelechy test` with no path runs the `.replay` files under',
    'the current folder; it exits 0 when every replay passed, 1 when one failed or none was found, and 130 or 143 when Ctrl-C or SIGTERM',
    'stopped it (the replay at work stops, its scratch copy is removed).',
    'For example, a test that `warmth` changes the picture and leaves the rings as they were:', '',
    '```', '> {"op":"param","name":"warmth","value":0}', '> {"op":"evaluate","time":0.5}', '> cold: {"op":"trace","x":64,"y":64}',
    '> {"op":"param","name":"warmth","value":1}', '> {"op":"evaluate","time":0.5}', '> {"op":"trace","x":64,"y":64}',
    '< differs cold ok.values[1].value', '< equals cold ok.values[0].value within 0.0001', '```', '',
    'A replay that passed at an earlier version of the scene and fails now: `bisect` (`entelechy bisect`) finds the first version in `history` at',
    'which it fails, replaying each version tried the same way, and answers the diff from the last good one and the failed step (docs/agents.md).', '');
  out.push('| line | form | meaning |', '|---|---|---|');
  for (const r of REPLAY_LINES) out.push(`| \`${r.name}\` | \`${r.syntax}\` | ${r.summary} |`);
  out.push('');
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = new URL('../../../docs/protocol.md', import.meta.url);
  writeFileSync(target, renderProtocolDoc());
  process.stdout.write(`wrote ${fileURLToPath(target)}\n`);
}
