// The history bisect's tests search: a scene whose versions differ in width (harmless) and, from
// a planted version on, in the red of every element (the bug a replay catches), built by real
// composes and one save picked up by `sync`.

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from './scratch.js';
import { bandRowsFor } from '../src/workers/pool.js';

/** The tiles a session's frame of the 64 rows here runs in when the session names no band rows. */
export const DEFAULT_TILES = Math.ceil(64 / bandRowsFor(64));

/** Versions in each history: positions 0 (loaded) to 6 (running). */
export const VERSIONS = 7;
/** The position saved to disk and picked up by `sync` (the others are composed). */
export const SAVED = 2;

// A loop keeps the group off the coordinator (work.ts), and 64 rows make two bands of the pool:
// with two workers both run the frame.
export const versionText = (position: number, planted: number) => `kernel t.paint@1 {
  out result: field2<vec4>;
  each (x, y) {
    let k = 0;
    while (k < 2) { k++; }
    result = vec4(${position >= planted ? '0.25' : '0.5'}, x / 16.0, f32(k) * 0.0, 1.0);
  }
}
node a: t.paint@1 { size = ${16 + position} x 64; }
output result <- a.result;
`;

/**
 * The replay that fails from the planted version on: at line 5, the red at (1, 1). Line 3 checks
 * the workers that ran the frame and the tiles it ran in (64 rows in tiles of the session's
 * bandRows: DEFAULT_TILES, 8 of 8 rows, by default).
 */
export const replayText = (workers = 1, tiles = DEFAULT_TILES) => `# red is 0.5 at (1, 1), and the frame ran on ${workers} worker(s) in ${tiles} tiles
> {"op":"evaluate"}
< {"ok":{"placements":[{"workers":${workers},"tiles":${tiles}}]}}
> {"op":"trace","x":1,"y":1}
< within 0.0001 {"ok":{"values":[{"node":"a","port":"result","value":[0.5,0.0625,0,1]}]}}
`;
export const FAILING_LINE = 5;

/** A scene folder holding version 0 and the replay as check.replay. */
export function historyDir(t: { teardown: (f: () => void) => void }, planted: number, workers = 1, tiles = DEFAULT_TILES): string {
  const dir = scratchDir('entelechy-bisect-');
  writeFileSync(join(dir, 'scene.esn'), versionText(0, planted));
  writeFileSync(join(dir, 'check.replay'), replayText(workers, tiles));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type Ask = (req: Record<string, unknown>) => Promise<{ ok?: any; error?: any }>;

/**
 * Versions 1 to 6 of the history, through a door: composed, but version SAVED written to disk
 * and picked up by `sync` (asked again until it is published).
 */
export async function buildHistory(ask: Ask, dir: string, planted: number): Promise<void> {
  for (let i = 1; i < VERSIONS; i++) {
    const text = versionText(i, planted);
    if (i !== SAVED) {
      const a = await ask({ op: 'compose', text });
      if (!a.ok) throw new Error(`compose of version ${i}: ${JSON.stringify(a.error)}`);
      continue;
    }
    writeFileSync(join(dir, 'scene.esn'), text);
    for (let tries = 0; ; tries++) {
      const events = (await ask({ op: 'sync' })).ok?.events ?? [];
      if (events.some((e: { kind: string }) => e.kind === 'published' && 'paths' in e)) break;
      if (events.some((e: { kind: string }) => e.kind === 'rejected')) throw new Error(`version ${i} rejected: ${JSON.stringify(events)}`);
      if (tries > 2000) throw new Error('the saved version was never published');
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** The kernel of the planted versions (red 0.25), as `publish` takes it: the bug published over the protocol. */
export const badKernel = () => versionText(GENERATIONS.planted, GENERATIONS.planted).split('\nnode ')[0]!;

/**
 * A history in which generations published over the protocol, not only document versions, break
 * the replay and mend it. The points, in order, and whether the replay passes at each:
 *   0, 1 (versions; pass) · p0 `publish` of the bad kernel (t.paint@1 g2; fails) · 2 (a version
 *   composed, taking t.paint@1 back into the document: pass) with p1, the compose's generation
 *   (g3, pass) · p2 `publish` of the bad kernel again (g4; fails) · p3 `retire` of it (g5: the
 *   document's kernel again; pass) · 3, the planted bug in the document (fails).
 */
export const GENERATIONS = { planted: 3, names: ['t.paint@1 g2', 't.paint@1 g3', 't.paint@1 g4', 't.paint@1 g5'], origins: ['publish', 'compose', 'publish', 'retire'], after: [1, 2, 2, 2] };

export async function buildGenerations(ask: Ask): Promise<void> {
  const steps: Record<string, unknown>[] = [
    { op: 'compose', text: versionText(1, GENERATIONS.planted) },
    { op: 'publish', source: badKernel() },
    { op: 'compose', text: versionText(2, GENERATIONS.planted) },
    { op: 'publish', source: badKernel() },
    { op: 'retire', kernel: 't.paint@1' },
    { op: 'compose', text: versionText(3, GENERATIONS.planted) },
  ];
  for (const step of steps) {
    const a = await ask(step);
    if (!a.ok) throw new Error(`${JSON.stringify(step).slice(0, 60)}: ${JSON.stringify(a.error)}`);
  }
}
