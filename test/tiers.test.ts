// Two compiled tiers (docs/architecture.md, Tiers): every scene of the compile corpus computes the
// same bits on the fast tier, the optimised tier and the interpreter; a session makes a change
// live on the fast tier and swaps the optimised modules in between frames, with events and
// status saying which tier runs; an optimised compile past its budget is abandoned and the fast
// tier keeps running.

import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { corpus } from '../bench/compile.js';
import { loadScene } from '../src/ir/check/scene.js';
import { irDigest, loadCompiler } from '../src/main/modules.js';
import { BackgroundOptimiser, type OptimiserSite } from '../src/main/optimiser.js';
import { Session } from '../src/main/session.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { readField } from '../src/main/field.js';
import { bits, exampleScene, firstDifference, run, ROOT, sameBytes } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

t.before(loadCompiler);

t.test('every corpus scene: fast tier = optimised tier = interpreter, bit for bit', async (t) => {
  for (const c of corpus()) {
    // Small 2-D domains (the interpreter is slow); modules do not depend on the size.
    const scene = loadScene(basename(c.path), { read: (p) => readFileSync(join(dirname(c.path), p), 'utf8'), size: [21, 9] });
    t.equal(scene.diagnostics.length, 0, `${c.name} checks`);
    const interp = await run(scene, { backend: 'interp' }, 2);
    const fast = await run(scene, { backend: 'jit', tier: 'fast' }, 2);
    const optimised = await run(scene, { backend: 'jit', tier: 'optimised' }, 2);
    t.equal(firstDifference(fast, interp), undefined, `${c.name}: fast tier = interpreter`);
    t.equal(firstDifference(optimised, interp), undefined, `${c.name}: optimised tier = interpreter`);
  }
});

/**
 * A copy of a scene with a constant changed: modules are cached per process by their IR, and the
 * first test compiled the corpus's own.
 */
function copyScene(file: string, from: string, to: string): string {
  const dir = scratchDir('entelechy-tiers-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no \`${from}\``);
  writeFileSync(join(dir, 'scene.esn'), text.replace(from, to));
  return join(dir, 'scene.esn');
}

async function ask(s: Session, req: object): Promise<any> {
  const answer = JSON.parse(await dispatch(s, JSON.stringify(req)));
  if (!answer.ok) throw new Error(answer.error.message);
  return answer.ok;
}

const output = (s: Session) => readField(s.memory, s.engine.outputField(s.scene.outputs[0].name)!).map(bits);

t.test('a session runs the fast tier first, then swaps in the optimised one between frames', async (t) => {
  const path = copyScene(join(ROOT, 'examples', 'mandelbrot', 'scene.esn'), '<= 16.0', '<= 17.0');
  // A budget no machine reaches: this test is about the swap, not the budget.
  const s = await Session.open(path, { workers: 1, cacheDir: null, optimiseBudget: 600_000 });
  t.teardown(() => s.close());
  const first = await ask(s, { op: 'evaluate', time: 0.5 });
  const before = output(s);
  // The optimised module may be swapped in before this first frame: a tier swap waits only for frames running.
  const optimisedYet = s.pending.some((e) => e.kind === 'optimised');
  if (!optimisedYet) t.same(first.placements.map((p: any) => p.tier), ['fast'], 'the first frame ran on the fast tier');
  await s.optimiser!.idle();
  const told = s.pending.find((e) => e.kind === 'optimised');
  t.ok(told, 'an `optimised` event told the swap');
  t.same(told!.nodes, ['fractal']);
  t.type(told!.compile_ms, 'number');
  t.equal(s.revision, 1, 'the swap keeps the revision: the scene is the same');
  const status = await ask(s, { op: 'status' });
  t.same(status.tiers, [{ nodes: ['fractal'], tier: 'optimised' }], 'status names the tier');
  // The swap changes only the code: the last frame's picture is still there to read and trace.
  const kept = output(s);
  t.ok(before.every((plane, i) => sameBytes(plane, kept[i])), 'after the swap, before any frame: the last frame\'s picture, bit for bit');
  t.equal((await ask(s, { op: 'read', format: 'f32' })).frame, first.frame, 'read answers it (not "nothing computed yet")');
  // Nothing the fractal reads changed (it reads no clock): the next frame keeps what the fast tier computed (reuse.ts).
  const second = await ask(s, { op: 'evaluate', time: 0.5 });
  t.same([second.executed, second.reused, second.placements.map((p: any) => [p.tier, p.reused, p.tiles])], [[], ['fractal'], [['optimised', true, 0]]], 'the next frame keeps the fast tier\'s picture (the optimised module would run it)');
  // A frame that runs it runs the optimised module: with the zoom moved and back, the picture the fast tier computed, bit for bit.
  await ask(s, { op: 'param', name: 'zoom', value: 7 });
  await ask(s, { op: 'evaluate', time: 0.5 });
  await ask(s, { op: 'param', name: 'zoom', value: 6 });
  const third = await ask(s, { op: 'evaluate', time: 0.5 });
  t.same(third.placements.map((p: any) => [p.tier, p.reused]), [['optimised', undefined]], 'a frame that runs it runs the optimised module');
  const after = output(s);
  t.ok(before.every((plane, i) => sameBytes(plane, after[i])), 'the same picture, bit for bit');

  // An edit goes live on the fast tier, its published event says so, and the optimised one follows.
  const text = readFileSync(path, 'utf8');
  const kernel = text.slice(text.indexOf('kernel fractal'), text.indexOf('\nnode')).trim();
  const composed = await ask(s, { op: 'compose', edits: [{ kernel: 'fractal.mandelbrot@1', text: kernel.replace('<= 17.0', '<= 15.0') }] });
  const published = composed.events.find((e: any) => e.kind === 'published');
  t.equal(published?.tier, 'fast', 'published: on the fast tier');
  t.type(published?.compile_ms, 'number');
  await s.optimiser!.idle();
  t.equal(s.pending.filter((e) => e.kind === 'optimised').length, 2, 'then optimised again');
  t.same((await ask(s, { op: 'status' })).tiers.map((g: any) => g.tier), ['optimised']);
});

t.test('a tier swap while paused keeps the last frame: a paused world still answers it', async (t) => {
  const path = copyScene(join(ROOT, 'examples', 'mandelbrot', 'scene.esn'), '<= 16.0', '<= 20.0');
  const s = await Session.open(path, { workers: 1, cacheDir: null, optimiseBudget: 600_000 });
  t.teardown(() => s.close());
  const first = await ask(s, { op: 'evaluate', time: 0.5 });
  t.same(await ask(s, { op: 'pause', paused: true }), { paused: true });
  t.notOk(s.pending.some((e) => e.kind === 'optimised'), 'paused before the optimised tier came');
  await s.optimiser!.idle();
  t.ok(s.pending.some((e) => e.kind === 'optimised'), 'swapped while paused');
  // The Player shows a paused world's last frame to every page (window.ts): the swap must not lose it.
  const again = await ask(s, { op: 'evaluate' });
  t.same([again.frame, again.executed, again.placements.map((p: any) => p.node)], [first.frame, [], ['fractal']], 'paused, evaluate answers the last frame, as before the swap');
  t.same(s.lastFrame?.frame, first.frame, 'the session holds it');
});

t.test('the optimised compile waits for the change\'s first frame (or starts anyway when none comes)', async (t) => {
  const path = copyScene(join(ROOT, 'examples', 'mandelbrot', 'scene.esn'), '<= 16.0', '<= 18.0');
  const s = await Session.open(path, { workers: 1, cacheDir: null, optimiseBudget: 600_000 });
  t.teardown(() => s.close());
  // No frame after opening: the compile starts after a moment all the same, and swaps.
  await s.optimiser!.idle();
  t.equal(s.optimiser!.started, 1, 'with no frame, the optimised compile ran');
  t.equal(s.pending.filter((e) => e.kind === 'optimised').length, 1);
  const text = readFileSync(path, 'utf8');
  const kernel = text.slice(text.indexOf('kernel fractal'), text.indexOf('\nnode')).trim();
  await ask(s, { op: 'compose', edits: [{ kernel: 'fractal.mandelbrot@1', text: kernel.replace('<= 18.0', '<= 19.0') }] });
  t.equal(s.optimiser!.started, 1, 'an edit: nothing compiles beside the frame that shows it');
  const frame = await ask(s, { op: 'evaluate', time: 0.5 });
  t.same(frame.placements.map((p: any) => p.tier), ['fast'], 'that frame runs the fast tier');
  await s.optimiser!.idle();
  t.equal(s.optimiser!.started, 2, 'once it ended, the optimised compile');
  await ask(s, { op: 'param', name: 'zoom', value: 7 }); // so that the frame runs the fractal (it reads no clock)
  t.same((await ask(s, { op: 'evaluate', time: 1.5 })).placements.map((p: any) => p.tier), ['optimised']);
});

t.test('the optimised compile begins a turn of the event loop after the frame ends, once its answer is out', async (t) => {
  // Its first step hands the IR to its worker, a structured clone on the coordinator's thread
  // (1.3-1.6 ms for the inline corpus scene): begun within the frame's own promise chain, it ran
  // before the frame's answer was sent.
  const [g] = sceneGroups(exampleScene('rings', [64, 64]), [], true);
  let endFrame = () => {};
  const site = {
    world: { engine: { groupTiers: () => [{ nodes: g.nodes.map((n) => n.name), ir: g.ir, digest: irDigest(g.ir), tier: 'fast' }] } },
    cacheDir: null,
    swapTiers: async () => {},
    tell: () => {},
    frameEnded: () => new Promise<void>((resolve) => (endFrame = resolve)),
  } as unknown as OptimiserSite;
  const optimiser = new BackgroundOptimiser(site);
  t.teardown(() => optimiser.close());
  optimiser.schedule();
  await Promise.resolve();
  endFrame();
  for (let i = 0; i < 20; i++) await Promise.resolve(); // the frame's answer is made in these
  t.equal(optimiser.begun, 0, 'not within the microtasks after the frame');
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(optimiser.begun, 1, 'begun once the event loop turned (the group\'s form with its literals as data, first)');
  await optimiser.idle();
  t.equal(optimiser.started, 1, 'then the optimised compile');
});

t.test('an optimised compile past its budget is abandoned; the fast tier keeps running', async (t) => {
  const path = copyScene(join(ROOT, 'bench', 'corpus', 'raymarch.esn'), 'alpha < 0.97', 'alpha < 0.96');
  // 1 ms: no machine compiles the ray marcher's optimised modules that fast (hundreds of ms).
  const s = await Session.open(path, { workers: 1, cacheDir: null, optimiseBudget: 1 });
  t.teardown(() => s.close());
  await s.optimiser!.idle();
  const abandoned = s.pending.filter((e) => e.kind === 'optimise_abandoned');
  // (the density field's module is the corpus's own, optimised by the first test: only the view is new)
  t.same(abandoned.map((e) => e.nodes), [['view']], 'the group abandoned, told');
  t.equal(abandoned[0].budget_ms, 1);
  t.match(String(abandoned[0].message), /abandoned; the fast tier keeps running/);
  t.notOk(s.pending.some((e) => e.kind === 'optimised'));
  const frame = await ask(s, { op: 'evaluate', time: 0.5 });
  t.equal(frame.placements.find((p: any) => p.node === 'view').tier, 'fast', 'frames run it on the fast tier');
});

t.test('render takes the tier that finishes the whole job sooner', async (t) => {
  const { renderTier, FAST_RENDER_ELEMENTS } = await import('../src/main/render.js');
  const scene = (size: number) => {
    const s = loadScene('scene.esn', { read: (p) => readFileSync(join(ROOT, 'examples', 'rings', p), 'utf8'), size: [size, size] });
    t.same(s.diagnostics, []);
    return s;
  };
  t.equal(renderTier(scene(256)), 'fast', 'one small frame: the fast tier (its compile is the job)');
  t.equal(renderTier(scene(256), { first: 3, last: 3 }), 'fast', 'one frame of a range too');
  t.equal(renderTier(scene(256), { first: 0, last: 99 }), 'optimised', 'many frames repay the optimised compile');
  t.equal(renderTier(scene(4096)), 'fast', 'one 4096 x 4096 frame: the fast tier (the optimised compile is not won back)');
  t.equal(renderTier(scene(Math.ceil(Math.sqrt(FAST_RENDER_ELEMENTS)) + 1)), 'optimised', 'one huge frame repays it');
});

t.test("a scene's groups are made once for its pins and fusion: a change fuses and digests its IR once, for its modules and its engine", async (t) => {
  const c = corpus().find((x) => x.name === 'stencil')!;
  const scene = loadScene(basename(c.path), { read: (p) => readFileSync(join(dirname(c.path), p), 'utf8') });
  const groups = sceneGroups(scene, [], true);
  t.equal(sceneGroups(scene, [], true), groups, 'asked again: the same groups, the same IR objects');
  t.not(sceneGroups(scene, [], false), groups, 'unfused: groups of their own');
  t.not(sceneGroups(scene, [scene.nodes[0].name], true), groups, 'with a pin: groups of their own');
  const again = loadScene(basename(c.path), { read: (p) => readFileSync(join(dirname(c.path), p), 'utf8') });
  t.not(sceneGroups(again, [], true), groups, 'another scene (checked again): its own');
});
