// `entelechy-player`: a session, its window loop, and one port serving the page (HTTP), the
// page's frame socket (WebSocket at /player/socket) and the protocol (TCP lines and WebSocket);
// with --serve, protocol lines on stdin too.

import { existsSync, statSync } from 'node:fs';
import { doorHandler } from '../cli/serve.js';
import { Session, type SessionOptions } from '../main/session.js';
import { listen, type Listener } from '../protocol/listen.js';
import { McpHttp } from '../mcp/http.js';
import { parseListen } from '../protocol/address.js';
import { assetHandler } from './assets.js';
import { servePage } from './pages.js';
import { PlayerWindow, type WindowOptions } from './window.js';
import { UserError } from '../main/user-error.js';

export const PLAYER_SOCKET_PATH = '/player/socket';

export interface PlayerOptions extends SessionOptions, WindowOptions {
  /** host:port (default 127.0.0.1:7788; port 0 picks a free one). */
  listen?: string;
  /** Where `listening on` and refusals are told (default stderr). */
  log?: (line: string) => void;
}

export interface Player {
  session: Session;
  window: PlayerWindow;
  listener: Listener;
  /** The page's address, e.g. http://127.0.0.1:7788/ */
  url: string;
  close(): Promise<void>;
}

/** A mistake of the user's (no scene, a bad address): told in one line, no stack trace. */
export class PlayerError extends UserError {
  override name = 'PlayerError';
}

export async function startPlayer(scenePath: string, options: PlayerOptions = {}): Promise<Player> {
  if (!existsSync(scenePath) || !statSync(scenePath).isFile()) throw new PlayerError(`cannot open \`${scenePath}\`: no such file`);
  let address: { host: string; port: number };
  try {
    address = parseListen(options.listen ?? '');
  } catch (e) {
    throw new PlayerError((e as Error).message);
  }
  const session = await Session.open(scenePath, options);
  const window = new PlayerWindow(session, options);
  let listener: Listener;
  // MCP clients reach the session the window shows at /mcp (src/mcp/http.ts).
  const mcp = new McpHttp(session);
  const assets = assetHandler();
  try {
    listener = await listen(address, doorHandler(session), {
      http: (req, res) => mcp.handle(req, res) || assets(req, res),
      webSocket: (req) => (new URL(req.url ?? '/', 'http://x').pathname === PLAYER_SOCKET_PATH ? (ws) => servePage(window, ws) : undefined),
      log: options.log,
    });
  } catch (e) {
    await window.close();
    await session.close();
    throw new PlayerError((e as Error).message);
  }
  mcp.bound = listener;
  const host = listener.host.includes(':') ? `[${listener.host}]` : listener.host === '0.0.0.0' ? '127.0.0.1' : listener.host;
  let closing: Promise<void> | undefined;
  return {
    session, window, listener,
    url: `http://${host}:${listener.port}/`,
    close: () =>
      (closing ??= (async () => {
        await window.close();
        await mcp.close();
        await listener.close();
        await session.close();
      })()),
  };
}
