// `.replay` files: requests and the answers expected of them (partial matches) — tests an agent
// can write for its own changes, run by `entelechy test` against a fresh session.

import { UserError } from '../main/user-error.js';

export const REPLAY_LINES = [
  { name: '>', syntax: '> {"op": "status"}', summary: 'a request (also written →)' },
  { name: '<', syntax: '< {"ok": {"loaded": true}}', summary: "the answer expected for the request before it: a partial match (every key given must match; arrays match element by element)" },
  { name: '#', syntax: '# a comment', summary: 'a comment (also //); blank lines are ignored too' },
  { name: '@scene', syntax: '@scene scene.esn', summary: "the scene to replay against (default: scene.esn beside the file)" },
] as const;

export interface ReplayStep {
  line: number;
  request: string;
  expected?: unknown;
}

export interface ReplayScript {
  scene?: string;
  steps: ReplayStep[];
}

export class ReplayError extends UserError {
  override name = 'ReplayError';
}

export function parseReplay(text: string, path = 'replay'): ReplayScript {
  const steps: ReplayStep[] = [];
  let scene: string | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    const at = `${path}:${i + 1}`;
    if (!line || line.startsWith('#') || line.startsWith('//')) return;
    if (line.startsWith('@scene')) {
      scene = line.slice(6).trim();
      return;
    }
    const mark = line[0];
    const body = line.slice(1).trim();
    if (mark === '>' || mark === '→') {
      steps.push({ line: i + 1, request: body });
    } else if (mark === '<' || mark === '←') {
      const last = steps[steps.length - 1];
      if (!last) throw new ReplayError(`${at}: an expected answer (<) before any request (>)`);
      try {
        last.expected = JSON.parse(body);
      } catch (e) {
        throw new ReplayError(`${at}: the expected answer is not JSON (${(e as Error).message})`);
      }
    } else {
      throw new ReplayError(`${at}: a line starts with \`>\` (a request), \`<\` (the expected answer), \`#\` (a comment) or \`@scene\``);
    }
  });
  return { scene, steps };
}

/** Where `actual` fails to match `expected` (a partial match), or undefined when it matches. */
export function mismatch(expected: unknown, actual: unknown, where = ''): string | undefined {
  if (expected !== null && typeof expected === 'object') {
    if (Array.isArray(expected)) {
      if (!Array.isArray(actual)) return `${where || 'the answer'}: expected an array, got ${JSON.stringify(actual)}`;
      if (actual.length !== expected.length) return `${where}: expected ${expected.length} elements, got ${actual.length}`;
      for (let i = 0; i < expected.length; i++) {
        const m = mismatch(expected[i], actual[i], `${where}[${i}]`);
        if (m) return m;
      }
      return undefined;
    }
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${where || 'the answer'}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [k, v] of Object.entries(expected)) {
      const m = mismatch(v, (actual as Record<string, unknown>)[k], where ? `${where}.${k}` : k);
      if (m) return m;
    }
    return undefined;
  }
  return expected === actual ? undefined : `${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

export interface ReplayResult {
  line: number;
  request: string;
  answer: string;
  failure?: string;
}

/** Run a script's steps through a request function; every step runs, failures are collected. */
export async function runReplay(script: ReplayScript, request: (line: string) => Promise<string>): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for (const step of script.steps) {
    const answer = await request(step.request);
    let failure: string | undefined;
    if (step.expected !== undefined) failure = mismatch(step.expected, JSON.parse(answer));
    results.push({ line: step.line, request: step.request, answer, failure });
  }
  return results;
}
