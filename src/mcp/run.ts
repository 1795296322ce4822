// `entelechy mcp <scene>`: a session behind the MCP door, over stdio. The process ends when the
// client closes stdin (how MCP clients stop a stdio server), once the requests it sent before are
// answered, or after a `quit` tool call.

import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { StdioLineTransport } from './stdio.js';
import type { Session } from '../main/session.js';
import { McpDoor } from './server.js';
import type { InputOption } from '../main/input-feed.js';
import type { ParamOption } from '../main/param-option.js';
import { UserError } from '../main/user-error.js';
import { sceneEntryProblem } from '../main/documents.js';

export interface McpOptions {
  /** --grant and --deny, checked as `serve` checks them. */
  grant?: string[];
  deny?: string[];
  workers?: number;
  memory?: number;
  /** Milliseconds an optimised compile may take (--optimise-budget). */
  optimiseBudget?: number;
  /** --param NAME=VALUE, read; checked against the scene once it opens. */
  params?: ParamOption[];
  /** --input NAME=FILE: images read into inputs at the start. */
  inputs?: InputOption[];
}

/** A mistake in the command: cli.ts shows a UserError as a message, not a stack trace. */
class CommandError extends UserError {
  override name = 'UserError';
}

/**
 * The session, opened after the server is connected: the engine's modules take seconds to load
 * on a busy machine, and clients time `initialize` out. Grants are checked here too (a bad one
 * ends the server with its message, as it would have before connecting).
 */
async function openSession(scenePath: string, options: McpOptions): Promise<Session> {
  const { sessionGrants } = await import('../cli/tools.js');
  const { openStarted } = await import('../cli/serve.js');
  return openStarted(scenePath, { grants: sessionGrants(options.grant, options.deny), workers: options.workers, memory: options.memory, optimiseBudget: options.optimiseBudget, params: options.params, inputs: options.inputs });
}

/**
 * A --param the scene refuses, told before the handshake as the other mistakes in the command are
 * (the server answered `initialize`, then ended). Only the scene's text is checked here, which is
 * quick; a scene that does not check opens refused, and its session says the params were not set.
 */
async function refuseParamsAhead(scenePath: string, params: ParamOption[]): Promise<void> {
  if (!existsSync(scenePath)) return;
  const { loadSceneFile } = await import('../cli/cli.js');
  const { checkParamOptions } = await import('../main/param-option.js');
  const { scene } = loadSceneFile(scenePath);
  if (scene.diagnostics.length === 0) checkParamOptions(scene, params);
}

/**
 * stdout carries the JSON-RPC stream and nothing else: a stray line there (a console.log, a
 * worker's output, a library's warning) would break the client's framing. The transport gets
 * its own channel to the real stdout; whatever else writes to process.stdout goes to stderr.
 */
function claimStdout(): Writable {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout);
  const channel = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      write(chunk, (err) => callback(err ?? null));
    },
  });
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  return channel;
}

export async function mcp(scenePath: string, options: McpOptions = {}): Promise<void> {
  // Like `serve`, a scene file that is not there yet opens a refused session (compose can write
  // it); a folder that is not there is a mistake in the command.
  if (!existsSync(dirname(resolve(scenePath)))) throw new CommandError(`cannot open \`${scenePath}\`: no such folder`);
  // A folder or a file that is no scene (a photograph) is told before the handshake: after it, the
  // client saw a good `initialize` and then a server that had ended.
  const problem = sceneEntryProblem(scenePath);
  if (problem) throw new CommandError(problem);
  // A mistake in the options is told before the client is answered at all (it got `initialize`'s
  // answer, then the server ended); the scene's own mistakes need the scene, and come later.
  const { sessionGrants } = await import('../cli/tools.js');
  sessionGrants(options.grant, options.deny);
  if (options.params?.length) await refuseParamsAhead(scenePath, options.params);
  const channel = claimStdout();
  // The server answers the client's `initialize` while the scene compiles.
  const opening = openSession(scenePath, options);
  opening.catch(() => undefined); // awaited below, after connecting: not an unhandled rejection meanwhile
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  const door = new McpDoor(opening, { onQuit: () => end() });
  const transport = new StdioLineTransport(process.stdin, channel);
  transport.onclose = () => end();
  // The SDK's transport does not watch for the end of stdin; a client that closes it is done
  // asking, and gets the answers to what it asked before (`printf ... | entelechy mcp` did not).
  let answered = () => Promise.resolve();
  const inputEnded = () => void answered().then(end);
  process.stdin.once('end', inputEnded);
  process.stdin.once('close', inputEnded);
  // A client that went away (EPIPE) ends the server; nothing more can be said to it.
  channel.on('error', () => end());
  process.stdout.on('error', () => end());
  await door.server.connect(transport);
  answered = watchRequests(transport);
  let session: Session;
  try {
    session = await opening;
  } catch (e) {
    door.close();
    await door.server.close();
    throw e;
  }
  if (session.refused) process.stderr.write(`entelechy: ${session.refused.message}\n(the session runs; mend the scene with compose)\n`);
  await ended;
  door.close();
  await door.server.close();
  await session.close();
}

/**
 * After the server has connected: a wait for the JSON-RPC requests it has not answered yet (called
 * when the input ends). A line that is not a JSON-RPC message the transport answers itself (messages.ts).
 */
function watchRequests(transport: StdioLineTransport): () => Promise<void> {
  // By id: a call the client cancelled (notifications/cancelled) is answered by no one.
  const pending = new Set<unknown>();
  let idle: (() => void) | undefined;
  const settled = (id: unknown) => {
    if (pending.delete(id) && pending.size === 0) idle?.();
  };
  const received = transport.onmessage!;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) pending.add(message.id);
    if ('method' in message && message.method === 'notifications/cancelled') settled((message.params as { requestId?: unknown } | undefined)?.requestId);
    received(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(message);
    if (('result' in message || 'error' in message) && message.id !== null) settled(message.id);
  };
  return () => (pending.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve)));
}
