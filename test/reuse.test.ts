// Per-group reuse (src/main/reuse.ts): a group whose inputs did not change is not run again, in
// the next frame or in the engine an edit builds. Every step below runs on an engine with reuse
// and on one without (cacheFrames: false), and every output must agree bit for bit; the reports
// must say which nodes ran and which were kept.

import t, { type Test } from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { carryWorld } from '../src/main/carry.js';
import { Engine, type FrameReport } from '../src/main/engine.js';
import { EvaluationError } from '../src/main/evaluation-error.js';
import { fillField, readField } from '../src/main/field.js';
import type { FrameInput } from '../src/main/uniforms.js';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scene } from './engine-fixtures.js';
import { bits, ROOT, sameBytes } from './helpers.js';
import { scratchDir } from './scratch.js';

// src reads the input, wide gathers src, count keeps state, anim (fused into mix) reads the
// clock, mix reads them all with the params gain and spin (spin set: out of fuel), tail after it
// reads wide only.
const SCENE = `param gain: f32 = 1.0;
param spin: f32 = 0.0;
input img: field2<f32> = 0.5 size 8 x 6;
kernel t.src@1 {
  grants field.read;
  in img: field2<f32>;
  out r: field2<f32>;
  each (x, y) { r = img.at(x + 1, y) * 3.0 + hash(x, y); }
}
kernel t.wide@1 {
  grants field.read;
  in s: field2<f32>;
  out r: field2<f32>;
  each (x, y) { r = s.at(x - 1, y) + s.at(x, y + 1) * 0.5; }
}
kernel t.count@1 {
  grants field.write;
  state n: field2<f32> = 0.0;
  out r: field2<f32>;
  each (x, y) { n = n + 1.0; r = n * 0.25; }
}
kernel t.anim@1 {
  grants time.read;
  out r: field2<f32>;
  each (x, y) { r = sin(time + f32(x)); }
}
kernel t.mix@1 {
  grants field.read;
  in w: field2<f32>;
  in c: field2<f32>;
  in a: field2<f32>;
  in gain: f32 = 1.0;
  in spin: f32 = 0.0;
  out r: field2<f32>;
  each (x, y) {
    let k = 0;
    while (spin > 0.5) { k++; }
    r = (w.at(x, y) + c.at(x, y)) * gain + a + f32(k);
  }
}
kernel t.tail@1 {
  grants field.read;
  in w: field2<f32>;
  out r: field2<f32>;
  each (x, y) { r = w.at(x, y - 1) * 2.0; }
}
node src: t.src@1 { size = 8 x 6; img <- img; }
node wide: t.wide@1 { size = 8 x 6; s <- src.r; }
node count: t.count@1 { size = 8 x 6; }
node anim: t.anim@1 { size = 8 x 6; }
node mix: t.mix@1 { size = 8 x 6; w <- wide.r; c <- count.r; a <- anim.r; gain = gain; spin = spin; }
node tail: t.tail@1 { size = 8 x 6; w <- wide.r; }
output o <- mix.r;
output p <- tail.r;
output q <- src.r;
`;

type Step = (e: Engine) => void;

/** An engine with reuse and one without, stepped alike; `frame` compares their outputs bit for bit. */
function pair(text: string, t: Test) {
  const make = (reuse: boolean) => {
    const e = new Engine(scene(text), { backend: 'interp', cacheFrames: reuse });
    t.teardown(() => e.dispose());
    return e;
  };
  const p = { reuse: make(true), full: make(false) };
  return {
    ...p,
    step(f: Step) {
      f(p.reuse);
      f(p.full);
    },
    async frame(input: FrameInput, what: string): Promise<FrameReport> {
      const report = await p.reuse.evaluate(input);
      const full = await p.full.evaluate(input);
      t.same(full.reused, [], 'without reuse every node runs');
      sameOutputs(t, p.reuse, p.full, what);
      return report;
    },
  };
}

function sameOutputs(t: Test, a: Engine, b: Engine, what: string): void {
  for (const o of a.scene.outputs) {
    const x = readField(a.memory, a.outputField(o.name)!).map(bits);
    const y = readField(b.memory, b.outputField(o.name)!).map(bits);
    t.ok(x.every((plane, i) => sameBytes(plane, y[i])), `${what}: output ${o.name} bit for bit as a full recompute`);
  }
}

const ran = (r: FrameReport) => [r.executed, r.reused];

t.test('within an engine: only the groups whose inputs changed run, and the bytes are a full recompute\'s', async (t) => {
  const p = pair(SCENE, t);
  t.same(p.reuse.groups.map((g) => g.nodes.map((n) => n.name)), [['src'], ['wide'], ['count'], ['anim', 'mix'], ['tail']], 'the groups (anim fused into mix)');
  t.same(ran(await p.frame({ time: 0 }, 'first frame')), [['src', 'wide', 'count', 'anim', 'mix', 'tail'], []], 'the first frame runs everything');
  const second = await p.frame({ time: 1 }, 'the clock moved');
  t.same(ran(second), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']], 'the clock moved: what reads it and the state run');
  t.same(
    second.placements.filter((x) => x.reused).map((x) => [x.node, x.group, x.tiles]),
    [['src', 0, 0], ['wide', 1, 0], ['tail', 4, 0]],
    'a reused node is placed in its group, in no tile, flagged reused',
  );
  t.same(second.timings.map((x) => x.node), ['count', 'mix'], 'timings are of the groups that ran');
  p.step((e) => e.params.set('gain', [2]));
  t.same(ran(await p.frame({ time: 1 }, 'a param')), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']]);
  p.step((e) => {
    fillField(e.memory, e.fields.input('img')!, [0.25]);
    e.version++;
  });
  t.same(ran(await p.frame({ time: 1 }, 'a write')), [['src', 'wide', 'count', 'anim', 'mix', 'tail'], []], 'a write into the input: its readers and theirs run');
  t.same(ran(await p.frame({ time: 1, pointer: { x: 1, y: 2, down: true }, keys: ['a'] }, 'pointer and keys')), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']], 'nothing reads pointer or keys');

  // A failed frame: mix runs out of fuel after src, wide and count ran; tail was not reached.
  p.step((e) => e.params.set('spin', [1]));
  p.step((e) => {
    fillField(e.memory, e.fields.input('img')!, [0.75]);
    e.version++;
  });
  for (const e of [p.reuse, p.full]) await t.rejects(e.evaluate({ time: 2 }), EvaluationError, 'out of fuel');
  p.step((e) => e.params.set('spin', [0]));
  t.same(ran(await p.frame({ time: 2 }, 'after a failed frame')), [['count', 'anim', 'mix', 'tail'], ['src', 'wide']], 'what the failed frame completed is kept; tail, not reached, runs');
  t.same(ran(await p.frame({ time: 2 }, 'again')), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']]);

  p.step((e) => e.reset());
  t.same(ran(await p.frame({}, 'after reset')), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']], 'reset: the state and the clock go back; what reads neither is kept');
});

t.test('a stateless scene: a repeated frame is still served whole (cached), a moved clock reruns only its readers', async (t) => {
  const p = pair(SCENE.replace('node count: t.count@1 { size = 8 x 6; }', 'node count: t.anim@1 { size = 8 x 6; }'), t);
  await p.frame({ time: 0 }, 'first');
  const again = await p.reuse.evaluate({ time: 0 });
  t.same([again.cached, again.executed, again.reused], [true, [], ['src', 'wide', 'count', 'anim', 'mix', 'tail']], 'cached: every node kept');
  await p.full.evaluate({ time: 0 });
  t.same(ran(await p.frame({ time: 3 }, 'the clock')), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']]);
});

/** `text` with `from` replaced by `to` (which must be there). */
function edited(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`no \`${from}\``);
  return text.replace(from, to);
}

/** The engine an edit builds from `old` (as commit does: carryWorld), with reuse or without. */
async function next(t: Test, old: Engine, text: string, reuse: boolean): Promise<Engine> {
  const e = new Engine(scene(text), { backend: 'interp', cacheFrames: reuse });
  t.teardown(() => e.dispose());
  await carryWorld(new Map(), old, e);
  return e;
}

t.test('across an edit: the new engine takes over the outputs of the groups the edit left as they were', async (t) => {
  const p = pair(SCENE, t);
  await p.frame({ time: 0 }, 'first');
  await p.frame({ time: 1 }, 'second');
  p.step((e) => {
    fillField(e.memory, e.fields.input('img')!, [0.125]);
    e.version++;
  });
  await p.frame({ time: 1 }, 'a write');

  const check = async (text: string, input: FrameInput, what: string, old = p.reuse) => {
    const reuse = await next(t, old, text, true);
    const full = await next(t, old, text, false);
    for (const e of [reuse, full]) e.params.set('spin', [0]);
    const report = await reuse.evaluate(input);
    await full.evaluate(input);
    sameOutputs(t, reuse, full, what);
    return { report, reuse };
  };
  const last = edited(SCENE, 'w.at(x, y - 1) * 2.0', 'w.at(x, y - 1) * 2.5');
  const tail = await check(last, { time: 1 }, 'an edit of the last node');
  t.same(ran(tail.report), [['count', 'anim', 'mix', 'tail'], ['src', 'wide']], 'an edit of tail: src and wide are taken over (the input written is kept too)');
  t.same(ran(await tail.reuse.evaluate({ time: 1 })), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']], 'and its next frame keeps tail as well');

  const first = await check(edited(SCENE, '* 3.0 + hash', '* 3.5 + hash'), { time: 1 }, 'an edit of the first node');
  t.same(ran(first.report), [['src', 'wide', 'count', 'anim', 'mix', 'tail'], []], 'an edit of src: everything reading it, transitively, runs');

  const resized = await check(edited(SCENE, 'input img: field2<f32> = 0.5 size 8 x 6;', 'input img: field2<f32> = 0.5 size 9 x 6;'), { time: 1 }, 'an input redeclared');
  t.same(ran(resized.report), [['src', 'wide', 'count', 'anim', 'mix', 'tail'], []], 'an input redeclared starts from its declaration: its readers run');

  const param = await check(edited(SCENE, 'param gain: f32 = 1.0;', 'param gain: f32 = 1.0;\nparam other: f32 = 4.0;'), { time: 5 }, 'a param added, the clock moved');
  t.same(ran(param.report), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']], 'nothing read changed: src, wide and tail kept');
});

t.test('a group whose run failed runs again, in its engine and in the next; the rest is kept', async (t) => {
  // Stateless (count reads the clock instead), so nothing but the failure makes mix run again.
  const text = SCENE.replace('node count: t.count@1 { size = 8 x 6; }', 'node count: t.anim@1 { size = 8 x 6; }');
  const p = pair(text, t);
  await p.frame({ time: 3 }, 'first');
  p.step((e) => e.params.set('spin', [1]));
  for (const e of [p.reuse, p.full]) await t.rejects(e.evaluate({ time: 3 }), EvaluationError, 'out of fuel');
  const edit = edited(text, 'param spin: f32 = 0.0;', 'param spin: f32 = 0.0;\nparam more: f32 = 1.0;');
  const reuse = await next(t, p.reuse, edit, true);
  const full = await next(t, p.reuse, edit, false);
  p.step((e) => e.params.set('spin', [0]));
  for (const e of [reuse, full]) e.params.set('spin', [0]);
  t.same(ran(await p.frame({ time: 3 }, 'after the failed frame')), [['anim', 'mix'], ['src', 'wide', 'count', 'tail']], 'mix, which failed, runs; the rest is kept');
  const taken = await reuse.evaluate({ time: 3 });
  await full.evaluate({ time: 3 });
  sameOutputs(t, reuse, full, 'the engine after an edit');
  t.same(ran(taken), [['anim', 'mix'], ['src', 'wide', 'count', 'tail']], 'the next engine takes over all but the group that failed');
});

t.test('a tier swap (keepFrame) keeps every output readable and what each was computed from', async (t) => {
  const old = new Engine(scene(SCENE), { backend: 'interp' });
  t.teardown(() => old.dispose());
  await old.evaluate({ time: 0 });
  await old.evaluate({ time: 1 });
  const swapped = new Engine(old.scene, { backend: 'interp' });
  t.teardown(() => swapped.dispose());
  swapped.keepFrame(old);
  await carryWorld(new Map(), old, swapped);
  sameOutputs(t, swapped, old, 'before a frame');
  const full = await next(t, old, SCENE, false);
  full.keepFrame(old);
  const report = await swapped.evaluate({ time: 1 });
  await full.evaluate({ time: 1 });
  t.same(ran(report), [['count', 'anim', 'mix'], ['src', 'wide', 'tail']]);
  sameOutputs(t, swapped, full, 'the frame after the swap');
});

t.test('a session on compiled code: an edit of the last node runs it alone, and the picture is the interpreter\'s', async (t) => {
  const dir = scratchDir('entelechy-reuse-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The stencil corpus scene, small: the interpreter recomputes it whole to compare.
  const text = readFileSync(join(ROOT, 'bench', 'corpus', 'stencil.esn'), 'utf8').replaceAll('512 x 512', '48 x 40');
  writeFileSync(join(dir, 'scene.esn'), text);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 2, cacheDir: null, bandRows: 8 });
  t.teardown(() => s.close());
  const ask = async (req: object): Promise<any> => {
    const answer = JSON.parse(await dispatch(s, JSON.stringify(req)));
    if (!answer.ok) throw new Error(answer.error.message);
    return answer.ok;
  };
  const interpreted = async () => {
    const e = new Engine(s.scene, { backend: 'interp' });
    try {
      await e.evaluate({ time: s.engine.time });
      sameOutputs(t, s.engine, e, `revision ${s.revision}`);
    } finally {
      e.dispose();
    }
  };
  t.same([(await ask({ op: 'evaluate', time: 0.5 })).executed], [['source', 'wide', 'sharpen']]);
  await interpreted();
  const sharpen = (k: string) => text.slice(text.indexOf('kernel corpus.sharpen@1'), text.indexOf('\nnode')).trim().replace('* 2.0', k);
  for (const [i, k] of ['* 2.25', '* 1.75'].entries()) {
    await ask({ op: 'compose', edits: [{ kernel: 'corpus.sharpen@1', text: sharpen(k) }] });
    const frame = await ask({ op: 'evaluate', time: 1 + i });
    t.same([frame.executed, frame.reused], [['sharpen'], ['source', 'wide']], `edit ${i + 1} of sharpen: it runs alone`);
    await interpreted();
  }
  // The optimised tier swapped in (or not yet): the frames keep the same bits.
  await s.optimiser!.idle();
  t.same((await ask({ op: 'evaluate', time: 5 })).executed, [], 'nothing read changed: every node kept');
  await interpreted();
  const wide = text.slice(text.indexOf('kernel corpus.wide@1'), text.indexOf('kernel corpus.sharpen@1')).trim().replace('0.08', '0.09');
  await ask({ op: 'compose', edits: [{ kernel: 'corpus.wide@1', text: wide }] });
  const upstream = await ask({ op: 'evaluate', time: 6 });
  t.same([upstream.executed, upstream.reused], [['wide', 'sharpen'], ['source']], 'an edit of wide: it and sharpen run');
  await interpreted();
});

t.test('a frame cancelled in the middle of a group on the pool: that group and what reads it run again, as the interpreter computes them', async (t) => {
  const dir = scratchDir('entelechy-reuse-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The 81-tap wide node at 192 x 160 takes milliseconds on the pool: a deadline of 1 ms stops it.
  const text = readFileSync(join(ROOT, 'bench', 'corpus', 'stencil.esn'), 'utf8').replaceAll('512 x 512', '192 x 160');
  writeFileSync(join(dir, 'scene.esn'), text);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 2, cacheDir: null, bandRows: 4 });
  t.teardown(() => s.close());
  const send = async (req: object): Promise<any> => JSON.parse(await dispatch(s, JSON.stringify(req)));
  t.ok((await send({ op: 'evaluate', time: 0.5 })).ok);
  const wide = text.slice(text.indexOf('kernel corpus.wide@1'), text.indexOf('kernel corpus.sharpen@1')).trim().replace('0.08', '0.07');
  t.ok((await send({ op: 'compose', edits: [{ kernel: 'corpus.wide@1', text: wide }] })).ok);
  const stopped = await send({ op: 'evaluate', time: 1, deadline: 1 });
  t.match(stopped, { error: { cancelled: true, reason: 'deadline' } }, 'the frame stopped');
  const again = (await send({ op: 'evaluate', time: 1 })).ok;
  // Where the deadline fell depends on the machine (most likely in wide): sharpen never finished.
  t.ok(again.executed.includes('sharpen') && again.reused.includes('source'), `sharpen runs again, source is kept (ran ${again.executed.join(', ')})`);
  const e = new Engine(s.scene, { backend: 'interp' });
  t.teardown(() => e.dispose());
  await e.evaluate({ time: 1 });
  sameOutputs(t, s.engine, e, 'after the stopped frame');
});
