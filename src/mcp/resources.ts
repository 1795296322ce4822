// The scene as MCP resources: each document (`entelechy://doc/scene.esn`, `entelechy://doc/kernels.esn`,
// ...) as the `document` operation answers it, and each output as the PNG `read` answers
// (`entelechy://output/result.png`). Subscribers hear `notifications/resources/updated` when a
// document they subscribed to changes, and every client `list_changed` when the set of documents or
// outputs does.
//
// What changed is found by comparing each document's version before and after: after this door's
// calls that change anything (before their result is sent), when the session tells an event (a
// saved edit published or rejected, by any door's `sync` or the Player), and when the scene's
// folder changes on disk (a compose through another door), once the change running then is done.

import { watch, type FSWatcher } from 'node:fs';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema, type ReadResourceResult, type RequestId, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Session } from '../main/session.js';
import type { Answer } from './server.js';
import { invalidParams } from './errors.js';

export const DOC = 'entelechy://doc/';
export const OUTPUT = 'entelechy://output/';

type Ask = (op: string, fields: Record<string, unknown>) => Promise<Answer>;

/** What a check tells besides documents: the outputs (after an evaluation), and the call it follows. */
export interface Told {
  outputs?: boolean;
  request?: RequestId;
}

interface Seen {
  /** Document resource uri -> its version. */
  docs: Map<string, string>;
  outputs: string[];
}

export class SceneResources {
  private readonly subscribed = new Set<string>();
  private seen: Seen = { docs: new Map(), outputs: [] };
  /** Comparisons run one at a time, in order. */
  private chain: Promise<void>;
  /** A comparison asked for by the disk or an event and not started yet (more such asks join it). */
  private queued = false;
  /**
   * The door's tool call running now, if any: a look the disk or an event asks for meanwhile
   * waits for it, so what the call changed is told by the call's own look, with its answer.
   */
  private calling: Promise<void> = Promise.resolve();
  private watcher?: FSWatcher;
  private observer?: () => void;
  private closed = false;

  constructor(
    private readonly server: McpServer,
    private readonly ask: Ask,
    private readonly session: Promise<Session>,
  ) {
    server.registerResource(
      'document',
      new ResourceTemplate(`${DOC}{+path}`, { list: async () => ({ resources: (await this.documents()).map(([path]) => ({ uri: DOC + path, name: path, mimeType: 'text/plain' })) }) }),
      { title: 'A document of the scene', description: 'The text of a document of the scene, as the running world has it (the `document` tool answers it with its statements).', mimeType: 'text/plain' },
      async (uri, { path }) => this.readDocument(uri.href, String(path)),
    );
    server.registerResource(
      'output',
      new ResourceTemplate(`${OUTPUT}{name}.png`, { list: async () => ({ resources: (await this.outputs()).map((name) => ({ uri: `${OUTPUT}${name}.png`, name: `${name}.png`, mimeType: 'image/png' })) }) }),
      { title: 'An output of the scene', description: 'An output of the last frame as a PNG image (evaluate a frame first; the `read` tool reads part of it, or as f32).', mimeType: 'image/png' },
      async (uri, { name }) => this.readOutput(uri.href, String(name)),
    );
    // McpServer registers list and read; subscriptions are the low-level server's.
    server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      await this.known(request.params.uri);
      this.subscribed.add(request.params.uri);
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      this.subscribed.delete(request.params.uri);
      return {};
    });
    this.chain = session.then(
      async (s) => {
        this.seen = await this.look();
        this.watch(s);
      },
      () => undefined,
    );
  }

  /** The documents of the scene that `document` answers: [path, version]. */
  private async documents(): Promise<[string, string][]> {
    const s = await this.session;
    const paths = [...new Set([s.entry, ...s.texts.keys()])];
    const out: [string, string][] = [];
    for (const path of paths) {
      const a = await this.ask('document', { path });
      if (a.ok) out.push([path, String(a.ok.version)]);
    }
    return out;
  }

  private async outputs(): Promise<string[]> {
    const a = await this.ask('status', {});
    return Array.isArray(a.ok?.outputs) ? (a.ok.outputs as string[]) : [];
  }

  private async look(): Promise<Seen> {
    return { docs: new Map((await this.documents()).map(([path, version]) => [DOC + path, version])), outputs: await this.outputs() };
  }

  /** Refuse a uri that names no document or output of the scene (a subscription to it would hear nothing). */
  private async known(uri: string): Promise<void> {
    if (uri.startsWith(DOC)) {
      const a = await this.ask('document', { path: uri.slice(DOC.length) });
      if (a.error) throw invalidParams(`${String(a.error.message)}; resources/list names the documents`);
    } else if (uri.startsWith(OUTPUT) && uri.endsWith('.png')) {
      const name = uri.slice(OUTPUT.length, -'.png'.length);
      const outputs = await this.outputs();
      if (!outputs.includes(name)) throw invalidParams(`no output \`${name}\`; the outputs: ${outputs.map((o) => `${OUTPUT}${o}.png`).join(', ') || 'none'}`);
    } else {
      throw invalidParams(`\`${uri}\` is not a resource of this server: subscribe to a document (${DOC}PATH) or an output (${OUTPUT}NAME.png); resources/list names them`);
    }
  }

  private async readDocument(uri: string, path: string): Promise<ReadResourceResult> {
    const a = await this.ask('document', { path });
    if (a.error) throw invalidParams(String(a.error.message));
    return { contents: [{ uri, mimeType: 'text/plain', text: String(a.ok.text) }] };
  }

  private async readOutput(uri: string, name: string): Promise<ReadResourceResult> {
    const a = await this.ask('read', { output: name });
    if (a.error) {
      const then = a.error.request ? `; then read it again (call the \`${(a.error.request as { op: string }).op}\` tool first)` : '';
      throw invalidParams(`${String(a.error.message)}${then}`);
    }
    return { contents: [{ uri, mimeType: 'image/png', blob: String(a.ok.data) }] };
  }

  /**
   * Compare the scene with what was last seen and tell what changed: `updated` for subscribed
   * documents whose version moved (and, after an evaluation, subscribed outputs), `list_changed`
   * when documents or outputs came or went.
   */
  check(options: Told = {}): Promise<void> {
    const run = this.chain.then(() => this.compare(options));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Run a tool call of the door (see `calling`). */
  async during<T>(call: () => Promise<T>): Promise<T> {
    let done!: () => void;
    this.calling = new Promise<void>((resolve) => (done = resolve));
    try {
      return await call();
    } finally {
      done();
    }
  }

  /** A check once the door's call and the change the session is making now (if any) are done: for the disk and events. */
  private soon(s: Session): void {
    if (this.queued || this.closed) return;
    this.queued = true;
    void this.calling.then(() => {
      this.chain = this.chain
        .then(async () => {
          this.queued = false;
          await s.change(async () => undefined);
          await this.compare({});
        })
        .catch(() => undefined);
    });
  }

  private async compare(options: Told): Promise<void> {
    if (this.closed) return;
    const now = await this.look();
    const before = this.seen;
    this.seen = now;
    const updated: string[] = [];
    for (const [uri, version] of now.docs) if (before.docs.has(uri) && before.docs.get(uri) !== version) updated.push(uri);
    if (options.outputs) updated.push(...now.outputs.map((name) => `${OUTPUT}${name}.png`));
    for (const uri of updated) if (this.subscribed.has(uri)) await this.tell({ method: 'notifications/resources/updated', params: { uri } }, options.request);
    const listed = (seen: Seen) => [...seen.docs.keys(), ...seen.outputs].join('\n');
    if (listed(now) !== listed(before)) await this.tell({ method: 'notifications/resources/list_changed' }, options.request);
  }

  /**
   * Send a notification; one a tool call caused goes with that call's answer (over Streamable HTTP
   * on its response stream, before the result, so it cannot be lost between streams).
   */
  private async tell(notification: ServerNotification, request?: RequestId): Promise<void> {
    if (!this.server.isConnected()) return;
    try {
      await this.server.server.notification(notification, request !== undefined ? { relatedRequestId: request } : undefined);
    } catch {
      // a client gone: nothing to tell
    }
  }

  private watch(s: Session): void {
    if (this.closed) return;
    this.observer = () => this.soon(s);
    s.pending.observers.add(this.observer);
    try {
      this.watcher = watch(s.folder.root, { recursive: true }, () => this.soon(s));
      this.watcher.on('error', () => undefined);
      this.watcher.unref(); // watching is no reason for a process to stay
    } catch {
      // no watching on this file system: the door's own calls and the session's events still tell
    }
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    void this.session.then((s) => this.observer && s.pending.observers.delete(this.observer), () => undefined);
  }
}
