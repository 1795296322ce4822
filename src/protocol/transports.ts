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
