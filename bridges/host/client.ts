// The host client: typed requests for the operations of the table, matched to their answers by
// request id, each with a timeout; events that answers carry are handed to listeners.

import type { Answer, ProtocolEvent } from '../../src/protocol/answers.js';
import type { EventKind, OperationName, OperationWithoutRequiredFields, RequestFields } from '../../src/protocol/operations.js';
import { EntelechyConnectionError, EntelechyError, EntelechyTimeoutError } from './errors.js';
import type { OpenTransport, Transport } from './transport.js';

export interface ClientOptions {
  /** Milliseconds a request may wait for its answer; default 30000. 0: no limit. */
  timeout?: number;
}

export interface RequestOptions {
  /** This request's timeout in milliseconds (default: the client's). 0: no limit. */
  timeout?: number;
}

/** The request arguments of `Op`: its fields (optional when none is required), then options. */
export type RequestArgs<Op extends OperationName> = Op extends OperationWithoutRequiredFields
  ? [fields?: RequestFields<Op>, options?: RequestOptions]
  : [fields: RequestFields<Op>, options?: RequestOptions];

/** Which request an event came with. */
export interface EventSource {
  op: string;
  id: number;
}

export type EventListener = (event: ProtocolEvent, source: EventSource) => void;

/** A field read as floats: one Float32Array per component (row-major, width x height[ x depth]). */
export interface FieldData {
  name: string;
  width: number;
  height: number;
  depth?: number;
  components: number;
  frame: number;
  planes: Float32Array[];
}

interface Pending {
  op: string;
  id: number;
  resolve(value: Record<string, unknown>): void;
  reject(error: Error): void;
  timer?: ReturnType<typeof setTimeout>;
}

export class EntelechyClient {
  private transport!: Transport;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<EventListener>>();
  private readonly closeListeners = new Set<(error?: Error) => void>();
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closedPromise!: Promise<void>;
  private readonly timeout: number;

  private constructor(options: ClientOptions) {
    this.timeout = options.timeout ?? 30000;
  }

  /** Open a connection through `open` (see connectTcp / connectWebSocket in index.ts). */
  static async open(open: OpenTransport, options: ClientOptions = {}): Promise<EntelechyClient> {
    const client = new EntelechyClient(options);
    let ended!: () => void;
    client.closedPromise = new Promise((resolve) => (ended = resolve));
    client.transport = await open({
      line: (line) => client.answer(line),
      closed: (error) => {
        client.ended(error);
        ended();
      },
    });
    return client;
  }

  /** Where this client is connected (tcp://... or ws://...). */
  get address(): string {
    return this.transport.address;
  }

  /** True once the connection has ended (closed by either side). */
  get closed(): boolean {
    return this.state === 'closed';
  }

  /**
   * Send one operation and wait for its answer (`ok`), typed from the operations table. An error
   * answer rejects with an EntelechyError (message, fix and the rest in `data`); no answer in time
   * rejects with an EntelechyTimeoutError naming the op.
   */
  request<Op extends OperationName>(op: Op, ...args: RequestArgs<Op>): Promise<Answer<Op>> {
    const [fields, options] = args as [Record<string, unknown> | undefined, RequestOptions | undefined];
    return this.send({ ...(fields ?? {}), op }, options) as Promise<Answer<Op>>;
  }

  /**
   * Send any request object, untyped (an op from a newer engine, say). Its `id` is replaced by
   * the client's own, which matches the answer to it.
   */
  send(request: { op: string; [field: string]: unknown }, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    const op = String(request.op);
    if (this.state !== 'open')
      return Promise.reject(new EntelechyConnectionError(`the connection to ${this.address} is closed; \`${op}\` was not sent`, this.address));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const entry: Pending = { op, id, resolve, reject };
      const timeout = options.timeout ?? this.timeout;
      if (timeout > 0)
        entry.timer = setTimeout(() => {
          // The answer may still come (answers come in order); it is then dropped.
          this.pending.delete(id);
          reject(new EntelechyTimeoutError(op, id, timeout));
        }, timeout);
      this.pending.set(id, entry);
      try {
        this.transport.send(JSON.stringify({ ...request, id }));
      } catch (err) {
        this.settle(id);
        reject(new EntelechyConnectionError(`could not send \`${op}\` to ${this.address}: ${(err as Error)?.message ?? err}`, this.address));
      }
      if (op === 'quit') this.state = 'closing'; // the session ends this connection after answering
    });
  }

  /**
   * Listen to events answers carry: one kind (`published`, `rejected`, ...) or '*' for all.
   * Returns a function that stops listening.
   */
  on(kind: EventKind | '*' | (string & {}), listener: EventListener): () => void {
    let set = this.listeners.get(kind);
    if (!set) this.listeners.set(kind, (set = new Set()));
    set.add(listener);
    return () => set!.delete(listener);
  }

  /**
   * Called once when the connection ends: without an error when this client ended it (close() or
   * `quit`), else with the error (the session closed it, or the connection failed).
   */
  onClose(listener: (error?: Error) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** End the connection; requests still waiting are rejected. Resolves once it has ended. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closing';
    this.transport.close();
    await this.closedPromise;
  }

  // -------------------------------------------------------------------------------------------
  // Conveniences a host wants
  // -------------------------------------------------------------------------------------------

  /** Read an output (or a pinned node's port) as floats, one plane per component. */
  async readFloats(fields: Omit<RequestFields<'read'>, 'format' | 'file'> = {}, options?: RequestOptions): Promise<FieldData> {
    const answer = (await this.request('read', { ...fields, format: 'f32' }, options)) as Answer<'read'> & { components?: number; depth?: number };
    const components = answer.components ?? 1;
    const floats = decodeFloats(answer.data!); // without `file`, a read answers its data
    const size = floats.length / components;
    const planes = Array.from({ length: components }, (_, c) => floats.subarray(c * size, (c + 1) * size));
    return { name: answer.name, width: answer.width, height: answer.height, ...(answer.depth !== undefined ? { depth: answer.depth } : {}), components, frame: answer.frame, planes };
  }

  /** Read an output as a PNG image: its bytes. */
  async readPng(fields: Omit<RequestFields<'read'>, 'format' | 'file'> = {}, options?: RequestOptions): Promise<Uint8Array> {
    const answer = await this.request('read', { ...fields, format: 'png' }, options);
    return decodeBase64(answer.data!); // without `file`, a read answers its data
  }

  /**
   * Poll `sync` every `intervalMilliseconds` so edits saved on disk reach the listeners
   * (`preparing`, then `published` or `rejected`). Returns a function that stops it; it stops by
   * itself when the connection ends.
   */
  watch(intervalMilliseconds = 250): () => void {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      if (stopped || this.state !== 'open') return;
      try {
        await this.request('sync');
      } catch (err) {
        if (this.state !== 'open') return;
        if (!(err instanceof EntelechyTimeoutError)) console.error(`entelechy: sync failed: ${(err as Error).message}`);
      }
      if (!stopped) timer = setTimeout(tick, intervalMilliseconds);
    };
    timer = setTimeout(tick, 0);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }

  // -------------------------------------------------------------------------------------------
  // Answers, events, the end
  // -------------------------------------------------------------------------------------------

  private answer(line: string): void {
    let message: { id?: unknown; ok?: Record<string, unknown>; error?: Record<string, unknown> };
    try {
      message = JSON.parse(line);
    } catch {
      console.error(`entelechy: ignored a line from ${this.address} that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    // Answers come in order; one without an id (a door error such as an oversize line) is the oldest's.
    const id = typeof message.id === 'number' ? message.id : this.pending.keys().next().value;
    const entry = id === undefined ? undefined : this.pending.get(id);
    const body = message.ok ?? message.error;
    const events = body && Array.isArray(body.events) ? (body.events as ProtocolEvent[]) : [];
    this.emit(events, { op: entry?.op ?? 'unknown', id: typeof id === 'number' ? id : 0 });
    if (!entry) return; // its request timed out: dropped
    this.settle(entry.id);
    if (message.ok !== undefined) entry.resolve(message.ok);
    else entry.reject(new EntelechyError(entry.op, message.id, message.error ?? { message: `\`${entry.op}\`: the answer had neither ok nor error` }));
  }

  private emit(events: ProtocolEvent[], source: EventSource): void {
    for (const event of events) {
      for (const kind of [event.kind, '*']) {
        for (const listener of this.listeners.get(kind) ?? []) {
          try {
            listener(event, source);
          } catch (err) {
            // A listener's bug must not lose the answer the request waits for.
            console.error(`entelechy: a listener of \`${event.kind}\` threw: ${(err as Error)?.stack ?? err}`);
          }
        }
      }
    }
  }

  private settle(id: number): void {
    const entry = this.pending.get(id);
    if (entry?.timer) clearTimeout(entry.timer);
    this.pending.delete(id);
  }

  private ended(error?: Error): void {
    const wasClosing = this.state === 'closing';
    this.state = 'closed';
    // Closed by the session without this client asking (no close(), no quit): a session that ended
    // or crashed, told as an error, so a host can tell it from its own close.
    if (!error && !wasClosing) error = new EntelechyConnectionError(`${this.address} closed the connection (the session ended?)`, this.address);
    for (const entry of [...this.pending.values()]) {
      this.settle(entry.id);
      const why = error ? error.message : 'the connection was closed';
      entry.reject(new EntelechyConnectionError(`\`${entry.op}\` (request ${entry.id}) got no answer: ${why}`, this.address));
    }
    for (const listener of this.closeListeners) listener(error);
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding (browser and Node alike)
// ---------------------------------------------------------------------------------------------

export function decodeBase64(data: string): Uint8Array {
  const NodeBuffer = (globalThis as { Buffer?: { from(s: string, e: string): Uint8Array } }).Buffer;
  if (NodeBuffer) return NodeBuffer.from(data, 'base64');
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** base64 little-endian f32 (the `read` format f32) as floats, whatever this machine's byte order. */
export function decodeFloats(data: string): Float32Array {
  const bytes = decodeBase64(data);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const floats = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < floats.length; i++) floats[i] = view.getFloat32(i * 4, true);
  return floats;
}
