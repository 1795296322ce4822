// The blocks that `return` and `continue` lower to (src/ir/lower/blocks.ts): an `if` that leaves
// the block takes the rest of the block into its other branch, and a block that nothing leaves
// goes. The kernels here compute what plain JavaScript computes, on both backends, and a loop
// before an early `return` ends up at the body's top level (where interleave.ts fuses it).

import t, { type Test } from 'tap';
import type { Stmt } from '../src/ir/ir.js';
import { blockOrStatements, elseForBreaks } from '../src/ir/lower/blocks.js';
import { Engine } from '../src/main/engine.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { readField } from '../src/main/field.js';
import { brk, f32, iff, loop, op, set, local, block } from './ir-gen.js';
import { textScene } from './helpers.js';

const a = set(0, f32(1));
const b = set(0, f32(2));
const c = set(0, f32(3));
const cond = op('f32.gt', local(1, 'f32'), f32(0));

t.test('an if that leaves the block takes the rest of it into its other branch', async (t) => {
  t.same(elseForBreaks([a, iff(cond, [b, brk(0)]), c]), [a, iff(cond, [b], [c])], 'then leaves: the rest goes to else');
  t.same(elseForBreaks([iff(cond, [b], [brk(0)]), c]), [iff(cond, [b, c], [])], 'else leaves: the rest goes to then');
  t.same(elseForBreaks([iff(cond, [brk(0)], [brk(0)]), c]), [iff(cond, [], [])], 'both leave: the rest never runs');
  t.same(elseForBreaks([a, iff(cond, [b, brk(0)])]), [a, iff(cond, [b], [])], 'a break at the end of the block does nothing');
  const nested = [iff(cond, [iff(cond, [b, brk(0)]), c])];
  t.same(elseForBreaks(nested), nested, 'a break in a nested list stays: the rest of the block is more than the rest of that list');
  t.same(
    elseForBreaks([iff(cond, [brk(0)]), iff(cond, [a, brk(0)]), b]),
    [iff(cond, [], [iff(cond, [a], [b])])],
    'one after another',
  );
});

t.test('a block goes when nothing leaves it; breaks to outer constructs count one fewer', async (t) => {
  t.same(blockOrStatements([iff(cond, [b, brk(0)]), c]), [iff(cond, [b], [c])]);
  // From inside a loop in the block, break 1 leaves the block and break 2 what is around it.
  const inner: Stmt = loop(0, iff(cond, [brk(2)]), a);
  t.same(blockOrStatements([inner, iff(cond, [brk(0)]), c]), [loop(0, iff(cond, [brk(1)]), a), iff(cond, [], [c])], 'a break past the block counts one fewer');
  const stays = [loop(0, iff(cond, [brk(1)]), a), c];
  t.same(blockOrStatements(stays), [block(...stays)], 'a break out of the block from inside a loop keeps it');
});

async function outputs(scene: ReturnType<typeof textScene>, backend: 'jit' | 'interp'): Promise<Float32Array> {
  t.same(scene.diagnostics, [], 'the scene checks');
  const engine = new Engine(scene, { backend });
  try {
    await engine.evaluate({});
    return readField(engine.memory, engine.outputField('result')!)[0];
  } finally {
    engine.dispose();
  }
}

function kernelScene(each: string, width = 13, height = 9): ReturnType<typeof textScene> {
  return textScene({
    'scene.esn': `kernel test.k@1 {\n  out result: field2<f32>;\n  each (x, y) {\n${each}\n  }\n}\nnode k: test.k@1 { size = ${width} x ${height}; }\noutput result <- k.result;\n`,
  });
}

async function agree(t: Test, name: string, each: string, expected: (x: number, y: number) => number) {
  const scene = kernelScene(each);
  const want = new Float32Array(13 * 9).map((_, i) => expected(i % 13, Math.floor(i / 13)));
  for (const backend of ['jit', 'interp'] as const) {
    const got = await outputs(scene, backend);
    const wrong = want.findIndex((v, i) => !Object.is(v, got[i]));
    t.equal(wrong, -1, `${name} (${backend})${wrong >= 0 ? `: element ${wrong} is ${got[wrong]}, not ${want[wrong]}` : ''}`);
  }
}

t.test('kernels with early returns and continues compute what JavaScript computes', async (t) => {
  await agree(t, 'returns in sequence', `
    if (x < 3) { result = 1.0; return; }
    if (y > 5) { result = 2.0; return; } else { result = 5.0; }
    result = result + x + y;`, (x, y) => (x < 3 ? 1 : y > 5 ? 2 : 5 + x + y));
  await agree(t, 'a return inside a loop', `
    let i = 0;
    while (i < 20) {
      if (i * x > 30) { result = i; return; }
      i++;
    }
    result = -1.0;`, (x) => {
    for (let i = 0; i < 20; i++) if (i * x > 30) return i;
    return -1;
  });
  await agree(t, 'continue skips the rest of a repetition', `
    let s = 0;
    for (let i = 0; i < x + y; i++) {
      if (i % 3 == 0) { s += 100; continue; }
      s += i;
    }
    result = s;`, (x, y) => {
    let s = 0;
    for (let i = 0; i < x + y; i++) s += i % 3 === 0 ? 100 : i;
    return s;
  });
  await agree(t, 'an escape loop, then an early return for the lanes that stayed', `
    const cx = -2.0 + 0.25 * x;
    const cy = -1.0 + 0.25 * y;
    let zx = 0.0;
    let zy = 0.0;
    let i = 0;
    while (i < 40 && zx * zx + zy * zy <= 4.0) {
      const t = zx * zx - zy * zy + cx;
      zy = 2.0 * zx * zy + cy;
      zx = t;
      i++;
    }
    if (i >= 40) { result = -1.0; return; }
    result = i;`, (x, y) => {
    const f = Math.fround;
    const cx = f(-2 + f(0.25 * x));
    const cy = f(-1 + f(0.25 * y));
    let zx = 0;
    let zy = 0;
    let i = 0;
    while (i < 40 && f(f(zx * zx) + f(zy * zy)) <= 4) {
      const tt = f(f(f(zx * zx) - f(zy * zy)) + cx);
      zy = f(f(f(2 * zx) * zy) + cy);
      zx = tt;
      i++;
    }
    return i >= 40 ? -1 : i;
  });
});

t.test('the loop before an early return is at the top level of the body, with no block around it', async (t) => {
  const scene = kernelScene(`
    let i = 0;
    let z = 0.0;
    while (i < 50 && z < 9.0) { z = z * 1.1 + 0.01 * x; i++; }
    if (i >= 50) { result = 0.0; return; }
    result = z;`);
  const body = sceneGroups(scene, [], true)[0].ir.body;
  t.same(body.map((s) => s.k).filter((k) => k !== 'set'), ['loop', 'if']);
});
