// The fast tier's literals as data (src/ir/literals.ts): f32 literals become uniform slots the
// host fills, so functions that differ only in their literals share one fast module. The lifted
// form must say the same as the function (both tiers against the interpreter, with the special
// values kept), and in a session a literal edit must reuse the running fast module while an edit
// of the code's shape compiles, both showing the new version's exact bits.

import t, { type Test } from 'tap';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { literalsOf, LITERAL_UNIFORM } from '../src/ir/literals.js';
import type { Expr, IrFunction } from '../src/ir/ir.js';
import { loadScene } from '../src/ir/check/scene.js';
import { compileModule, loadCompiler } from '../src/main/modules.js';
import { Session } from '../src/main/session.js';
import { readField } from '../src/main/field.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { agree } from './compare.js';
import { X, f32, field, fn, i32, local, op, select, set } from './ir-gen.js';
import { bits, firstDifference, ROOT, run } from './helpers.js';
import { scratchDir } from './scratch.js';

t.before(loadCompiler);

const fx = (e: Expr) => op('i32.to_f32', e);

/** out = ((x * a + b) * 2 + c) selected against 0, with `shared` used twice (a DAG), and i32 and special literals. */
function kernel(a: number, b: number, c: number) {
  const shared = op('f32.mul', fx(X), f32(a));
  const body = [
    set(0, op('f32.add', op('f32.mul', op('f32.add', shared, f32(b)), f32(2)), op('f32.add', shared, f32(c)))),
    set(1, select(op('f32.gt', local(0, 'f32'), f32(-0)), op('f32.min', local(0, 'f32'), f32(Infinity)), f32(0))),
    set(2, fx(op('i32.add', X, i32(3)))),
  ];
  return fn({ nodes: ['k'], locals: ['f32', 'f32', 'f32'], fields: [field('out', 'write', 1, ['f32', 'f32'])], uniforms: [{ name: 'time', t: 'f32' }], body, stores: [{ field: 0, comp: 0, local: 1 }, { field: 0, comp: 1, local: 2 }] });
}

t.test('literalsOf: f32 literals become slots after the uniforms, one per value, by first appearance', (t) => {
  const f = kernel(0.25, 1.5, 0.25);
  const { ir, values } = literalsOf(f);
  t.same(values, [0.25, 1.5, -0], 'a, b (c is a again), then -0; +0, 2 and infinity stay constants, i32 literals too');
  t.same(ir.uniforms.map((u) => u.name), ['time', LITERAL_UNIFORM, LITERAL_UNIFORM, LITERAL_UNIFORM]);
  const text = JSON.stringify(ir.body);
  t.notMatch(text, /"v":0\.25|"v":1\.5/, 'no lifted literal is left in the body');
  t.match(text, /"v":2\b/, '2 stays (2 * x is x + x)');
  t.match(text, /"v":null/, 'infinity stays (JSON writes it as null)');
  const first = ir.body[0] as { e: Expr & { k: 'op' } };
  const [left, right] = first.e.args as (Expr & { k: 'op' })[];
  t.equal(((left.args[0] as Expr & { k: 'op' }).args[0] as Expr), right.args[0], 'a value shared in the function is shared in its form (walked once)');
  t.same(literalsOf(ir).values, [], 'the form has no literals of its own');
  t.equal(literalsOf(f), literalsOf(f), 'made once per IR object');
  t.same(literalsOf(kernel(0.75, 3, 0.75)).ir, ir, 'other values, the same form');
  t.notSame(literalsOf(kernel(0.75, 3, 0.5)).ir, ir, 'c no longer equal to a: another form');
  t.end();
});

t.test('the fast tier reads the literals from the argument block: both tiers agree with the interpreter', (t) => {
  for (const [a, b, c] of [[0.25, 1.5, 0.25], [-3.75, 1e-3, 7], [0.1, -0.3, 0.7]]) {
    const f = kernel(a, b, c);
    for (const w of [1, 5, 13]) agree(t, `a ${a}, b ${b}, c ${c}, width ${w}`, { fn: f, domain: { width: w, height: 1, depth: 1 }, extents: [{ width: w, height: 1, depth: 1 }], uniforms: [0.5] }, { fast: { tier: 'fast' }, optimised: { tier: 'optimised' } });
  }
  t.end();
});

t.test('functions that differ only in their literals share their form\'s fast module, and not the optimised one', (t) => {
  const f = kernel(0.25, 1.5, 0.25);
  const own = compileModule(f, { tier: 'fast' });
  t.notOk(own.cached, 'a function\'s own fast module is compiled (its literals constants)');
  const form = compileModule(literalsOf(f).ir, { tier: 'fast' });
  t.notOk(form.cached, 'its form\'s is another module');
  t.ok(compileModule(f, { tier: 'fast' }).cached, 'the function finds its own first');
  const other = compileModule(kernel(0.5, 2.5, 0.5), { tier: 'fast' });
  t.ok(other.cached, 'another function of the same form finds the form\'s module');
  t.equal(other.module, form.module);
  t.equal(other.key, form.key, 'under one key (the workers cache instances by it)');
  t.not(other.digest, own.digest, 'the functions keep their own digests');
  t.notOk(compileModule(kernel(0.75, 2.5, 0.75), { tier: 'optimised' }).cached, 'the optimised tier compiles each function');
  t.end();
});

t.test('the form\'s module computes each function\'s own bits from its argument block', async (t) => {
  const { FieldMemory } = await import('../src/main/memory.js');
  const { writeArgs, fieldLayout } = await import('../src/codegen/layout.js');
  const { instantiate } = await import('../src/codegen/instantiate.js');
  const { interpret } = await import('../src/ir/interp.js');
  const width = 13;
  const memory = new FieldMemory();
  const layout = fieldLayout({ width, height: 1, depth: 1 }, 2);
  const out = memory.alloc(layout.bytes, 'out');
  const args = memory.alloc(256, 'args');
  const place = { base: out, width, height: 1, depth: 1, stride: layout.stride, planeBytes: layout.planeBytes };
  /** Out's bits after `run`, on the argument block of `f` (its uniform and its literals). */
  const result = (run: () => void, f: IrFunction) => {
    writeArgs(memory.memory, args, f, { width, height: 1, depth: 1 }, [place], [0.5]);
    run();
    return [...new Uint32Array(memory.memory.buffer, out, layout.bytes / 4)];
  };
  const formRun = instantiate(compileModule(literalsOf(kernel(0.25, 1.5, 0.25)).ir, { tier: 'fast' }).module, memory.memory);
  for (const [a, b, c] of [[0.25, 1.5, 0.25], [-3.75, 1e-3, -3.75], [0.1, -0.3, 0.1]]) {
    const f = kernel(a, b, c);
    t.equal(literalsOf(f).ir.uniforms.length, 4, 'one form');
    const byForm = result(() => formRun(args, 0, 1), f);
    const byInterp = result(() => interpret(f, memory.memory, args, 0, 1), f);
    t.same(byForm, byInterp, `a ${a}, b ${b}: the form's module = the interpreter`);
  }
});

async function ask(s: Session, req: object): Promise<any> {
  const answer = JSON.parse(await dispatch(s, JSON.stringify(req)));
  if (!answer.ok) throw new Error(answer.error.message);
  return answer.ok;
}

/**
 * A session on a copy of the rings example whose kernels' `0.8 * v` reads `${literal} * v` (a
 * value of its own: modules are cached per process by their IR), its first frame run and the
 * optimiser idle; the interpreter's bits of its documents on disk, and the output's shown now.
 */
async function ringsSession(t: Test, literal: string) {
  const dir = scratchDir('entelechy-literals-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const kernels = join(dir, 'kernels.esn');
  const original = readFileSync(kernels, 'utf8').replace('0.8 * v', `${literal} * v`);
  writeFileSync(kernels, original);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 2, cacheDir: null, optimiseBudget: 600_000 });
  t.teardown(() => s.close());
  await ask(s, { op: 'evaluate', time: 0.5 });
  await s.optimiser!.idle();
  const expected = async (time: number) => run(loadScene('scene.esn', { read: (p) => readFileSync(join(dir, p), 'utf8') }), { backend: 'interp' }, 1, { time });
  const shown = () => new Map([[s.scene.outputs[0].name, readField(s.memory, s.engine.outputField(s.scene.outputs[0].name)!).map(bits)]]);
  return { s, original, expected, shown };
}

t.test('in a session, a literal edit runs on the fast module already compiled; a shape edit compiles', async (t) => {
  const { s, original, expected, shown } = await ringsSession(t, '0.8125');

  for (const [i, value] of ['0.6875', '0.3', '1.25'].entries()) {
    const compiled = s.modules.compiled;
    await ask(s, { op: 'compose', path: 'kernels.esn', text: original.replace('0.8125 * v', `${value} * v`) });
    t.equal(s.modules.compiled, compiled, `literal edit ${value}: no module compiled`);
    const frame = await ask(s, { op: 'evaluate', time: 1.5 + i });
    if (!s.pending.some((e) => e.kind === 'optimised')) t.ok(frame.placements.some((p: any) => p.tier === 'fast'), 'its frame ran on the fast tier');
    t.equal(firstDifference(shown(), await expected(1.5 + i)), undefined, `literal edit ${value}: the interpreter's bits`);
    await s.optimiser!.idle();
    await ask(s, { op: 'evaluate', time: 10 + i });
    t.equal(firstDifference(shown(), await expected(10 + i)), undefined, `literal edit ${value}, optimised: the interpreter's bits`);
  }

  const compiled = s.modules.compiled;
  await ask(s, { op: 'compose', path: 'kernels.esn', text: original.replace('0.8125 * v', '0.8125 * v * v') });
  t.equal(s.modules.compiled, compiled + 1, 'a shape edit compiles its group\'s fast module');
  await ask(s, { op: 'evaluate', time: 3.5 });
  t.equal(firstDifference(shown(), await expected(3.5)), undefined, 'the shape edit: the interpreter\'s bits');
});

t.test('literal edits in a row right after a shape edit, before any frame of it: the first compiles the form, the next ones nothing', async (t) => {
  const { s, original, expected, shown } = await ringsSession(t, '0.828125');
  const shape = original.replace('0.828125 * v', '0.828125 * v * v * v'); // a shape no other test compiles (forms are per process)
  let compiled = s.modules.compiled;
  await ask(s, { op: 'compose', path: 'kernels.esn', text: shape });
  t.equal(s.modules.compiled, compiled + 1, 'the shape edit compiles its own module');
  const begun = s.optimiser!.begun;
  for (const [i, value] of ['0.578125', '0.640625', '0.703125'].entries()) {
    compiled = s.modules.compiled;
    await ask(s, { op: 'compose', path: 'kernels.esn', text: shape.replace('0.828125 * v * v * v', `${value} * v * v * v`) });
    t.equal(s.modules.compiled, compiled + (i === 0 ? 1 : 0), i === 0 ? 'the first literal edit compiles the form' : `literal edit ${i + 1} compiles nothing: it runs on the form`);
  }
  t.equal(s.optimiser!.begun, begun, 'the optimiser compiled nothing meanwhile');
  const frame = await ask(s, { op: 'evaluate', time: 2.5 });
  t.ok(frame.placements.some((p: any) => p.tier === 'fast'), 'the frame ran on the fast tier');
  t.equal(firstDifference(shown(), await expected(2.5)), undefined, 'the interpreter\'s bits');
});

t.test('a session opened from the disk cache (optimised modules only) compiles its forms too: its first literal edit compiles nothing', async (t) => {
  const dir = scratchDir('entelechy-literals-disk-');
  const cache = scratchDir('entelechy-literals-cache-');
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const kernels = join(dir, 'kernels.esn');
  const original = readFileSync(kernels, 'utf8').replace('0.8 * v', '0.796875 * v');
  writeFileSync(kernels, original);
  // The first session fills the disk cache with the optimised modules.
  const first = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: cache, optimiseBudget: 600_000 });
  await ask(first, { op: 'evaluate', time: 0.5 });
  await first.optimiser!.idle();
  await first.close();
  // The second opens in a process of its own (modules are kept in memory per process), reads them.
  const script = `
    const { Session } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', 'src', 'main', 'session.js')).href)});
    const { dispatch } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', 'src', 'protocol', 'dispatcher.js')).href)});
    const s = await Session.open(${JSON.stringify(join(dir, 'scene.esn'))}, { workers: 1, cacheDir: ${JSON.stringify(cache)}, optimiseBudget: 600000 });
    await dispatch(s, '{"op":"evaluate","time":0.5}');
    await s.optimiser.idle();
    const before = { ...s.modules };
    const answer = JSON.parse(await dispatch(s, JSON.stringify({ op: 'compose', path: 'kernels.esn', text: ${JSON.stringify(original.replace('0.796875 * v', '0.59375 * v'))} })));
    console.log(JSON.stringify({ before, after: s.modules, ok: !!answer.ok }));
    await s.close();`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  t.match(line, /^\{/, `the child answered: ${child.stderr.slice(0, 500)}`);
  const { before, after, ok } = JSON.parse(line);
  t.ok(ok, 'the literal edit was published');
  t.ok(before.read > 0 && before.compiled === 0, `the session read its modules from the disk and compiled none (read ${before.read}, compiled ${before.compiled})`);
  t.equal(after.compiled, before.compiled, 'its first literal edit compiled no module');
});
