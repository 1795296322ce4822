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
    this.onmessage?.(read.message);
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

/** The answer to a line past the limit: JSON-RPC's invalid request, with the limit as `data`, and the id its first bytes hold. */
function oversize(max: number, head: string): JSONRPCMessage {
  const e = new LimitError('line', { ...LIMITS.line, limit: max }, 'is too long (it was skipped up to its end)', 'the message');
  return { jsonrpc: '2.0', id: headMembers(head).id ?? null, error: { code: -32600, message: `Invalid Request: ${e.message}`, data: e.data } } as unknown as JSONRPCMessage;
}
