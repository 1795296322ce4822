// Experiment (issue 17, the edit's commit): the coordinator's CPU in prepareModules and the
// engine's digests for a scene's fresh group IRs (as each edit makes them), the compiler a stand-in
// that hands back one module at once: what is left is hashing the IR and the disk cache's look-ups.
//
//   node dist/bench/experiments/prepare-cpu.js [SCENE,...]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { corpus, loadCorpusScene } from '../corpus-scenes.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { irDigest, prepareModules, type ModuleCompiler } from '../../src/main/modules.js';
import { median } from '../reference/measurement.js';

const names = (process.argv[2] ?? 'inline,noise,raymarch').split(',');
const dir = mkdtempSync(join(tmpdir(), 'entelechy-prepare-'));
const module = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
const standIn: ModuleCompiler = async (irs) => irs.map(() => ({ module, bytes: new Uint8Array(8) }));
try {
  for (const name of names) {
    const scene = loadCorpusScene(corpus().find((c) => c.name === name)!);
    const cpu: number[] = [];
    for (let i = 0; i < 12; i++) {
      // A fresh IR each time, as an edit makes.
      for (const k of scene.kernels.values()) (k.ir as { fuel: number }).fuel += 1;
      const groups = sceneGroups(scene, [], true);
      const c0 = process.cpuUsage();
      await prepareModules(groups.map((g) => g.ir), standIn, dir, 'fast');
      for (const g of groups) irDigest(g.ir); // the engine's, as it is built
      const u = process.cpuUsage(c0);
      cpu.push((u.user + u.system) / 1000);
    }
    console.log(`${name.padEnd(10)} CPU ms per edit: median ${median(cpu).toFixed(2)}, min ${Math.min(...cpu).toFixed(2)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
