// The compile corpus (issue 17): the examples, the four bench pipelines and the stress kernels of
// bench/corpus, which `bench --compile`, `bench --cold` and test/tiers.test.ts run.

import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScene, type Scene } from '../src/ir/check/scene.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface CorpusScene {
  name: string;
  /** The scene's entry document. */
  path: string;
}

/** The compile corpus: every example, the four bench pipelines, and bench/corpus. */
export function corpus(): CorpusScene[] {
  const examples = readdirSync(join(ROOT, 'examples')).sort().map((n) => ({ name: n, path: join(ROOT, 'examples', n, 'scene.esn') }));
  const pipelines = ['p1', 'p2', 'p3', 'p4'].map((p) => ({ name: p.toUpperCase(), path: join(ROOT, 'bench', 'scenes', `${p}.esn`) }));
  const stress = readdirSync(join(ROOT, 'bench', 'corpus')).filter((n) => n.endsWith('.esn')).sort().map((n) => ({ name: basename(n, '.esn'), path: join(ROOT, 'bench', 'corpus', n) }));
  return [...examples, ...pipelines, ...stress];
}

export function loadCorpusScene(c: CorpusScene): Scene {
  const dir = dirname(c.path);
  const scene = loadScene(basename(c.path), { read: (p) => readFileSync(join(dir, p), 'utf8') });
  if (scene.diagnostics.length) throw new Error(`corpus scene ${c.name}: ${scene.diagnostics[0].message}`);
  return scene;
}

/**
 * The corpus scene's documents copied into a fresh folder (for a session to edit), the bench
 * pipelines at 256 x 256 as edit_to_published measures them (a 4096 x 4096 frame alone takes
 * longer than an edit's target): the entry's path, the folder (the caller removes it), and the
 * scene as checked from the corpus.
 */
export function copyCorpusScene(c: CorpusScene, prefix = 'entelechy-corpus-'): { entry: string; dir: string; scene: Scene } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const scene = loadCorpusScene(c);
  for (const d of scene.documents) writeFileSync(join(dir, d.path), readFileSync(join(dirname(c.path), d.path), 'utf8').replace(/4096 x 4096/g, '256 x 256'));
  return { entry: join(dir, basename(c.path)), dir, scene };
}
