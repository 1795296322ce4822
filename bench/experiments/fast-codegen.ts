// Experiment (issue 17, the fast tier's codegen): the fast tier's compile of each corpus scene's
// groups, split as compileFunction reports it (codegen: analyse, plan, emit; binaryen: validate,
// emitBinary), in interleaved rounds (scene A, B, C, A, B, C, ...) on this thread, so that every
// scene sees the same moment of the machine and the same warmth of the JIT (ours and binaryen's
// own wasm). Round 1 is printed alone: it is the cold compile, the rest is the warm one.
//
//   node dist/bench/experiments/fast-codegen.js [SCENE,...] [ROUNDS]

import { rmSync } from 'node:fs';
import { copyCorpusScene, corpus } from '../corpus-scenes.js';
import { Session } from '../../src/main/session.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { compileFunction, type CompileTimes } from '../../src/codegen/compile.js';
import type { IrFunction } from '../../src/ir/ir.js';

const names = (process.argv[2] ?? 'raymarch,inline,noise').split(',');
const rounds = Number(process.argv[3] ?? 30);

/** Each scene's fused groups' IR, as a session at 256 x 256 makes them (as edit-stages.ts does). */
async function groupsOf(name: string): Promise<IrFunction[]> {
  const c = corpus().find((x) => x.name === name);
  if (!c) throw new Error(`no corpus scene ${name}; the scenes: ${corpus().map((x) => x.name).join(', ')}`);
  const { entry, dir } = copyCorpusScene(c, 'entelechy-fast-codegen-');
  try {
    const session = await Session.open(entry, { workers: 1, cacheDir: null });
    try {
      return sceneGroups(session.scene, [...session.pins], session.fuse).map((g) => g.ir);
    } finally {
      await session.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const scenes = new Map<string, IrFunction[]>();
for (const name of names) scenes.set(name, await groupsOf(name));

const times = new Map<string, CompileTimes[]>();
for (let r = 0; r < rounds; r++) {
  for (const [name, groups] of scenes) {
    groups.forEach((ir, k) => {
      const t: CompileTimes = { codegen_ms: 0, binaryen_ms: 0 };
      compileFunction(ir, { tier: 'fast' }, t);
      const key = `${name} group ${k}`;
      times.set(key, [...(times.get(key) ?? []), t]);
    });
  }
}

const spread = (values: number[]): string => {
  const s = [...values].sort((a, b) => a - b);
  return `${s[0].toFixed(2)}/${s[s.length >> 1].toFixed(2)}/${s[s.length - 1].toFixed(2)}`;
};
console.log(`fast tier, ${rounds} interleaved rounds; ms, round 1 then min/median/max of the others`);
for (const [key, list] of times) {
  const [first, ...rest] = list;
  const codegen = rest.map((t) => t.codegen_ms);
  const binaryen = rest.map((t) => t.binaryen_ms);
  console.log(`  ${key.padEnd(18)} codegen ${first.codegen_ms.toFixed(2).padStart(6)} then ${spread(codegen).padEnd(18)} binaryen ${first.binaryen_ms.toFixed(2).padStart(6)} then ${spread(binaryen)}`);
}
