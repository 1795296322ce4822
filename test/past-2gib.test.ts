// Fields past 2 GiB of the shared memory: addresses there do not fit a signed 32-bit integer.
// The interpreter read a field's base as a negative number and answered zeros (issue 14, item 9).
//
// A 2 GiB block allocated first (and never touched: the pages cost no memory until written)
// places the scene's fields past the boundary, so the test needs no 23200 x 23200 frame.

import t from 'tap';
import { Engine, type Backend } from '../src/main/engine.js';
import { readField } from '../src/main/field.js';
import { FieldMemory } from '../src/main/memory.js';
import { bits, textScene } from './helpers.js';

const SCENE = {
  'scene.esn': `
kernel t.make@1 {
  out result: field2<vec4>;
  each (x, y) {
    result = vec4(f32(x), f32(y), f32(x + 3 * y), 1.0);
  }
}

kernel t.read@1 {
  grants field.read;
  in src: field2<vec4>;
  out result: field2<vec4>;
  each (x, y) {
    const left = src.at(x - 1, y);
    result = vec4(src.x + left.x, src.y * 2.0, src.z - left.z, src.w);
  }
}

node make: t.make@1 { size = 40 x 24; }
node read: t.read@1 { size = 40 x 24; src <- make.result; }
output result <- read.result;
`,
};

const PAST = 2 ** 31;

async function frame(backend: Backend): Promise<{ planes: Float32Array[]; ptr: number }> {
  const scene = textScene(SCENE);
  if (scene.diagnostics.length) throw new Error(scene.diagnostics[0].message);
  const memory = new FieldMemory();
  memory.alloc(PAST, 'the 2 GiB before');
  const engine = new Engine(scene, { memory, backend, fuse: false });
  try {
    await engine.evaluate({});
    const field = engine.outputField('result')!;
    return { planes: readField(memory, field), ptr: field.ptr };
  } finally {
    engine.dispose();
  }
}

t.test('a node read by another past 2 GiB: the interpreter and the compiled code agree, and are right', async (t) => {
  const interp = await frame('interp');
  t.ok(interp.ptr >= PAST, `the output lies past 2 GiB (at ${interp.ptr})`);
  const [x, y, z, w] = interp.planes;
  const at = (px: number, py: number) => px + py * 40;
  t.same([x[at(5, 7)], y[at(5, 7)], z[at(5, 7)], w[at(5, 7)]], [5 + 4, 14, 1, 1], 'an element, every component');
  t.same([x[at(0, 3)], z[at(0, 3)]], [0, 0], 'at the left edge the gather clamps');
  t.ok(w.every((v) => v === 1), 'no zeros');
  const jit = await frame('jit');
  t.same(interp.planes.map(bits), jit.planes.map(bits), 'bit for bit the compiled result');
});
