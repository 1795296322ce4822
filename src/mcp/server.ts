// The MCP door: the session's operations as Model Context Protocol tools, its documents and outputs
// as resources, and prompts for the common workflows, on the SDK's McpServer. Each tool call
// becomes one protocol request line through `dispatch` (src/protocol/dispatcher.ts), the path every
// other door takes, so a tool answers what the operation answers and fails as it fails (same message, same data).
// What this module adds is presentation: the answer as text and structured content, errors as
// tool errors a model can act on, and the pictures `read` and `evaluate` make as image content.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { Protocol, type RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, RequestId, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Session } from '../main/session.js';
import { VERSIONS } from '../protocol/handlers/inspect.js';
import { plainReason, unknownField } from '../protocol/envelope.js';
import { operation } from '../protocol/operations.js';
import { tools } from './schema.js';
import { SceneResources } from './resources.js';
import { registerPrompts } from './prompts.js';
import { invalidParams } from './errors.js';
import { dispatch } from '../protocol/dispatcher.js';
import { closest } from '../ir/suggest.js';

type Json = Record<string, unknown>;
type Content = CallToolResult['content'][number];
type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** `tools/call` with its params as they came: the door checks them itself (toolCall). */
const ToolCallSchema = z.object({ method: z.literal('tools/call'), params: z.unknown() });


/** One protocol answer: `ok` or `error`, as the envelope writes them. */
export type Answer = { ok: Json; error?: undefined } | { error: Json; ok?: undefined };

export interface McpDoorOptions {
  /**
   * The largest output (in pixels) `evaluate` attaches as an image on its own; a larger one is
   * named in the text instead (read it, or part of it with `region`). `read` always answers the
   * picture it was asked for.
   */
  maxImagePixels?: number;
  /** Called after `quit` was answered: the host ends the server. */
  onQuit?: () => void;
  /** The largest result (bytes of its JSON) a call answers: past it, a tool error saying how to ask for less. */
  maxResultBytes?: number;
}

export const MAX_IMAGE_PIXELS = 1024 * 1024;

/**
 * The largest result a call answers. Clients cap a message: the SDK's stdio client takes at most
 * 10 MiB, and past it closes the connection and ends the server, the session lost with it (a
 * 512 x 512 read as f32 did that).
 */
export const MAX_RESULT_BYTES = 8 << 20;

/** f32 data past this many bytes of base64 stays out of the text (a model would read it all): it is in the structured content. */
const F32_IN_TEXT = 64 << 10;

export class McpDoor {
  readonly server: McpServer;
  readonly resources: SceneResources;
  private readonly maxImagePixels: number;
  private readonly maxResultBytes: number;
  /** Tool calls run one at a time, in order, as the requests of one connection of any door. */
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 0;
  /** `quit` was called: the calls after it are refused. */
  private quitting = false;
  private static connections = 0;
  private readonly conn = { kind: 'mcp', id: ++McpDoor.connections };

  /**
   * `session` may still be opening: the server answers `initialize` and the lists at once (the
   * tools come from the table), and calls wait for the session.
   */
  constructor(
    private readonly session: Session | Promise<Session>,
    private readonly options: McpDoorOptions = {},
  ) {
    this.maxImagePixels = options.maxImagePixels ?? MAX_IMAGE_PIXELS;
    this.maxResultBytes = options.maxResultBytes ?? MAX_RESULT_BYTES;
    this.server = new McpServer(
      { name: 'entelechy', title: 'Entelechy', version: VERSIONS.entelechy },
      { capabilities: { tools: {}, resources: { subscribe: true }, prompts: {}, logging: {} }, instructions: INSTRUCTIONS },
    );
    for (const tool of tools()) {
      const { name, ...config } = tool;
      // `cancel` is answered at once, out of turn, as on every door: queued, it waited for the
      // evaluation it was sent to stop.
      const run = name === 'cancel' ? <T>(f: () => Promise<T>) => f() : <T>(f: () => Promise<T>) => this.serialised(f);
      // An evaluation waiting its turn can be cancelled too, as on every door (`waiting`).
      const cancellable = operation(name)?.fields.some((f) => f.name === 'deadline') ?? false;
      const handler = (args: Json, extra: CallExtra): Promise<CallToolResult> => {
        // notifications/cancelled for this call: its evaluation is stopped, as `cancel` would.
        // (One still waiting is marked, and answers nothing when its turn comes.)
        extra.signal.addEventListener('abort', () => void this.cancelCall(extra.requestId), { once: true });
        if (cancellable) this.waiting.set(extra.requestId, { cancelled: false });
        const arrived = performance.now(); // a deadline counts the wait behind the calls before it
        return run(async () => {
          const waited = this.waiting.get(extra.requestId);
          this.waiting.delete(extra.requestId);
          if (waited?.cancelled || (cancellable && extra.signal.aborted)) return toolError(CANCELLED_WAITING);
          try {
            return await this.resources.during(() => this.call(name, args, extra.requestId, arrived));
          } catch (e) {
            // The session answers its own failures; this is the door's (or a session that did not open).
            return toolError({ message: `internal error in \`${name}\`: ${plainReason(e)}`, internal: true });
          }
        });
      };
      this.handlers.set(name, handler);
      this.server.registerTool(name, config, handler); // listed from the table's schemas
    }
    // Calls are answered by the door itself, not the SDK's handler: that one refused arguments
    // its schema does not fit in its own words, with no structured content, and malformed params
    // with zod's dump as an internal error. Arguments go to the session as they came, where the
    // protocol refuses them as it refuses the same request on any door (the schemas say the same:
    // schema.ts), as a tool error with the error's members.
    // (Protocol's own setRequestHandler: the Server's wraps tools/call in a check that refuses
    // malformed params with zod's dump, before the door could say what is wrong.)
    Protocol.prototype.setRequestHandler.call(this.server.server, ToolCallSchema, (request, extra) => this.toolCall(request.params, extra));
    this.resources = new SceneResources(this.server, (op, fields) => this.ask(op, fields), Promise.resolve(session));
    registerPrompts(this.server, (op, fields) => this.ask(op, fields));
  }

  private serialised<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Each tool's handler, by name: what `tools/call` runs. */
  private readonly handlers = new Map<string, (args: Json, extra: CallExtra) => Promise<CallToolResult>>();

  /** A `tools/call` request: its tool's handler, or a clear refusal of what it names or sends. */
  private async toolCall(params: unknown, extra: CallExtra): Promise<CallToolResult> {
    const { name, arguments: args } = (params ?? {}) as Json;
    if (typeof name !== 'string') throw invalidParams('tools/call needs `name`, the name of a tool (a string; tools/list names them all), and `arguments`, an object of its fields');
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
      throw invalidParams(`the arguments of \`${name}\` must be an object of its fields (got ${Array.isArray(args) ? 'an array' : JSON.stringify(args)}); {} for none`);
    }
    const handler = this.handlers.get(name);
    // A tool that is not there: the nearest name, in a tool's words (the protocol's said "unknown op").
    if (!handler) {
      const near = closest(name, this.handlers.keys());
      return toolError({ message: `no tool \`${name}\`${near ? ` (did you mean \`${near}\`?)` : ''}; tools/list names them all: ${[...this.handlers.keys()].join(', ')}`, tools: [...this.handlers.keys()] });
    }
    // The request line's own members are not arguments: `id` would be taken for the line's.
    const envelope = ['id', 'op'].find((key) => Object.hasOwn((args as Json) ?? {}, key));
    if (envelope) {
      const refused = unknownField(operation(name)!, envelope);
      return toolError({ message: refused.message, ...refused.data });
    }
    return handler((args as Json) ?? {}, extra);
  }

  /** The calls of evaluations still waiting their turn, by JSON-RPC id: `cancel` marks them, and they answer that they were cancelled. */
  private readonly waiting = new Map<RequestId, { cancelled: boolean }>();

  /** Mark the waiting evaluations cancelled (only the call `request`, when given); returns how many. */
  private cancelWaiting(request?: RequestId): number {
    let n = 0;
    for (const [id, call] of this.waiting) {
      if ((request !== undefined && id !== request) || call.cancelled) continue;
      call.cancelled = true;
      n++;
    }
    return n;
  }

  /** The protocol request id of each tool call at work, by its JSON-RPC id: what `cancel` names. */
  private readonly calls = new Map<RequestId, number>();

  /** One protocol request through the session, its answer parsed; `call`: the tool call it serves (cancel finds it by that). */
  async ask(op: string, fields: Json, call?: RequestId, arrived?: number): Promise<Answer> {
    const id = ++this.nextId;
    if (call !== undefined) this.calls.set(call, id);
    try {
      const session = await this.session;
      const answer = JSON.parse(await dispatch(session, JSON.stringify({ ...fields, id, op }), { ...this.conn, arrived })) as Json;
      return answer.error !== undefined ? { error: answer.error as Json } : { ok: answer.ok as Json };
    } finally {
      if (this.calls.get(call!) === id) this.calls.delete(call!);
    }
  }

  /** Stop the evaluation of a tool call the client cancelled (notifications/cancelled). */
  private async cancelCall(call: RequestId): Promise<void> {
    const waiting = this.waiting.get(call);
    if (waiting) return void (waiting.cancelled = true);
    const id = this.calls.get(call);
    if (id !== undefined) await this.ask('cancel', { request: id }).catch(() => undefined);
  }

  /** A tool call (its arguments checked by its schema): the operation of that name, answered as MCP content. */
  async call(name: string, args: Json, request?: RequestId, arrived?: number): Promise<CallToolResult> {
    // Calls queued behind `quit` (a client that wrote its requests at once) were still run.
    if (this.quitting) return toolError({ message: `the server is ending: \`quit\` came before this call, and nothing after it runs` });
    if (name === 'quit') this.quitting = true;
    // `cancel` names a call by its JSON-RPC id, which the session knows by the request it made.
    const fields = name === 'cancel' && args.request !== undefined ? { ...args, request: this.calls.get(args.request as RequestId) ?? args.request } : args;
    const queued = name === 'cancel' ? this.cancelWaiting(args.request as RequestId | undefined) : 0;
    const answer = await this.ask(name, fields, request, arrived);
    if (answer.error) return toolError(answer.error);
    const ok = queued ? { ...answer.ok, cancelled: Number(answer.ok.cancelled) + queued } : answer.ok;
    await this.log(ok.events);
    let result: CallToolResult;
    if (name === 'read') result = this.readResult(ok);
    else if (name === 'evaluate' && args.thumbnail !== undefined) result = picturesResult(ok);
    else if (name === 'evaluate') result = await this.evaluateResult(ok, Array.isArray(args.outputs) && args.outputs.length > 0);
    else if (ok.evaluation !== undefined) result = picturesResult(ok);
    else result = okResult(ok);
    const bytes = Buffer.byteLength(JSON.stringify(result));
    if (bytes > this.maxResultBytes) result = this.tooLarge(name, bytes, ok);
    // What the call changed, told to subscribers before its result (so a client reads them in order).
    if (operation(name)?.effect !== 'read') await this.resources.check({ outputs: name === 'evaluate', request });
    if (name === 'quit') setImmediate(() => this.options.onQuit?.());
    return result;
  }

  /**
   * The events of an answer, also as MCP log messages (logger `entelechy`), for clients that show
   * a server's log: they are sent before the result, so a log reads in order. The answer keeps
   * them too; a client that set a level (logging/setLevel) gets only those at or above it.
   */
  private async log(events: unknown): Promise<void> {
    if (!Array.isArray(events)) return;
    for (const event of events as Json[]) {
      try {
        await this.server.sendLoggingMessage({ level: EVENT_LEVELS[String(event.kind)] ?? 'info', logger: 'entelechy', data: event });
      } catch {
        // a client gone mid-answer: the answer fails on its own
      }
    }
  }

  /**
   * The answer of a call whose result would pass maxResultBytes, as a tool error: what was made
   * stands (a change was made, a frame ran), only the result is not sent; how to ask for less.
   */
  private tooLarge(name: string, bytes: number, ok: Json): CallToolResult {
    const limit = this.maxResultBytes;
    const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
    let how = 'ask for less';
    if (name === 'read') {
      // Bytes an element took (base64 of 4-byte floats, or of a PNG, which compresses by no rule): the square that fits.
      const elements = Number(ok.width) * Number(ok.height) * Number(ok.depth ?? 1);
      const side = Math.floor(Math.sqrt((limit / bytes) * elements));
      how = `read part of it with \`region\` (about ${side} x ${side}${ok.depth !== undefined ? ' of one slice' : ''} fits)${ok.format === 'png' ? ', or write the PNG to a `file` under the scene\'s folder (the answer then carries no picture)' : ''}`;
    } else if (name === 'evaluate' || name === 'compose') {
      how = 'leave the pictures out (`evaluate` without `outputs`; a dry run without full pictures), then `read` each with `region`, or to a `file`';
    }
    return toolError({
      message: `the answer of \`${name}\` would be ${mb(bytes)}, more than the ${mb(limit)} an MCP client takes in one message (the SDK's stdio client closes the connection past 10 MiB): ${how}. ${operation(name)?.effect === 'read' ? 'Nothing changed.' : 'What it did stands; only its answer was not sent.'}`,
      bytes,
      limit,
    });
  }

  /** `read`: the PNG as an image, the rest as text; raw f32 in the text only when small (all of it is in the structured content). */
  private readResult(ok: Json): CallToolResult {
    if (ok.format === 'f32' && typeof ok.data === 'string' && ok.data.length > F32_IN_TEXT) {
      const { data, ...rest } = ok;
      return { content: [{ type: 'text', text: `${JSON.stringify(rest)}\n(the ${data.length} characters of base64 data, little-endian f32 values as \`read\` describes them, are in the structured content's \`data\`)` }], structuredContent: ok };
    }
    if (ok.format !== 'png' || typeof ok.data !== 'string') return okResult(ok);
    // The base64 is the image; in the text it would only cost the model's context.
    const { data, ...rest } = ok;
    return { content: [{ type: 'text', text: `${JSON.stringify(rest)}\n(the PNG is the image content of this result)` }, png(data)], structuredContent: rest };
  }

  /** `evaluate`: the report, then the picture of each output asked for (by default the first). */
  private async evaluateResult(ok: Json, asked: boolean): Promise<CallToolResult> {
    const result = okResult(ok);
    const outputs = Array.isArray(ok.outputs) ? (ok.outputs as Json[]) : [];
    // The report names the outputs asked for; with none asked for it names them all, and one
    // picture is enough to see what was made.
    const shown = asked ? outputs : outputs.slice(0, 1);
    // The pictures that fit one answer (tooLarge); the others are named, to read on their own.
    let room = this.maxResultBytes - Buffer.byteLength(JSON.stringify(result)) - 1024;
    for (const o of shown) {
      const name = String(o.name);
      // (A 3-D output has no picture: `read` says so, and what to do instead, below.)
      const pixels = Number(o.width) * Number(o.height);
      if (o.depth === undefined && !(pixels <= this.maxImagePixels)) {
        result.content.push({ type: 'text', text: `output \`${name}\` (${o.width} x ${o.height}) is larger than ${this.maxImagePixels} pixels: no image attached; \`read\` it, or part of it with \`region\`` });
        continue;
      }
      const read = await this.ask('read', { output: name });
      if (read.error) {
        result.content.push({ type: 'text', text: `output \`${name}\`: no image: ${String(read.error.message)}` });
        continue;
      }
      const data = String(read.ok.data);
      if (data.length > room) {
        result.content.push({ type: 'text', text: `output \`${name}\` (${read.ok.width} x ${read.ok.height}): no image attached: its ${(data.length / 2 ** 20).toFixed(1)} MiB of PNG would take this answer past what an MCP client takes in one message; \`read\` it on its own, or part of it with \`region\`` });
        continue;
      }
      room -= data.length + 200;
      result.content.push({ type: 'text', text: `output \`${name}\`, frame ${read.ok.frame} (${read.ok.width} x ${read.ok.height}):` }, png(data));
    }
    return result;
  }

  /** Stop watching the scene (the server is closed by its host); its calls' evaluations stop (`closed`, `why`). */
  close(why = 'the MCP session that asked for it ended'): void {
    this.resources.close();
    this.stopEvaluations(why);
  }

  /** Stop the evaluations this door's calls run: their client went away. */
  stopEvaluations(why: string): void {
    void Promise.resolve(this.session).then((s) => s.evaluations.closeConnection(this.conn.id, why), () => undefined);
  }
}

/** How loud each event is in a client's log (an event not named here is info). */
const EVENT_LEVELS: Record<string, 'debug' | 'info' | 'notice' | 'warning'> = {
  rejected: 'warning', scene_rejected: 'warning', write_refused: 'warning', state_reset: 'warning',
  large: 'notice', idle: 'debug', unrun: 'debug',
};

function png(data: string): Content {
  return { type: 'image', data, mimeType: 'image/png' };
}

/**
 * An answer carrying pictures (a dry run's `evaluation`: thumbnails, full PNGs, diff pictures;
 * `evaluate` with `thumbnail`): each picture as image content after a line naming it, and in the
 * text and structured content only its size and `"image": N` (its place among the images), so
 * the base64 does not cost the model's context twice.
 */
export function picturesResult(ok: Json): CallToolResult {
  const images: Content[] = [];
  const walk = (v: unknown, where: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, where));
    if (!v || typeof v !== 'object') return v;
    const o = v as Json;
    // A state's values (`evaluate.values`: floats, format f32) are numbers the agent asked for, not a picture.
    if (typeof o.data === 'string' && typeof o.width === 'number' && typeof o.height === 'number' && o.format !== 'f32') {
      images.push({ type: 'text', text: `${where} (${o.width} x ${o.height}):` }, png(o.data));
      return { width: o.width, height: o.height, image: images.length / 2 };
    }
    const name = typeof o.name === 'string' ? `output \`${o.name}\`` : typeof o.node === 'string' && typeof o.port === 'string' ? `state \`${o.node}.${o.port}\` after the change` : where;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, walk(x, PICTURE_NAMES[k] ? `${name}: ${PICTURE_NAMES[k]}` : k === 'diff' ? `${name}, diff` : name)]));
  };
  const stripped = walk(ok, 'picture') as Json;
  const note = images.length ? `\n(${images.length / 2} picture${images.length > 2 ? 's' : ''} follow as image content, numbered by "image")` : '';
  return { content: [{ type: 'text', text: JSON.stringify(stripped) + note }, ...images], structuredContent: stripped };
}

/** What each picture member of an answer shows. */
const PICTURE_NAMES: Record<string, string> = { thumbnail: 'thumbnail', png: 'full picture', image: 'where it changed (black: unchanged)' };

function okResult(ok: Json): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(ok) }], structuredContent: ok };
}

/**
 * A failed operation as a tool error: the message and the fix or request first (what a model acts on), then
 * the whole error object as JSON (node, line, column, fields...), also as structured content.
 */
export function toolError(error: Json): CallToolResult {
  const lines = [String(error.message)];
  // Every diagnostic, a line each: the message names the first and "(and N more)".
  const diagnostics = Array.isArray(error.diagnostics) ? (error.diagnostics as Json[]) : [];
  if (diagnostics.length > 1) lines.push(...diagnostics.map((d) => `${d.path}:${d.line}:${d.column}: ${d.message}`));
  if (error.fix !== undefined) lines.push(`fix: ${JSON.stringify(error.fix)}`);
  if (error.request !== undefined) lines.push(`request: ${JSON.stringify(error.request)}`);
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }, { type: 'text', text: JSON.stringify({ error }) }],
    structuredContent: { error },
  };
}

/** The answer of an evaluation cancelled while it waited its turn (the protocol's cancelled error, and nothing ran). */
const CANCELLED_WAITING: Json = {
  message: 'cancelled: a `cancel` (or notifications/cancelled) came while it waited for the calls before it; it never ran, so nothing changed',
  cancelled: true,
  reason: 'cancel',
};

/** What the server tells the client about itself when it connects. */
const INSTRUCTIONS = [
  'Entelechy: a live engine for 2-D/3-D fields computed by kernels compiled to WebAssembly. This server runs one session on a scene: its documents on disk and the running world.',
  'Start with `status` (a scene that does not check shows in `refused`: mend it with `compose`) and `graph`; `help` describes any operation, type, builtin, grant or event. `compose` changes the scene\'s documents (checked and compiled before anything is written); `evaluate` runs a frame and shows the first output; `read` returns an output as a PNG image.',
  'Resources: the scene\'s documents (entelechy://doc/scene.esn, ...; subscribe to hear when they change) and its outputs as PNG images (entelechy://output/NAME.png). Prompts: inspect-scene, change-look, write-replay-test.',
  'A failed call is a tool error: the message and, where there is one, a `fix` (often an edit to hand back to `compose`), then the error as JSON (line, column, node, fields).',
].join('\n');
