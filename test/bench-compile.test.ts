// `bench --compile` (issue 17): edit to first frame split into its parts, and the chain scene
// interpreted against compiled. One short run each: the parts are there and add up, the frames
// after the edit are measured on both tiers, and the chain's outputs are compared bit for bit.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { corpus } from '../bench/compile.js';
import { benchChain, sameBits } from '../bench/chain.js';
import { editedKernel, editToFrame } from '../bench/edit-frame.js';
import { ROOT } from './helpers.js';

t.test('edit to frame: compile, commit, the frame and what is around it, then both tiers\' frames', async (t) => {
  const rings = corpus().find((c) => c.name === 'rings')!;
  for (const kind of ['literal', 'shape'] as const) {
    const e = (await editToFrame(rings, 3, kind))!;
    t.equal(e.edit, kind);
    t.equal(e.samples, 3);
    for (const k of ['compile_ms', 'commit_ms', 'frame_ms', 'around_ms', 'optimised_first_ms', 'optimised_next_ms', 'cpu_ms'] as const) t.ok(Number.isFinite(e[k]) && e[k] >= 0, `${kind}: ${k} measured: ${e[k]}`);
    // Every edit is a new function: were one the same IR as an earlier edit's, its frame would run that edit's optimised module.
    t.same(e.tiers, ['fast'], `${kind}: the frame after each edit runs the fast tier`);
    t.equal(e.load.length, 2);
    if (kind === 'shape') t.ok(e.compile_ms > 0, 'a shape edit compiles its module (the published event says how long)');
  }
});

t.test('the edits: a literal nudged differently each time, or a shape of its own each time', async (t) => {
  const { loadCorpusScene } = await import('../bench/compile.js');
  const scene = loadCorpusScene(corpus().find((c) => c.name === 'rings')!);
  t.match(editedKernel(scene, 0)!.text, /\(0\.5001 \+ warmth\)/);
  t.match(editedKernel(scene, 1)!.text, /\(0\.5002 \+ warmth\)/);
  t.match(editedKernel(scene, 0, 'shape')!.text, /\(\(0\.5 \+ x \* 0\.0\) \+ warmth\)/);
  t.match(editedKernel(scene, 1, 'shape')!.text, /\(\(0\.5 \+ x \* 0\.0 \+ x \* 0\.0\) \+ warmth\)/);
});

t.test('the chain scene: interpreted and compiled, the same bits', async (t) => {
  const c = await benchChain([24, 8]);
  t.equal(c.nodes, 9);
  t.same([c.width, c.height], [24, 8]);
  t.ok(c.same_bits, 'the interpreter and both tiers agree bit for bit');
  t.ok(c.interp_ms > 0 && c.fast_ms > 0 && c.optimised_ms > 0);
  t.equal(c.ratio_fast, c.interp_ms / c.fast_ms);
  // The comparison itself: one differing bit in one plane is told.
  const a = [new Uint32Array([1, 2, 3])];
  t.ok(sameBits(a, [new Uint32Array([1, 2, 3])]));
  t.notOk(sameBits(a, [new Uint32Array([1, 2, 7])]), 'a differing element is seen');
});

t.test('bench --compile names the chain scene among those --scenes takes', async (t) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'bench', '--compile', '--scenes', 'nothing'], { encoding: 'utf8' });
  t.equal(r.status, 1);
  t.match(r.stderr, /--scenes: `nothing` is not a corpus scene; they are blur, castle, .*, straight, chain/);
});
