// The TCP transport (Node): JSON lines over one socket, as `entelechy serve --listen` serves them.

import net from 'node:net';
import { EntelechyConnectionError, socketProblem } from './errors.js';
import type { Transport, TransportEvents } from './transport.js';

export interface TcpOptions {
  /** Give up connecting after this many milliseconds; default 10000. */
  connectTimeout?: number;
}

export function openTcp(host: string, port: number, events: TransportEvents, options: TcpOptions = {}): Promise<Transport> {
  const address = `tcp://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    socket.setEncoding('utf8'); // decodes characters split across chunks correctly
    socket.setNoDelay(true); // a request is one small line: send it now
    let open = false;
    let ended = false;
    let pending = '';
    const connectTimer = setTimeout(() => socket.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), options.connectTimeout ?? 10000);

    socket.once('connect', () => {
      clearTimeout(connectTimer);
      open = true;
      resolve({
        address,
        send: (line) => {
          socket.write(`${line}\n`);
        },
        close: () => {
          socket.end();
        },
      });
    });
    socket.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        if (line.trim() !== '') events.line(line);
      }
    });
    let failure: Error | undefined;
    socket.on('error', (err) => {
      clearTimeout(connectTimer);
      failure = new EntelechyConnectionError(
        open ? `the connection to ${address} failed: ${socketProblem(err)}` : `cannot connect to ${address}: ${socketProblem(err)}`,
        address,
      );
      if (!open) reject(failure);
    });
    socket.on('close', () => {
      clearTimeout(connectTimer);
      if (!open) {
        reject(failure ?? new EntelechyConnectionError(`cannot connect to ${address}: the connection closed`, address));
        return;
      }
      if (ended) return;
      ended = true;
      if (pending.trim() !== '') events.line(pending); // a last answer without its newline
      events.closed(failure);
    });
  });
}
