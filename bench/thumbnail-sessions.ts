// Every example open in a session at 256 x 256 (each 2-D size in its scene made 256 x 256; a 3-D
// one kept) or as they are, a frame computed: what bench/dry-run.ts and bench/experiments/thumbnail-png.ts time
// thumbnails of. In process, one worker per session.

import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { ROOT } from '../test/helpers.js';

export const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

export type Ask = (req: object) => Promise<any>;

export interface ExampleSession {
  name: string;
  session: Session;
  ask: Ask;
  /** The scene's text (as run here). */
  text: string;
  /** Its first output. */
  output: string;
  close: () => Promise<void>;
}

/** A scene's text with every 2-D size (`W x H` not followed by ` x D`) made `side` x `side`. */
export function squared(text: string, side: number): string {
  return text.split('\n').map((line) => (/\d+ x \d+ x \d+/.test(line) ? line : line.replace(/\d+ x \d+/, `${side} x ${side}`))).join('\n');
}

export async function openExample(name: string, side?: number): Promise<ExampleSession> {
  const dir = mkdtempSync(join(tmpdir(), `entelechy-bench-${name}-`));
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
  const file = join(dir, 'scene.esn');
  if (side) writeFileSync(file, squared(readFileSync(file, 'utf8'), side));
  const session = await Session.open(file, { workers: 1 });
  const ask: Ask = async (req) => {
    const a = JSON.parse(await dispatch(session, JSON.stringify(req)));
    if (a.error) throw new Error(`${name}: ${a.error.message}`);
    return a.ok;
  };
  await ask({ op: 'evaluate' });
  return {
    name, session, ask, text: readFileSync(file, 'utf8'), output: session.scene.outputs[0].name,
    close: async () => {
      await session.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The examples named by --examples (default all), each at 256 x 256 when `square`, else at the sizes their scenes give. */
export async function openExamples(square: boolean): Promise<ExampleSession[]> {
  const names = arg('examples', readdirSync(join(ROOT, 'examples')).sort().join(',')).split(',');
  const side = square ? 256 : undefined;
  const out = [];
  for (const name of names) out.push(await openExample(name, side));
  return out;
}
