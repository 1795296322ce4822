// `help NAME` knows the words of the answers: every member of every answer a real session gives
// (and of the objects in its arrays), every error member, each concept of the docs (whose section
// must exist), and an unknown word gets its real neighbours.

import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { helpEntry } from '../src/protocol/help.js';
import { ANSWER_FIELDS, ERROR_MEMBERS, EVENT_MEMBERS } from '../src/protocol/answer-fields.js';
import { CONCEPTS } from '../src/protocol/concepts.js';
import { OPERATIONS } from '../src/protocol/operations.js';
import { copyExample } from './fixtures.js';
import { ROOT } from './helpers.js';

type Entry = { name: string; kind: string; [k: string]: unknown };
const entriesOf = (name: string): Entry[] => {
  try {
    const e = helpEntry(name) as Entry & { entries?: Entry[] };
    return e.entries ?? [e];
  } catch {
    return [];
  }
};

/** The member names of an answer, and of the objects in its arrays (maps such as params are not walked: their keys are names). */
function members(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) members(v, into);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) {
    into.add(k);
    if (Array.isArray(v)) members(v, into);
  }
}

const REQUESTS = [
  { op: 'status' }, { op: 'kernels' }, { op: 'kernel', kernel: 'demo.tint@1' }, { op: 'graph' }, { op: 'document' }, { op: 'history' },
  { op: 'prepare', source: 'kernel demo.grey@1 { in src: field2<vec4>; out result: field2<vec4>; each (x, y) { result = src; } }' },
  { op: 'param', name: 'warmth', value: 0.7 }, { op: 'evaluate', time: 0.5 }, { op: 'read', format: 'f32', region: { x: 0, y: 0, width: 2, height: 2 } },
  { op: 'trace', x: 3, y: 3 }, { op: 'pin', node: 'rings' }, { op: 'unpin', node: 'rings' }, { op: 'snapshot' }, { op: 'pause', paused: true }, { op: 'pause', paused: false },
  { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = 9.0;' }] }, { op: 'sync' },
  { op: 'bisect', good: '0', bad: '1', replay: '> {"op":"graph"}\n< {"ok":{"nodes":[{"members":{"count":[8]}},{}]}}\n' },
  { op: 'bisect', good: '1', bad: '1', replay: '> {"op":"graph"}\n< {"ok":{"nodes":[{"members":{"count":[8]}},{}]}}\n' },
  { op: 'publish', source: 'kernel demo.tint@1 { in src: field2<vec4>; in warmth: f32 = 0.5; out result: field2<vec4>; each (x, y) { result = src; } }', expect: 1 },
  { op: 'retire', kernel: 'demo.tint@1' }, { op: 'reset' }, { op: 'cancel' }, { op: 'help', name: 'evaluate' },
  // Errors: their members are answer words too.
  { op: 'param', name: 'count', value: 3 }, { op: 'read', outptu: 'result' }, { op: 'frobnicate' }, { op: 'help', name: 'evalute' },
  { op: 'compose', edits: [{ node: 'rings', member: 'count', text: 'count = ;' }] }, { op: 'read', node: 'rings', port: 'result' },
];

t.test('every member of every answer of a real session has a help entry', async (t) => {
  const s = await Session.open(join(copyExample('rings', 'help-answers'), 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const seen = new Set<string>();
  for (const r of REQUESTS) {
    const answer = JSON.parse(await dispatch(s, JSON.stringify(r)));
    if (r.op === 'help') continue; // help's own answer is the help table
    members(answer.ok ?? answer.error, seen);
  }
  for (const name of [...seen].sort()) t.ok(entriesOf(name).some((e) => e.kind === 'answer field' || e.kind === 'error member'), `help ${name} describes it`);
});

t.test('every member the operations table says an answer holds is described, with the operations that answer it', async (t) => {
  for (const o of OPERATIONS)
    for (const name of Object.keys(o.returns)) {
      const entry = entriesOf(name).find((e) => e.kind === 'answer field' && Array.isArray(e.answered_by));
      t.ok(entry && (entry.answered_by as string[]).includes(o.name), `help ${name}: in the answer of ${o.name}`);
    }
  t.ok(ANSWER_FIELDS.every((f) => f.meaning.length > 10), 'each with a meaning');
});

t.test('each concept points at a section of the docs that exists', async (t) => {
  const slug = (h: string) => h.toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, '').trim().replace(/\s/g, '-');
  for (const c of CONCEPTS) {
    const [file, anchor] = c.doc.split('#');
    const text = readFileSync(join(ROOT, file), 'utf8');
    if (anchor) t.ok(text.split('\n').some((l) => /^#+ /.test(l) && slug(l.replace(/^#+ /, '')) === anchor), `${c.doc} exists`);
    t.ok(entriesOf(c.name).some((e) => e.kind === 'concept' && e.doc === c.doc), `help ${c.name}`);
    for (const a of c.aliases ?? []) t.ok(entriesOf(a).some((e) => e.name === c.name), `help ${a} finds ${c.name}`);
  }
  for (const f of [...ANSWER_FIELDS, ...ERROR_MEMBERS, ...EVENT_MEMBERS].filter((f) => f.doc)) {
    const [file, anchor] = f.doc!.split('#');
    const text = readFileSync(join(ROOT, file), 'utf8');
    t.ok(text.split('\n').some((l) => /^#+ /.test(l) && slug(l.replace(/^#+ /, '')) === anchor), `${f.name}: ${f.doc} exists`);
  }
});

t.test('the words the first agents asked for, and the kinds by name', async (t) => {
  for (const word of ['timings', 'placements', 'fused', 'groups', 'generation', 'revision', 'origin', 'tiers', 'fusion', 'replay', 'docs', 'envelope'])
    t.ok(entriesOf(word).length, `help ${word}`);
  t.same(entriesOf('replay line').map((e) => e.name), ['>', '<', '< within', '< equals', '< differs', '#', '@scene'], 'a short kind is shown whole');
  t.same(new Set(entriesOf('replay lines').map((e) => e.kind)), new Set(['replay line']), 'in the plural too');
  t.match(entriesOf('differs'), [{ name: '< differs', kind: 'replay line', syntax: '< differs cold ok.data' }], 'help differs');
  const events = entriesOf('events').find((e) => e.kind === 'list');
  t.ok((events?.names as string[]).includes('scene_loaded'), 'help events lists the event kinds');
  t.ok((entriesOf('builtins')[0].names as string[]).includes('smoothstep'), 'help builtins lists them');
});

t.test('an unknown word suggests its real neighbours, nearest first', async (t) => {
  const near = (word: string) => {
    try {
      helpEntry(word);
      return [];
    } catch (e) {
      return (e as { data: { similar: string[] } }).data.similar;
    }
  };
  t.equal(near('timing')[0], 'timings');
  t.equal(near('fusoin')[0], 'fusion');
  t.equal(near('placement')[0], 'placements');
  t.equal(near('generatio')[0], 'generation');
  t.notOk(near('timing').some((w) => w.length < 3), 'no one- or two-letter names for a longer word');
});
