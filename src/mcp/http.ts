// The MCP door over Streamable HTTP, at `/mcp` on the --listen port (src/protocol/listen.ts routes
// plain HTTP requests here). Each MCP client that initializes gets an MCP session of its own (the
// `mcp-session-id` header) with a door of its own on the one running session, as a TCP client gets
// a connection. Browser origins are checked as the WebSocket door checks them: a page of another
// origin is refused unless --allow-origin names it.

import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Session } from '../main/session.js';
import { originPolicy } from '../protocol/address.js';
import { McpDoor } from './server.js';
import { plainSdkError } from './messages.js';
import { MAX_LINE_BYTES } from '../protocol/door.js';

export const MCP_PATH = '/mcp';

/** MCP sessions one server keeps at most: a client that never ends its own cannot grow it forever. */
export const MAX_MCP_SESSIONS = 32;

/**
 * How long an MCP session may sit unused (no request, no open stream) and still hold its place
 * when the places are all taken: a new client ends the one unused longest past it. Clients that
 * went away without a DELETE filled every place, and no new client was served again.
 */
export const MCP_IDLE_MS = 60_000;

interface Open {
  transport: StreamableHTTPServerTransport;
  door: McpDoor;
  /** Requests and streams open now, and when the last one ended. */
  busy: number;
  idleSince: number;
}

export interface McpHttpLimits {
  maxSessions?: number;
  idleMs?: number;
}

export class McpHttp {
  private readonly open = new Map<string, Open>();
  private readonly originAllowed: (origin: string | undefined) => boolean;
  /** The address the listener bound (set once it listens): the server's own origins are allowed. */
  bound?: { host: string; port: number };

  private readonly maxSessions: number;
  private readonly idleMs: number;

  constructor(
    private readonly session: Session | Promise<Session>,
    allowedOrigins: string[] = [],
    limits: McpHttpLimits = {},
  ) {
    this.maxSessions = limits.maxSessions ?? MAX_MCP_SESSIONS;
    this.idleMs = limits.idleMs ?? MCP_IDLE_MS;
    // Before the listener is bound nothing can arrive; an origin then would be refused.
    this.originAllowed = originPolicy(allowedOrigins, () => this.bound ?? { host: '', port: -1 });
  }

  /** listen()'s HttpHandler: true when the request is this door's. */
  readonly handle = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== MCP_PATH) return false;
    const origin = req.headers.origin;
    if (!this.originAllowed(origin)) {
      plain(res, 403, `MCP refused: origin ${origin} is not allowed; start the server with --allow-origin ${origin} to allow pages of that origin\n`);
      return true;
    }
    this.serve(req, res).catch((err: unknown) => {
      if (!res.headersSent) plain(res, 500, `MCP request failed: ${(err as Error)?.message ?? err}\n`);
      else res.end();
    });
    return true;
  };

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const open = this.open.get(id);
      if (!open) return jsonRpcError(res, 404, `no MCP session \`${id}\` here (it ended: by its client, by the server, or unused while new clients needed its place): initialize a new one`);
      open.busy++;
      res.once('close', () => {
        open.busy--;
        open.idleSince = Date.now();
        // A client that went away before its answer asks nothing more of that call: its frame stops
        // (it ran on, and committed a frame nobody received), as on the TCP and WebSocket doors.
        if (req.method === 'POST' && !res.writableFinished) open.door.stopEvaluations('the HTTP request that asked for it closed before its answer');
      });
      return open.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return jsonRpcError(res, 400, 'no MCP session: POST an `initialize` request first (no `mcp-session-id` header)');
    // Anything but an initialize without a session was told "Server not initialized" (the SDK's words).
    const body = await readBody(req);
    if ('problem' in body) return jsonRpcError(res, 400, body.problem, body.code);
    if (!isInitialize(body.json))
      return jsonRpcError(res, 400, 'no `mcp-session-id` header: an MCP session begins with a POST of `initialize`, whose answer carries the `mcp-session-id` header; send that header with every request after it');
    if (this.open.size >= this.maxSessions && !(await this.endLongestUnused()))
      return jsonRpcError(res, 503, `${this.maxSessions} MCP sessions are open and in use, the most this server keeps; end one (DELETE ${MCP_PATH} with its mcp-session-id), or try again once one has been unused for ${Math.round(this.idleMs / 1000)} s (its place then goes to a new client)`);
    // A new MCP session: its transport answers `initialize` (or refuses what is not one).
    let transport!: StreamableHTTPServerTransport;
    const door = new McpDoor(this.session, { onQuit: () => void transport.close() });
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        this.open.set(sid, { transport, door, busy: 0, idleSince: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.open.delete(transport.sessionId);
      door.close();
    };
    // Errors the SDK answers itself, in plain words (messages.ts), as over stdio.
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(plainSdkError(message), options);
    await door.server.connect(transport);
    await transport.handleRequest(req, res, body.json);
    if (!transport.sessionId) await door.server.close(); // it was not an initialize
  }

  /** End the session unused longest, if one has been unused for idleMs; whether one was. */
  private async endLongestUnused(): Promise<boolean> {
    const now = Date.now();
    const unused = [...this.open.values()].filter((o) => o.busy === 0 && now - o.idleSince >= this.idleMs).sort((a, b) => a.idleSince - b.idleSince)[0];
    if (!unused) return false;
    if (unused.transport.sessionId) this.open.delete(unused.transport.sessionId);
    await unused.door.server.close().catch(() => undefined);
    return true;
  }

  /** End every MCP session (the listener is closing). */
  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map(({ door }) => door.server.close().catch(() => undefined)));
    this.open.clear();
  }

  /** MCP sessions open now. */
  sessions(): number {
    return this.open.size;
  }
}

function plain(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

function jsonRpcError(res: http.ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** A request body as JSON, read to its end (at most the protocol's line limit), or what is wrong with it. */
async function readBody(req: http.IncomingMessage): Promise<{ json: unknown } | { problem: string; code: number }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > MAX_LINE_BYTES) return { problem: `Invalid Request: the message is longer than ${MAX_LINE_BYTES} bytes`, code: -32600 };
    chunks.push(chunk);
  }
  try {
    return { json: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (e) {
    return { problem: `Parse error: the body is not JSON (${(e as Error).message}); POST one JSON-RPC message`, code: -32700 };
  }
}

/** Whether a message (or a batch of them) is MCP's `initialize`. */
function isInitialize(json: unknown): boolean {
  const messages = Array.isArray(json) ? json : [json];
  return messages.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}
