// `help`: gathered from the tables the implementation executes — the protocol's operations and
// fields, the compiler's types and builtins, the parser's forms and reserved words, the grants,
// the events, the doors, the protocol's limits, the replayer's lines and the session's packages. Nothing here is a
// second list.

import { BUILTIN_FUNCTIONS, BUILTIN_VALUES } from '../ir/builtins.js';
import { GRANTS } from '../ir/grants.js';
import { similar } from '../ir/suggest.js';
import { FORMS, RESERVED_WORDS } from '../ir/syntax/index.js';
import { TYPES } from '../ir/types.js';
import { ProtocolError } from './envelope.js';
import { fieldLimit, LIMIT_LIST } from './limits.js';
import { EVENTS, OPERATIONS } from './operations.js';
import { REPLAY_LINES } from './replay.js';
import { DOORS } from './transports.js';

type Entry = { name: string; kind: string } & Record<string, unknown>;

/** Each field of the operations once, with what it means to each operation that takes it. */
function fieldEntries(): Entry[] {
  const byName = new Map<string, { op: string; type: string; required: boolean; meaning: string }[]>();
  for (const o of OPERATIONS) for (const f of o.fields) (byName.get(f.name) ?? byName.set(f.name, []).get(f.name)!).push({ op: o.name, type: f.type, required: Boolean(f.required), meaning: f.meaning });
  return [...byName].map(([name, takes]) => {
    const limit = fieldLimit(name);
    return { name, kind: 'field', summary: `a field of ${takes.map((t) => t.op).join(', ')}`, takes, ...(limit ? { limit: limit.name, max: limit.limit, unit: limit.unit } : {}) };
  });
}

/** The packages of the session's kernels (`demo` of demo.rings@1). */
function packageEntries(kernels: readonly string[]): Entry[] {
  const byPackage = new Map<string, string[]>();
  for (const id of kernels) {
    const name = id.slice(0, Math.max(0, id.lastIndexOf('.')));
    if (name) (byPackage.get(name) ?? byPackage.set(name, []).get(name)!).push(id);
  }
  return [...byPackage].map(([name, ids]) => ({ name, kind: 'package', summary: `kernels of this session: ${ids.join(', ')}`, kernels: ids }));
}

function entries(kernels: readonly string[]): Entry[] {
  return [
    ...OPERATIONS.map((o) => ({ name: o.name, kind: 'operation', group: o.group, summary: o.summary, fields: o.fields, answer: o.answer, ...(o.grants ? { grants: o.grants } : {}) })),
    ...TYPES.map((t) => ({ name: t.name, kind: 'type', summary: t.summary })),
    ...BUILTIN_FUNCTIONS.map((b) => ({ name: b.name, kind: 'builtin', signature: b.signature, summary: b.summary })),
    ...BUILTIN_VALUES.map((b) => ({ name: b.name, kind: 'value', type: b.type, summary: b.summary, ...(b.grant ? { grant: b.grant } : {}) })),
    ...FORMS.map((f) => ({ name: f.name, kind: `form (${f.kind})`, syntax: f.syntax, summary: f.summary, example: f.example })),
    ...RESERVED_WORDS.map((w) => ({ name: w.word, kind: 'reserved word', role: w.role, summary: w.summary })),
    ...GRANTS.map((g) => ({ name: g.name, kind: 'grant', summary: g.summary })),
    ...EVENTS.map((e) => ({ name: e.kind, kind: 'event', summary: e.meaning })),
    ...REPLAY_LINES.map((r) => ({ name: r.name, kind: 'replay line', syntax: r.syntax, summary: r.summary })),
    ...DOORS.map((d) => ({ name: d.name, kind: 'door', summary: d.summary, open: d.open })),
    ...LIMIT_LIST.map((l) => ({ name: l.name, kind: 'limit', max: l.limit, unit: l.unit, summary: l.applies, remedy: l.remedy })),
    ...fieldEntries(),
    ...packageEntries(kernels),
  ];
}

/**
 * The entries for a name (a name may be a form and a reserved word), or the index. `kernels`:
 * the session's kernel ids, whose packages help knows too.
 */
export function helpEntry(name?: string, kernels: readonly string[] = []): Record<string, unknown> {
  const all = entries(kernels);
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
