// Prompts for the common workflows: inspect the scene, change a look safely (a dry run first, and
// every step one that can be undone), write a replay test. Each names tools by their operation
// (test/mcp.test.ts checks every name is one) and, where it helps, carries the scene's text.

import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { REPLAY_LINES } from '../protocol/replay.js';
import { DOC } from './resources.js';
import type { Answer } from './server.js';

type Ask = (op: string, fields: Record<string, unknown>) => Promise<Answer>;
type Message = GetPromptResult['messages'][number];

const user = (text: string): Message => ({ role: 'user', content: { type: 'text', text } });

/** The scene's text as an embedded resource (none while the session cannot answer it). */
async function sceneDocument(ask: Ask): Promise<Message[]> {
  const status = await ask('status', {});
  const path = String(status.ok?.scene ?? 'scene.esn');
  const doc = await ask('document', { path });
  if (!doc.ok) return [];
  return [{ role: 'user', content: { type: 'resource', resource: { uri: DOC + path, mimeType: 'text/plain', text: String(doc.ok.text) } } }];
}

export const PROMPTS = {
  'inspect-scene': {
    title: 'Inspect the scene',
    description: 'Look at the scene this server runs and say what it computes, changing nothing.',
    text: () =>
      [
        'Inspect the Entelechy scene this server runs, and change nothing (use only read-only tools and `evaluate`).',
        '1. `status`: is the scene loaded, or `refused`? If refused, say why (file, line, column) and what `compose` would mend it, and stop.',
        '2. `graph`: the nodes, their kernels and members, the edges, the params (with their ranges), the outputs, the evaluation order and the fused groups.',
        '3. `kernels`, then `kernel` for each kernel whose source matters to the look.',
        '4. `evaluate` one frame and look at the picture it answers (or `read` an output).',
        'Then summarise: what the scene computes, node by node; which params shape the look and how; anything odd (an `unrun` node, a warning among the events).',
        'The scene\'s text follows.',
      ].join('\n'),
  },
  'change-look': {
    title: 'Change a look safely',
    description: 'Change how an output looks: tried in the running world first (params, a dry-run compile, a published kernel), written to the documents only when it is right.',
    args: { change: z.string().describe('what should look different, e.g. "warmer colours" or "twice as many rings"') },
    text: ({ change }: { change?: string }) =>
      [
        `Change the look of the scene: ${change ?? '(say what should change)'}.`,
        'Work so that nothing is lost and every step can be undone:',
        '1. `status` and `graph`: find the params and node members that bear on it. `evaluate` once and keep the picture as the one before.',
        '2. `snapshot` (no path): the params, protocol-published kernels, state and clock, to `restore` if you go astray.',
        '3. If a graph param does it, set it with `param` (the running world only; no file is touched), `evaluate`, compare.',
        '4. If a kernel must change, do a dry run first: `prepare` the new kernel source (it checks and compiles, and changes nothing); mend what it reports. Then `publish` it (the running world only, not a file), `evaluate`, compare; `retire` withdraws it.',
        '5. Only when the picture is right, write it: `document` for the version you read, then `compose` with `edits` (or `text`) and `expect` set to that version, so nothing saved meanwhile is overwritten. A compose that does not check writes nothing and answers why, often with a `fix` to hand back as it is.',
        '6. `evaluate` again and say what changed (before and after) and which documents were written (`history`).',
        'The scene\'s text follows.',
      ].join('\n'),
  },
  'write-replay-test': {
    title: 'Write a replay test',
    description: 'Turn what the scene should do into a .replay file that `entelechy test` checks against a fresh session.',
    args: {
      behaviour: z.string().describe('what the test should hold, e.g. "the rings output is 256 x 256 and warmth 0.9 is accepted"'),
      file: z.string().optional().describe('the replay file under the scene\'s folder (default: behaviour.replay)'),
    },
    text: ({ behaviour, file }: { behaviour?: string; file?: string }) =>
      [
        `Write a replay test that holds: ${behaviour ?? '(say what it should hold)'}.`,
        `A .replay file is lines of these forms:`,
        ...REPLAY_LINES.map((l) => `- \`${l.syntax}\`: ${l.summary}`),
        '1. Make each request with its tool first (a tool call is the request `{"op": TOOL, ...arguments}`), and see what it answers.',
        '2. Keep in each expected answer only what the test is about (a partial match): names, sizes, values, `written`, an error\'s `field` or `fix`; never timings or versions that change from run to run.',
        '   To hold that a change changes (or keeps) a value without writing the value down, name the step before it (> NAME: {...}) and expect < differs NAME PATH (or < equals NAME PATH) after it; numbers may match within a tolerance (< within 0.001 {...}).',
        `3. Write the file with \`compose\` and \`documents\`: [{"path": "${file ?? 'behaviour.replay'}", "text": ...}] (replay files are written as they are; nothing recompiles).`,
        `4. Say how to run it: \`entelechy test ${file ?? 'behaviour.replay'}\` (in the scene's folder) replays it against a fresh session on a copy of the folder.`,
        'The scene\'s text follows.',
      ].join('\n'),
  },
} as const;

export function registerPrompts(server: McpServer, ask: Ask): void {
  for (const [name, prompt] of Object.entries(PROMPTS)) {
    const args = 'args' in prompt ? prompt.args : undefined;
    const text = prompt.text as (args: Record<string, string | undefined>) => string;
    server.registerPrompt(name, { title: prompt.title, description: prompt.description, ...(args ? { argsSchema: args } : {}) }, (async (values: Record<string, string | undefined>) => ({
      description: prompt.description,
      messages: [user(text(values ?? {})), ...(await sceneDocument(ask))],
    })) as never);
  }
}
