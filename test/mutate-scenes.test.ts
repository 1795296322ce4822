// The scene mutator (issue 14): hundreds of mutants of the examples' and the benchmark's scenes
// (tokens deleted, duplicated, swapped, numbers and operators changed, names replaced, texts cut
// short; test/scene-mutants.ts). Each is checked: the checker never throws, and every diagnostic
// has a line, a column and a message. Each mutant that checks is evaluated by the compiled code
// (fused) and by the reference interpreter (unfused): the outputs agree bit for bit (NaN payloads
// aside), or both stop with the same error.
//
// ENTELECHY_SEED=N reruns one run; ENTELECHY_LONG=1 runs the long size (docs/reliability.md).

import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { Engine } from '../src/main/engine.js';
import { readField } from '../src/main/field.js';
import { bits, firstDifference, ROOT } from './helpers.js';
import { LONG, Rng, replayHint, seedOf } from './reliability.js';
import { mutateScene } from './scene-mutants.js';

const MUTANTS = LONG ? 5_000 : 500;
/** Every size in a mutant is cut to this many elements an axis, and loops to this much fuel an element: mutants must run fast. */
const MAX_DIM = 12;
const FUEL = 4096;
/** Frames each backend runs (two: state carried from one frame to the next is compared too). */
const FRAMES = 2;
const SHOWN = 10;

const SEED = seedOf(1414);
t.comment(`mutate seed ${SEED} (${replayHint('mutate-scenes', SEED)})`);

/** The scenes mutated: every example and benchmark scene, as documents by path. */
function sources(): { name: string; docs: Record<string, string> }[] {
  const examples = readdirSync(join(ROOT, 'examples')).map((name) => {
    const dir = join(ROOT, 'examples', name);
    const docs = Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith('.esn')).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
    return { name: `examples/${name}`, docs };
  });
  const bench = readdirSync(join(ROOT, 'bench', 'scenes'))
    .filter((f) => f.endsWith('.esn'))
    .map((f) => ({ name: `bench/scenes/${f}`, docs: { 'scene.esn': readFileSync(join(ROOT, 'bench', 'scenes', f), 'utf8') } }));
  return [...examples, ...bench];
}

/** Cut every number after `size` (node members, kernel defaults, inputs) to MAX_DIM. */
export function shrink(text: string): string {
  return text.replace(/(\bsize\b\s*=?\s*)([^;{}\n]*)/g, (_m, head: string, dims: string) =>
    head + dims.replace(/\d+(?:\.\d*)?(?:e[+-]?\d+)?/gi, (n) => (Number(n) > MAX_DIM ? String(MAX_DIM) : n)),
  );
}

interface Outcome {
  error?: string;
  out?: Map<string, Uint32Array[]>;
}

/** Run FRAMES frames on one backend: every output's bits, or the error that stopped it. */
async function outcome(scene: Scene, backend: 'jit' | 'interp'): Promise<Outcome> {
  let engine: Engine | undefined;
  try {
    engine = new Engine(scene, { backend, fuse: backend === 'jit' });
    for (let f = 0; f < FRAMES; f++) await engine.evaluate({ time: 0.25 * f, pointer: { x: 3, y: 4, down: f === 1 } });
    const out = new Map<string, Uint32Array[]>();
    for (const o of scene.outputs) out.set(o.name, readField(engine.memory, engine.outputField(o.name)!).map(bits));
    return { out };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  } finally {
    engine?.dispose();
  }
}

/** What is wrong with a diagnostic a user would read, or undefined. */
function diagnosticProblem(d: { line: number; column: number; message: string }): string | undefined {
  if (!Number.isInteger(d.line) || d.line < 1 || !Number.isInteger(d.column) || d.column < 1) return `a diagnostic without a position (${d.line}:${d.column}): ${d.message}`;
  if (typeof d.message !== 'string' || !d.message) return 'a diagnostic without a message';
  if (/this is a bug|Maximum call stack|\.js:\d+|\bat \S+ \(/.test(d.message)) return `an internal diagnostic: ${d.message}`;
  return undefined;
}

t.test(`${MUTANTS} mutated scenes: check never throws; the JIT equals the interpreter`, async (t) => {
  const r = new Rng(SEED);
  const scenes = sources();
  const failures: string[] = [];
  let checked = 0;
  let agreed = 0;
  let stopped = 0;
  for (let i = 0; i < MUTANTS; i++) {
    const src = scenes[i % scenes.length]!;
    const docs = Object.fromEntries(Object.entries(src.docs).map(([p, text]) => [p, shrink(text)]));
    const path = r.pick(Object.keys(docs));
    const count = r.int(1, 3);
    docs[path] = shrink(mutateScene(r, docs[path]!, count));
    const where = `mutant ${i} of ${src.name} (${path}, ${count} mutation${count > 1 ? 's' : ''})`;
    let scene: Scene;
    try {
      scene = loadScene('scene.esn', { read: (p) => docs[p], fuel: FUEL });
    } catch (e) {
      failures.push(`${where}: check threw ${(e as Error).message}\n${docs[path]}`);
      continue;
    }
    const bad = scene.diagnostics.map(diagnosticProblem).find((p) => p);
    if (bad) failures.push(`${where}: ${bad}\n${docs[path]}`);
    if (scene.diagnostics.length) continue;
    checked++;
    const jit = await outcome(scene, 'jit');
    const interp = await outcome(scene, 'interp');
    if (jit.error || interp.error) {
      if (jit.error !== interp.error) failures.push(`${where}: jit ${jit.error ?? 'ran'}, interpreter ${interp.error ?? 'ran'}\n${docs[path]}`);
      else stopped++;
      continue;
    }
    const d = firstDifference(interp.out!, jit.out!);
    if (d) failures.push(`${where}: interpreter vs jit: ${d}\n${docs[path]}`);
    else agreed++;
  }
  t.comment(`${MUTANTS} mutants: ${checked} checked (${agreed} evaluated alike, ${stopped} stopped alike), ${MUTANTS - checked} refused with diagnostics`);
  t.equal(failures.length, 0, 'every mutant holds');
  for (const f of failures.slice(0, SHOWN)) t.comment(f);
  if (failures.length) t.comment(replayHint('mutate-scenes', SEED));
  // A run that compiles nothing proves nothing: enough mutants must check and run.
  t.ok(checked >= MUTANTS / 20, `at least 1 in 20 mutants checks and runs (${checked})`);
});
