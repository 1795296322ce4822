// The WebSocket transport: one request per text message. In a browser it uses the global
// WebSocket; in Node (20 has none) the `ws` package, loaded only then.

import { EntelechyConnectionError, socketProblem } from './errors.js';
import type { Transport, TransportEvents } from './transport.js';

/** The part of the WebSocket API both the browser's and `ws` offer. */
interface SocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
type SocketConstructor = new (url: string) => SocketLike;

async function webSocketClass(): Promise<SocketConstructor> {
  const global = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (typeof global === 'function') return global as SocketConstructor;
  const ws = await import('ws');
  return ws.WebSocket as unknown as SocketConstructor;
}

function text(data: unknown): string {
  if (typeof data === 'string') return data;
  // `ws` may hand a text message over as bytes; answers are UTF-8.
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(data);
  return String(data);
}

/** `url` is ws://host:port (the same address `--listen` was given). */
export async function openWebSocket(url: string, events: TransportEvents): Promise<Transport> {
  const WebSocketClass = await webSocketClass();
  return new Promise((resolve, reject) => {
    let socket: SocketLike;
    try {
      socket = new WebSocketClass(url);
    } catch (err) {
      reject(new EntelechyConnectionError(`cannot connect to ${url}: ${socketProblem(err)}`, url));
      return;
    }
    let open = false;
    let failure: Error | undefined;
    socket.onopen = () => {
      open = true;
      resolve({
        address: url,
        send: (line) => socket.send(line),
        close: () => socket.close(1000, 'closed by the host'),
      });
    };
    socket.onmessage = (event) => events.line(text(event.data));
    socket.onerror = (event) => {
      // Browsers say nothing more; `ws` passes the socket error along.
      const cause = (event as { error?: unknown }).error;
      const why = cause ? socketProblem(cause) : 'the WebSocket failed';
      failure = new EntelechyConnectionError(open ? `the connection to ${url} failed: ${why}` : `cannot connect to ${url}: ${why}`, url);
    };
    socket.onclose = (event) => {
      if (!open) {
        reject(failure ?? new EntelechyConnectionError(`cannot connect to ${url}: closed (${event.code}${event.reason ? ` ${event.reason}` : ''})`, url));
        return;
      }
      events.closed(failure);
    };
  });
}
