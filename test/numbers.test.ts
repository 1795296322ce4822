// Non-finite and out-of-range numbers in every numeric field of every operation: each request is
// refused with the field it names, and the world (frame, clock, state, input, params) is as it
// was. Numbers reach kernels as f32, so a number past f32's range (it would arrive as infinity)
// is refused like infinity itself. The list of fields is checked against the operations table,
// so that a numeric field added later without a case fails here.

import t from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { OPERATIONS } from '../src/protocol/operations.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

const SCENE = `input canvas: field2<f32> = 0.25 size 8 x 4;
param gain: f32 = 1.0 range 0..4;
kernel t.step@1 {
  grants field.write, time.read, input.read;
  in src: field2<f32>;
  in gain: f32 = 1.0;
  state total: field2<f32> = 0.0;
  out result: field2<f32>;
  each (x, y) {
    total = total + src * gain;
    result = total + (pointer.down ? 1.0 : 0.0) + time * 0.0;
  }
}
node step: t.step@1 { src <- canvas; gain = gain; }
output result <- step.result;
`;

// 1e999 in JSON text parses as Infinity; 1e39 is finite but past f32's range.
const BAD_NUMBERS = ['1e999', '-1e999', '1e39', '-3.5e38'];
const BAD_INTEGERS = ['1e999', '-1e999', '1.5'];

/** A raw request line with `§` standing for the bad number. */
interface Case {
  op: string;
  field: string;
  /** Another field the error may name: trace answers a point outside every field as `x`. */
  or?: string;
  line: string;
  numbers: string[];
}

const f32b64 = (values: number[]) => Buffer.from(new Float32Array(values).buffer).toString('base64');

const CASES: Case[] = [
  { op: 'evaluate', field: 'time', line: '{"op":"evaluate","time":§}', numbers: BAD_NUMBERS },
  { op: 'evaluate', field: 'pointer', line: '{"op":"evaluate","pointer":{"x":§,"y":1,"down":true}}', numbers: BAD_NUMBERS },
  { op: 'evaluate', field: 'frames', line: '{"op":"evaluate","frames":§}', numbers: [...BAD_INTEGERS, '0', '-1', '10001', '1e20'] },
  { op: 'evaluate', field: 'pointer', line: '{"op":"evaluate","pointer":{"x":1,"y":§}}', numbers: BAD_NUMBERS },
  { op: 'param', field: 'value', line: '{"op":"param","name":"gain","value":§}', numbers: [...BAD_NUMBERS, '4.5', '-1'] },
  { op: 'param', field: 'value', line: '{"op":"param","name":"gain","value":[§]}', numbers: BAD_NUMBERS },
  { op: 'write', field: 'value', line: '{"op":"write","node":"canvas","value":§}', numbers: BAD_NUMBERS },
  { op: 'write', field: 'value', line: '{"op":"write","node":"step","port":"total","value":[§]}', numbers: BAD_NUMBERS },
  ...['x', 'y', 'width', 'height'].map((k) => ({ op: 'write', field: 'region', line: `{"op":"write","node":"canvas","value":1,"region":{"${k}":§}}`, numbers: [...BAD_INTEGERS, '-1', '1e20'] })),
  ...['x', 'y', 'z', 'width', 'height', 'depth'].map((k) => ({ op: 'read', field: 'region', line: `{"op":"read","format":"f32","region":{"${k}":§}}`, numbers: [...BAD_INTEGERS, '-1', '1e20'] })),
  { op: 'trace', field: 'x', line: '{"op":"trace","x":§}', numbers: [...BAD_INTEGERS, '-1', '1e20'] },
  { op: 'trace', field: 'y', or: 'x', line: '{"op":"trace","x":0,"y":§}', numbers: [...BAD_INTEGERS, '-1', '1e20'] },
  { op: 'trace', field: 'z', or: 'x', line: '{"op":"trace","x":0,"y":0,"z":§}', numbers: [...BAD_INTEGERS, '-1', '1e20'] },
  { op: 'publish', field: 'expect', line: '{"op":"publish","source":"kernel t.step@1 { out result: field2<f32>; each (x, y) { result = 9.0; } }","expect":§}', numbers: [...BAD_INTEGERS, '-1', '1e20'] },
  ...['evaluate', 'read', 'trace'].map((op) => ({ op, field: 'deadline', line: `{"op":"${op}",${op === 'trace' ? '"x":0,' : ''}"deadline":§}`, numbers: [...BAD_NUMBERS, '0', '-1', '3e9'] })),
  { op: 'compose', field: 'deadline', line: '{"op":"compose","edits":[{"node":"step","member":"gain","text":"gain = gain;"}],"deadline":§}', numbers: [...BAD_NUMBERS, '0', '-1', '3e9'] },
  { op: 'sync', field: 'deadline', line: '{"op":"sync","deadline":§}', numbers: [...BAD_NUMBERS, '0', '-1', '3e9'] },
  { op: 'bisect', field: 'deadline', line: '{"op":"bisect","good":"0","bad":"0","replay":"> {}","deadline":§}', numbers: [...BAD_NUMBERS, '0', '-1', '3e9'] },
  { op: 'restore', field: 'deadline', line: '{"op":"restore","path":"none.json","deadline":§}', numbers: [...BAD_NUMBERS, '0', '-1', '3e9'] },
  { op: 'evaluate', field: 'thumbnail', line: '{"op":"evaluate","thumbnail":§}', numbers: [...BAD_INTEGERS, '0', '-1', '1e20'] },
  // A dry run's `evaluate` (speculate.ts): its numbers are refused naming it, and no fork runs.
  ...['compose', 'publish', 'prepare'].flatMap((op) => ['frames', 'time', 'thumbnail'].map((k) => ({
    op, field: 'evaluate',
    line: op === 'compose' ? `{"op":"compose","edits":[{"node":"step","member":"gain","text":"gain = gain;"}],"dry_run":true,"evaluate":{"${k}":§}}`
      : `{"op":"${op}","source":"kernel t.step@1 { out result: field2<f32>; each (x, y) { result = 9.0; } }",${op === 'publish' ? '"dry_run":true,' : ''}"evaluate":{"${k}":§}}`,
    numbers: k === 'time' ? BAD_NUMBERS : [...BAD_INTEGERS, '-1', '1e20'],
  }))),
  // A dry run's `evaluate.values.region` (the states' values read back): refused naming `evaluate`, before any fork.
  ...['x', 'y', 'z', 'width', 'height', 'depth'].map((k) => ({ op: 'compose', field: 'evaluate', line: `{"op":"compose","edits":[{"node":"step","member":"gain","text":"gain = gain;"}],"dry_run":true,"evaluate":{"values":{"region":{"${k}":§}}}}`, numbers: [...BAD_INTEGERS, '-1', '1e20'] })),
  { op: 'retire', field: 'expect', line: '{"op":"retire","kernel":"t.step@1","expect":§}', numbers: [...BAD_INTEGERS, '-1', '1e20'] },
];

let dir = '';
let s: Session;
t.before(async () => {
  dir = scratchDir('entelechy-numbers-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
});
t.teardown(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = async (line: string): Promise<{ ok?: any; error?: any }> => JSON.parse(await dispatch(s, line));

/** Everything a refused request must leave as it was. */
async function world(): Promise<string> {
  const st = (await ask('{"op":"status"}')).ok;
  const total = (await ask('{"op":"snapshot"}')).ok.data;
  return JSON.stringify([st.frame, st.time, st.params, st.kernels, st.loaded, JSON.parse(total).state]);
}

t.test('every numeric field of the operations table has a case', async (t) => {
  const numeric = OPERATIONS.flatMap((o) => o.fields.filter((f) => ['number', 'integer', 'number|array'].includes(f.type)).map((f) => `${o.name}.${f.name}`));
  const covered = new Set(CASES.map((c) => `${c.op}.${c.field}`));
  t.same(numeric.filter((n) => !covered.has(n)), [], 'numeric fields without a case');
  // Objects holding numbers are covered where they are read as numbers.
  for (const nested of ['evaluate.pointer', 'write.region', 'read.region', 'compose.evaluate', 'publish.evaluate', 'prepare.evaluate']) t.ok(covered.has(nested), nested);
});

t.test('non-finite and out-of-range numbers are refused, naming the field; nothing changes', async (t) => {
  t.ok((await ask('{"op":"evaluate","time":0.5}')).ok, 'precondition: a frame runs');
  t.ok((await ask('{"op":"evaluate","time":0.5,"pointer":{"x":1,"y":2,"down":true}}')).ok, 'precondition: with a pointer');
  const before = await world();
  for (const c of CASES) {
    for (const n of c.numbers) {
      const line = c.line.replace('§', n);
      const a = await ask(line);
      if (!a.error) {
        t.fail(`${line} answered ok: ${JSON.stringify(a.ok).slice(0, 200)}`);
        continue;
      }
      const fields = [c.field, ...(c.or ? [c.or] : [])];
      if (c.op === 'publish' || c.op === 'retire') {
        // A finite integer that is not the generation is a stale expect (or, for retire, a kernel
        // that is the document's): refused either way.
        if (Number.isInteger(Number(n)) && Math.abs(Number(n)) < 1e300) {
          t.pass(`${line}: refused (${a.error.message.slice(0, 60)})`);
          continue;
        }
      }
      t.ok(fields.includes(a.error.field), `${line}: refused, naming \`${fields.join('` or `')}\` (${a.error.field})`);
      t.notMatch(a.error.message, /Infinity|NaN|this is a bug|at .*\.js/, `${line}: the message says what is wrong in words`);
    }
  }
  t.equal(await world(), before, 'frame, clock, params, kernels and state are as they were');
});

t.test('write: data holding NaN (with payloads) and infinities is stored bit for bit, and read back so', async (t) => {
  const bits = new Uint32Array(32).fill(0x3f000000); // 0.5
  bits.set([0x7fa00001, 0xffc12345, 0x7f800000, 0xff800000, 0x7fffffff], 11); // a signalling NaN, a negative quiet NaN with a payload, +Inf, -Inf, NaN
  const a = await ask(JSON.stringify({ op: 'write', node: 'canvas', data: Buffer.from(bits.buffer).toString('base64') }));
  t.ok(a.ok, `written (${JSON.stringify(a.error)})`);
  const back = Buffer.from((await ask(JSON.stringify({ op: 'read', input: 'canvas', format: 'f32' }))).ok.data, 'base64');
  t.same([...new Uint32Array(back.buffer, back.byteOffset, 32)], [...bits], 'every bit as written');
  // An answer's NaN and infinities are strings: JSON.stringify wrote null, as if nothing were read.
  t.ok((await ask('{"op":"evaluate"}')).ok);
  for (const [x, told] of [[3, 'NaN'], [5, 'Infinity'], [6, '-Infinity']] as const) {
    const traced = (await ask(JSON.stringify({ op: 'trace', x, y: 1 }))).ok;
    const src = traced.reads.find((r: { name: string }) => r.name === 'src');
    t.equal(src?.value, told, `trace at x = ${x} tells ${told}: ${JSON.stringify(traced.reads)}`);
  }
  t.ok((await ask(JSON.stringify({ op: 'write', node: 'canvas', data: f32b64(new Array(32).fill(0.5)) }))).ok, 'finite data is written too');
});

t.test('restore: non-finite numbers in a snapshot are refused; nothing is restored', async (t) => {
  const snap = (await ask('{"op":"snapshot"}')).ok.data as string;
  const before = await world();
  const doc = JSON.parse(snap);
  const variants: [string, string][] = [
    ['clock', JSON.stringify({ ...doc, clock: { time: 1, frame: 1 } }).replace('"time":1', `"time":1e999`)],
    ['clock', JSON.stringify({ ...doc, clock: { time: 1, frame: 1 } }).replace('"frame":1', `"frame":1e999`)],
    ['clock', JSON.stringify({ ...doc, clock: { time: 1e39, frame: 1 } })],
    ['params', JSON.stringify({ ...doc, params: { gain: [2] } }).replace('"gain":[2]', '"gain":[1e999]')],
  ];
  for (const [field, text] of variants) {
    const a = await ask(JSON.stringify({ op: 'restore', data: text }));
    t.ok(a.error, `a snapshot with a non-finite ${field} is refused`);
    t.match(a.error?.message, /nothing was restored/);
  }
  t.equal(await world(), before, 'nothing changed');
  t.ok((await ask(JSON.stringify({ op: 'restore', data: snap }))).ok, 'precondition: the snapshot as it was restores');
});

t.test("the largest f32 as it is usually written (3.4028235e38) is within range: it rounds to it, not to infinity", async (t) => {
  const { isF32Number } = await import('../src/ir/check/literal.js');
  t.ok(isF32Number(3.4028235e38), '3.4028235e38');
  t.ok(isF32Number(-3.4028235e38), '-3.4028235e38');
  t.notOk(isF32Number(3.4028236e38), 'past the rounding point: infinity');
  t.notOk(isF32Number(1e39));
});
