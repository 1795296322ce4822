// `entelechy serve`: the session behind its doors — stdin, and with --listen, TCP, WebSocket and
// MCP over Streamable HTTP (/mcp).

import { listen, parseListen, type Listener } from '../protocol/listen.js';
import { serveStdio, type LineHandler } from '../protocol/transports.js';
import { stdinIsFile } from '../protocol/stdio.js';
import { McpHttp } from '../mcp/http.js';
import { Session, type SessionOptions } from '../main/session.js';
import { checkParamOptions, type ParamOption } from '../main/param-option.js';
import { dispatch } from '../protocol/dispatcher.js';
import { checkInputOptions, InputOptionError, type InputOption } from '../main/input-feed.js';
import { decodeImageFor, storePicture } from '../main/image-input.js';

/**
 * A session's params from --param. A scene that does not check has no params to set: that is said
 * (the session runs, for compose to mend it) and the params are not set.
 */
export async function startParams(session: Session, params: ParamOption[] | undefined, command: string): Promise<void> {
  if (!params?.length) return;
  if (session.refused) {
    process.stderr.write(`${command}: --param ${params.map((p) => p.text).join(' ')}: not set, the scene does not check\n`);
    return;
  }
  // A value change like the protocol's `param` (main/commit.ts): every option checked before any is set.
  await session.commit({
    reason: 'param',
    prepare: (world) => {
      const settings = checkParamOptions(world.scene, params);
      return (engine) => {
        for (const { name, value } of settings) engine.params.set(name, value);
        return [];
      };
    },
  });
}

/**
 * A session's inputs from --input NAME=FILE (serve, mcp, entelechy-player): each image read into
 * its input as `write` with `file` reads it (resized to the field). A session has no frame range,
 * so an image sequence (`in/%04d.png`) is `render --frames`'s alone.
 */
export async function startInputs(session: Session, inputs: InputOption[] | undefined, command: string): Promise<void> {
  if (!inputs?.length) return;
  if (session.refused) {
    process.stderr.write(`${command}: --input ${inputs.map((i) => `${i.name}=${i.file}`).join(' ')}: not read, the scene does not check\n`);
    return;
  }
  checkInputOptions(session.scene, inputs, session.entry);
  for (const i of inputs) {
    if (i.sequence) throw new InputOptionError(`--input ${i.name}=${i.file}: a file per frame is for \`render --frames A:B\`; a session takes one image (it stays until written again)`);
    // A value change like the protocol's `write` with `file` (main/commit.ts): decoded, then stored.
    await session.commit({
      reason: 'write',
      prepare: async (world) => {
        const field = world.engine.fields.input(i.name)!;
        const picture = await decodeImageFor(field, i.name, i.file);
        return (engine) => {
          storePicture(session.memory, field, picture);
          engine.version++;
          return [];
        };
      },
    });
  }
}

/** The handler every door uses: the session answers; `quit` closes the door it came through. */
export function doorHandler(session: Session): LineHandler {
  const handler: LineHandler = async (line, conn) => {
    const answer = await dispatch(session, line, conn);
    let close = false;
    try {
      const req = JSON.parse(line);
      close = req?.op === 'quit' && answer.includes('"ok"');
    } catch {
      // not JSON: the answer says so
    }
    return { answer, close };
  };
  handler.urgent = isCancel;
  handler.farewell = isQuit;
  return handler;
}

/** A short request line whose op is `op`: the doors read these before the session does. */
function isRequest(line: string, op: string): boolean {
  if (line.length > 4096 || !line.includes(op)) return false;
  try {
    return JSON.parse(line)?.op === op;
  } catch {
    return false;
  }
}

/** A `quit` request: the end of input after it is expected (Door.peerClosed). */
export const isQuit = (line: string): boolean => isRequest(line, 'quit');

/** A `cancel` request: the doors answer it out of turn. */
export const isCancel = (line: string): boolean => isRequest(line, 'cancel');

/** A session opened with the command line's `--param`s and `--input`s set; closed again if one is refused. */
export async function openStarted(scenePath: string, options: SessionOptions & { params?: ParamOption[]; inputs?: InputOption[] }, command = 'entelechy'): Promise<Session> {
  const session = await Session.open(scenePath, options);
  try {
    await startParams(session, options.params, command);
    await startInputs(session, options.inputs, command);
  } catch (e) {
    await session.close();
    throw e;
  }
  return session;
}

export async function serve(scenePath: string, options: SessionOptions & { listen?: string; allowedOrigins?: string[]; params?: ParamOption[]; inputs?: InputOption[] }): Promise<void> {
  const address = options.listen !== undefined ? parseListen(options.listen) : undefined; // a bad one fails before the session opens
  const session = await openStarted(scenePath, options);
  const handler = doorHandler(session);
  if (session.refused) process.stderr.write(`entelechy: ${session.refused.message}\n(the session runs; mend the scene with compose)\n`);
  let listener: Listener | undefined;
  // The MCP door over Streamable HTTP at /mcp on the same port (src/mcp/http.ts).
  const mcp = new McpHttp(session, options.allowedOrigins);
  try {
    listener = address ? await listen(address, handler, { allowedOrigins: options.allowedOrigins, http: mcp.handle }) : undefined;
    mcp.bound = listener;
  } catch (e) {
    await session.close();
    throw e;
  }
  // The end of a pipe or terminal is the client going away: what it asked to evaluate stops (the
  // end of a file of requests is not: every request of it is answered).
  await serveStdio(handler, process.stdin, process.stdout, undefined, { endCancels: !stdinIsFile() });
  // stdin ended or quit: without a listener the process ends; with one, a quit on stdin ends it too.
  if (listener) {
    if (!process.stdin.readableEnded) {
      await mcp.close();
      await listener.close();
    } else {
      await new Promise<void>(() => undefined); // serve sockets until killed
    }
  }
  await session.close();
}
