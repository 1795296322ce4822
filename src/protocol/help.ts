// `help`: gathered from the tables the implementation executes — the protocol's operations and
// fields, the compiler's types and builtins, the parser's forms and reserved words, the grants,
// the events, the doors, the protocol's limits, the replayer's lines and the session's packages —
// and from the two tables of words no code table holds: what answers' members mean
// (answer-fields.ts) and the concepts of the docs (concepts.ts). Without a name, the quick start.

import { COMMANDS } from '../cli/commands.js';
import { ANSWER_FIELDS, ERROR_MEMBERS, EVENT_MEMBERS } from './answer-fields.js';
import { CONCEPTS } from './concepts.js';
import { BUILTIN_FUNCTIONS, BUILTIN_VALUES } from '../ir/builtins.js';
import { GRANTS } from '../ir/grants.js';
import { similar } from '../ir/suggest.js';
import { FORMS, RESERVED_WORDS } from '../ir/syntax/index.js';
import { TYPES } from '../ir/types.js';
import { ProtocolError } from './envelope.js';
import { fieldLimit, LIMIT_LIST } from './limits.js';
import { EVENTS, OPERATIONS } from './operations.js';
import { DOCS, docsFolder, quickStart } from './quickstart.js';
import { REPLAY_LINES } from './replay.js';
import { DOORS } from './transports.js';

type Entry = { name: string; kind: string; aliases?: string[] } & Record<string, unknown>;

/** What each answer member means, and which operations answer it (their `returns`). */
function answerEntries(): Entry[] {
  const errors = ERROR_MEMBERS.map((f) => ({ name: f.name, kind: 'error member', summary: f.meaning, ...(f.doc ? { doc: f.doc } : {}) }));
  return [...ANSWER_FIELDS, ...EVENT_MEMBERS].map((f): Entry => {
    const ops = f.within ? [] : OPERATIONS.filter((o) => f.name in o.returns).map((o) => o.name);
    return { name: f.name, kind: 'answer field', summary: f.meaning, ...(f.within ? { within: f.within } : { answered_by: ops }), ...(f.doc ? { doc: f.doc } : {}) };
  }).concat(errors);
}

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
    ...OPERATIONS.map((o) => ({ name: o.name, kind: 'operation', group: o.group, summary: o.summary, fields: o.fields, ...(o.exclusive ? { not_together: o.exclusive } : {}), answer: o.answer, ...(o.grants ? { grants: o.grants } : {}) })),
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
    ...answerEntries(),
    ...COMMANDS.map((c) => ({ name: c.name, kind: 'command', syntax: `entelechy ${c.usage}`, summary: c.summary, example: c.example, doc: c.doc })),
    ...CONCEPTS.map((c) => ({ name: c.name, kind: 'concept', summary: c.summary, doc: c.doc, ...(c.aliases ? { aliases: c.aliases } : {}) })),
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
    const folder = docsFolder();
    return { quickstart: quickStart(), docs: DOCS.map((d) => ({ ...d, ...(folder ? { file: folder + d.path.slice('docs/'.length) } : {}) })), index, usage: 'help NAME describes one; over the protocol {"op": "help", "name": NAME}' };
  }
  const kind = kindNamed(all, name);
  const exact = all.filter((e) => words(e).includes(name));
  // `help Render`: another case, where no name has this one (TAU and tau would differ).
  const folded = exact.length || kind ? [] : all.filter((e) => words(e).some((w) => w.toLowerCase() === name.toLowerCase()));
  const found: Record<string, unknown>[] = exact.length ? exact : folded;
  const ofKind = all.filter((e) => e.kind === kind);
  // A kind of a few entries (the replay lines, the doors) is shown whole; a longer one by name.
  if (kind && ofKind.length <= 8) found.push(...ofKind);
  else if (kind) found.push({ name, kind: 'list', summary: `every ${kind} help knows; help NAME describes one`, names: [...new Set(ofKind.map((e) => e.name))] });
  if (!found.length) {
    // Neighbours among every name and kind; one- and two-letter names only for as short a word.
    const names = [...new Set([...all.flatMap(words), ...all.map((e) => e.kind)])].filter((c) => c.length >= Math.min(3, name.length));
    const near = similar(name, names);
    throw new ProtocolError(`no help for \`${name}\`${near.length ? `; similar: ${near.join(', ')}` : ''}; {"op": "help"} lists every name`, { similar: near });
  }
  return found.length === 1 ? found[0] : { name, entries: found };
}

/** The words an entry is found by: its name, the words of a name such as `x, y`, its aliases. */
function words(e: Entry): string[] {
  // `FIELD.sample(u, v[, w])` is found as `sample` and `FIELD.sample` too (its pieces split at
  // commas were offered as "similar: FIELD.sample(u").
  const call = /^(\w+)\.(\w+)\(/.exec(e.name);
  const pieces = call ? [`${call[1]}.${call[2]}`, call[2]] : e.name.split(/[ ,/]+/);
  return [e.name, ...pieces, ...(e.aliases ?? [])];
}

/** The kind a word names, in the singular or plural (`events`, `replay line`, `builtins`). */
function kindNamed(all: Entry[], name: string): string | undefined {
  const singular = name.toLowerCase().replace(/s$/, '');
  return all.find((e) => e.kind === name.toLowerCase() || e.kind === singular)?.kind;
}
