// The typed bindings between the compiler and the engine (src/ir/bindings.ts): lowering records
// what each uniform holds, fusion turns those records into a group's bindings (world values
// shared by the fused nodes, `in` values each node's own), and the engine fills every slot from
// them: each world value reaches the kernel, and a binding of a kind it does not know is an
// error, never a silent 0.

import t from 'tap';
import { Engine } from '../src/main/engine.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { readField } from '../src/main/field.js';
import { textScene } from './helpers.js';

// Two nodes fused into one loop, both reading the world and an `in` port of the same name.
const SCENE = `
kernel t.first@1 {
  grants time.read, input.read;
  in gain: f32 = 1.0;
  out v: field2<vec2>;
  each (x, y) {
    v = vec2(time * gain + pointer.x, keys.space ? 1.0 : 0.0);
  }
}
kernel t.second@1 {
  grants time.read, input.read;
  in src: field2<vec2>;
  in gain: f32 = 1.0;
  out result: field2<vec4>;
  each (x, y) {
    result = vec4(src.x + time * gain, src.y, pointer.y + (pointer.down ? 1000.0 : 0.0), frame);
  }
}
param g: f32 = 3.0;
node a: t.first@1 { size = 4 x 2; gain = 2.0; }
node b: t.second@1 { src <- a.v; gain = g; }
output result <- b.result;
`;

t.test('lowering records what each uniform holds, and fusion binds them per group', async (t) => {
  const scene = textScene({ 'scene.esn': SCENE });
  t.same(scene.kernels.get('t.first@1')!.uniformSources, [
    { kind: 'time' }, { kind: 'in', port: 'gain', comp: 0 }, { kind: 'pointer', axis: 'x' }, { kind: 'pointer', axis: 'y' }, { kind: 'key', key: 'space' },
  ]);
  const [group] = sceneGroups(scene, [], true);
  t.same(group.nodes.map((n) => n.name), ['a', 'b'], 'a is fused into b');
  t.same(group.uniforms, [
    { kind: 'time' }, { kind: 'value', node: 'a', port: 'gain', comp: 0 }, { kind: 'pointer', axis: 'x' }, { kind: 'pointer', axis: 'y' }, { kind: 'key', key: 'space' },
    { kind: 'value', node: 'b', port: 'gain', comp: 0 }, { kind: 'pointer', axis: 'down' }, { kind: 'frame' },
  ], 'world values once for the group, each node its own gain');
  t.equal(group.uniforms.length, group.ir.uniforms.length, 'one binding per uniform slot');
  t.same(group.fields, [{ kind: 'write', node: 'b', port: 'result', state: false }], 'the fused field is no field at all');
});

t.test('the engine fills every slot from its binding', async (t) => {
  for (const backend of ['interp', 'jit'] as const) {
    const engine = new Engine(textScene({ 'scene.esn': SCENE }), { backend, cacheFrames: false });
    await engine.evaluate({ time: 0.5, pointer: { x: 7, y: 9, down: true }, keys: ['Space'] });
    await engine.evaluate({ time: 0.5, pointer: { x: 7, y: 9, down: true }, keys: ['Space'] });
    const [x, y, z, w] = readField(engine.memory, engine.outputField('result')!).map((plane) => plane[0]);
    // x: time * 2 + pointer.x + time * g (3); y: space held; z: pointer.y + 1000 (down); w: the second frame.
    t.same([x, y, z, w], [0.5 * 2 + 7 + 0.5 * 3, 1, 1009, 1], `${backend}: time, both gains, pointer, keys and frame`);
    engine.dispose();
  }
});

t.test('a binding of a kind the engine does not know is an error, not 0', async (t) => {
  const engine = new Engine(textScene({ 'scene.esn': SCENE }), { backend: 'interp' });
  (engine.groups[0].uniforms as unknown[])[0] = { kind: 'gamepad' };
  await t.rejects(engine.evaluate({ time: 1 }), /a binding of unknown kind "gamepad"/);
  engine.dispose();
});
