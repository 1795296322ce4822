// The handlers of the operations table, by name (the table lists what each takes and answers).

import type { Session } from '../../main/session.js';
import { OPERATION_NAMES } from '../operations.js';
import { document, graph, help, history, kernel, kernels, status } from './inspect.js';
import { prepare, publish, retire } from './kernels.js';
import { cancel, evaluate, param, pause, pin, read, trace, unpin } from './running.js';
import { quit, reset, restore, snapshot, write } from './state.js';
import { compose, sync } from './structure.js';

/** Who asked: the connection, and for operations that evaluate, the signal that cancels it (cancel.ts). */
export interface RequestContext {
  kind: string;
  id: number;
  signal?: AbortSignal;
}

export type Handler = (s: Session, fields: Record<string, unknown>, conn: RequestContext) => Promise<object>;

export const HANDLERS: Record<string, Handler> = {
  status, kernels, kernel, graph, document, history, help, compose, sync, prepare, publish, retire, param,
  evaluate, read, write, snapshot, restore, pause, reset, trace, pin, unpin, quit, cancel,
};

// The table and the handlers name the same operations: a mismatch is a bug caught at start-up.
const missing = OPERATION_NAMES.filter((n) => !HANDLERS[n]);
if (missing.length || Object.keys(HANDLERS).length !== OPERATION_NAMES.length) throw new Error(`operations without handlers: ${missing.join(', ')}`);
