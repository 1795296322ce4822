// Reading a line of the MCP stdio stream as a JSON-RPC message, and the errors for one that is not.
// The SDK's own check (a zod union over requests, notifications and answers) says only that the
// line fits none of them, with no id: a client waiting on its id waited for ever. Here the id is
// echoed whenever it can be read, and the message names the member at fault.

import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LimitError, LIMITS, shallow, tooDeep } from '../protocol/limits.js';

type Id = string | number | null;

/** A line read: the message, or the JSON-RPC error that answers it. */
export type Read = { message: JSONRPCMessage } | { refusal: JSONRPCMessage };

const MEMBERS = ['jsonrpc', 'id', 'method', 'params', 'result', 'error'];

function refusal(id: Id, code: number, message: string, data?: object): { refusal: JSONRPCMessage } {
  return { refusal: { jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } } as unknown as JSONRPCMessage };
}

/** The id of a message, when it is one JSON-RPC allows (a string or an integer); null otherwise. */
function readableId(value: unknown): Id {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const id = (value as Record<string, unknown>).id;
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as string | number) : null;
}

/** What is wrong with a JSON object as a JSON-RPC 2.0 message, in the protocol's words. */
function problemOf(m: Record<string, unknown>): string {
  if (m.jsonrpc !== '2.0') return `\`jsonrpc\` must be "2.0" (got ${JSON.stringify(m.jsonrpc) ?? 'nothing'})`;
  if ('id' in m && readableId(m) === null) return `\`id\` must be a string or an integer (got ${JSON.stringify(m.id)})`;
  const extra = Object.keys(m).filter((k) => !MEMBERS.includes(k));
  if (extra.length) return `${extra.map((k) => `\`${k}\``).join(', ')} ${extra.length > 1 ? 'are not members' : 'is not a member'} of a JSON-RPC message: its members are ${MEMBERS.join(', ')}`;
  if ('method' in m) {
    if (typeof m.method !== 'string') return `\`method\` must be a string, such as "tools/call" (got ${JSON.stringify(m.method)})`;
    if ('params' in m && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params)))
      return `\`params\` must be an object of named params (got ${Array.isArray(m.params) ? 'an array' : JSON.stringify(m.params)}); leave it out for none`;
    return 'it fits no request or notification of MCP';
  }
  if ('result' in m || 'error' in m) return 'an answer needs an `id` and one of `result` (an object) or `error` ({"code", "message"})';
  return 'it has no `method` (a request or notification) and no `result` or `error` (an answer)';
}

/** The line as a JSON-RPC message, or the error that answers it (with its id where one can be read). */
export function readMessage(line: string): Read {
  // A byte order mark some Windows tools write first is not part of the message.
  if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
  const deep = tooDeep(line);
  if (deep !== undefined) {
    const column = deep + 1; // a message is one line
    const e = new LimitError('message', LIMITS.nesting, `nests arrays and objects deeper than that at column ${column}`, 'the message');
    let id: Id = null;
    try {
      id = readableId(JSON.parse(shallow(line)));
    } catch {
      // no id to echo
    }
    return refusal(id, -32600, `Invalid Request: ${e.message}`, { ...e.data, column });
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return refusal(null, -32700, `Parse error: the line is not JSON (${(e as Error).message}); send one JSON-RPC message a line`);
  }
  if (Array.isArray(value)) return refusal(null, -32600, 'Invalid Request: a batch (a JSON array of messages) is not taken: send each message on a line of its own');
  if (value === null || typeof value !== 'object') return refusal(null, -32600, `Invalid Request: a message is a JSON object, such as {"jsonrpc": "2.0", "id": 1, "method": "ping"}; got ${JSON.stringify(value).slice(0, 40)}`);
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { message: parsed.data };
  return refusal(readableId(value), -32600, `Invalid Request: ${problemOf(value as Record<string, unknown>)}`);
}

/**
 * An error the SDK answers with a schema's dump as an internal error (-32603): the params of a
 * method it handles itself (`initialize` without `capabilities`, `resources/read` without `uri`)
 * did not fit. Told as what it is, invalid params (-32602), one plain line per problem.
 */
export function plainSdkError(message: JSONRPCMessage): JSONRPCMessage {
  const error = (message as { error?: { code?: number; message?: unknown } }).error;
  if (error?.code === -32602 && typeof error.message === 'string' && error.message.startsWith(SDK_PREFIX)) return { ...message, error: { ...error, message: plainInvalidParams(error.message.slice(SDK_PREFIX.length)) } } as JSONRPCMessage;
  if (error?.code !== -32603 || typeof error.message !== 'string') return message;
  if (error.message === 'Invalid URL') return { ...message, error: { code: -32602, message: 'Invalid params: `uri` is not a URI; resources/list names the resources, e.g. entelechy://doc/scene.esn' } } as JSONRPCMessage;
  let issues: unknown;
  try {
    issues = JSON.parse(error.message);
  } catch {
    return message;
  }
  if (!Array.isArray(issues) || !issues.every((i) => i && Array.isArray(i.path) && typeof i.message === 'string')) return message;
  const told = (issues as { path: (string | number)[]; message: string }[]).map((i) => `\`${i.path.join('.') || 'params'}\`: ${i.message.replace(/^Invalid input: /, '')}`);
  return { ...message, error: { code: -32602, message: `Invalid params: ${told.join('; ')}; the MCP specification lists each method's params` } } as JSONRPCMessage;
}

/** What the SDK puts before its own invalid-params messages (said twice, with the code, in a client's error). */
const SDK_PREFIX = 'MCP error -32602: ';

/** A prompt's arguments that did not fit, in words: which are missing, and where they are listed (it read as zod's output). */
function plainInvalidParams(text: string): string {
  const prompt = /^Invalid arguments for prompt (\S+): (.*)$/s.exec(text);
  if (!prompt) return text;
  const missing = [...prompt[2]!.matchAll(/expected (\w+), received undefined at (\w+)/g)].map((m) => `\`${m[2]}\` (a ${m[1]})`);
  const what = missing.length ? `needs ${missing.join(', ')} in \`arguments\`` : `cannot take these arguments: ${prompt[2]!.replace(/Invalid input: /g, '')}`;
  return `Invalid params: prompt \`${prompt[1]}\` ${what}; prompts/list names each prompt's arguments`;
}
