// Experiment (issue 17, the edit's own cost): where the milliseconds of one edit go, stage by
// stage, on the coordinator, for a corpus scene edited as bench/edit-frame.ts edits it. The
// session's own methods are wrapped with timers (nothing in src changes); the compile worker's
// share is timed here on this thread, stage by stage, for the same IR.
//
//   [EDIT_KIND=shape] node dist/bench/experiments/edit-stages.js [SCENE,...] [EDITS]

import { rmSync } from 'node:fs';
import { editedKernel } from '../edit-frame.js';
import { copyCorpusScene, corpus } from '../corpus-scenes.js';
import { median } from '../reference/measurement.js';
import { Session } from '../../src/main/session.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { dispatch } from '../../src/protocol/dispatcher.js';
import { parseDocument } from '../../src/ir/syntax/index.js';
import { compileFunction } from '../../src/codegen/index.js';

const names = (process.argv[2] ?? 'inline,noise,raymarch').split(',');
const edits = Number(process.argv[3] ?? 9);

type Times = Map<string, number[]>;
const add = (times: Times, stage: string, ms: number) => {
  const list = times.get(stage) ?? [];
  list.push(ms);
  times.set(stage, list);
};

/** Replace obj[name] by a timed copy adding its milliseconds (sync or async) to `stage` of the current edit. */
function time(obj: any, name: string, stage: string, now: () => Times | undefined): void {
  const f = obj[name];
  obj[name] = function (this: unknown, ...args: unknown[]) {
    const t0 = performance.now();
    const r = f.apply(this, args);
    const done = () => now() && add(now()!, stage, performance.now() - t0);
    if (r instanceof Promise) return r.finally(done);
    done();
    return r;
  };
}

for (const name of names) {
  const c = corpus().find((x) => x.name === name)!;
  const { entry, dir, scene: source } = copyCorpusScene(c, 'entelechy-stages-');
  const session = await Session.open(entry, { workers: 2, cacheDir: null });
  let current: Times | undefined;
  const now = () => current;
  const all: Times = new Map();
  try {
    await session.compiler!.ready;
    const s = session as any;
    time(s, 'readAll', 'readAll (parse every document)', now);
    time(s, 'check', 'check (parse, check, lower)', now);
    time(s, 'prepareScene', 'prepareScene (fuse + prepare)', now);
    time(s, 'prepare', 'prepare (digest + worker)', now);
    time(s.compiler, 'compile', 'worker round trip', now);
    time(s, 'prepareWrite', 'journal steps 1-2 (beside the compile)', now);
    time(Engine.prototype, 'allocate', 'engine: allocate', now);
    time(Engine.prototype, 'compile', 'engine: instantiate here', now);
    time(Engine.prototype, 'keepOutputs', 'engine: keepOutputs', now);
    time(s, 'commit', 'session.commit', now);
    // The tier swap after the edit (the optimiser's change, between the frames that follow it).
    let swapping: Times | undefined;
    time(s, 'swapTiers', 'tier swap (after the edit)', () => swapping);
    time(s, 'check', 'tier swap: check', () => swapping);
    const write = s.prepareWrite;
    s.prepareWrite = async function (...args: unknown[]) {
      const w = await write.apply(this, args);
      time(w, 'commit', 'journal steps 3-5 (rename, fsync)', now);
      return w;
    };
    const frame = s.frame;
    s.frame = function (f: (sig: AbortSignal) => Promise<unknown>, signal?: AbortSignal) {
      const asked = performance.now();
      return frame.call(this, async (sig: AbortSignal) => {
        const t0 = performance.now();
        current && add(current, 'frame slot: wait', t0 - asked);
        try {
          return await f(sig);
        } finally {
          current && add(current, 'frame slot: inside', performance.now() - t0);
        }
      }, signal);
    };
    const ask = async (req: object): Promise<any> => {
      const answer = JSON.parse(await dispatch(session, JSON.stringify(req)));
      if (!answer.ok) throw new Error(JSON.stringify(answer.error));
      return answer.ok;
    };
    let t = 0.5;
    await ask({ op: 'evaluate', time: t });
    for (let i = 0; i < edits; i++) {
      await session.optimiser?.idle();
      const edit = editedKernel(source, i, (process.env.EDIT_KIND as 'literal' | 'shape' | undefined) ?? 'literal')!;
      const times: Times = new Map();
      current = times;
      const t0 = performance.now();
      const composed = await ask({ op: 'compose', edits: [{ kernel: edit.id, text: edit.text }] });
      const t1 = performance.now();
      current = undefined;
      const answer = await ask({ op: 'evaluate', time: (t += 1) });
      const t2 = performance.now();
      add(times, 'compose (whole request)', t1 - t0);
      add(times, 'compile_ms (published)', composed.events.find((e: any) => e.kind === 'published' && e.compile_ms !== undefined)?.compile_ms ?? NaN);
      add(times, 'evaluate (whole request)', t2 - t1);
      add(times, 'frame (timings)', answer.timings.reduce((n: number, x: any) => n + x.millis, 0));
      // This thread, for the same IR: what the worker does with it (codegen with binaryen's emit, then V8's compile).
      const groups = sceneGroups(session.scene, [...session.pins], session.fuse);
      const p0 = performance.now();
      for (const k of session.scene.documents) parseDocument(k.path, k.text);
      add(times, '(here) parse every document once', performance.now() - p0);
      let cg = 0;
      let v8 = 0;
      for (const g of groups) {
        const a = performance.now();
        const bytes = compileFunction(g.ir, { tier: 'fast' });
        const b = performance.now();
        new WebAssembly.Module(bytes);
        cg += b - a;
        v8 += performance.now() - b;
      }
      add(times, '(here) codegen fast', cg);
      add(times, '(here) new WebAssembly.Module (TurboFan)', v8);
      for (const [k, v] of times) add(all, k, v.reduce((n, x) => n + x, 0));
      swapping = times;
      await ask({ op: 'evaluate', time: (t += 1) });
      await session.optimiser?.idle();
      swapping = undefined;
      for (const [k, v] of times) if (k.startsWith('tier swap')) add(all, k, v.reduce((n, x) => n + x, 0));
    }
  } finally {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${name}: ${edits} edits, medians (min-max) ms`);
  for (const [k, v] of all) console.log(`  ${k.padEnd(44)} ${median(v).toFixed(2).padStart(7)}  (${Math.min(...v).toFixed(2)}-${Math.max(...v).toFixed(2)})`);
}
