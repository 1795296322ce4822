// The door machinery every transport shares: connections answered in order, one request at a
// time, with bounded lines and buffers (see transports.ts for the whole picture).

import http from 'node:http';
import { plainReason } from './envelope.js';
import { LimitError, LIMITS, shallow } from './limits.js';

// ---------------------------------------------------------------------------------------------
// The contract with the session
// ---------------------------------------------------------------------------------------------

export interface Connection {
  /** 'stdin' | 'tcp' | 'websocket' */
  kind: string;
  id: number;
  /** Send an unsolicited line (an event) to this connection. Ignored once it is closed. */
  send(line: string): void;
  /** End this connection (after the answer being computed, if any, is written). */
  close(): void;
  /**
   * Aborted when the peer is gone (it closed the connection, or writing to it failed): the
   * evaluations its requests started are cancelled (src/main/cancel.ts).
   */
  lost?: AbortSignal;
}

export interface LineHandler {
  /**
   * One request line in, one answer line out (no trailing newline); `undefined` answers nothing.
   * `quit`: return `{ answer, close: true }` and the door closes that connection after writing
   * the answer.
   */
  (line: string, conn: Connection): Promise<{ answer: string; close?: boolean } | undefined>;
  /**
   * Lines answered at once, out of turn, even while an earlier request of the connection runs
   * (`cancel`: it would be no use behind the evaluation it stops).
   */
  urgent?: (line: string) => boolean;
  /**
   * Lines that say goodbye (`quit`): the client that sent one expects the answers of what it asked
   * before, so the end of its input that follows is not it going away (peerClosed).
   */
  farewell?: (line: string) => boolean;
}

/** Extra HTTP routes (the Player page later): return true when handled. */
export type HttpHandler = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/** Bounds of a door; the defaults suit real use, tests make them small. */
export interface DoorLimits {
  /** Longest request line (or WebSocket message) in bytes; default 16 MiB. */
  maxLineBytes?: number;
  /**
   * Unread output (bytes buffered for a client) past which a connection is dropped when more is
   * written to it; default 64 MiB. Answers wait for the reader instead, so in practice only
   * events to a client that never reads reach it.
   */
  maxBufferedBytes?: number;
}

export const DEFAULT_PORT = 7788;
export const DEFAULT_HOST = '127.0.0.1';
export const MAX_LINE_BYTES = LIMITS.line.limit;
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Unread output past which the next request of a connection waits for the reader. */
export const HIGH_WATER = 1024 * 1024;
/** Pending requests of one connection past which reading from it pauses. */
export const MAX_QUEUED_LINES = 256;
export const MAX_QUEUED_BYTES = 32 * 1024 * 1024;

let nextConnectionId = 0;

// ---------------------------------------------------------------------------------------------
// Answers the door itself gives
// ---------------------------------------------------------------------------------------------

/** The `id` of a request line, when it is a JSON object with one (to echo in door errors). */
export function requestId(line: string): unknown {
  if (line.length > 1024 * 1024) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'id' in value)
      return (value as { id: unknown }).id;
  } catch {
    // not JSON: no id
  }
  return undefined;
}

/** How much of a line past the limit is kept to read its `id` and `op` from (they come first, as a rule). */
export const HEAD_BYTES = 4096;

/**
 * The `id` and `op` of a line known only by its first bytes (one past the line limit): its members
 * at the top level, read from the head with every nested value and the cut-off tail left out.
 * Inside a JSON string every quote is escaped, so `"id":` there is a member's name.
 */
export function headMembers(head: string): { id?: string | number; op?: string } {
  const top = shallow(head);
  const id = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})(?=\s*[,}])/.exec(top)?.[1];
  const op = /"op"\s*:\s*"(\w{1,40})"/.exec(top)?.[1];
  return { ...(id !== undefined ? { id: JSON.parse(id) as string | number } : {}), ...(op !== undefined ? { op } : {}) };
}

/** What to do instead of sending one line so long, by operation. */
const INSTEAD: Record<string, string> = {
  restore: 'restore a large snapshot from a file: `snapshot` with `path`, then `restore` with that `path`',
  compose: 'compose a large document by `edits` to its statements, several requests each of part of it',
  publish: 'keep a kernel source under the limit, or put it in a document of the scene and `compose` it',
};

/**
 * A line past the line limit, answered as every limit is (docs/protocol.md#limits): `field`,
 * `limit` and `max` beside the message, which says what to do instead; with the request's `id`
 * when its first bytes hold one (a client waiting on it waited for ever).
 */
export function oversizeLine(max: number, head = ''): string {
  const { id, op } = headMembers(head);
  const e = new LimitError('line', { ...LIMITS.line, limit: max, ...(op && INSTEAD[op] ? { remedy: INSTEAD[op] } : {}) }, 'is too long (it was skipped up to its end)', op ? `the \`${op}\` request line` : 'the request line');
  const error = { ...e.data, message: e.message };
  return JSON.stringify(id === undefined ? { error } : { id, error });
}

export function errorLine(message: string, id?: unknown): string {
  return JSON.stringify(id === undefined ? { error: { message } } : { id, error: { message } });
}

export function describe(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  try {
    return String(err);
  } catch {
    return 'unknown error';
  }
}

// ---------------------------------------------------------------------------------------------
// Splitting a byte stream into lines
// ---------------------------------------------------------------------------------------------

/**
 * Splits bytes on `\n`, strips one trailing `\r`, drops blank lines, decodes UTF-8 (bad bytes
 * become U+FFFD, which the handler then refuses as JSON). A line longer than `max` bytes is
 * reported once through `onOversize` and its bytes are skipped up to the next newline. A UTF-8
 * byte order mark before the first line (an editor's, or PowerShell's) is no part of the request.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private first = true;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (head: string) => void,
  ) {}

  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start < bytes.length) {
      const nl = bytes.indexOf(10, start);
      if (nl < 0) {
        this.take(bytes.subarray(start));
        return;
      }
      this.take(bytes.subarray(start, nl));
      this.flush();
      start = nl + 1;
    }
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    this.flush();
  }

  private take(bytes: Buffer): void {
    if (this.skipping || bytes.length === 0) return;
    if (this.size + bytes.length > this.max) {
      // Its first bytes, to read its `id` and `op` from (door.ts, headMembers).
      const head = Buffer.concat([...this.parts, bytes], Math.min(HEAD_BYTES, this.size + bytes.length)).toString('utf8'); // copies the head only
      this.parts = [];
      this.size = 0;
      this.skipping = true;
      this.onOversize(head);
      return;
    }
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private flush(): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    if (this.size === 0) return;
    let bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    if (bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, bytes.length - 1);
    let line = bytes.toString('utf8');
    if (this.first && line.startsWith('\uFEFF')) line = line.slice(1);
    this.first = false;
    if (line.trim() === '') return;
    this.onLine(line);
  }
}

// ---------------------------------------------------------------------------------------------
// One connection: a queue of requests answered one at a time
// ---------------------------------------------------------------------------------------------

/** What a Door needs of its transport. */
export interface DoorIO {
  /** Write one line (the transport adds framing: a newline, or a WebSocket message). */
  write(line: string): void;
  /** Bytes written but not yet taken by the peer. */
  backlog(): number;
  /** Resolves when the backlog has drained (or the transport is gone). */
  drained(): Promise<void>;
  pause(): void;
  resume(): void;
  /** Graceful end, after what was written. */
  end(): void;
  /** Abrupt end. */
  destroy(): void;
}

export type Item = { line: string; arrived: number } | { refused: string };

export class Door implements Connection {
  readonly id = ++nextConnectionId;
  /** When the line being answered arrived: its deadline counts from then (Connection.arrived). */
  arrived?: number;
  private queue: Item[] = [];
  private queuedBytes = 0;
  private running = false;
  private paused = false;
  private inputEnded = false;
  /** A `quit` came (LineHandler.farewell): the input's end is expected, not the client gone. */
  private farewell = false;
  /** The last answer's size: a big answer being read is not a reason to drop the client. */
  private allowance = 0;
  /** open: serving; ending: finish the answer in flight, then end; closed: gone. */
  private state: 'open' | 'ending' | 'closed' = 'open';
  private readonly lostController = new AbortController();
  readonly lost = this.lostController.signal;

  constructor(
    readonly kind: string,
    private readonly handler: LineHandler,
    private readonly io: DoorIO,
    private readonly limits: Required<DoorLimits>,
    private readonly onGone: (door: Door, why: string) => void,
  ) {}

  /** The state, read afresh (not narrowed by an earlier test across an await). */
  private stateNow(): 'open' | 'ending' | 'closed' {
    return this.state;
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** A request line arrived. */
  push(line: string): void {
    if (this.handler.farewell?.(line)) this.farewell = true;
    if (this.handler.urgent?.(line)) void this.answerNow(line);
    else this.enqueue({ line, arrived: performance.now() }, line.length);
  }

  /** Answer an urgent line now, beside the request running (if any). */
  private async answerNow(line: string): Promise<void> {
    if (this.state !== 'open') return;
    const result = await this.answer({ line, arrived: performance.now() });
    if (result !== undefined && this.stateNow() !== 'closed') this.write(result.answer);
  }

  /**
   * The peer closed its side (a TCP FIN: how a client that went away looks): evaluations stop,
   * unless it said goodbye first (a `quit` queued: `printf '...\n{"op":"quit"}\n' | serve` is
   * answered whole).
   */
  peerClosed(): void {
    if (!this.farewell) this.lostController.abort();
  }

  /** A request line was too long: answered with an error in its turn. */
  pushOversize(head = ''): void {
    this.enqueue({ refused: oversizeLine(this.limits.maxLineBytes, head) }, 0);
  }

  /** A message that held no request (a blank WebSocket message): answered with an error in its turn, as nothing else would answer it. */
  pushEmpty(): void {
    this.enqueue({ refused: errorLine('an empty message holds no request: send one JSON object per message, e.g. {"id": 1, "op": "status"}') }, 0);
  }

  /** No more input (the client half-closed, or stdin ended): answer what is queued, then end. */
  inputEnd(): void {
    if (this.state !== 'open') return;
    this.inputEnded = true;
    if (!this.running && this.queue.length === 0) this.finish();
  }

  send(line: string): void {
    if (this.state === 'closed') return;
    this.write(line);
  }

  close(): void {
    if (this.state !== 'open') return;
    this.state = 'ending';
    this.queue = [];
    this.queuedBytes = 0;
    if (!this.running) this.finish();
  }

  /** The transport went away under us (reset, error, peer closed a WebSocket). */
  gone(why = 'closed'): void {
    this.lostController.abort();
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.queue = [];
    this.queuedBytes = 0;
    this.onGone(this, why);
  }

  /** Drop the connection abruptly. */
  drop(why: string): void {
    if (this.state === 'closed') return;
    this.io.destroy();
    this.gone(why);
  }

  private enqueue(item: Item, bytes: number): void {
    if (this.state !== 'open' || this.inputEnded) return;
    this.queue.push(item);
    this.queuedBytes += bytes;
    if (!this.paused && (this.queue.length >= MAX_QUEUED_LINES || this.queuedBytes >= MAX_QUEUED_BYTES)) {
      this.paused = true;
      this.io.pause();
    }
    void this.pump();
  }

  private write(line: string): boolean {
    if (this.io.backlog() > this.limits.maxBufferedBytes + this.allowance) {
      this.drop(`dropped: more than ${this.limits.maxBufferedBytes} bytes unread`);
      return false;
    }
    try {
      this.io.write(line);
    } catch (err) {
      this.drop(`write failed: ${describe(err)}`);
      return false;
    }
    return true;
  }

  private async answer(item: Item): Promise<{ answer: string; close?: boolean } | undefined> {
    if ('refused' in item) return { answer: item.refused };
    try {
      this.arrived = item.arrived;
      const result = await this.handler(item.line, this);
      if (result === undefined || result === null) return undefined;
      if (typeof result.answer !== 'string')
        return { answer: errorLine('internal error: the handler gave no answer text', requestId(item.line)) };
      return result;
    } catch (err) {
      return { answer: errorLine(`internal error: ${plainReason(err)}`, requestId(item.line)) };
    }
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.state === 'open' && this.queue.length > 0) {
        const item = this.queue.shift()!;
        if ('line' in item) this.queuedBytes -= item.line.length;
        if (this.paused && this.queue.length < MAX_QUEUED_LINES / 2 && this.queuedBytes < MAX_QUEUED_BYTES / 2) {
          this.paused = false;
          this.io.resume();
        }
        const result = await this.answer(item);
        // close() or the peer may have ended the connection while the handler ran.
        if (this.stateNow() === 'closed') break;
        if (result !== undefined) {
          if (!this.write(result.answer)) break;
          this.allowance = result.answer.length;
          if (result.close) this.state = 'ending';
        }
        // A client that does not read its answers waits for them before the next one is made.
        if (this.state === 'open' && this.io.backlog() > HIGH_WATER) await this.io.drained();
      }
    } finally {
      this.running = false;
    }
    if (this.state === 'ending' || (this.state === 'open' && this.inputEnded && this.queue.length === 0))
      this.finish();
  }

  private finish(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.queue = [];
    try {
      this.io.end();
    } catch {
      this.io.destroy();
    }
    this.onGone(this, 'ended');
  }
}

export function fullLimits(limits: DoorLimits | undefined): Required<DoorLimits> {
  const positive = (v: number | undefined, d: number) => (v !== undefined && Number.isFinite(v) && v > 0 ? v : d);
  return {
    maxLineBytes: positive(limits?.maxLineBytes, MAX_LINE_BYTES),
    maxBufferedBytes: positive(limits?.maxBufferedBytes, MAX_BUFFERED_BYTES),
  };
}
