// The engine's frame commit (src/main/engine.ts, src/main/slots.ts): state is double-buffered
// and the next state becomes current only when every group of the frame succeeded; a node
// reading another's state port sees the state that frame computed; a failed frame leaves every
// state, the frame counter and the replayable last frame as they were; reset, replay (trace's
// copy) and the cache of unchanged frames. Small domains on the interpreter, one scene on the
// compiled backend in bands and on the pool.

import t from 'tap';
import { EvaluationError } from '../src/main/evaluation-error.js';
import { sceneGroups } from '../src/main/scene-groups.js';
import { readField } from '../src/main/field.js';
import { FieldMemory } from '../src/main/memory.js';
import { prepareModules } from '../src/main/modules.js';
import { EvalPool } from '../src/workers/pool.js';
import { all, engine, first, scene, state } from './engine-fixtures.js';

// `a` counts up from its declared 10; `b` reads a's state port (a gather: its own group), counts
// its own state from 0 and spins out of fuel while the param `spin` is set.
const TWO_GROUPS = `param spin: f32 = 0.0;
kernel t.up@1 {
  grants field.write;
  state n: field2<f32> = 10.0;
  out r: field2<f32>;
  each (x, y) { n = n + 1.0; r = n + f32(x); }
}
kernel t.down@1 {
  grants field.read, field.write;
  in s: field2<f32>;
  in spin: f32 = 0.0;
  state m: field2<f32> = 0.0;
  out r: field2<f32>;
  each (x, y) {
    let k = 0;
    while (spin > 0.5) { k++; }
    m = m + 1.0;
    r = s.at(x, y) * 100.0 + m + f32(k);
  }
}
node a: t.up@1 { size = 4 x 3; }
node b: t.down@1 { s <- a.n; spin = spin; }
output o <- b.r;
output p <- a.r;
output q <- a.n;
`;

// Stateless: what the world uniforms hold, for the cache and the argument block.
const WORLD = `param gain: f32 = 1.0;
kernel t.world@1 {
  grants time.read, input.read;
  in gain: f32 = 1.0;
  out r: field2<vec4>;
  each (x, y) {
    const held = (pointer.down ? 1.0 : 0.0) + (keys.space ? 10.0 : 0.0) + (keys.a ? 100.0 : 0.0);
    r = vec4(time * gain, f32(frame), pointer.xy.x + pointer.xy.y * 1000.0, held);
  }
}
node w: t.world@1 { size = 2 x 2; gain = gain; }
output o <- w.r;
`;

t.test('the two-group scene runs as two groups (the precondition of what follows)', async (t) => {
  const e = engine(TWO_GROUPS);
  t.same(e.groups.map((g) => g.nodes.map((n) => n.name)), [['a'], ['b']]);
  t.same(state(e, 'a', 'n'), all(12, 10), 'state starts at its declared value');
  t.same(state(e, 'b', 'm'), all(12, 0));
});

t.test('each good frame commits every state; a reader of a state port sees the state of that frame', async (t) => {
  const e = engine(TWO_GROUPS);
  const r1 = await e.evaluate();
  t.same([r1.frame, e.frame, r1.cached], [1, 1, false]);
  t.same(r1.executed, ['a', 'b']);
  t.same(first(e, 'o'), [11 * 100 + 1], 'b read a.n = 11, the state a computed this frame');
  t.same(first(e, 'q'), [11], 'an output of a state port is the committed state');
  t.same(state(e, 'a', 'n'), all(12, 11));
  t.same(state(e, 'b', 'm'), all(12, 1));
  await e.evaluate();
  t.same(first(e, 'o'), [12 * 100 + 2]);
  t.same(first(e, 'p'), [12]);
  t.same(readField(e.memory, e.outputField('p')!)[0].slice(0, 4), Float32Array.from([12, 13, 14, 15]), 'every element, not only the first');
  t.equal(e.outputField('nope'), undefined, 'no such output');
});

t.test('a frame failing in its later group commits nothing: every state and the frame counter as before', async (t) => {
  const e = engine(TWO_GROUPS);
  await e.evaluate();
  await e.evaluate({ time: 0.5 });
  e.params.set('spin', [1]);
  const err = await e.evaluate({ time: 0.75 }).catch((x: unknown) => x);
  t.ok(err instanceof EvaluationError, 'the frame fails');
  t.equal((err as EvaluationError).node, 'b');
  t.match((err as EvaluationError).message, /node `b` ran out of fuel/);
  t.equal(e.frame, 2, 'the frame counter did not advance');
  t.same(state(e, 'a', 'n'), all(12, 12), "a's state is as before, though a's group ran");
  t.same(state(e, 'b', 'm'), all(12, 2));
  t.same(first(e, 'q'), [12]);
  // The out ports hold part of the failed frame: a read of one answers that nothing is computed
  // (src/protocol/handlers/running.ts); a state port still reads the last committed state.
  t.equal(e.computed, false, 'after a failed later frame, no out port is served');
  e.params.set('spin', [0]);
  const r = await e.evaluate();
  t.equal(e.computed, true, 'the next good frame is');
  t.equal(r.frame, 3);
  t.same(first(e, 'o'), [13 * 100 + 3], 'the next frame reads the state of the last good one');
  t.same(state(e, 'a', 'n'), all(12, 13));
});

t.test('a failed first frame: nothing computed to read, the state as declared', async (t) => {
  const e = engine(TWO_GROUPS);
  t.equal(e.computed, false, 'before any frame');
  e.params.set('spin', [1]);
  t.ok((await e.evaluate().catch((x: unknown) => x)) instanceof EvaluationError);
  t.equal(e.computed, false, 'the failed frame computed nothing to serve');
  t.same([e.frame, state(e, 'a', 'n')[0]], [0, 10]);
  e.params.set('spin', [0]);
  await e.evaluate();
  t.equal(e.computed, true);
});

t.test('replay (trace\'s copy): the last frame from the state it started from; after a failure, the next frame', async (t) => {
  const e = engine(TWO_GROUPS);
  const copy = engine(TWO_GROUPS, { backend: 'interp', memory: e.memory, cacheFrames: false }); // as trace makes it
  t.same(e.replayInto(copy), undefined, 'before any frame: nothing to replay');
  t.same([copy.frame, state(copy, 'a', 'n')[0]], [0, 10]);
  await e.evaluate({ time: 0.25 });
  e.params.set('spin', [0.25]);
  const input = { time: 0.5, pointer: { x: 1, y: 2, down: true }, keys: ['Space'] };
  await e.evaluate(input);
  e.params.set('spin', [0]);
  const replay = e.replayInto(copy);
  t.same(replay, { time: 0.5, pointer: { x: 1, y: 2, down: true }, keys: ['Space'] }, 'the last frame\'s input');
  const bare = engine(TWO_GROUPS);
  await bare.evaluate({ time: 2 });
  t.same(bare.replayInto(engine(TWO_GROUPS, { backend: 'interp', memory: bare.memory })), { time: 2, pointer: undefined, keys: [] }, 'no pointer, no keys');
  t.same([copy.frame, copy.time, copy.params.get('spin')], [1, 0.5, [0.25]], 'its frame number, clock and params');
  t.same(state(copy, 'a', 'n'), all(12, 11), 'the state it started from');
  t.same(state(copy, 'b', 'm'), all(12, 1));
  await copy.evaluate(replay);
  t.same(first(copy, 'o'), first(e, 'o'), 'the copy computes what the frame computed');
  t.same(first(copy, 'p'), first(e, 'p'));
  // A failed frame ends the replay: the copy starts from the current state for the next frame.
  e.params.set('spin', [1]);
  await e.evaluate({ time: 0.75 }).catch(() => undefined);
  e.params.set('spin', [0]);
  t.equal(e.replayInto(copy), undefined);
  t.same([copy.frame, copy.time, state(copy, 'a', 'n')[0], state(copy, 'b', 'm')[0]], [2, 0.75, 12, 2]);
  t.same(copy.params.get('spin'), [0]);
});

t.test('reset: every state to its declared value, the clock and frame to zero, nothing to replay', async (t) => {
  const e = engine(TWO_GROUPS);
  await e.evaluate({ time: 2 });
  await e.evaluate({ time: 3 });
  e.reset();
  t.same([e.frame, e.time], [0, 0]);
  t.same(state(e, 'a', 'n'), all(12, 10));
  t.same(state(e, 'b', 'm'), all(12, 0));
  const copy = engine(TWO_GROUPS, { backend: 'interp', memory: e.memory });
  t.equal(e.replayInto(copy), undefined);
  t.same(state(copy, 'a', 'n'), all(12, 10), 'the copy starts from the reset state');
  const r = await e.evaluate();
  t.same([r.frame, r.time, r.cached], [1, 0, false]);
  t.same(first(e, 'o'), [1101], 'the first frame again');
});

t.test('the uniforms each frame: time, frame, pointer (-1 without one), keys by lower-case name, params', async (t) => {
  const e = engine(WORLD);
  await e.evaluate();
  t.same(first(e, 'o'), [0, 0, -1001, 0], 'no pointer: -1, -1; no keys');
  await e.evaluate({ time: 1.5, pointer: { x: 3, y: 2, down: true }, keys: ['Space', 'A'] });
  t.same(first(e, 'o'), [1.5, 1, 2003, 111]);
  e.params.set('gain', [2]);
  await e.evaluate({ time: 1.5, pointer: { x: 3, y: 2, down: false }, keys: new Set(['a']) });
  t.same(first(e, 'o'), [3, 2, 2003, 100]);
  await e.evaluate({ pointer: { x: 0, y: 0, down: false } });
  t.same(first(e, 'o'), [3, 3, 0, 0], 'the clock stays where it was when no time is given');
});

t.test('an unchanged stateless frame is served from the last; any input, param or write recomputes it', async (t) => {
  // A kernel that reads `frame` is never served (each frame number is new): this one does not.
  const e = engine(WORLD.replace('f32(frame)', '0.0'));
  t.equal(e.computed, false, 'no frame has run');
  const a = await e.evaluate({ time: 1 });
  t.same([a.frame, a.cached, a.executed], [1, false, ['w']]);
  t.same(a.placements, [{ node: 'w', backend: 'interp', group: 0, fused: ['w'], tiles: 1, workers: 1 }]);
  t.same(a.timings.map((x) => [x.node, x.fused]), [['w', undefined]], 'a group of one node lists no fused nodes');
  t.equal(e.computed, true, 'a frame has run');
  const b = await e.evaluate({ time: 1 });
  t.same([b.frame, b.cached, b.executed, b.timings], [1, true, [], []], 'served: frame 1 again');
  t.equal(e.frame, 1);
  const changes: [string, () => void, object][] = [
    ['time', () => undefined, { time: 2 }],
    ['pointer', () => undefined, { time: 2, pointer: { x: 1, y: 1, down: false } }],
    ['keys', () => undefined, { time: 2, pointer: { x: 1, y: 1, down: false }, keys: ['a'] }],
    ['a param', () => e.params.set('gain', [3]), { time: 2, pointer: { x: 1, y: 1, down: false }, keys: ['a'] }],
    ['a write', () => e.version++, { time: 2, pointer: { x: 1, y: 1, down: false }, keys: ['a'] }],
  ];
  let frame = 1;
  for (const [what, change, input] of changes) {
    change();
    const r = await e.evaluate(input);
    t.same([r.cached, r.frame], [false, ++frame], `${what} changed: computed`);
    t.same((await e.evaluate(input)).cached, true, `${what} unchanged: served`);
  }
  t.same(first(e, 'o'), [6, 0, 1001, 100]);
  // Without the cache every frame runs; a stateful scene is never served from it, nor one that reads `frame`.
  const counting = engine(WORLD);
  await counting.evaluate({ time: 1 });
  const next = await counting.evaluate({ time: 1 });
  t.same([next.cached, next.frame, first(counting, 'o')[1]], [false, 2, 1], 'a kernel reading frame runs again: frame 2, which it sees as 1');
  const uncached = engine(WORLD, { backend: 'interp', cacheFrames: false });
  await uncached.evaluate({ time: 1 });
  t.equal((await uncached.evaluate({ time: 1 })).cached, false);
  const stateful = engine(TWO_GROUPS);
  await stateful.evaluate({ time: 1 });
  t.equal((await stateful.evaluate({ time: 1 })).cached, false);
  t.same(first(stateful, 'o'), [1202]);
  // After a reset the same input is computed again.
  e.reset();
  t.same((await e.evaluate(changes[4][2])).cached, false);
});

t.test('fused groups report every node they computed', async (t) => {
  const fused = engine(`kernel t.one@1 {\n  out r: field2<f32>;\n  each (x, y) { r = f32(x); }\n}\nkernel t.two@1 {\n  in s: field2<f32>;\n  out r: field2<f32>;\n  each (x, y) { r = s + 1.0; }\n}\nnode a: t.one@1 { size = 4 x 2; }\nnode b: t.two@1 { s <- a.r; }\noutput o <- b.r;\n`);
  const r = await fused.evaluate();
  t.same(r.executed, ['a', 'b']);
  t.same(r.placements.map((p) => [p.node, p.group, p.fused]), [['a', 0, ['a', 'b']], ['b', 0, ['a', 'b']]]);
  t.same(r.timings.map((x) => [x.node, x.fused]), [['b', ['a', 'b']]]);
  t.same(readField(fused.memory, fused.outputField('o')!)[0].slice(0, 4), Float32Array.from([1, 2, 3, 4]));
});

t.test('compiled: in bands on the calling thread and on the pool, the same frames and the same commit', async (t) => {
  // As a session does: modules prepared first (from the disk cache when there), none compiled by an engine.
  await prepareModules(sceneGroups(scene(TWO_GROUPS), [], true).map((g) => g.ir));
  const memory = new FieldMemory();
  const pool = new EvalPool(memory.memory, { workers: 1 });
  t.teardown(() => pool.destroy());
  const banded = engine(TWO_GROUPS, { backend: 'jit', prepared: true, poolThreshold: 0, bandRows: 2 });
  const pooled = engine(TWO_GROUPS, { backend: 'jit', prepared: true, memory, pool, poolThreshold: 0, bandRows: 2 });
  const small = engine(TWO_GROUPS, { backend: 'jit', prepared: true, memory: new FieldMemory(), pool, bandRows: 2 });
  for (const e of [banded, pooled, small]) {
    const r = await e.evaluate();
    await e.evaluate();
    t.same(first(e, 'o'), [1202]);
    t.same(readField(e.memory, e.outputField('p')!)[0].slice(0, 4), Float32Array.from([12, 13, 14, 15]));
    e.params.set('spin', [1]);
    const err = await e.evaluate().catch((x: unknown) => x);
    t.ok(err instanceof EvaluationError && err.node === 'b', 'the later group fails');
    t.same([e.frame, state(e, 'a', 'n')[0], state(e, 'b', 'm')[0]], [2, 12, 2], 'nothing committed');
    e.params.set('spin', [0]);
    await e.evaluate();
    t.same(first(e, 'o'), [1303]);
    if (e === banded) t.same(r.placements.map((p) => [p.backend, p.tiles, p.workers]), [['jit', 2, 1], ['jit', 2, 1]], '3 rows in bands of 2');
    if (e === pooled) t.same(r.placements.map((p) => [p.tiles, p.workers]), [[2, 1], [2, 1]], 'on the pool: 2 bands, 1 worker');
    if (e === small) t.same(r.placements.map((p) => [p.tiles, p.workers]), [[1, 1], [1, 1]], 'below the threshold: one call');
  }
});

t.test('a scene input, a 3-D domain, values of fused nodes, an unrun stateful node', async (t) => {
  const e = engine(`kernel t.vol@1 {
  in k: f32 = 1.0;
  out v: field3<f32>;
  each (x, y, z) { v = f32(x + 10 * y + 100 * z) * k; }
}
kernel t.scale@1 {
  in s: field2<f32>;
  in k: f32 = 1.0;
  out r: field2<f32>;
  each (x, y) { r = s * k; }
}
kernel t.keep@1 {
  grants field.write;
  state s: field2<f32> = 5.0;
  each (x, y) { s = s + 1.0; }
}
input canvas: field2<f32> = 2.0 size 3 x 2;
node vol: t.vol@1 { size = 2 x 3 x 4; k = 2.0; }
node a: t.scale@1 { s <- canvas; k = 3.0; }
node b: t.scale@1 { s <- a.r; k = 5.0; }
node idle: t.keep@1 { size = 2 x 2; }
output v <- vol.v;
output o <- b.r;
`);
  t.same(e.groups.map((g) => g.nodes.map((n) => n.name)), [['vol'], ['a', 'b']], 'a and b fused; idle not run');
  await e.evaluate();
  const v = readField(e.memory, e.outputField('v')!)[0];
  t.equal(v.length, 24);
  t.same([v[0], v[1], v[2], v[23]], [0, 2, 20, 2 * (1 + 20 + 300)], 'every row of every slice of a 3-D domain');
  t.same([...readField(e.memory, e.outputField('o')!)[0]], all(6, 2 * 3 * 5), 'the input, then each fused node with its own value');
  e.reset(); // a stateful node no output needs holds no state to reset
  t.equal(e.frame, 0);
});

t.test('where a group runs: below the threshold in one call, at it in bands or on the pool', async (t) => {
  // 4 x 3 = 12 elements: a threshold of 12 sends it to bands (or the pool); 13 keeps one call.
  const interp = engine(TWO_GROUPS, { backend: 'interp', poolThreshold: 0, bandRows: 2 });
  t.same((await interp.evaluate()).placements.map((p) => p.tiles), [1, 1], 'the interpreter runs a group in one call');
  await prepareModules(sceneGroups(scene(TWO_GROUPS), [], true).map((g) => g.ir));
  for (const [threshold, tiles] of [[12, 2], [13, 1]]) {
    const e = engine(TWO_GROUPS, { backend: 'jit', prepared: true, poolThreshold: threshold, bandRows: 2 });
    t.same((await e.evaluate()).placements.map((p) => p.tiles), [tiles, tiles], `threshold ${threshold}: ${tiles} band(s)`);
  }
  const memory = new FieldMemory();
  const pool = new EvalPool(memory.memory, { workers: 2 });
  t.teardown(() => pool.destroy());
  const pooled = engine(TWO_GROUPS, { backend: 'jit', prepared: true, memory, pool, poolThreshold: 12, bandRows: 1 });
  const r = await pooled.evaluate();
  t.same(r.placements.map((p) => p.tiles), [3, 3], '3 rows in bands of 1');
  t.same(r.placements.map((p) => p.workers), [2, 2], 'one task on each of the pool\'s 2 workers');
  t.same(first(pooled, 'o'), [1101]);
});

t.test('replay into a copy built otherwise (trace\'s is unfused): the ports both hold are carried', async (t) => {
  const fusedText = TWO_GROUPS.replace('output p <- a.r;\n', '');
  const e = engine(fusedText, { backend: 'interp', fuse: false });
  await e.evaluate();
  await e.evaluate();
  const copy = engine(fusedText, { backend: 'interp', memory: e.memory });
  const input = e.replayInto(copy);
  t.same(state(copy, 'a', 'n'), all(12, 11));
  await copy.evaluate(input);
  t.same(first(copy, 'o'), first(e, 'o'));
});

t.test('replay from an unfused engine into a fused copy: a port the copy does not hold is skipped', async (t) => {
  const text = `kernel t.one@1 {\n  out r: field2<f32>;\n  each (x, y) { r = f32(x) + time; }\n  grants time.read;\n}\nkernel t.two@1 {\n  in s: field2<f32>;\n  out r: field2<f32>;\n  each (x, y) { r = s + 1.0; }\n}\nnode a: t.one@1 { size = 4 x 2; }\nnode b: t.two@1 { s <- a.r; }\noutput o <- b.r;\n`;
  const e = engine(text, { backend: 'interp', fuse: false });
  const copy = engine(text, { backend: 'interp', memory: e.memory });
  t.equal(copy.groups.length, 1, 'the copy fuses a into b: it holds no a.r');
  await e.evaluate({ time: 2 });
  const input = e.replayInto(copy);
  await copy.evaluate(input);
  t.same(first(copy, 'o'), [3]);
});

t.test('reset: a state declared without a value goes back to zeros', async (t) => {
  const e = engine(`kernel t.z@1 {\n  grants field.write;\n  state s: field2<vec2>;\n  out r: field2<f32>;\n  each (x, y) { s = s + vec2(1.0, 2.0); r = s.y; }\n}\nnode a: t.z@1 { size = 2 x 2; }\noutput o <- a.r;\n`);
  await e.evaluate();
  await e.evaluate();
  t.same(first(e, 'o'), [4]);
  e.reset();
  t.same(readField(e.memory, e.fields.state('a', 's')!.current).map((p) => [...p]), [all(4, 0), all(4, 0)]);
  await e.evaluate();
  t.same(first(e, 'o'), [2]);
});
