// The handlers of the operations table, by name. Each is typed from the table: it receives the
// request's fields as the table declares them (RequestFields), and a handler missing for an
// operation, or one taking fields of another shape, is a compile error here.

import type { Session } from '../../main/session.js';
import type { OperationName, RequestFields } from '../operations.js';
import { bisect, document, graph, help, history, kernel, kernels, status } from './inspect.js';
import { prepare, publish, retire } from './kernels.js';
import { cancel, evaluate, param, pause, pin, read, trace, unpin } from './running.js';
import { quit, reset, restore, snapshot, write } from './state.js';
import { compose, sync } from './structure.js';

/** Who asked: the connection, and for operations that evaluate, the signal that cancels it (cancel.ts). */
export interface RequestContext {
  kind: string;
  id: number;
  signal?: AbortSignal;
  /** Keep the signal live until `work` ends, after the answer (sync's saved edit, compiling in the background). */
  hold?: (work: Promise<unknown>) => void;
}

/** A request for `Op` turned into calls on the session; resolves to what `ok` holds (answers.ts types it). */
export type Handler<Op extends OperationName> = (s: Session, fields: RequestFields<Op>, conn: RequestContext) => Promise<object>;

export const HANDLERS: { [Op in OperationName]: Handler<Op> } = {
  status, kernels, kernel, graph, document, history, bisect, help, compose, sync, prepare, publish, retire, param,
  evaluate, read, write, snapshot, restore, pause, reset, trace, pin, unpin, quit, cancel,
};
