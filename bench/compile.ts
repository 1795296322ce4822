// `entelechy bench --compile`: the compile corpus (the examples, the bench scenes and the stress
// kernels of bench/corpus), per scene and tier: the time of each stage of the compiler (parse,
// check with lowering, fuse, codegen, binaryen, instantiate) and the modules' size; the time from
// an edit of the scene's last kernel to the first frame of the new version, in its parts
// (edit-frame.ts); and the chain scene interpreted against compiled (chain.ts).

import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { instantiate } from '../src/codegen/instantiate.js';
import { compileFunction, type CompileTimes } from '../src/codegen/compile.js';
import { TIERS, type Tier } from '../src/codegen/plan.js';
import { loadScene } from '../src/ir/check/scene.js';
import { forgetParsed, parseDocument } from '../src/ir/syntax/index.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { FieldMemory } from '../src/main/memory.js';
import { benchChain, chainTable, type ChainFrames } from './chain.js';
import { corpus, type CorpusScene } from './corpus-scenes.js';
import { editTable, editToFrame, type EditKind, type EditToFrame } from './edit-frame.js';

const EDIT_KINDS: EditKind[] = ['literal', 'shape'];
import { median } from './reference/measurement.js';
import { textTable } from './table.js';

export { corpus, loadCorpusScene, type CorpusScene } from './corpus-scenes.js';

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
  // Parsing is part of loadScene; timed again on its own to tell it from checking and lowering
  // (each time from the text: the parser keeps the documents it parsed last).
  forgetParsed();
  const t0 = performance.now();
  const scene = loadScene(basename(c.path), { read });
  const t1 = performance.now();
  forgetParsed();
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

/** The chain scene's name in `--scenes` (it is not a corpus scene: it is measured interpreted, not edited). */
export const CHAIN = 'chain';

/** `entelechy bench --compile`: every corpus scene (or those named), both tiers, edit to frame, and the chain scene. */
export async function benchCompile(options: { scenes?: string[]; runs: number; edits: number; json: boolean }): Promise<(CompileStages | EditToFrame | ChainFrames)[]> {
  const { loadCompiler } = await import('../src/main/modules.js');
  await loadCompiler();
  const chosen = corpus().filter((c) => !options.scenes || options.scenes.includes(c.name));
  const out: (CompileStages | EditToFrame | ChainFrames)[] = [];
  const emit = (m: CompileStages | EditToFrame | ChainFrames) => {
    out.push(m);
    if (options.json) process.stdout.write(JSON.stringify(m) + '\n');
  };
  // Warm binaryen up (its first module in a process costs ~300 ms more).
  if (chosen.length) compileStages(chosen[0], 'optimised', 1);
  for (const c of chosen) {
    if (!options.json) process.stderr.write(`${c.name}...\n`);
    for (const tier of TIERS) emit(compileStages(c, tier, options.runs));
  }
  for (const c of chosen) {
    if (!options.json) process.stderr.write(`${c.name}: edits...\n`);
    for (const kind of EDIT_KINDS) {
      const e = await editToFrame(c, options.edits, kind);
      if (e) emit(e);
    }
  }
  let chain: ChainFrames | undefined;
  if (!options.scenes || options.scenes.includes(CHAIN)) {
    if (!options.json) process.stderr.write('chain: interpreted and compiled...\n');
    emit((chain = await benchChain()));
  }
  if (!options.json) {
    const edits = out.filter((m): m is EditToFrame => m.measurement === 'edit_to_frame');
    const tables = [chosen.length ? compileTable(out) : '', edits.length ? editTable(edits) : '', chain ? chainTable(chain) : ''];
    process.stdout.write(tables.filter(Boolean).join('\n\n') + '\n');
  }
  return out;
}

export function compileTable(ms: (CompileStages | EditToFrame | ChainFrames)[]): string {
  const f = (n: number) => n.toFixed(1);
  const rows = [['scene', 'tier', 'groups', 'parse', 'check+lower', 'fuse', 'codegen', 'binaryen', 'instantiate', 'total ms', 'wasm bytes', ...EDIT_KINDS.map((k) => `${k} edit to frame ms (median / max)`)]];
  for (const m of ms) {
    if (m.measurement !== 'compile_stages') continue;
    const edit = (kind: EditKind) => {
      const e = ms.find((e): e is EditToFrame => e.measurement === 'edit_to_frame' && e.scene === m.scene && e.edit === kind);
      return m.tier === 'fast' && e ? `${f(e.median_ms)} / ${f(e.max_ms)} (${e.tiers.join(', ')})` : '';
    };
    rows.push([m.scene, m.tier, String(m.groups), f(m.parse_ms), f(m.check_lower_ms), f(m.fuse_ms), f(m.codegen_ms), f(m.binaryen_ms), f(m.instantiate_ms), f(m.total_ms), String(m.wasm_bytes), ...EDIT_KINDS.map(edit)]);
  }
  return textTable(rows);
}
