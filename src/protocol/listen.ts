// The --listen door: one port serving JSON lines over TCP, WebSocket by HTTP upgrade, and plain HTTP.

import net from 'node:net';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { Door, DoorLimits, HttpHandler, LineHandler, LineSplitter, describe, fullLimits, HEAD_BYTES } from './door.js';
import { formatAddress, isLoopback, ListenError, originPolicy, parseListen } from './address.js';

/** How many times the line limit a WebSocket message may be before the connection is closed unread (below it, one past the limit is answered with its error). */
const WEBSOCKET_SLACK = 4;

export { ListenError, parseListen } from './address.js';

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
  /**
   * WebSockets that are not protocol doors (the Player's frame socket): when it returns a
   * function for an upgrade request, that function serves the socket. Origins are checked first.
   */
  webSocket?: (req: http.IncomingMessage) => ((ws: WebSocket) => void) | undefined;
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
  /** WebSockets a route serves (no door): closed by close() like the doors. */
  const routed = new Set<WebSocket>();
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

  const originAllowed = originPolicy(options.allowedOrigins ?? [], () => ({ host: boundHost, port: boundPort }));

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

  // A message past the line limit is answered with the limit's error, as a TCP line is; only one
  // past WEBSOCKET_SLACK times it closes the connection (1009), unread.
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxLineBytes * WEBSOCKET_SLACK, perMessageDeflate: false });
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
      const body = `WebSocket refused: origin ${origin} is not allowed; start the server with --allow-origin ${origin} to allow pages of that origin\n`;
      socket.end(
        'HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    owned.add(socket);
    const route = options.webSocket?.(req);
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (!route) return serveWebSocket(ws);
      webSockets.add(ws);
      routed.add(ws);
      ws.on('close', () => {
        webSockets.delete(ws);
        routed.delete(ws);
      });
      route(ws);
    });
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
      if (bytes.length > limits.maxLineBytes) return door.pushOversize(bytes.subarray(0, HEAD_BYTES).toString('utf8'));
      // One request a message; a message of several lines is taken as several requests, in order, as over TCP.
      const lines = bytes.toString('utf8').split(/\r?\n/).filter((line) => line.trim() !== '');
      // A blank message is answered: over TCP a blank line is nothing, but a client sends a message to be answered.
      if (lines.length === 0) return door.pushEmpty();
      for (const line of lines) door.push(line);
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
      (head) => door.pushOversize(head),
    );
    const onEnd = () => {
      splitter.end();
      door.inputEnd();
      // A FIN is all a client that went away sends (killed, or closed its socket): what it
      // asked is still answered, but its evaluations stop (cancel.ts).
      door.peerClosed();
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
      reject(new ListenError(`cannot listen on ${formatAddress(host, port)}: ${why}${err.code ? ` (${err.code})` : ''}; choose another with --listen host:port (port 0 picks a free one)`));
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
  // Anyone who reaches the port has the whole protocol (compose writes the scene's documents): said
  // where a person starting it will see it, as the address they asked for does not.
  if (!isLoopback(boundHost))
    safeLog(`warning: ${formatAddress(boundHost, boundPort)} is not loopback: whoever can reach this machine on port ${boundPort} may use every operation (compose writes the scene's documents), with no password; listen on 127.0.0.1 unless the network is yours, or put an authenticating proxy in front`);

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
        for (const ws of routed) ws.close(1001, 'server closing');
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
