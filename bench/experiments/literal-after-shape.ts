// Experiment (issue 17, rapid edits): literal edits made right after a shape edit, before the
// optimiser has made the new form (a slider dragged just after a term was typed). Per round: a
// shape edit of the scene's last kernel (as bench/edit-frame.ts makes it) and its frame, then at
// once 3 edits of a literal of the new text, each with its frame. Prints, per scene, the medians
// of each edit's edit to frame and how many of the literal edits compiled a module.
//
//   node dist/bench/experiments/literal-after-shape.js [SCENE,...] [EDITS]

import { rmSync } from 'node:fs';
import { editedKernel, warmedUp } from '../edit-frame.js';
import { copyCorpusScene, corpus } from '../corpus-scenes.js';
import { median } from '../reference/measurement.js';
import { Session } from '../../src/main/session.js';
import { dispatch } from '../../src/protocol/dispatcher.js';

const names = (process.argv[2] ?? 'raymarch,inline,noise,straight').split(',');
const edits = Number(process.argv[3] ?? 7);

for (const name of names) {
  const c = corpus().find((x) => x.name === name)!;
  const { entry, dir, scene: source } = copyCorpusScene(c, 'entelechy-literal-after-shape-');
  const session = await Session.open(entry, { workers: 2, cacheDir: null });
  const ask = async (req: object): Promise<any> => {
    const answer = JSON.parse(await dispatch(session, JSON.stringify(req)));
    if (!answer.ok) throw new Error(JSON.stringify(answer.error));
    return answer.ok;
  };
  const shapeMs: number[] = [];
  const literalMs: number[][] = [[], [], []];
  const compiled = [0, 0, 0];
  try {
    let t = 0.5;
    await ask({ op: 'evaluate', time: t });
    await warmedUp(session);
    const timed = async (text: string, id: string): Promise<number> => {
      const t0 = performance.now();
      await ask({ op: 'compose', edits: [{ kernel: id, text }] });
      await ask({ op: 'evaluate', time: (t += 1) });
      return performance.now() - t0;
    };
    for (let i = 0; i < edits; i++) {
      await session.optimiser?.idle();
      // The shape edit wraps a literal L as `(L + x * 0.0)`; here L also takes digits no other
      // literal has (a literal equal to another shares its slot: nudged, it is another form), and
      // the literal edits nudge them.
      const edited = editedKernel(source, i, 'shape')!;
      const nudged = (last: number) => edited.text.replace(/\((\d+\.\d+) \+/, (_, l: string) => `(${l}${String(i + 1).padStart(3, '0')}${last} +`);
      shapeMs.push(await timed(nudged(1), edited.id));
      for (let k = 0; k < 3; k++) {
        const before = session.modules.compiled;
        literalMs[k].push(await timed(nudged(k + 2), edited.id));
        compiled[k] += session.modules.compiled - before;
      }
    }
  } finally {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (xs: number[]) => median(xs).toFixed(1).padStart(6);
  console.log(`${name.padEnd(9)} shape ${f(shapeMs)} ms, then literal edits ${literalMs.map((l, k) => `${f(l)} (compiled ${compiled[k]}/${edits})`).join(', ')}`);
}
