// The MCP server's stdio transport: newline-delimited JSON-RPC, as the SDK's StdioServerTransport
// frames it, but with the protocol's own line splitter (src/protocol/door.ts) and line limit.
//
// The SDK's transport buffers a message whole by concatenating each chunk onto the last (a copy
// per 64 KB chunk: quadratic in the message's size), and past 10 MiB it throws and closes
// itself: an agent's 11 MB `write` ended the server without a word, exit status 0. Here a line
// past the line limit (16 MiB, docs/protocol.md#limits, as `serve` has it) is skipped to its end
// and answered with JSON-RPC's invalid-request error, which says the limit and what to do; the
// server goes on.

import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { plainSdkError, readMessage } from './messages.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { headMembers, LineSplitter, MAX_LINE_BYTES } from '../protocol/door.js';
import { LimitError, LIMITS } from '../protocol/limits.js';

export class StdioLineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private readonly splitter: LineSplitter;
  private closed = false;
  /** `initialize` has come: MCP's lifecycle begins with it, once a connection. */
  private initialized = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    max = MAX_LINE_BYTES,
  ) {
    this.splitter = new LineSplitter(max, (line) => this.receive(line), (head) => void this.send(oversize(max, head)).catch(() => undefined));
  }

  private readonly onData = (chunk: Buffer) => this.splitter.push(chunk);
  private readonly onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
  }

  private receive(line: string): void {
    const read = readMessage(line);
    if ('refusal' in read) {
      // Not JSON, or not a message: answered here (with its id where it can be read), and told.
      void this.send(read.refusal).catch(() => undefined);
      this.onerror?.(new Error((read.refusal as { error: { message: string } }).error.message));
      return;
    }
    const refused = this.outOfOrder(read.message);
    if (refused) return void this.send(refused).catch(() => undefined);
    this.onmessage?.(read.message);
  }

  /**
   * The refusal of a request out of MCP's lifecycle: any but `ping` before `initialize` (tools
   * were listed and called, and the session's capabilities were never agreed), and a second
   * `initialize`. Notifications before it are dropped, as they cannot be answered.
   */
  private outOfOrder(message: JSONRPCMessage): JSONRPCMessage | undefined {
    const { id, method } = message as { id?: string | number; method?: string };
    if (method === undefined) return undefined; // an answer to a request of the server's
    if (method === 'initialize') {
      if (!this.initialized) return void (this.initialized = true);
      return id === undefined ? undefined : refusal(id, -32600, 'Invalid Request: the session is initialized already (`initialize` comes once a connection): send the other requests, or start another server for a new session');
    }
    if (this.initialized || method === 'ping' || id === undefined) return undefined;
    return refusal(id, -32002, `Server not initialized: send \`initialize\` first, then \`${method}\` (MCP's lifecycle begins with it)`);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(plainSdkError(message)))) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.onclose?.();
  }
}

function refusal(id: string | number, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
}

/** The answer to a line past the limit: JSON-RPC's invalid request, with the limit as `data`, and the id its first bytes hold. */
function oversize(max: number, head: string): JSONRPCMessage {
  const e = new LimitError('line', { ...LIMITS.line, limit: max }, 'is too long (it was skipped up to its end)', 'the message');
  return { jsonrpc: '2.0', id: headMembers(head).id ?? null, error: { code: -32600, message: `Invalid Request: ${e.message}`, data: e.data } } as unknown as JSONRPCMessage;
}
