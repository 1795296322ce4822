// One page's WebSocket: binary frames out, JSON in (Player messages with `type`, protocol
// requests with `op`, answered as the protocol answers them, under the same authority rules).

import type { WebSocket, RawData } from 'ws';
import type { PlayerWindow, WindowPage } from './window.js';
import { dropImage } from './drop.js';
import { dispatch } from '../protocol/dispatcher.js';

let nextPageId = 0;

/** Bytes not yet sent to a page past which it gets no frame (it is too slow: it misses frames). */
const MAX_UNSENT = 8 * 1024 * 1024;

export function servePage(window: PlayerWindow, ws: WebSocket): void {
  const id = ++nextPageId;
  const conn = { kind: 'player', id };
  const page: WindowPage = {
    ready: false,
    sendFrame: (bytes) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > MAX_UNSENT) {
        page.ready = true; // try again next tick
        page.lastKey = undefined;
        return;
      }
      ws.send(bytes, { binary: true });
    },
    sendJson: (message) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    },
  };
  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (isBinary) return page.sendJson({ type: 'error', message: 'the Player takes JSON text messages' });
    const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)).toString('utf8');
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text);
    } catch {
      return page.sendJson({ type: 'error', message: 'not JSON: the Player takes one JSON object a message' });
    }
    if (message === null || typeof message !== 'object') return page.sendJson({ type: 'error', message: 'send a JSON object' });
    if (typeof message.op === 'string') {
      // A protocol request: the session answers it as it answers every door.
      void dispatch(window.session, text, conn).then((answer) => {
        if (ws.readyState === ws.OPEN) ws.send(answer);
        window.tellScene();
        window.schedule();
      });
      return;
    }
    onPlayerMessage(window, page, message);
  });
  ws.on('close', () => window.removePage(page));
  ws.on('error', () => undefined);
  window.addPage(page);
}

function onPlayerMessage(window: PlayerWindow, page: WindowPage, m: Record<string, unknown>): void {
  switch (m.type) {
    case 'next':
      // The page drew its last frame: it may have the next one.
      page.ready = true;
      break;
    case 'input': {
      const p = m.pointer as { x?: unknown; y?: unknown; down?: unknown } | undefined;
      if (p && Number.isFinite(p.x) && Number.isFinite(p.y)) window.pointer = { x: Number(p.x), y: Number(p.y), down: p.down === true };
      if (Array.isArray(m.keys)) window.keys = m.keys.filter((k): k is string => typeof k === 'string').map((k) => k.toLowerCase());
      break;
    }
    case 'show':
      if (typeof m.source === 'string') {
        page.source = m.source;
        page.lastKey = undefined;
        if (!window.fieldOf(m.source)) page.sendJson({ type: 'error', message: `nothing to show as \`${m.source}\`: name an output, or a port of a pinned node` });
      }
      break;
    case 'record':
      // Record what this page shows (pages are told `recording`, then `recorded` with the file).
      try {
        window.startRecording(page.source);
      } catch (e) {
        page.sendJson({ type: 'error', message: `cannot record: ${(e as Error).message}` });
      }
      break;
    case 'drop': {
      // An image dropped on the page: {"type": "drop", "input"?: NAME, "name": FILE, "data": BASE64}.
      if (typeof m.data !== 'string' || typeof m.name !== 'string') {
        page.sendJson({ type: 'error', message: 'a drop carries the image: {"type": "drop", "name": "photo.png", "data": BASE64, "input"?: NAME}' });
        break;
      }
      const input = typeof m.input === 'string' ? m.input : undefined;
      dropImage(window.session, { input, name: m.name, bytes: Buffer.from(m.data, 'base64') }).then(
        (done) => {
          page.sendJson({ type: 'dropped', file: m.name, ...done });
          window.tellScene();
          window.schedule();
        },
        (e: Error) => page.sendJson({ type: 'drop-refused', file: m.name, message: e.message }),
      );
      break;
    }
    case 'preview-mode':
      // Preview before publishing, on or off (preview.ts): every page is told.
      window.preview.setMode(m.on === true);
      break;
    case 'publish-preview':
    case 'discard-preview':
      try {
        if (m.type === 'publish-preview') window.preview.publish(Number(m.id));
        else window.preview.discard(Number(m.id));
      } catch (e) {
        page.sendJson({ type: 'error', message: (e as Error).message });
      }
      break;
    case 'step':
      // One frame while paused.
      window.step();
      break;
    case 'stop-recording':
      window.stopRecording().catch((e: Error) => page.sendJson({ type: 'error', message: e.message }));
      break;
    default:
      page.sendJson({ type: 'error', message: `unknown Player message ${JSON.stringify(m.type)}: next, input, show, step, record, stop-recording, drop, preview-mode, publish-preview, discard-preview, or a protocol request with op` });
  }
  window.schedule();
}
