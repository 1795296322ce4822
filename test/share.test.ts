// Shared IR values become locals (src/ir/share.ts): the interpreter's generated JavaScript is
// linear in the IR's size. Before, a DAG printed as a tree: `noise(vec3(x, y, 1.0) * 0.05)` gave
// ~2 MB of text. Sizes, not timings: the assertions hold on any machine.

import t from 'tap';
import type { Expr, IrFunction, Stmt } from '../src/ir/ir.js';
import { programSource } from '../src/ir/interp.js';
import { shareValues } from '../src/ir/share.js';
import { exprChildren, stmtExprs, stmtLists } from '../src/ir/walk.js';
import { firstDifference, run, textScene } from './helpers.js';

/** Distinct expression nodes and statements: the IR's size as the DAG it is. */
function dagSize(fn: IrFunction): number {
  const seen = new Set<Expr>();
  const visit = (e: Expr) => {
    if (seen.has(e)) return;
    seen.add(e);
    exprChildren(e).forEach(visit);
  };
  let stmts = 0;
  const walk = (list: Stmt[]) => {
    for (const s of list) {
      stmts++;
      stmtExprs(s).forEach(visit);
      stmtLists(s).forEach(walk);
    }
  };
  walk(fn.body);
  return seen.size + stmts;
}

function kernelIr(body: string): IrFunction {
  const scene = textScene({ 'scene.esn': `kernel t.k@1 {\n  out v: field2<f32>;\n  each (x, y) {\n${body}\n  }\n}\nnode n: t.k@1 { size = 16 x 8; }\noutput v <- n.v;\n` });
  if (scene.diagnostics.length) throw new Error(scene.diagnostics[0].message);
  return scene.kernels.get('t.k@1')!.ir;
}

/** The generated text's size per node of the IR (the program's fixed prologue aside). */
function perNode(fn: IrFunction): number {
  const empty = programSource({ ...fn, body: [], locals: [] }).length;
  return (programSource(fn).length - empty) / dagSize(fn);
}

t.test('noise of a vec3: the generated text is a bounded multiple of the IR size', async (t) => {
  const fn = kernelIr('    v = noise(vec3(x, y, 1.0) * 0.05);');
  const bytes = programSource(fn).length;
  t.ok(perNode(fn) < 60, `${bytes} bytes of JavaScript for ${dagSize(fn)} IR nodes (${perNode(fn).toFixed(1)} per node)`);
  t.ok(bytes < 100_000, `noise(vec3) printed as ${bytes} bytes (it was ~2 MB as a tree)`);
});

t.test('a chain of shared values: text grows linearly with the chain', async (t) => {
  // noise reads its argument several times: as a tree, n nested calls print ~4^n copies of x.
  const chain = (n: number) => {
    let e = 'f32(x) * 0.1';
    for (let i = 0; i < n; i++) e = `noise(vec2(${e} * 3.0, f32(y) + ${i}.5))`;
    return kernelIr(`    v = ${e};`);
  };
  const base = programSource(chain(0)).length;
  const small = programSource(chain(4)).length - base;
  const large = programSource(chain(8)).length - base;
  t.ok(large / small < 2.2, `4 nested noises: ${small} bytes past the base, 8: ${large} (linear: about twice)`);
  t.ok(perNode(chain(8)) < 60, `${perNode(chain(8)).toFixed(1)} bytes per IR node`);
});

t.test('sharing is idempotent and leaves an IR without shared values as it was', async (t) => {
  const fn = kernelIr('    v = noise(vec3(x, y, 1.0) * 0.05);');
  t.equal(shareValues(fn), fn, 'lowering already shared its values: nothing more to do');
  const plain = kernelIr('    v = f32(x) + 1.0;');
  t.equal(shareValues(plain), plain);
});

t.test('the compiled code and the interpreter agree on shared values', async (t) => {
  for (const body of ['    v = noise(vec3(x, y, 1.0) * 0.05);', '    v = noise(vec2(f32(x), f32(y)) * 0.3) + hash(x, y, 3);']) {
    const scene = textScene({ 'scene.esn': `kernel t.k@1 {\n  out v: field2<f32>;\n  each (x, y) {\n${body}\n  }\n}\nnode n: t.k@1 { size = 37 x 9; }\noutput v <- n.v;\n` });
    const a = await run(scene, { backend: 'interp' });
    const b = await run(scene, { backend: 'jit' });
    t.equal(firstDifference(a, b), undefined, body.trim());
  }
});

t.test('a gather read twice in a statement becomes a local, whatever its size: sample reads each corner once', async (t) => {
  // `sample`'s lerps read six of a trilinear filter's eight corners twice (as one shared node
  // each): left inline, codegen gathered 12 corners per sample, 4 lanes each.
  const scene = textScene({
    'scene.esn': `input src: field3<f32> = 0.0 size 5 x 4 x 3;
kernel t.s@1 {
  grants field.read;
  in f: field3<f32>;
  out r: field3<f32>;
  each (x, y, z) { r = f.sample(f32(x) / 7.0, f32(y) / 5.0, f32(z) / 3.0); }
}
node n: t.s@1 { size = 9 x 7 x 4; f <- src; }
output r <- n.r;
`,
  });
  t.same(scene.diagnostics, []);
  const fn = shareValues(scene.kernels.get('t.s@1')!.ir);
  // Gathers as every later pass walks the IR: as a tree.
  let gathers = 0;
  const visit = (e: Expr): void => {
    if (e.k === 'load' && e.at) gathers++;
    exprChildren(e).forEach(visit);
  };
  const walk = (list: Stmt[]) => list.forEach((s) => (stmtExprs(s).forEach(visit), stmtLists(s).forEach(walk)));
  walk(fn.body);
  t.equal(gathers, 8, 'eight corners, each gathered once');
  t.equal(firstDifference(await run(scene, { backend: 'interp' }), await run(scene, { backend: 'jit' })), undefined, 'the compiled code agrees with the interpreter');
});
