// Every example checks, round-trips through the parser, and gives bit-identical results with
// the compiler and the interpreter, fused and unfused.

import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { print } from '../src/ir/syntax/index.js';
import { EXAMPLES, ROOT, exampleScene, firstDifference, run } from './helpers.js';

for (const name of EXAMPLES) {
  t.test(name, async (t) => {
    const scene = exampleScene(name);
    t.same(scene.diagnostics, [], 'checks without diagnostics');
    t.ok(scene.outputs.length > 0, 'has an output');
    for (const doc of scene.documents) {
      t.equal(print(doc), readFileSync(join(ROOT, 'examples', name, doc.path), 'utf8'), `${doc.path} prints back byte for byte`);
    }
    // Small sizes keep the interpreter quick; widths not a multiple of 4 test the row padding.
    const small = exampleScene(name, [37, 29]);
    t.same(small.diagnostics, []);
    const frames = name === 'life' ? 4 : 1;
    const input = name === 'life' ? { pointer: { x: 10, y: 10, down: true } } : {};
    const jit = await run(small, { backend: 'jit', fuse: true }, frames, input);
    const unfused = await run(small, { backend: 'jit', fuse: false }, frames, input);
    const interp = await run(small, { backend: 'interp', fuse: false }, frames, input);
    t.equal(firstDifference(jit, interp), undefined, 'jit (fused) = interpreter, bit for bit');
    t.equal(firstDifference(jit, unfused), undefined, 'fused = unfused, bit for bit');
    const planes = [...jit.values()][0];
    t.ok(planes[0].some((v) => v !== planes[0][0]), 'the output is not one flat colour');
  });
}
