// Typed calls on an in-process Session: `await call(session, 'evaluate', { time: 1 })`, its fields
// and its answer typed from the operations table (operations.ts, answers.ts). A call goes through
// the same request line every door takes (dispatcher.ts), so it is validated and answered alike.

import type { Session } from '../main/session.js';
import type { Answer } from './answers.js';
import { dispatch } from './dispatcher.js';
import type { OperationName, OperationWithoutRequiredFields, RequestFields } from './operations.js';

/** The arguments of a call of `Op`: its fields, required when it has required ones. */
export type CallArgs<Op extends OperationName> = Op extends OperationWithoutRequiredFields ? [fields?: RequestFields<Op>] : [fields: RequestFields<Op>];

/** An error answer of a call: its message, and the whole `error` (fix, field, expected, diagnostics...). */
export class CallError extends Error {
  override name = 'CallError';
  constructor(
    readonly op: string,
    /** The answer's `error` object as the protocol sends it. */
    readonly data: Record<string, unknown>,
  ) {
    super(typeof data.message === 'string' ? data.message : `\`${op}\` failed`);
  }

  /** Where one mends it: an item to hand back to `compose` (or a request to send). */
  get fix(): unknown {
    return this.data.fix;
  }
}

let nextCall = 0;

/** Send `op` with `fields` as one request line; the answer's `ok`, or a CallError. */
export async function callOperation<Op extends OperationName>(
  request: (line: string) => Promise<string>,
  op: Op,
  fields: Record<string, unknown> | undefined,
): Promise<Answer<Op>> {
  const id = `call-${++nextCall}`;
  const answer = JSON.parse(await request(JSON.stringify({ ...(fields ?? {}), op, id }))) as { ok?: unknown; error?: Record<string, unknown> };
  if (answer.error) throw new CallError(op, answer.error);
  return answer.ok as Answer<Op>;
}

/** A typed request: resolves with the answer's `ok`, typed from the operations table; an error answer rejects with a CallError. */
export function call<Op extends OperationName>(session: Session, op: Op, ...args: CallArgs<Op>): Promise<Answer<Op>> {
  return callOperation((line) => dispatch(session, line), op, args[0] as Record<string, unknown> | undefined);
}
