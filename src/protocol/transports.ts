// The doors of the protocol: standard input/output, and one `--listen` port that serves raw JSON
// lines over TCP, WebSocket (by HTTP upgrade) and plain HTTP (the Player page) side by side.
//
// The doors know nothing of what the operations do: every request line goes to one LineHandler,
// whose answer is written back on the connection it came from. Per connection, requests are
// answered one at a time, in order; connections do not wait for each other.
//
// Nothing a client sends ends or wedges the server: lines are bounded (an over-long line gets an
// error answer and is skipped), a connection's pending requests are bounded (reading pauses, so
// TCP pushes back on the client), answers wait for a slow reader to drain before the next request
// of that connection is handled, and a connection whose unread output still grows past a bound
// (events to a client that never reads) is dropped. Handler exceptions become error answers.

import net from 'node:net';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';

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
}

export interface LineHandler {
  /**
   * One request line in, one answer line out (no trailing newline); `undefined` answers nothing.
   * `quit`: return `{ answer, close: true }` and the door closes that connection after writing
   * the answer.
   */
  (line: string, conn: Connection): Promise<{ answer: string; close?: boolean } | undefined>;
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
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Unread output past which the next request of a connection waits for the reader. */
const HIGH_WATER = 1024 * 1024;
/** Pending requests of one connection past which reading from it pauses. */
const MAX_QUEUED_LINES = 256;
const MAX_QUEUED_BYTES = 32 * 1024 * 1024;

let nextConnectionId = 0;

// ---------------------------------------------------------------------------------------------
// Answers the door itself gives
// ---------------------------------------------------------------------------------------------

/** The `id` of a request line, when it is a JSON object with one (to echo in door errors). */
function requestId(line: string): unknown {
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

function errorLine(message: string, id?: unknown): string {
  return JSON.stringify(id === undefined ? { error: { message } } : { id, error: { message } });
}

function describe(err: unknown): string {
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
 * reported once through `onOversize` and its bytes are skipped up to the next newline.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: () => void,
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
      this.parts = [];
      this.size = 0;
      this.skipping = true;
      this.onOversize();
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
    const line = bytes.toString('utf8');
    if (line.trim() === '') return;
    this.onLine(line);
  }
}

// ---------------------------------------------------------------------------------------------
// One connection: a queue of requests answered one at a time
// ---------------------------------------------------------------------------------------------

/** What a Door needs of its transport. */
interface DoorIO {
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

type Item = { line: string } | { oversize: true };

class Door implements Connection {
  readonly id = ++nextConnectionId;
  private queue: Item[] = [];
  private queuedBytes = 0;
  private running = false;
  private paused = false;
  private inputEnded = false;
  /** The last answer's size: a big answer being read is not a reason to drop the client. */
  private allowance = 0;
  /** open: serving; ending: finish the answer in flight, then end; closed: gone. */
  private state: 'open' | 'ending' | 'closed' = 'open';

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
    this.enqueue({ line }, line.length);
  }

  /** A request line was too long: answered with an error in its turn. */
  pushOversize(): void {
    this.enqueue({ oversize: true }, 0);
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
    if ('oversize' in item)
      return {
        answer: errorLine(
          `request line longer than ${this.limits.maxLineBytes} bytes; it was skipped up to its end`,
        ),
      };
    try {
      const result = await this.handler(item.line, this);
      if (result === undefined || result === null) return undefined;
      if (typeof result.answer !== 'string')
        return { answer: errorLine('internal error: the handler gave no answer text', requestId(item.line)) };
      return result;
    } catch (err) {
      return { answer: errorLine(`internal error: ${describe(err)}`, requestId(item.line)) };
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

function fullLimits(limits: DoorLimits | undefined): Required<DoorLimits> {
  const positive = (v: number | undefined, d: number) => (v !== undefined && Number.isFinite(v) && v > 0 ? v : d);
  return {
    maxLineBytes: positive(limits?.maxLineBytes, MAX_LINE_BYTES),
    maxBufferedBytes: positive(limits?.maxBufferedBytes, MAX_BUFFERED_BYTES),
  };
}

// ---------------------------------------------------------------------------------------------
// stdin / stdout
// ---------------------------------------------------------------------------------------------

/**
 * Serves request lines from `input` (default process.stdin), answers to `output` (default
 * process.stdout). Resolves when the input ends (after the queued requests are answered), when a
 * `quit` closes the connection, or when the output fails (EPIPE). It does not end `output`.
 */
export function serveStdio(
  handler: LineHandler,
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
  limits?: DoorLimits,
): Promise<void> {
  const lim = fullLimits(limits);
  return new Promise<void>((resolve) => {
    const out = output as NodeJS.WritableStream & { writableLength?: number; writableNeedDrain?: boolean };
    let done = false;
    let outputFailed = false;
    const waitDrain = (): Promise<void> =>
      new Promise<void>((r) => {
        if (outputFailed || !out.writableNeedDrain) return r();
        const finish = () => {
          out.off('drain', finish);
          out.off('error', finish);
          out.off('close', finish);
          r();
        };
        out.on('drain', finish);
        out.on('error', finish);
        out.on('close', finish);
      });
    const detach = () => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onInputError);
      input.off('close', onEnd);
      out.off('error', onOutputError);
      // Keep error listeners so a late EPIPE or read error cannot crash the process.
      input.on('error', () => {});
      out.on('error', () => {});
      try {
        input.pause();
      } catch {
        // nothing to pause
      }
    };
    const door = new Door(
      'stdin',
      handler,
      {
        write: (line) => {
          out.write(line + '\n');
        },
        backlog: () => out.writableLength ?? 0,
        drained: waitDrain,
        pause: () => input.pause(),
        resume: () => input.resume(),
        end: () => {},
        destroy: () => {},
      },
      lim,
      (_door, why) => {
        if (done) return;
        done = true;
        detach();
        if (why === 'ended') void waitDrain().then(() => resolve());
        else resolve();
      },
    );
    const splitter = new LineSplitter(
      lim.maxLineBytes,
      (line) => door.push(line),
      () => door.pushOversize(),
    );
    function onData(chunk: Buffer | string) {
      if (!door.closed) splitter.push(chunk);
    }
    function onEnd() {
      if (door.closed) return;
      splitter.end();
      door.inputEnd();
    }
    function onInputError() {
      onEnd();
    }
    function onOutputError() {
      outputFailed = true;
      door.gone('output failed');
    }
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('close', onEnd);
    input.on('error', onInputError);
    out.on('error', onOutputError);
    input.resume();
  });
}

// ---------------------------------------------------------------------------------------------
// --listen addresses
// ---------------------------------------------------------------------------------------------

/**
 * `host:port`, `:port`, `port`, `host`, `[v6]:port`, `[v6]`; '' means the defaults
 * (127.0.0.1:7788). Port 0 picks a free port. Throws an Error naming the problem otherwise.
 */
export function parseListen(spec: string): { host: string; port: number } {
  const text = String(spec ?? '').trim();
  const bad = (why: string) =>
    new Error(
      `invalid --listen address ${JSON.stringify(spec)}: ${why} ` +
        `(expected host:port, :port, port or [ipv6]:port, e.g. 127.0.0.1:${DEFAULT_PORT})`,
    );
  const parsePort = (p: string): number => {
    if (!/^\d{1,5}$/.test(p)) throw bad(`port ${JSON.stringify(p)} is not a number`);
    const n = Number(p);
    if (n > 65535) throw bad(`port ${n} is out of range 0..65535`);
    return n;
  };
  const checkHost = (h: string): string => {
    if (h === '') return DEFAULT_HOST;
    if (net.isIP(h)) return h;
    if (h.length > 253 || !/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(h))
      throw bad(`${JSON.stringify(h)} is not a host name or IP address`);
    return h;
  };
  if (text === '') return { host: DEFAULT_HOST, port: DEFAULT_PORT };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw bad('give an address, not a URL');
  if (/\s/.test(text)) throw bad('it contains spaces');
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) throw bad("missing ']' after the IPv6 address");
    const host = text.slice(1, close);
    if (!net.isIPv6(host)) throw bad(`${JSON.stringify(host)} is not an IPv6 address`);
    const rest = text.slice(close + 1);
    if (rest === '') return { host, port: DEFAULT_PORT };
    if (!rest.startsWith(':')) throw bad(`unexpected ${JSON.stringify(rest)} after ']'`);
    return { host, port: parsePort(rest.slice(1)) };
  }
  const colons = text.split(':').length - 1;
  if (colons > 1) throw bad('an IPv6 address needs brackets, as in [::1]:7788');
  if (colons === 0) {
    if (/^\d+$/.test(text)) return { host: DEFAULT_HOST, port: parsePort(text) };
    return { host: checkHost(text), port: DEFAULT_PORT };
  }
  const [host, port] = text.split(':') as [string, string];
  if (port === '') throw bad("missing port after ':'");
  return { host: checkHost(host), port: parsePort(port) };
}

function formatAddress(host: string, port: number): string {
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}

// ---------------------------------------------------------------------------------------------
// One port: raw JSON lines over TCP, WebSocket and HTTP
// ---------------------------------------------------------------------------------------------

export interface Listener {
  /** The address actually bound (e.g. 127.0.0.1 for 'localhost'). */
  host: string;
  /** The port actually bound (a free one for port 0). */
  port: number;
  /** Stops listening and ends all connections (TCP, WebSocket and HTTP). */
  close(): Promise<void>;
  /** Open protocol connections (TCP lines and WebSockets; not plain HTTP requests). */
  connections(): number;
}

export interface ListenOptions extends DoorLimits {
  /** Plain HTTP requests (not WebSocket upgrades); 404 when absent or it returns false. */
  http?: HttpHandler;
  /**
   * Browser origins allowed to open a WebSocket besides this server's loopback origins
   * (http://127.0.0.1:PORT, http://localhost:PORT, http://[::1]:PORT), e.g.
   * 'http://localhost:5173'; '*' allows any origin.
   */
  allowedOrigins?: string[];
  /** Where `listening on HOST:PORT` and refusals/drops are told; default stderr. */
  log?: (line: string) => void;
}

const HTTP_METHODS = ['GET', 'POST', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'CONNECT', 'TRACE'];
const LONGEST_METHOD = Math.max(...HTTP_METHODS.map((m) => m.length));

/** 'http' when the first bytes are an HTTP request line's method and a space, 'more' when too few bytes tell yet. */
export function sniff(head: Buffer): 'http' | 'lines' | 'more' {
  const n = Math.min(head.length, LONGEST_METHOD + 1);
  const start = head.subarray(0, n).toString('latin1');
  const space = start.indexOf(' ');
  if (space > 0) return HTTP_METHODS.includes(start.slice(0, space)) ? 'http' : 'lines';
  if (head.length <= LONGEST_METHOD && HTTP_METHODS.some((m) => m.startsWith(start))) return 'more';
  return 'lines';
}

function normalizeOrigin(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    if (u.origin === 'null') return undefined;
    return u.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

export async function listen(
  spec: string | { host: string; port: number },
  handler: LineHandler,
  options: ListenOptions = {},
): Promise<Listener> {
  const { host, port } = typeof spec === 'string' ? parseListen(spec) : spec;
  const log = options.log ?? ((line: string) => void process.stderr.write(line + '\n'));
  const limits = fullLimits(options);
  const sockets = new Set<net.Socket>();
  const doors = new Set<Door>();
  const webSockets = new Set<WebSocket>();
  /** Sockets a TCP line door or a WebSocket owns (ended gracefully by close()). */
  const owned = new WeakSet<Duplex>();
  let closing = false;
  let boundPort = port;
  let boundHost = host;

  const safeLog = (line: string) => {
    try {
      log(line);
    } catch {
      // a failing logger must not take the server down
    }
  };
  const onGone = (door: Door, why: string) => {
    doors.delete(door);
    if (why.startsWith('dropped')) safeLog(`${door.kind} connection ${door.id} ${why}`);
  };

  // -- who may open a WebSocket --------------------------------------------------------------
  const allowed = new Set<string>();
  let anyOrigin = false;
  for (const o of options.allowedOrigins ?? []) {
    if (o === '*') anyOrigin = true;
    const n = normalizeOrigin(o);
    if (n) allowed.add(n);
  }
  const originAllowed = (origin: string | undefined): boolean => {
    if (origin === undefined) return true; // not a browser
    if (anyOrigin) return true;
    const n = normalizeOrigin(origin);
    if (n === undefined) return false;
    if (allowed.has(n)) return true;
    const own = ['127.0.0.1', 'localhost', '[::1]'];
    // A server bound to one specific non-loopback IP also trusts pages it serves there itself
    // (an IP literal cannot be rebound by DNS).
    if (net.isIP(boundHost) && boundHost !== '0.0.0.0' && boundHost !== '::')
      own.push(net.isIPv6(boundHost) ? `[${boundHost}]` : boundHost);
    const suffix = boundPort === 80 ? '' : `:${boundPort}`;
    return own.some((h) => n === `http://${h}${suffix}`);
  };

  // -- HTTP and WebSocket ----------------------------------------------------------------------
  const httpServer = http.createServer((req, res) => {
    let handled = false;
    try {
      handled = options.http?.(req, res) === true;
    } catch (err) {
      safeLog(`http handler failed on ${req.method} ${req.url}: ${describe(err)}`);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('internal error\n');
      } else res.destroy();
      return;
    }
    if (!handled) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('not found (this port speaks the agent protocol: JSON lines over TCP, or WebSocket)\n');
    }
  });
  httpServer.on('clientError', (_err, socket: Duplex) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    socket.destroy();
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxLineBytes, perMessageDeflate: false });
  wss.on('error', () => {});

  httpServer.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const origin = req.headers.origin;
    if (closing) {
      socket.destroy();
      return;
    }
    if (!originAllowed(origin)) {
      safeLog(`refused WebSocket from origin ${origin}`);
      const body = `WebSocket refused: origin ${origin} is not allowed\n`;
      socket.end(
        'HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    owned.add(socket);
    wss.handleUpgrade(req, socket, head, (ws) => serveWebSocket(ws));
  });

  const serveWebSocket = (ws: WebSocket) => {
    webSockets.add(ws);
    let flushed: Promise<void> = Promise.resolve();
    const door = new Door(
      'websocket',
      handler,
      {
        write: (line) => {
          flushed = new Promise<void>((r) => ws.send(line, () => r()));
        },
        backlog: () => ws.bufferedAmount,
        drained: () => flushed,
        pause: () => ws.pause(),
        resume: () => ws.resume(),
        end: () => (closing ? ws.close(1001, 'server closing') : ws.close(1000)),
        destroy: () => ws.terminate(),
      },
      limits,
      onGone,
    );
    doors.add(door);
    ws.on('message', (data: RawData) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
      const line = bytes.toString('utf8').replace(/\r?\n$/, '');
      if (line.trim() !== '') door.push(line);
    });
    ws.on('error', () => {});
    ws.on('close', () => {
      webSockets.delete(ws);
      door.gone();
    });
  };

  // -- raw JSON lines --------------------------------------------------------------------------
  const serveLines = (socket: net.Socket, head: Buffer, ended: boolean) => {
    owned.add(socket);
    const door = new Door(
      'tcp',
      handler,
      {
        write: (line) => {
          socket.write(line + '\n');
        },
        backlog: () => socket.writableLength,
        drained: () =>
          new Promise<void>((r) => {
            if (!socket.writableNeedDrain || socket.destroyed) return r();
            const done = () => {
              socket.off('drain', done);
              socket.off('close', done);
              r();
            };
            socket.on('drain', done);
            socket.on('close', done);
          }),
        pause: () => socket.pause(),
        resume: () => socket.resume(),
        end: () => {
          socket.end();
          // Discard what the client still sends; a client that never closes its side goes later.
          socket.resume();
          const timer = setTimeout(() => socket.destroy(), 10_000);
          timer.unref();
          socket.once('close', () => clearTimeout(timer));
        },
        destroy: () => socket.destroy(),
      },
      limits,
      onGone,
    );
    doors.add(door);
    const splitter = new LineSplitter(
      limits.maxLineBytes,
      (line) => door.push(line),
      () => door.pushOversize(),
    );
    const onEnd = () => {
      splitter.end();
      door.inputEnd();
    };
    socket.on('data', (chunk: Buffer) => {
      if (!door.closed) splitter.push(chunk);
    });
    socket.on('end', onEnd);
    socket.on('close', () => door.gone());
    if (head.length) splitter.push(head);
    if (ended) onEnd();
    else socket.resume();
  };

  // -- the one port ----------------------------------------------------------------------------
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.setNoDelay(true);
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = head.length ? Buffer.concat([head, chunk]) : chunk;
      const kind = sniff(head);
      if (kind === 'more') return;
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.pause();
      if (kind === 'http') {
        socket.unshift(head);
        httpServer.emit('connection', socket);
        socket.resume();
      } else serveLines(socket, head, false);
    };
    const onEnd = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      // Ended before it said enough to tell: whatever it said is a (partial) line.
      serveLines(socket, head, true);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const why =
        err.code === 'EADDRINUSE'
          ? 'the address is in use'
          : err.code === 'EADDRNOTAVAIL'
            ? 'the address is not one of this machine'
            : err.code === 'EACCES'
              ? 'permission denied'
              : err.code === 'ENOTFOUND'
                ? 'the host name does not resolve'
                : describe(err);
      reject(new Error(`cannot listen on ${formatAddress(host, port)}: ${why}${err.code ? ` (${err.code})` : ''}`));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host, port });
  });
  server.on('error', (err) => safeLog(`listener error: ${describe(err)}`));

  const address = server.address();
  if (address && typeof address === 'object') {
    boundHost = address.address;
    boundPort = address.port;
  }
  safeLog(`listening on ${formatAddress(boundHost, boundPort)}`);

  let closed: Promise<void> | undefined;
  return {
    host: boundHost,
    port: boundPort,
    connections: () => doors.size,
    close: () => {
      if (closed) return closed;
      closing = true;
      closed = new Promise<void>((resolve) => {
        const serverClosed = new Promise<void>((r) => server.close(() => r()));
        for (const door of [...doors]) door.close();
        // HTTP requests and sockets still being sniffed go now; doors end after their answer in flight.
        for (const socket of sockets) if (!owned.has(socket)) socket.destroy();
        const allClosed = Promise.all(
          [...sockets].map((s) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())))),
        );
        const grace = setTimeout(() => {
          for (const ws of webSockets) ws.terminate();
          for (const s of sockets) s.destroy();
        }, 1000);
        grace.unref();
        void Promise.all([serverClosed, allClosed]).then(() => {
          clearTimeout(grace);
          wss.close();
          httpServer.close();
          resolve();
        });
      });
      return closed;
    },
  };
}
