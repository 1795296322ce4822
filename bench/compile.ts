// `entelechy bench --compile`: the compile corpus (the examples, the bench scenes and the stress
// kernels of bench/corpus), per scene and tier: the time of each stage of the compiler (parse,
// check with lowering, fuse, codegen, binaryen, instantiate) and the modules' size; and the time
// from an edit of the scene's last kernel to the first frame of the new version, through a
// session with a warm compile worker (compose, then evaluate).

import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instantiate } from '../src/codegen/instantiate.js';
import { compileFunction, type CompileTimes } from '../src/codegen/compile.js';
import { TIERS, type Tier } from '../src/codegen/plan.js';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { parseDocument } from '../src/ir/syntax/index.js';
import { sceneGroups } from '../src/main/engine.js';
import { FieldMemory } from '../src/main/memory.js';
import { Session } from '../src/main/session.js';
import { median } from './reference/measurement.js';
import { dispatch } from '../src/protocol/dispatcher.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

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

/** One scene's compile, stage by stage (medians over the runs, milliseconds). */
export interface CompileStages {
  measurement: 'compile_stages';
  scene: string;
  tier: Tier;
  groups: number;
  parse_ms: number;
  check_lower_ms: number;
  fuse_ms: number;
  codegen_ms: number;
  binaryen_ms: number;
  instantiate_ms: number;
  total_ms: number;
  wasm_bytes: number;
  runs: number;
}

/** The stages of compiling one scene to modules of one tier, timed (the compiler is loaded and warm). */
function stagesOnce(c: CorpusScene, tier: Tier, memory: WebAssembly.Memory): Omit<CompileStages, 'measurement' | 'scene' | 'tier' | 'runs'> {
  const dir = dirname(c.path);
  const texts = new Map<string, string>();
  const read = (p: string) => {
    const t = readFileSync(join(dir, p), 'utf8');
    texts.set(p, t);
    return t;
  };
  const t0 = performance.now();
  const scene = loadScene(basename(c.path), { read });
  const t1 = performance.now();
  // Parsing is part of loadScene; timed again on its own to tell it from checking and lowering.
  for (const [path, text] of texts) parseDocument(path, text);
  const parse = performance.now() - t1;
  const t2 = performance.now();
  const groups = sceneGroups(scene, [], true);
  const t3 = performance.now();
  const times: CompileTimes = { codegen_ms: 0, binaryen_ms: 0 };
  const modules = groups.map((g) => compileFunction(g.ir, { tier }, times));
  const t4 = performance.now();
  for (const bytes of modules) instantiate(new WebAssembly.Module(bytes), memory);
  const t5 = performance.now();
  return {
    groups: groups.length, parse_ms: parse, check_lower_ms: Math.max(0, t1 - t0 - parse), fuse_ms: t3 - t2, codegen_ms: times.codegen_ms, binaryen_ms: times.binaryen_ms,
    instantiate_ms: t5 - t4, total_ms: t1 - t0 + (t5 - t2), wasm_bytes: modules.reduce((n, b) => n + b.length, 0),
  };
}

export function compileStages(c: CorpusScene, tier: Tier, runs: number): CompileStages {
  const memory = new FieldMemory().memory;
  const all = Array.from({ length: runs }, () => stagesOnce(c, tier, memory));
  const med = (k: keyof (typeof all)[0]) => median(all.map((a) => a[k]));
  return {
    measurement: 'compile_stages', scene: c.name, tier, groups: all[0].groups, parse_ms: med('parse_ms'), check_lower_ms: med('check_lower_ms'), fuse_ms: med('fuse_ms'),
    codegen_ms: med('codegen_ms'), binaryen_ms: med('binaryen_ms'), instantiate_ms: med('instantiate_ms'), total_ms: med('total_ms'), wasm_bytes: all[0].wasm_bytes, runs,
  };
}

/** Edit to first frame: compose of the last kernel, then evaluate, in a session with a warm compile worker. */
export interface EditToFrame {
  measurement: 'edit_to_frame';
  scene: string;
  median_ms: number;
  max_ms: number;
  samples: number;
  /** The tiers the frame after the edit ran (a `fast` group was swapped in before `optimised` came). */
  tiers: string[];
}

/** The scene's last kernel with its first decimal literal nudged by `i` (a real change of its IR). */
function editedKernel(scene: Scene, i: number): { id: string; text: string } | undefined {
  const kernels = [...scene.kernels.values()].filter((k) => !k.path.startsWith('('));
  for (const k of kernels.reverse()) {
    const doc = scene.documents.find((d) => d.path === k.path)!;
    const text = doc.text.slice(k.statement.span.start, k.statement.span.end);
    const each = text.indexOf('each');
    const m = /\b(\d+)\.(\d+)\b/.exec(text.slice(each));
    if (each < 0 || !m) continue;
    const at = each + m.index;
    const nudged = `${m[1]}.${m[2]}${String(i + 1).padStart(3, '0')}`;
    return { id: k.id, text: text.slice(0, at) + nudged + text.slice(at + m[0].length) };
  }
  return undefined;
}

export async function editToFrame(c: CorpusScene, edits: number): Promise<EditToFrame | undefined> {
  const source = loadCorpusScene(c);
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-bench-edit-'));
  const from = dirname(c.path);
  // The bench pipelines at 256 x 256, as edit_to_published measures them: a 4096 x 4096 frame alone takes longer than the target.
  for (const d of source.documents) writeFileSync(join(dir, d.path), readFileSync(join(from, d.path), 'utf8').replace(/4096 x 4096/g, '256 x 256'));
  const session = await Session.open(join(dir, basename(c.path)), { workers: 2, cacheDir: null });
  try {
    await session.compiler?.ready;
    const ask = async (req: object) => {
      const answer = JSON.parse(await dispatch(session, JSON.stringify(req)));
      if (!answer.ok) throw new Error(`bench ${c.name}: ${JSON.stringify(req).slice(0, 60)}: ${answer.error?.message}`);
      return answer.ok;
    };
    await ask({ op: 'evaluate', time: 0.5 });
    const times: number[] = [];
    const tiers = new Set<string>();
    for (let i = 0; i < edits; i++) {
      const edit = editedKernel(session.scene, i);
      if (!edit) return undefined;
      const s = performance.now();
      await ask({ op: 'compose', edits: [{ kernel: edit.id, text: edit.text }] });
      const frame = await ask({ op: 'evaluate', time: 0.5 + i });
      times.push(performance.now() - s);
      for (const p of frame.placements ?? []) if (p.tier) tiers.add(p.tier);
    }
    return { measurement: 'edit_to_frame', scene: c.name, median_ms: median(times), max_ms: Math.max(...times), samples: times.length, tiers: [...tiers] };
  } finally {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `entelechy bench --compile`: every corpus scene (or those named), both tiers, and edit to frame. */
export async function benchCompile(options: { scenes?: string[]; runs: number; edits: number; json: boolean }): Promise<(CompileStages | EditToFrame)[]> {
  const { loadCompiler } = await import('../src/main/modules.js');
  await loadCompiler();
  const chosen = corpus().filter((c) => !options.scenes || options.scenes.includes(c.name));
  const out: (CompileStages | EditToFrame)[] = [];
  const emit = (m: CompileStages | EditToFrame) => {
    out.push(m);
    if (options.json) process.stdout.write(JSON.stringify(m) + '\n');
  };
  // Warm binaryen up (its first module in a process costs ~300 ms more).
  compileStages(chosen[0], 'optimised', 1);
  for (const c of chosen) {
    if (!options.json) process.stderr.write(`${c.name}...\n`);
    for (const tier of TIERS) emit(compileStages(c, tier, options.runs));
  }
  for (const c of chosen) {
    if (!options.json) process.stderr.write(`${c.name}: edits...\n`);
    const e = await editToFrame(c, options.edits);
    if (e) emit(e);
  }
  if (!options.json) process.stdout.write(compileTable(out) + '\n');
  return out;
}

export function compileTable(ms: (CompileStages | EditToFrame)[]): string {
  const f = (n: number) => n.toFixed(1);
  const rows = [['scene', 'tier', 'groups', 'parse', 'check+lower', 'fuse', 'codegen', 'binaryen', 'instantiate', 'total ms', 'wasm bytes', 'edit to frame ms (median / max)']];
  for (const m of ms) {
    if (m.measurement !== 'compile_stages') continue;
    const edit = ms.find((e): e is EditToFrame => e.measurement === 'edit_to_frame' && e.scene === m.scene);
    rows.push([m.scene, m.tier, String(m.groups), f(m.parse_ms), f(m.check_lower_ms), f(m.fuse_ms), f(m.codegen_ms), f(m.binaryen_ms), f(m.instantiate_ms), f(m.total_ms), String(m.wasm_bytes),
      m.tier === 'fast' && edit ? `${f(edit.median_ms)} / ${f(edit.max_ms)} (${edit.tiers.join(', ')})` : '']);
  }
  const width = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(width[i])).join('  '));
  lines.splice(1, 0, width.map((w) => '-'.repeat(w)).join('  '));
  return lines.join('\n');
}
