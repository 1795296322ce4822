// Our modules are compiled by V8's optimising compiler where they are made, never first by its
// baseline compiler (src/codegen/turbofan.ts, issue 17: an edit's first frame ran on baseline
// code). Every module carries a TurboFan hint per function, which V8 accepts (it refuses a module
// whose hints do not match its functions); and in a process that reads the hints, making the
// module compiles each function with TurboFan and running it compiles nothing more.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { corpus } from '../bench/compile.js';
import { compileFunction } from '../src/codegen/compile.js';
import { loadScene } from '../src/ir/check/scene.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

/** The inline corpus scene's group: a run function and math functions (sin, cos) beside it. */
function inlineIr() {
  const c = corpus().find((x) => x.name === 'inline')!;
  const scene = loadScene(basename(c.path), { read: (p) => readFileSync(join(dirname(c.path), p), 'utf8') });
  return sceneGroups(scene, [], true)[0].ir;
}

t.test('each tier: one TurboFan hint per function, which V8 takes', async (t) => {
  const ir = inlineIr();
  for (const tier of ['fast', 'optimised'] as const) {
    // This process reads hints (instantiate.ts sets the flag): a wrong count is a CompileError.
    const module = new WebAssembly.Module(compileFunction(ir, { tier }));
    const hints = WebAssembly.Module.customSections(module, 'compilationHints');
    t.equal(hints.length, 1, `${tier}: one hints section`);
    const bytes = [...new Uint8Array(hints[0])];
    t.ok(bytes[0] >= 1, `${tier}: hints for ${bytes[0]} functions`);
    t.same(bytes.slice(1), new Array(bytes[0]).fill(0x2a), `${tier}: each eager, TurboFan and TurboFan`);
  }
});

t.test('made in a fresh process, every function is compiled by TurboFan at once and none by Liftoff', async (t) => {
  const dir = scratchDir('entelechy-turbofan-');
  const wasm = join(dir, 'inline.wasm');
  writeFileSync(wasm, compileFunction(inlineIr(), { tier: 'fast' }));
  // The child loads no binaryen: the only WebAssembly it compiles is the module.
  const instantiate = pathToFileURL(join(ROOT, 'dist', 'src', 'codegen', 'instantiate.js')).href;
  const script = `
    await import(${JSON.stringify(instantiate)});
    const module = new WebAssembly.Module(new Uint8Array((await import('node:fs')).readFileSync(${JSON.stringify(wasm)})));
    console.log('made');
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
    new WebAssembly.Instance(module, { env: { memory } }).exports.run(0, 0, 0);
    console.log('ran');`;
  const r = spawnSync(process.execPath, ['--trace-wasm-compilation-times', '--input-type=module', '-e', script], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  const compiled = (tier: string, upTo: number) => lines.slice(0, upTo).filter((l) => l.includes(`using ${tier}`)).length;
  const made = lines.indexOf('made');
  t.ok(made >= 0, 'the module was made');
  t.ok(compiled('TurboFan', made) >= 3, 'run and the math functions compiled by TurboFan as the module was made');
  t.equal(compiled('Liftoff', lines.length), 0, 'nothing compiled by Liftoff, then or when run');
  t.equal(compiled('TurboFan', lines.length), compiled('TurboFan', made), 'running it compiled nothing more');
});
