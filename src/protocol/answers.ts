// The type of each operation's answer (`ok`), taken from its handler's own return type: the one
// source is the code that answers, so these types cannot drift from it. Type-only: nothing here exists
// at runtime, so a browser client can use the types without loading the handlers.

import type * as inspect from './handlers/inspect.js';
import type * as kernels from './handlers/kernels.js';
import type * as running from './handlers/running.js';
import type * as state from './handlers/state.js';
import type * as structure from './handlers/structure.js';
import type { EventKind, OperationName } from './operations.js';

type Handlers = typeof inspect & typeof kernels & typeof running & typeof state & typeof structure;

/** Every operation of the table has a handler here (a compile error names the one that has not). */
type MustBeNever<T extends never> = T;
export type UnhandledOperations = MustBeNever<Exclude<OperationName, keyof Handlers>>;

/**
 * What `ok` holds for `Op`. Answers are JSON: keys whose value is undefined are not sent, and
 * `events` lists session events (see ProtocolEvent).
 */
export type Answer<Op extends OperationName> = Handlers[Op] extends (...args: never[]) => Promise<infer A> ? A : never;

/** One event as answers carry it: its kind and what it says (paths, kernel, generation, message...). */
export interface ProtocolEvent {
  kind: EventKind | (string & {});
  [detail: string]: unknown;
}
