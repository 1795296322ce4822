// A real `entelechy serve SCENE --listen 127.0.0.1:0` process for the tests that talk to it over
// stdin and TCP: started, its port read from its "listening on" line, ended at the test's teardown.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from './helpers.js';
import { Lines } from './fixtures.js';

export interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface ListeningServe {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** What the process has written to stderr so far. */
  stderr(): string;
  /** End the process (idempotent); resolves once it has exited. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  /** More command-line arguments (after `--workers 1 --listen 127.0.0.1:0`). */
  args?: string[];
  /** Read and drop stdout, for tests that talk over TCP only (a full pipe would stall the server). */
  drainStdout?: boolean;
  startTimeout?: number;
}

export async function serveListening(t: Teardown, scene: string, options: ServeOptions = {}): Promise<ListeningServe> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', scene, '--workers', '1', '--listen', '127.0.0.1:0', ...(options.args ?? [])], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (options.drainStdout) child.stdout.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT'); // in case a test stopped it
      child.kill();
    }
    await exited;
  };
  t.teardown(stop);
  let err = '';
  const startTimeout = options.startTimeout ?? 120000;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not listen within ${startTimeout} ms: ${err}`)), startTimeout);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on \S+:(\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${child.exitCode}) before listening: ${err}`));
    });
  });
  return { child, port, stderr: () => err, stop };
}

/** One request and its answer, parsed. */
export type Ask = (req: Record<string, unknown>) => Promise<{ ok?: any; error?: any }>;

/** `entelechy serve` on DIR/scene.esn, asked through its stdin and through one TCP connection (closed at teardown). */
export async function serveDoors(t: Teardown, dir: string): Promise<{ stdin: Ask; tcp: Ask; port: number }> {
  const { child, port } = await serveListening(t, join(dir, 'scene.esn'));
  const asker = (send: (line: string) => void, lines: Lines): Ask => async (req) => {
    send(JSON.stringify(req));
    return JSON.parse((await lines.next())!);
  };
  const stdout = new Lines(child.stdout);
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  t.teardown(() => {
    socket.destroy();
  });
  return { stdin: asker((l) => child.stdin.write(l + '\n'), stdout), tcp: asker((l) => socket.write(l + '\n'), new Lines(socket)), port };
}

/** `entelechy mcp SCENE --workers 1` over stdio, asked as the other doors are (a tool per operation). */
export async function mcpDoor(t: Teardown, scene: string): Promise<{ ask: Ask; client: Client }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, 'bin', 'entelechy.js'), 'mcp', scene, '--workers', '1'], cwd: ROOT, stderr: 'pipe' });
  const client = new Client({ name: 'entelechy-test', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  const ask: Ask = async ({ op, ...args }) => {
    const r = (await client.callTool({ name: String(op), arguments: args })) as any;
    return r.isError ? { error: r.structuredContent?.error ?? r.content } : { ok: r.structuredContent };
  };
  return { ask, client };
}
