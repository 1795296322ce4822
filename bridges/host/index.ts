// bridges/host: a client for programs that drive an Entelechy session remotely, over TCP (Node)
// or WebSocket (browser or Node), against `entelechy serve SCENE --listen HOST:PORT`.

import { EntelechyClient, type ClientOptions } from './client.js';
import { EntelechyConnectionError } from './errors.js';
import type { TcpOptions } from './tcp.js';
import { openWebSocket } from './websocket.js';

export { EntelechyClient, decodeBase64, decodeFloats, type ClientOptions, type EventListener, type EventSource, type FieldData, type RequestArgs, type RequestOptions } from './client.js';
export { EntelechyConnectionError, EntelechyError, EntelechyTimeoutError } from './errors.js';
export type { Transport, TransportEvents, OpenTransport } from './transport.js';
export type { Answer, ProtocolEvent } from '../../src/protocol/answers.js';
export type { EventKind, OperationName, RequestFields } from '../../src/protocol/operations.js';

/** Connect over TCP (Node only): JSON lines, the same port `--listen` named. */
export async function connectTcp(host: string, port: number, options: ClientOptions & TcpOptions = {}): Promise<EntelechyClient> {
  // Loaded only here, so a browser bundle that uses WebSocket never needs node:net.
  const { openTcp } = await import('./tcp.js');
  return EntelechyClient.open((events) => openTcp(host, port, events, options), options);
}

/** Connect over WebSocket: `url` is ws://host:port (the browser's WebSocket, or `ws` in Node). */
export async function connectWebSocket(url: string, options: ClientOptions = {}): Promise<EntelechyClient> {
  return EntelechyClient.open((events) => openWebSocket(url, events), options);
}

/**
 * Connect by address: `ws://host:port` (WebSocket), `tcp://host:port` or `host:port` (TCP).
 * The port is the one `entelechy serve --listen` printed (`listening on HOST:PORT`).
 */
export async function connect(address: string, options: ClientOptions & TcpOptions = {}): Promise<EntelechyClient> {
  if (/^wss?:\/\//i.test(address)) return connectWebSocket(address, options);
  const m = /^(?:tcp:\/\/)?(\[[^\]]+\]|[^:/]+):(\d{1,5})\/?$/i.exec(address.trim());
  if (!m)
    throw new EntelechyConnectionError(`cannot connect to ${JSON.stringify(address)}: give ws://HOST:PORT, tcp://HOST:PORT or HOST:PORT (e.g. 127.0.0.1:7788)`, address);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return connectTcp(host, Number(m[2]), options);
}
