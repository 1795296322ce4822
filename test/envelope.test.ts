// The envelope (src/protocol/envelope.ts) against the operations table: what a client sees for
// each malformed line and each field of the wrong type, and the shape of the answer lines. The
// session answers exactly these lines (Session.request -> parseRequest, okLine, errorLine);
// test/protocol.test.ts drives them through a running session.

import t from 'tap';
import { errorLine, okLine, parseRequest, ProtocolError } from '../src/protocol/envelope.js';
import { OPERATION_NAMES, OPERATIONS, operation, type FieldType } from '../src/protocol/operations.js';

/** The error line a client receives for `line` (failing the test if the line was accepted). */
function refused(line: string): { id?: unknown; error: Record<string, any> } {
  const r = parseRequest(line);
  if (!('error' in r)) throw new Error(`accepted: ${line}`);
  return JSON.parse(errorLine(r.id, r.error));
}

function accepted(line: string) {
  const r = parseRequest(line);
  if ('error' in r) throw new Error(`refused: ${line}: ${r.error.message}`);
  return r;
}

t.test('a line that is not JSON: the line and column of the first bad character, without echoing the line', async (t) => {
  // [line, line number, column, the reason given]
  const cases: [string, number, number, string][] = [
    ['', 1, 1, 'unexpected end of JSON input'],
    ['{"op":', 1, 6, 'unexpected end of JSON input'],
    ['{"op":"status"} x', 1, 17, 'unexpected non-whitespace character after the JSON value'],
    ['{"op":"status"}\n{', 2, 1, 'unexpected non-whitespace character after the JSON value'],
    ['{"a":1,\n"b":x}', 2, 5, "unexpected token 'x'"], // JSON.parse names no position here
    ['[1,]', 1, 4, "unexpected token ']'"],
    ['{"op":"status",,}', 1, 16, 'Expected double-quoted property name'],
    ['{op:1}', 1, 2, "Expected property name or '}'"],
  ];
  for (const [line, lineNo, column, reason] of cases) {
    const { error } = refused(line);
    t.same(error, { line: lineNo, column, message: `not JSON at line ${lineNo}, column ${column}: ${reason}; send one JSON object a line` }, JSON.stringify(line));
  }
});

t.test('a JSON value that is not an object is refused with an example of a request', async (t) => {
  for (const line of ['[]', '[{"op":"status"}]', 'null', '3', '"status"', 'true']) {
    const { error, id } = refused(line);
    t.equal(id, undefined);
    t.same(error, { expected: 'object', message: 'a request is one JSON object a line, such as {"id": 1, "op": "status"}' }, line);
  }
});

t.test('the id: a string or a number, echoed on the answer; anything else refused', async (t) => {
  t.equal(accepted('{"id": 7, "op": "status"}').id, 7);
  t.equal(accepted('{"id": "a", "op": "status"}').id, 'a');
  t.equal(accepted('{"op": "status"}').id, undefined);
  for (const id of ['{}', '[1]', 'true', 'null', '1e999', '-1e999']) {
    const a = refused(`{"id": ${id}, "op": "status"}`);
    t.equal(a.id, undefined, `id ${id} is not echoed`);
    t.same(a.error, { expected: 'string or number', field: 'id', fields: ['id', 'op'], message: '`id` must be a string or a number (it is echoed back)' });
  }
  // An error after the id is known keeps it.
  t.equal(refused('{"id": 3, "op": "nope"}').id, 3);
  t.equal(refused('{"id": "q", "op": "read", "format": 1}').id, 'q');
});

t.test('op: missing, not a string, unknown (with the nearest name, or the list)', async (t) => {
  const missing = refused('{"id": 1}');
  t.equal(missing.id, 1);
  t.same(missing.error, { expected: 'string', field: 'op', operations: OPERATION_NAMES, message: 'the request has no `op`; say which operation, e.g. {"op": "status"}' });
  t.equal(refused('{"op": 5}').error.message, '`op` must be a string');
  t.same(refused('{"op": 5}').error.operations, OPERATION_NAMES);
  const near = refused('{"op": "evalute"}').error;
  t.equal(near.message, `unknown op \`evalute\` (did you mean \`evaluate\`?); the operations are ${OPERATION_NAMES.join(', ')}`);
  t.same(near.operations, OPERATION_NAMES);
  t.equal(refused('{"op": "zzzzzzzz"}').error.message, `unknown op \`zzzzzzzz\`; the operations are ${OPERATION_NAMES.join(', ')}`);
  // `operation` finds each by name and nothing else.
  for (const name of OPERATION_NAMES) t.equal(operation(name)?.name, name);
  t.equal(operation('Status'), undefined);
  t.equal(operation(''), undefined);
});

t.test('fields: one not taken (with the nearest, the list, or none), a required one missing', async (t) => {
  const typo = refused('{"op": "read", "fromat": "png"}').error;
  const readFields = operation('read')!.fields.map((f) => f.name);
  t.same(typo, { expected: 'format', field: 'fromat', fields: readFields, message: '`read` takes no field `fromat`; did you mean `format`?' });
  const far = refused('{"op": "read", "qqqqqqqq": 1}').error;
  t.same(far, { expected: null, field: 'qqqqqqqq', fields: readFields, message: `\`read\` takes no field \`qqqqqqqq\`; its fields are ${readFields.join(', ')}` });
  const none = refused('{"op": "status", "verbose": true}').error;
  t.same(none, { expected: null, field: 'verbose', fields: [], message: '`status` takes no field `verbose`; it takes no fields' });
  const missing = refused('{"op": "kernel"}').error;
  t.same(missing, { expected: 'string', field: 'kernel', fields: ['kernel'], message: '`kernel` needs `kernel` (a string): the kernel id, e.g. demo.tint@1' });
  // Every required field of every operation is asked for when it is missing.
  for (const spec of OPERATIONS) {
    for (const f of spec.fields.filter((x) => x.required)) {
      const others = Object.fromEntries(spec.fields.filter((x) => x.required && x !== f).map((x) => [x.name, sample(x.type)]));
      const e = refused(JSON.stringify({ op: spec.name, ...others })).error;
      t.equal(e.field, f.name, `${spec.name} without ${f.name}`);
    }
    const all = Object.fromEntries(spec.fields.filter((x) => x.required).map((x) => [x.name, sample(x.type)]));
    const r = accepted(JSON.stringify({ id: 1, op: spec.name, ...all }));
    t.same(r.fields, all, `${spec.name} with its required fields`);
    t.equal(r.spec, spec);
    t.equal(r.op, spec.name);
  }
});

t.test('fields that ask for one thing two ways (the table\'s `exclusive`): either, not both, naming both', async (t) => {
  t.same(refused('{"id": 3, "op": "restore", "path": "s.json", "data": "{}"}'), { id: 3, error: { field: 'data', fields: ['path', 'data'], message: '`restore` takes `path` or `data`, not both: drop one (`help restore` says what each does)' } });
  t.match(refused('{"op": "read", "output": "o", "node": "n"}').error, { field: 'node', fields: ['output', 'node'], message: /^`read` takes `output` or `node`, not both/ });
  t.match(refused('{"op": "read", "output": "o", "port": "p"}').error, { fields: ['output', 'port'] });
  t.match(refused('{"op": "write", "node": "n", "value": 1, "data": "AAAA"}').error, { fields: ['data', 'value'], message: /^`write` takes `data` or `value`, not both/ });
  // Every pair names fields its operation takes, and each of the two alone is accepted.
  for (const spec of OPERATIONS) {
    for (const [a, b] of spec.exclusive ?? []) {
      const field = (n: string) => spec.fields.find((f) => f.name === n)!;
      t.ok(field(a) && field(b), `${spec.name}: ${a} and ${b} are its fields`);
      for (const one of [a, b]) accepted(JSON.stringify({ op: spec.name, [one]: sample(field(one).type) }));
    }
  }
});

/** A valid value of each field type. */
function sample(type: FieldType): unknown {
  return { string: 's', number: 1.5, integer: 2, boolean: true, object: {}, array: [], 'string|null': null, 'number|array': [1, 2], any: 0 }[type];
}

t.test('each field type takes its values and refuses others, non-finite numbers included', async (t) => {
  // [type, an operation field of that type, values taken, values refused] (as JSON text: 1e999 is Infinity).
  const table: [FieldType, string, string, string[], string[]][] = [
    ['string', 'read', 'format', ['"png"', '""'], ['1', 'null', '["png"]', '{}', 'true']],
    ['number', 'evaluate', 'time', ['0', '-2.5', '3.4e38', '-3.4e38', '3.4028234663852886e38'], ['1e999', '-1e999', '1e300', '1e39', '"1"', 'null', '[1]', 'true']],
    ['integer', 'trace', 'x', ['0', '-3', '7'], ['1.5', '1e999', '"1"', 'null', 'true']],
    ['boolean', 'pause', 'paused', ['true', 'false'], ['0', '1', '"true"', 'null']],
    ['object', 'evaluate', 'pointer', ['{}', '{"x": 1}'], ['null', '[]', '"p"', '1']],
    ['array', 'evaluate', 'keys', ['[]', '["a", 1]'], ['{}', '"a"', 'null', '1']],
    ['number|array', 'param', 'value', ['1', '[]', '[1, 2.5]'], ['1e999', '1e39', '[1, 1e999]', '[1, -1e39]', '[1, "2"]', '"1"', 'null', '{}', '[[1]]']],
  ];
  for (const [type, op, field, good, bad] of table) {
    t.equal(operation(op)!.fields.find((f) => f.name === field)!.type, type, `${op}.${field} is ${type}`);
    const base = op === 'param' ? '"name": "p", ' : op === 'trace' && field !== 'x' ? '"x": 0, ' : '';
    for (const v of good) t.same(accepted(`{"op": "${op}", ${base}"${field}": ${v}}`).fields[field], JSON.parse(v), `${op}.${field} takes ${v}`);
    for (const v of bad) {
      const e = refused(`{"op": "${op}", ${base}"${field}": ${v}}`).error;
      t.match(e, { field, expected: type }, `${op}.${field} refuses ${v}`);
      t.match(e.message, new RegExp(`^\`${field}\` of \`${op}\` must be `));
    }
  }
  // What each refusal says the type is, and what the field means.
  const words: [string, string][] = [
    ['{"op": "read", "format": 1}', '`format` of `read` must be a string: png (default) or f32 (little-endian floats, component-major planes)'],
    ['{"op": "evaluate", "time": 1e999}', '`time` of `evaluate` must be a number (finite, within ±3.4e38: an f32): the world clock in seconds (default: as it is)'],
    ['{"op": "trace", "x": 0.5}', '`x` of `trace` must be an integer: x'],
    ['{"op": "pause", "paused": 1}', '`paused` of `pause` must be true or false: true to pause, false to resume (default: toggle what the last pause request asked for)'],
    ['{"op": "evaluate", "pointer": []}', '`pointer` of `evaluate` must be an object: pointer {x, y, down} for kernels holding input.read'],
    ['{"op": "evaluate", "keys": "a"}', '`keys` of `evaluate` must be an array: names of keys held'],
    ['{"op": "param", "name": "p", "value": "1"}', '`value` of `param` must be a number (finite, within ±3.4e38: an f32) or an array of such numbers: a number, or numbers for a vector'],
  ];
  for (const [line, message] of words) t.equal(refused(line).error.message, message);
});

t.test('the two types no operation uses today are checked as documented', async (t) => {
  // `string|null` and `any`: checked through a copy of `status` holding a field of each.
  const at = OPERATIONS.indexOf(operation('status')!);
  const original = OPERATIONS[at];
  OPERATIONS[at] = { ...original, fields: [{ name: 'n', type: 'string|null', meaning: 'n' }, { name: 'a', type: 'any', meaning: 'a' }] };
  t.teardown(() => {
    OPERATIONS[at] = original;
  });
  t.same(accepted('{"op": "status", "n": null, "a": [1]}').fields, { n: null, a: [1] });
  t.same(accepted('{"op": "status", "n": "x", "a": null}').fields, { n: 'x', a: null });
  t.equal(refused('{"op": "status", "n": 1}').error.message, '`n` of `status` must be a string or null: n');
});

t.test('answer lines: keys in order all the way down, undefined left out, the id first only when given', async (t) => {
  const ok = { b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined }, e: 'x' };
  t.equal(okLine(4, ok), '{"id":4,"ok":{"a":{"d":[{"y":2,"z":1}]},"b":1,"e":"x"}}');
  t.equal(okLine(undefined, {}), '{"ok":{}}');
  t.equal(okLine('r', { list: [3, 1, 2] }), '{"id":"r","ok":{"list":[3,1,2]}}', 'arrays keep their order');
  // Values that are not plain objects (a Date, a Map) are left as JSON.stringify gives them.
  const at = new Date(Date.UTC(2026, 0, 2));
  t.equal(okLine(1, { at, m: new Map([['a', 1]]) }), '{"id":1,"ok":{"at":"2026-01-02T00:00:00.000Z","m":{}}}');
  const e = new ProtocolError('no such node `q`', { node: 'q', fields: ['node'], fix: { text: 'x' } });
  t.equal(errorLine(2, e), '{"error":{"fields":["node"],"fix":{"text":"x"},"message":"no such node `q`","node":"q"},"id":2}');
  t.equal(errorLine(undefined, new ProtocolError('m')), '{"error":{"message":"m"}}');
  t.equal(new ProtocolError('m').name, 'ProtocolError');
  t.same(new ProtocolError('m').data, {});
});
