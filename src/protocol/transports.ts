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
//
// door.ts holds the shared machinery, stdio.ts the stdin door, listen.ts the --listen port.

export * from './door.js';
export * from './stdio.js';
export * from './listen.js';

/** The doors a session is reached through, for `help` (docs/protocol.md, docs/player.md, docs/mcp.md). */
export const DOORS: readonly { name: string; summary: string; open: string }[] = [
  { name: 'stdin', summary: 'protocol lines on standard input, answers on standard output; quit ends the process', open: 'entelechy serve SCENE' },
  { name: 'tcp', summary: 'protocol lines over TCP on the --listen port (loopback by default); quit closes the connection', open: 'entelechy serve SCENE --listen 127.0.0.1:7788' },
  { name: 'websocket', summary: 'one protocol line per WebSocket message on the same port (by HTTP upgrade); pages of other origins need --allow-origin', open: 'entelechy serve SCENE --listen 127.0.0.1:7788' },
  { name: 'in-process', summary: 'dispatch(session, line) from JavaScript in the same process', open: "import { Session, dispatch } from 'entelechy'" },
  { name: 'mcp', summary: 'the operations as Model Context Protocol tools on stdio', open: 'entelechy mcp SCENE' },
  { name: 'window', summary: "the Player: a browser page showing an output live, with the params as sliders and the pointer and keys as the kernels' input; evaluate then answers the window's frames", open: 'entelechy-player SCENE (then open the printed URL)' },
];