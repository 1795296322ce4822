// `help`: gathered from the tables the implementation executes — the protocol's operations and
// fields, the compiler's types and builtins, the parser's forms and reserved words, the grants,
// the events and the replayer's lines. Nothing here is a second list.

import { BUILTIN_FUNCTIONS, BUILTIN_VALUES } from '../ir/builtins.js';
import { GRANTS } from '../ir/grants.js';
import { similar } from '../ir/suggest.js';
import { FORMS, RESERVED_WORDS } from '../ir/syntax/index.js';
import { TYPES } from '../ir/types.js';
import { ProtocolError } from './envelope.js';
import { EVENTS, OPERATIONS } from './operations.js';
import { REPLAY_LINES } from './replay.js';

type Entry = { name: string; kind: string } & Record<string, unknown>;

function entries(): Entry[] {
  return [
    ...OPERATIONS.map((o) => ({ name: o.name, kind: 'operation', group: o.group, summary: o.summary, fields: o.fields, answer: o.answer })),
    ...TYPES.map((t) => ({ name: t.name, kind: 'type', summary: t.summary })),
    ...BUILTIN_FUNCTIONS.map((b) => ({ name: b.name, kind: 'builtin', signature: b.signature, summary: b.summary })),
    ...BUILTIN_VALUES.map((b) => ({ name: b.name, kind: 'value', type: b.type, summary: b.summary, ...(b.grant ? { grant: b.grant } : {}) })),
    ...FORMS.map((f) => ({ name: f.name, kind: `form (${f.kind})`, syntax: f.syntax, summary: f.summary, example: f.example })),
    ...RESERVED_WORDS.map((w) => ({ name: w.word, kind: 'reserved word', role: w.role, summary: w.summary })),
    ...GRANTS.map((g) => ({ name: g.name, kind: 'grant', summary: g.summary })),
    ...EVENTS.map((e) => ({ name: e.kind, kind: 'event', summary: e.meaning })),
    ...REPLAY_LINES.map((r) => ({ name: r.name, kind: 'replay line', syntax: r.syntax, summary: r.summary })),
  ];
}

/** The entries for a name (a name may be a form and a reserved word), or the index. */
export function helpEntry(name?: string): Record<string, unknown> {
  const all = entries();
  if (name === undefined) {
    const index: Record<string, string[]> = {};
    for (const e of all) (index[e.kind] ??= []).includes(e.name) || index[e.kind].push(e.name);
    return { index, usage: 'help NAME describes one; over the protocol {"op": "help", "name": NAME}' };
  }
  const found = all.filter((e) => e.name === name || e.name.split(/[ ,/]+/).includes(name));
  if (!found.length) {
    const names = [...new Set(all.flatMap((e) => [e.name, ...e.name.split(/[ ,/]+/)]))];
    const near = similar(name, names);
    throw new ProtocolError(`no help for \`${name}\`${near.length ? `; similar: ${near.join(', ')}` : ''}; {"op": "help"} lists every name`, { similar: near });
  }
  return found.length === 1 ? found[0] : { name, entries: found };
}
