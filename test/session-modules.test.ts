// A session's coordinator never loads the compiler (binaryen takes about a second to import and
// ~100 MB): modules come from the disk cache or the compile worker, for opening, compose, pins,
// `trace`'s copy of the world and migrations alike (src/main/modules.ts). A second session on the
// same scene reads every module from the disk cache. Run in child processes, because this test's
// own process has loaded the compiler (test/helpers.ts).

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COUNT_STEP_V1, COUNT_STEP_V2 } from './fixtures.js';
import { scratchDir } from './scratch.js';

const SCENE = `${COUNT_STEP_V1}

kernel count.double@1 {
  in src: field2<f32>;
  out result: field2<f32>;
  each (x, y) { result = src * 2.0; }
}

node board: count.step@1 { size = 8 x 4; }
node twice: count.double@1 { size = 8 x 4; src <- board.result; }
output result <- twice.result;
`;

const V2 = COUNT_STEP_V2;

// What the child does: every path that builds an engine, then what it saw.
const SCRIPT = `
const { Session, dispatch } = await import(process.env.ENTRY);
const { compilerLoaded } = await import(process.env.MODULES);
const s = await Session.open(process.env.SCENE, { workers: 1 });
const req = async (o) => JSON.parse(await dispatch(s, JSON.stringify(o)));
const answers = [];
if (process.env.CHANGE) {
  answers.push(await req({ op: 'evaluate' }));
  answers.push(await req({ op: 'compose', edits: [{ kernel: 'count.step@2', text: process.env.V2 }, { node: 'board', text: 'node board: count.step@2 { size = 8 x 4; }' }] }));
  answers.push(await req({ op: 'pin', node: 'board' }));
  answers.push(await req({ op: 'trace', x: 1, y: 0 }));
}
answers.push(await req({ op: 'evaluate' }));
console.log(JSON.stringify({ loaded: compilerLoaded(), modules: s.modules, answers }));
await s.close();
`;

function child(scene: string, cache: string, change: boolean) {
  // A file, not `-e`: the pool's threads inherit the process's flags, and `--input-type` is refused there.
  const script = join(scratchDir('entelechy-child-'), 'child.mjs');
  writeFileSync(script, SCRIPT);
  const r = spawnSync(process.execPath, [script], {
    encoding: 'utf8',
    env: {
      ...process.env, ENTELECHY_CACHE_DIR: cache, SCENE: scene, V2, CHANGE: change ? '1' : '',
      ENTRY: new URL('../src/index.js', import.meta.url).href, MODULES: new URL('../src/main/modules.js', import.meta.url).href,
    },
  });
  if (r.status !== 0) throw new Error(`the child failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { loaded: boolean; modules: { compiled: number; read: number }; answers: { ok?: Record<string, unknown>; error?: unknown }[] };
}

t.test('the coordinator never loads the compiler; a second session reads its modules from disk', async (t) => {
  const dir = scratchDir('entelechy-session-modules-');
  const cache = scratchDir('entelechy-cache-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);

  const first = child(join(dir, 'scene.esn'), cache, true);
  for (const a of first.answers) t.ok(a.ok, JSON.stringify(a));
  const events = (first.answers[1].ok as { events: { kind: string }[] }).events;
  t.ok(events.some((e) => e.kind === 'migrated'), 'the compose migrated the state');
  const trace = first.answers[3].ok as { values: { node: string; port: string; value: number }[] };
  t.ok(trace.values.some((v) => v.node === 'twice' && v.port === 'result'), 'trace read every node of the copy');
  t.equal(first.loaded, false, 'binaryen never loaded on the coordinator');
  // Fused, then the new kernel fused, then pinned apart, then each node alone for trace, and the migration.
  t.ok(first.modules.compiled >= 4, `compiled on the worker: ${JSON.stringify(first.modules)}`);
  t.equal(first.modules.read, 0);
  const files = readdirSync(cache).filter((n) => n.endsWith('.wasm'));
  // (and the optimised tier's, compiled in the background after the fast one, when it finished before the session closed)
  t.ok(files.length >= first.modules.compiled, `each compiled module was written to the disk cache: ${files.length} files, ${first.modules.compiled} compiled`);

  const again = child(join(dir, 'scene.esn'), cache, false);
  t.ok(again.answers[0].ok, JSON.stringify(again.answers[0]));
  t.equal(again.loaded, false);
  t.same(again.modules, { compiled: 0, read: 2 }, 'the scene as written (its two groups) read from disk, nothing compiled');

  const off = child(join(dir, 'scene.esn'), 'off', false);
  t.same(off.modules, { compiled: 2, read: 0 }, 'with the cache off, compiled on the worker');
  t.equal(off.loaded, false);
});

t.test('the compile worker is ended only once binaryen has loaded on it, and compiles modules with their bytes', async (t) => {
  const { CompileWorker } = await import('../src/main/compiler.js');
  // Ending the thread mid-load can crash Node 20 outright (src/workers/loaded.ts): close waits.
  const early = new CompileWorker();
  let loaded = false;
  void early.ready.then(() => (loaded = true));
  await early.close();
  t.ok(loaded, 'closed at once after starting: it waited for the load');

  const { textScene } = await import('./helpers.js');
  const { sceneGroups } = await import('../src/main/scene-groups.js');
  const scene = textScene({ 'scene.esn': SCENE });
  const irs = sceneGroups(scene, [], true).map((g) => g.ir);
  const worker = new CompileWorker();
  t.teardown(() => worker.close());
  const compiled = await worker.compile(irs, 'optimised');
  t.equal(compiled.length, irs.length);
  for (const c of compiled) {
    t.ok(c.module instanceof WebAssembly.Module);
    t.ok(WebAssembly.validate(c.bytes), 'the bytes are the module, for the disk cache');
  }
});
