// `help` with no name: a quick start that fits one screen — how to reach a session (the doors
// table), a real request line and its real answer (test/help-quickstart.test.ts sends each to a
// session of examples/rings and compares), every operation with its fields (the operations table)
// and where the docs are. `entelechy help` prints the same lines.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OPERATIONS, type OperationSpec } from './operations.js';
import { DOORS } from './transports.js';

/** Requests and the answers a session of examples/rings gives them, byte for byte. */
export const EXAMPLES: readonly { request: string; answer: string; says: string }[] = [
  {
    says: 'a request and its answer (`id` is optional and echoed back):',
    request: '{"id":1,"op":"param","name":"warmth","value":0.8}',
    answer: '{"id":1,"ok":{"events":[],"name":"warmth","value":0.8}}',
  },
  {
    says: 'a refused one says what is wrong and what to send instead:',
    request: '{"id":2,"op":"param","name":"warmht","value":0.8}',
    answer: '{"error":{"message":"`warmht` is not a param the scene declares; did you mean `warmth`?; its params: warmth","params":["warmth"]},"id":2}',
  },
];

/** The documentation, for the quick start and for `help docs`. */
export const DOCS: readonly { path: string; holds: string }[] = [
  { path: 'docs/protocol.md', holds: 'every operation, field, answer, event, grant and limit; replay files' },
  { path: 'docs/language.md', holds: 'the .esn language: statements, kernels, nodes, types, builtins' },
  { path: 'docs/architecture.md', holds: 'compiler passes, tiers, fusion, memory, the session' },
  { path: 'docs/mcp.md', holds: 'the MCP server: tools, resources, prompts' },
  { path: 'docs/player.md', holds: 'the Player window (entelechy-player)' },
  { path: 'docs/rendering.md', holds: 'entelechy render: images, frames, videos, tiles' },
  { path: 'docs/distributed.md', holds: 'shards and the render farm' },
  { path: 'docs/testing.md', holds: "the project's own tests" },
  { path: 'docs/agents.md', holds: 'what a fresh agent spends on ten tasks, measured' },
];

/** Where the package's docs folder is on this machine (it ships with the package), if it does. */
export function docsFolder(): string | undefined {
  const folder = fileURLToPath(new URL('../../../docs/', import.meta.url));
  return existsSync(folder) ? folder : undefined;
}

/** An operation's fields as a usage line: required ones bare, optional ones in brackets. */
export function fieldUsage(o: OperationSpec): string {
  return o.fields.map((f) => (f.required ? f.name : `[${f.name}]`)).join(' ');
}

/** The summary up to its first full stop, colon or parenthesis: `help OP` gives the rest. */
function brief(summary: string): string {
  const cut = summary.search(/[.:;(]\s|[.:]$| \(/);
  return (cut < 0 ? summary : summary.slice(0, cut)).trim();
}

/** The quick start's lines. */
export function quickStart(): string[] {
  const doors = DOORS.filter((d) => ['stdin', 'tcp', 'mcp'].includes(d.name));
  const width = Math.max(...doors.map((d) => d.open.length));
  const opWidth = Math.max(...OPERATIONS.map((o) => `${o.name} ${fieldUsage(o)}`.length));
  const folder = docsFolder();
  const docWidth = Math.max(...DOCS.map((d) => d.path.length));
  return [
    'Entelechy: a live engine for fields. A session runs a scene (.esn); you talk to it in JSON lines.',
    '',
    'Start one:',
    ...doors.map((d) => `  ${d.open.padEnd(width)}  ${d.summary}`),
    // The README's first command, which a newcomer reading only `help` did not find.
    'Or, without a session (and: `entelechy-player SCENE`, a window live as files are saved; `entelechy bench`):',
    ...[
      ['entelechy render SCENE -o out.png', "the scene's output as a PNG; frames, video, tiles and inputs: help render"],
      ['entelechy check SCENE', 'check a scene: its errors with line, column and a fix'],
    ].map(([command, what]) => `  ${command.padEnd(width)}  ${what}`),
    '',
    'One JSON object a line: {"id": ANY, "op": OPERATION, ...fields}; the answer is {"id", "ok": {...}} or {"error": {"message", ...}, "id"}.',
    ...EXAMPLES.flatMap((e) => [e.says, `  > ${e.request}`, `  < ${e.answer}`]),
    '',
    'Operations (OPERATION field [optional field]; `help OPERATION` gives each field and the answer):',
    ...OPERATIONS.map((o) => `  ${`${o.name} ${fieldUsage(o)}`.padEnd(opWidth)}  ${brief(o.summary)}`),
    '',
    'Tests: a .replay file holds `>` requests and `<` expected answers; `entelechy test FILE.replay` runs it, `entelechy bisect` finds the edit that broke it (help replay).',
    `Docs${folder ? `, in ${folder}` : ''}:`,
    ...DOCS.map((d) => `  ${d.path.padEnd(docWidth)}  ${d.holds}`),
    'help NAME describes any operation, field, event, CLI command (help serve, help test), builtin, type or word of the docs; an unknown name gets the nearest ones.',
  ];
}
