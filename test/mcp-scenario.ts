// What an MCP client does with the door, the same over every transport (test/mcp.test.ts drives it
// over stdio, test/mcp-http.test.ts over Streamable HTTP): list the tools with their schemas and
// annotations, call tools that answer and that fail, read the scene's resources and hear them
// change after a compose and an evaluation, list and get the prompts.

import type { Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OPERATIONS, OPERATION_NAMES } from '../src/protocol/operations.js';

export type Result = CallToolResult & { structuredContent?: any };

export const texts = (r: Result): string[] => r.content.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text);
export const images = (r: Result) => r.content.filter((c) => c.type === 'image') as { type: 'image'; data: string; mimeType: string }[];

/** The first call waits for the scene to compile: on a busy machine past the SDK's 60 s default. */
export const SLOW = { timeout: 600_000 };

/** The resource notifications a client receives. */
export class Heard {
  private readonly seen: { method: string; uri?: string }[] = [];

  constructor(client: Client) {
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => this.push({ method: n.method, uri: n.params.uri }));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => this.push({ method: n.method }));
  }

  private push(n: { method: string; uri?: string }): void {
    this.seen.push(n);
  }

  count(method: string, uri?: string): number {
    return this.seen.filter((n) => n.method === method && (uri === undefined || n.uri === uri)).length;
  }
}

/** Drive `client` (connected, on a copy of examples/rings in `dir`) through the door. */
export async function mcpScenario(t: Test, client: Client, dir: string): Promise<void> {
  const heard = new Heard(client);
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, SLOW)) as Result;

  await t.test('tools/list: the table\'s operations, schemas and annotations', async (t) => {
    const { tools } = await client.listTools();
    t.same(tools.map((x) => x.name), OPERATION_NAMES, 'one tool per operation, in the table\'s order');
    for (const op of OPERATIONS) {
      const tool = tools.find((x) => x.name === op.name)!;
      t.same(Object.keys(tool.inputSchema.properties ?? {}), op.fields.map((f) => f.name), `${op.name}: a property per field`);
      t.same(tool.inputSchema.required ?? [], op.fields.filter((f) => f.required).map((f) => f.name), `${op.name}: the required fields`);
      t.same(Object.keys(tool.outputSchema?.properties ?? {}), Object.keys(op.returns), `${op.name}: an output schema of what it returns`);
      t.same(
        [tool.annotations?.readOnlyHint, tool.annotations?.destructiveHint, tool.annotations?.idempotentHint],
        [op.effect === 'read', op.effect === 'destroy', op.idempotent],
        `${op.name}: annotations from the table`,
      );
    }
    const hint = (name: string) => tools.find((x) => x.name === name)!.annotations!;
    for (const name of ['reset', 'restore', 'retire']) t.equal(hint(name).destructiveHint, true, `${name} is destructive`);
    for (const name of ['status', 'graph', 'document', 'read']) t.equal(hint(name).readOnlyHint, true, `${name} is read-only`);
    t.equal(hint('compose').readOnlyHint, false);
    t.equal(hint('param').idempotentHint, true);
    t.equal((tools.find((x) => x.name === 'param')!.inputSchema.properties!.value as { description?: string }).description, 'a number, or numbers for a vector', 'a field\'s meaning describes it');
  });

  await t.test('a tool that answers: structured content and the same as text', async (t) => {
    const r = await call('status');
    t.notOk(r.isError);
    t.equal(r.structuredContent.scene, 'scene.esn');
    t.equal(r.structuredContent.loaded, true);
    t.same(JSON.parse(texts(r)[0]!), r.structuredContent);
  });

  await t.test('tools that fail: the schema\'s refusal in the protocol\'s words, an operation\'s error with its fix', async (t) => {
    const type = await call('read', { format: 3 });
    t.equal(type.isError, true);
    t.match(texts(type)[0], /`format` of `read` must be a string: png \(default\) or f32/);
    const missing = await call('kernel', {});
    t.match(texts(missing)[0], /`kernel` needs `kernel` \(a string\)/);
    const extra = await call('status', { frame: 1 });
    t.match(texts(extra)[0], /`status` takes no field `frame`/);
    const bad = await call('compose', { edits: [{ node: 'tint', member: 'warmth', text: 'warmth = warmt;' }] });
    t.equal(bad.isError, true);
    t.same(bad.structuredContent.error.fix, { node: 'tint', member: 'warmth', text: 'warmth = warmth;' });
    t.match(texts(bad)[0], /nothing was written[^\n]*\nfix: /);
  });

  await t.test('resources: documents and outputs, read, and told when they change', async (t) => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    t.same(uris, ['entelechy://doc/scene.esn', 'entelechy://doc/kernels.esn', 'entelechy://output/result.png'], 'the documents and the output');
    const doc = await client.readResource({ uri: 'entelechy://doc/scene.esn' });
    t.equal((doc.contents[0] as { text: string }).text, readFileSync(join(dir, 'scene.esn'), 'utf8'), 'the scene\'s text');

    await client.subscribeResource({ uri: 'entelechy://doc/scene.esn' });
    const composed = await call('compose', { edits: [{ node: 'rings', member: 'count', text: 'count = 3.0;' }] });
    t.notOk(composed.isError, texts(composed)[0]);
    // A change a call makes is told before its result: no waiting here.
    t.equal(heard.count('notifications/resources/updated', 'entelechy://doc/scene.esn'), 1, 'the subscribed document is told it changed, before the result');
    t.equal(heard.count('notifications/resources/updated', 'entelechy://doc/kernels.esn'), 0, 'a document that did not change is not told');
    const after = await client.readResource({ uri: 'entelechy://doc/scene.esn' });
    t.match((after.contents[0] as { text: string }).text, /count = 3\.0;/, 'the resource reads the new text');

    const lists = heard.count('notifications/resources/list_changed');
    const added = await call('compose', { edits: [{ output: 'extra', text: 'output extra <- rings.result;' }] });
    t.notOk(added.isError, texts(added)[0]);
    t.equal(heard.count('notifications/resources/list_changed'), lists + 1, 'a new output: the list changed');
    t.equal(heard.count('notifications/resources/updated', 'entelechy://doc/scene.esn'), 2, 'and the scene\'s text');
    t.ok((await client.listResources()).resources.some((r) => r.uri === 'entelechy://output/extra.png'), 'a new output is listed');

    await client.subscribeResource({ uri: 'entelechy://output/result.png' });
    t.notOk((await call('evaluate', { time: 0.5 })).isError);
    t.equal(heard.count('notifications/resources/updated', 'entelechy://output/result.png'), 1, 'a subscribed output is told after a frame');
    t.equal(heard.count('notifications/resources/updated', 'entelechy://output/extra.png'), 0, 'one not subscribed is not');
    const out = await client.readResource({ uri: 'entelechy://output/result.png' });
    const blob = out.contents[0] as { blob: string; mimeType: string };
    t.equal(blob.mimeType, 'image/png');
    const png = PNG.sync.read(Buffer.from(blob.blob, 'base64'));
    t.same([png.width, png.height], [256, 256], 'the output as a PNG');
    await t.rejects(client.readResource({ uri: 'entelechy://doc/nope.esn' }), /no document `nope\.esn`/, 'a document that is not there');
  });

  await t.test('prompts: the workflows, with the scene\'s text', async (t) => {
    const { prompts } = await client.listPrompts();
    t.same(prompts.map((p) => p.name), ['inspect-scene', 'change-look', 'write-replay-test']);
    const look = await client.getPrompt({ name: 'change-look', arguments: { change: 'warmer colours' } });
    const [first, scene] = look.messages;
    const text = (first!.content as { text: string }).text;
    t.match(text, /warmer colours/);
    t.match(text, /`prepare`[^\n]*changes nothing/, 'a dry run before anything is written');
    t.match(text, /`expect`/);
    t.equal((scene!.content as { resource: { uri: string; text: string } }).resource.uri, 'entelechy://doc/scene.esn');
    t.equal((scene!.content as { resource: { text: string } }).resource.text, readFileSync(join(dir, 'scene.esn'), 'utf8'), 'the scene as it is now');
    const replay = await client.getPrompt({ name: 'write-replay-test', arguments: { behaviour: 'the output is 256 x 256', file: 'size.replay' } });
    t.match((replay.messages[0]!.content as { text: string }).text, /`> \{"op": "status"\}`[\s\S]*size\.replay/);
  });
}
