// The envelope: one JSON object a line in, `{"id","ok"}` or `{"error","id"}` out. Requests are
// validated against the operations table, and every error carries what acts on it as data.

import { F32_MAX, isF32Number } from '../ir/check/literal.js';
import { closest } from '../ir/suggest.js';
import { ProtocolError } from './error.js';
import { checkLimits, LIMITS, LimitError, shallow, tooDeep } from './limits.js';

export { ProtocolError };
import { OPERATION_NAMES, operation, type FieldSpec, type OperationName, type OperationSpec } from './operations.js';

export interface Request {
  id?: unknown;
  op: OperationName;
  spec: OperationSpec;
  fields: Record<string, unknown>;
}

/** Parse and validate one request line; a ProtocolError says what is wrong (and keeps the id). */
export function parseRequest(line: string): Request | { id?: unknown; error: ProtocolError } {
  // A byte order mark some Windows tools write first is not part of the request.
  if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
  // Bounds first: what follows costs time in proportion to the line and its nesting.
  if (line.length > LIMITS.line.limit) return { error: ProtocolError.from(new LimitError('line', LIMITS.line, `is ${line.length} characters long`, 'the request line')) };
  const deep = tooDeep(line);
  if (deep !== undefined) {
    const { line: lineNo, column } = lineColumn(line, deep);
    const e = new LimitError('request', LIMITS.nesting, `nests arrays and objects deeper than that at line ${lineNo}, column ${column}`, 'the request');
    return { id: idOf(shallow(line)), error: new ProtocolError(e.message, { ...e.data, field: undefined, line: lineNo, column }) };
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return { error: jsonError(line, e as Error) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: new ProtocolError('a request is one JSON object a line, such as {"id": 1, "op": "status"}', { expected: 'object' }) };
  const { id, op, ...fields } = value as Record<string, unknown>;
  // 1e999 parses as Infinity, which JSON writes back as null: an id the client could not match.
  if (id !== undefined && typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id)))
    return { error: new ProtocolError('`id` must be a string or a number (it is echoed back)', { field: 'id', expected: 'string or number', fields: ['id', 'op'] }) };
  if (typeof op !== 'string')
    return { id, error: new ProtocolError(op === undefined ? 'the request has no `op`; say which operation, e.g. {"op": "status"}' : '`op` must be a string', { field: 'op', expected: 'string', operations: OPERATION_NAMES }) };
  const spec = operation(op);
  if (!spec) {
    const near = closest(op, OPERATION_NAMES);
    return { id, error: new ProtocolError(`unknown op \`${op}\`${near ? ` (did you mean \`${near}\`?)` : ''}; the operations are ${OPERATION_NAMES.join(', ')}`, { operations: OPERATION_NAMES }) };
  }
  const problem = checkFields(spec, fields);
  if (problem) return { id, error: problem };
  const past = checkLimits(fields);
  if (past) return { id, error: ProtocolError.from(past) };
  // The table's own entry: its name is one of the operations.
  return { id, op: spec.name as OperationName, spec, fields };
}

/** The id of a request line, when it is a JSON object with a valid one. */
function idOf(line: string): unknown {
  try {
    const v = JSON.parse(line) as { id?: unknown };
    return v && typeof v === 'object' && (typeof v.id === 'string' || (typeof v.id === 'number' && Number.isFinite(v.id))) ? v.id : undefined;
  } catch {
    return undefined;
  }
}

function lineColumn(line: string, position: number): { line: number; column: number } {
  let lineNo = 1;
  let column = 1;
  for (let i = 0; i < position && i < line.length; i++) {
    if (line[i] === '\n') {
      lineNo++;
      column = 1;
    } else column++;
  }
  return { line: lineNo, column };
}

function jsonError(line: string, e: Error): ProtocolError {
  const { position, reason } = jsonProblemOf(line, e);
  const { line: lineNo, column } = lineColumn(line, position);
  return new ProtocolError(`not JSON at line ${lineNo}, column ${column}: ${reason}; send one JSON object a line`, { line: lineNo, column });
}

/** Where JSON.parse failed on `text` (its index) and why, in plain words. */
function jsonProblemOf(text: string, e: Error): { position: number; reason: string } {
  const m = /position (\d+)/.exec(e.message);
  const position = m ? Number(m[1]) : firstBadIndex(text);
  const reason = e.message.replace(/^Unexpected /, 'unexpected ').replace(/ (in|after) JSON at position \d+.*$/, (m) => (m.startsWith(' after') ? ' after the JSON value' : '')).replace(/, ".*" is not valid JSON$/s, ''); // the quoted line may hold newlines
  return { position, reason };
}

/** Why `text` is not JSON and where (an index into it), or undefined when it is: a replay names its own line and column. */
export function jsonProblem(text: string): { position: number; reason: string } | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    return jsonProblemOf(text, e as Error);
  }
}

/**
 * Where JSON.parse gives no position ("Unexpected token 'x'"): the index of the first character
 * that cannot continue the line as JSON. The longest prefix that is still JSON (or JSON cut
 * short) is found by bisection: a prefix of such a prefix is one too.
 */
function firstBadIndex(line: string): number {
  const fine = (k: number): boolean => {
    const text = line.slice(0, k);
    try {
      JSON.parse(text);
      return true;
    } catch (e) {
      const msg = (e as Error).message;
      const at = /position (\d+)/.exec(msg);
      return at ? Number(at[1]) >= k : /end of JSON input/.test(msg);
    }
  };
  let lo = 0; // fine
  let hi = line.length; // not fine (the whole line failed)
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fine(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

// A number in a request keeps to the rule of a number in a document (src/ir/check/literal.ts).
export { F32_MAX, isF32Number };

function typeOk(t: FieldSpec['type'], v: unknown): boolean {
  switch (t) {
    case 'string': return typeof v === 'string';
    case 'number': return isF32Number(v);
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'boolean': return typeof v === 'boolean';
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array': return Array.isArray(v);
    case 'string|null': return typeof v === 'string' || v === null;
    case 'number|array': return isF32Number(v) || (Array.isArray(v) && v.every(isF32Number));
    case 'any': return true;
  }
}

const TYPE_WORDS: Record<FieldSpec['type'], string> = {
  string: 'a string', number: 'a number (finite, within ±3.4e38: an f32)', integer: 'an integer', boolean: 'true or false', object: 'an object', array: 'an array',
  'string|null': 'a string or null', 'number|array': 'a number (finite, within ±3.4e38: an f32) or an array of such numbers', any: 'any value',
};

/** A field of the wrong type, one not taken, or one missing: answers fields, field, expected. */
function checkFields(spec: OperationSpec, fields: Record<string, unknown>): ProtocolError | undefined {
  for (const [name, value] of Object.entries(fields)) {
    const fs = spec.fields.find((f) => f.name === name);
    if (!fs) return unknownField(spec, name);
    if (!typeOk(fs.type, value)) return wrongType(spec, fs);
  }
  // Both of a pair would leave one silently unused (restore's `data` when `path` is given).
  const both = spec.exclusive?.find(([a, b]) => a in fields && b in fields);
  if (both) return bothGiven(spec, both[0], both[1]);
  const missing = spec.fields.find((f) => f.required && !(f.name in fields));
  if (missing) return missingField(spec, missing);
  return undefined;
}

/** Two fields of an `exclusive` pair given together, as compose refuses `text` with `edits`. */
export function bothGiven(spec: OperationSpec, a: string, b: string): ProtocolError {
  return new ProtocolError(`\`${spec.name}\` takes \`${a}\` or \`${b}\`, not both: drop one (\`help ${spec.name}\` says what each does)`, { fields: [a, b], field: b });
}

// The three errors of checkFields, also the messages of the MCP door's schemas (src/mcp/schema.ts).

export function unknownField(spec: OperationSpec, name: string): ProtocolError {
  const names = spec.fields.map((f) => f.name);
  const { message, near } = noSuchName(`\`${spec.name}\``, 'field', name, names);
  return new ProtocolError(message, { fields: names, field: name, expected: near ?? null });
}

/** "`owner` takes no KIND `name`", with the closest name it takes as a "did you mean", else every name it takes. */
export function noSuchName(owner: string, kind: string, name: string, names: readonly string[]): { message: string; near?: string } {
  const near = closest(name, names);
  const rest = near ? `; did you mean \`${near}\`?` : names.length ? `; its ${kind}s are ${names.join(', ')}` : `; it takes no ${kind}s`;
  return { message: `${owner} takes no ${kind} \`${name}\`${rest}`, near };
}

export function wrongType(spec: OperationSpec, fs: FieldSpec): ProtocolError {
  return new ProtocolError(`\`${fs.name}\` of \`${spec.name}\` must be ${TYPE_WORDS[fs.type]}: ${firstClause(fs.meaning, spec.name)}`, { fields: spec.fields.map((f) => f.name), field: fs.name, expected: fs.type });
}

export function missingField(spec: OperationSpec, fs: FieldSpec): ProtocolError {
  return new ProtocolError(`\`${spec.name}\` needs \`${fs.name}\` (${TYPE_WORDS[fs.type]}): ${fs.meaning}`, { fields: spec.fields.map((f) => f.name), field: fs.name, expected: fs.type });
}

/** Objects with their keys in order, all the way down, so answers read the same every time. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) if ((v as Record<string, unknown>)[k] !== undefined) out[k] = sorted((v as Record<string, unknown>)[k]);
    return out;
  }
  // JSON has no NaN or infinity (JSON.stringify wrote null: a NaN a kernel computed, in `trace`, read as nothing).
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}

export function okLine(id: unknown, ok: object): string {
  return JSON.stringify(id === undefined ? { ok: sorted(ok) } : { id, ok: sorted(ok) });
}

export function errorLine(id: unknown, e: ProtocolError): string {
  const error = sorted({ ...e.data, message: e.message });
  return JSON.stringify(id === undefined ? { error } : { error, id });
}

/**
 * What an answer may say of an error the session did not expect: its first line, with every
 * absolute path of the machine cut to its last name (`.../kernels.esn`) and no stack. A system
 * error (`EACCES`, `ENOSPC`, ...) is said by its code and the name of the file it concerns.
 */
export function plainReason(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; syscall?: unknown; path?: unknown } | null | undefined;
  let text: string;
  if (e && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    const file = typeof e.path === 'string' ? ` \`${e.path.split(/[\\/]/).filter(Boolean).pop() ?? e.path}\`` : '';
    const what = typeof e.message === 'string' ? /^E[A-Z]+: ([^,]+)/.exec(e.message)?.[1] : undefined;
    text = `${e.code}${what ? `: ${what}` : ''}${typeof e.syscall === 'string' ? ` (${e.syscall}${file})` : file}`;
  } else if (e && typeof e === 'object' && e.message !== undefined) text = String(e.message);
  else text = String(err);
  const first = text.split(/\r?\n/)[0] ?? '';
  return hidePaths(first).slice(0, 500) || 'unknown error';
}

/** Absolute paths (POSIX, Windows and file: URLs) cut to `.../LAST`. */
export function hidePaths(text: string): string {
  return text.replace(/(?<=^|[\s'"`(=])(file:\/\/)?(?:[A-Za-z]:)?(?:[\\/][^\s\\/'"`:,;()<>]+){2,}[\\/]?/g, (path) => {
    const last = path.split(/[\\/]/).filter(Boolean).pop() ?? '';
    return `.../${last}`;
  });
}

/** A field's meaning up to its first clause outside brackets: a wrong type's error repeated the whole paragraph of `frames`. */
function firstClause(meaning: string, op: string): string {
  let depth = 0;
  for (let i = 0; i < meaning.length - 1; i++) {
    const c = meaning[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && (c === ';' || c === '.') && meaning[i + 1] === ' ') return `${meaning.slice(0, i)} (\`help ${op}\` says more)`;
  }
  return meaning;
}
