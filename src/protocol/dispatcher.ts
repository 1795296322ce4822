// The Dispatcher: the protocol's one way into a session. A request line is parsed and checked
// against the operations table (envelope.ts); its handler (handlers/, typed from the table: the
// fields it receives are the table's) turns it into calls on the session's own API; and what the
// session throws is turned into a protocol error here, at the door, by its type. The session
// knows nothing of requests, lines or protocol errors (test/layers.test.ts holds it to that).

import { Cancelled, deadlineProblem } from '../main/cancel.js';
import { JOURNAL_NAME, PathError } from '../main/documents.js';
import type { Scene } from '../ir/check/scene.js';
import { EvaluationError, failureTold } from '../main/evaluation-error.js';
import { ImageError } from '../main/image.js';
import { GrantRefused } from '../main/grants.js';
import { WriteError } from '../main/journal.js';
import { JournalError } from '../main/journal-recovery.js';
import { LimitError } from '../main/limits.js';
import { MemoryLimitError } from '../main/memory.js';
import { CheckFailed, MigrationFailed } from '../main/refusals.js';
import type { Session } from '../main/session.js';
import { connectionKey, type SessionEvent } from '../main/session-types.js';
import { EditError } from './edits.js';
import { errorLine, okLine, parseRequest, plainReason } from './envelope.js';
import { diagnosticsError, ProtocolError } from './error.js';
import { HANDLERS, type RequestContext } from './handlers/index.js';
import { operation, type OperationName, type RequestFields } from './operations.js';
import { clockOf } from '../main/world-state.js';

/** The connection a request came through: its door, its number, and a signal when it is lost. */
export interface Connection {
  kind: string;
  id: number;
  lost?: AbortSignal;
  /** When the line being answered arrived (performance.now()): its deadline counts from then, its wait behind the connection's earlier requests included. */
  arrived?: number;
}

const IN_PROCESS: Connection = { kind: 'in-process', id: 0 };

/** One request line in, one answer line out: every door (stdin, TCP, WebSocket, MCP, the Player, in process) answers through here. */
export async function dispatch(session: Session, line: string, conn: Connection = IN_PROCESS): Promise<string> {
  // From JavaScript (the in-process door) anything can be passed: say what dispatch takes.
  if (typeof line !== 'string') return errorLine(undefined, new ProtocolError(`dispatch takes a request line, a JSON text such as '{"op":"status"}', not ${line === null ? 'null' : typeof line}: JSON.stringify the request, or use call(session, op, fields)`, { field: 'line' }));
  // From its first request a connection is told the session's events at its `sync` (EventList).
  session.pending.listen(connectionKey(conn), conn.lost);
  const req = parseRequest(line);
  if ('error' in req) return errorLine(req.id, req.error);
  if (session.closed) return errorLine(req.id, new ProtocolError('the session is closed (close() was called): open another with Session.open to go on', { closed: true }));
  // Operations that evaluate take a deadline and can be cancelled (main/cancel.ts).
  const late = deadlineProblem(req.fields.deadline, `\`${req.op}\``);
  if (late) return errorLine(req.id, new ProtocolError(late, { field: 'deadline', expected: 'milliseconds > 0' }));
  const evaluation = req.spec.fields.some((f) => f.name === 'deadline')
    ? session.evaluations.start({ connection: conn.id, request: req.id, deadline: req.fields.deadline as number | undefined, closed: conn.lost, waited: conn.arrived === undefined ? 0 : performance.now() - conn.arrived })
    : undefined;
  // Work a request started and answered before it ends (sync's saved edit) keeps its signal
  // until it ends: cancel, the deadline and a closed connection still reach it.
  let held: Promise<unknown> | undefined;
  const hold = (work: Promise<unknown>) => void (held = work);
  try {
    // The fields were held to the table's types for this op by parseRequest.
    const ok = await handle(req.op, session, req.fields as RequestFields<OperationName>, { kind: conn.kind, id: conn.id, signal: evaluation?.signal, hold });
    const news = toldToAll(req.op, ok);
    if (news.length) session.pending.tellOthers(connectionKey(conn), news);
    return okLine(req.id, ok);
  } catch (e) {
    if (e instanceof Cancelled) {
      const frame = clockOf(session.world).frame;
      const kept = e.framesKept
        ? `${e.framesKept.ran} of its ${e.framesKept.of} frames ran and were kept, each whole; the one it was running was not (frame ${frame})`
        : req.op === 'bisect'
          ? 'nothing of it was kept: it replays on copies, and the session\'s world, history and folder are as before it'
          : `nothing of it was kept: ${req.spec.effect === 'read' || req.op === 'evaluate' ? '' : 'nothing was written; '}state, clock and frame counter are as before it (frame ${frame})`;
      return errorLine(req.id, new ProtocolError(`cancelled: ${e.message}; ${kept}`, { cancelled: true, reason: e.reason, frame, ...(e.framesKept ? { frames_kept: e.framesKept.ran } : {}), ...(e.node ? { node: e.node } : {}) }));
    }
    return errorLine(req.id, protocolError(e, req.op, session.scene));
  } finally {
    if (held) void held.finally(() => evaluation?.done());
    else evaluation?.done();
  }
}

/**
 * The events of a request's answer that the other connections are told too, at their sync: those
 * of a change to the world (compose, publish, retire, restore, param, ...), so that every client
 * hears of every client's changes. Not a dry run's (nothing changed), nor a frame's (evaluate's
 * notes are about that request's frames), nor sync's (told to all already), nor `idle` (nothing
 * happened).
 */
function toldToAll(op: OperationName, ok: object): SessionEvent[] {
  const events = (ok as { events?: unknown }).events;
  if (!Array.isArray(events) || (ok as { dry_run?: unknown }).dry_run === true) return [];
  if (operation(op)?.effect === 'read' || NOT_TOLD.has(op)) return [];
  return (events as SessionEvent[]).filter((e) => e.kind !== 'idle');
}

const NOT_TOLD = new Set<OperationName>(['evaluate', 'sync', 'cancel', 'quit']);

function handle<Op extends OperationName>(op: Op, session: Session, fields: RequestFields<Op>, context: RequestContext): Promise<object> {
  return HANDLERS[op](session, fields, context);
}

/** An error of the session as the protocol answers it: the user's own mistakes plainly, with their data; the rest as internal. */
export function protocolError(e: unknown, op: string, scene?: Scene): ProtocolError {
  if (e instanceof ProtocolError) return e;
  if (e instanceof CheckFailed) return diagnosticsError(e.lead, e.diagnostics);
  if (e instanceof MigrationFailed || e instanceof LimitError || e instanceof GrantRefused) return ProtocolError.from(e);
  // Where the failing node is declared, as a render's message names it.
  if (e instanceof EvaluationError) {
    const told = scene ? failureTold(scene, e) : { message: e.message };
    return new ProtocolError(told.message, { node: e.node, ...told.place });
  }
  if (e instanceof JournalError) return new ProtocolError(`the scene's folder holds a journal \`${JOURNAL_NAME}\` Entelechy did not write (${e.why}); nothing was written: look at it, then move it away and send the request again`, { path: JOURNAL_NAME });
  if (e instanceof WriteError) return new ProtocolError(e.message, { path: e.path, code: e.code, written: false });
  if (e instanceof PathError) return new ProtocolError(e.message, { path: e.path });
  // A compose refused by the memory budget wrote nothing: said as every refused compose is.
  if (e instanceof MemoryLimitError) return op === 'compose' ? new ProtocolError(`compose refused: nothing was written: ${e.message}`, { ...e.at, written: false }) : new ProtocolError(e.message, { ...e.at });
  if (e instanceof ImageError || e instanceof EditError) return new ProtocolError(e.message, {});
  return new ProtocolError(`internal error in \`${op}\`: ${plainReason(e)} (the session goes on)`, { internal: true });
}
