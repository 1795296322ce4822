// What a publication carries from the running engine to the next (src/main/engine.ts, called by
// src/main/commit.ts): keepInputs, the values written into inputs whose declaration is unchanged;
// keepFrame, on a tier swap, the last frame's outputs, both state buffers and what trace and read
// know of it. On bare engines, in process (the tier tests reach the same through a session, slowly).

import t from 'tap';
import { fillField, readField } from '../src/main/field.js';
import { all, engine, first, state } from './engine-fixtures.js';

const SCALE = `kernel t.scale@1 {
  in s: field2<f32>;
  in k: f32 = 1.0;
  out r: field2<f32>;
  each (x, y) { r = s * k; }
}
`;

const INPUTS = (redeclared: string, resized: string, added = '') => `${SCALE}
input kept: field2<f32> = 2.0 size 3 x 2;
input redeclared: field2<f32> = ${redeclared} size 3 x 2;
input resized: field2<f32> = 2.0 size ${resized};
${added ? `input added: field2<f32> = ${added} size 3 x 2;\nnode d: t.scale@1 { s <- added; }\noutput od <- d.r;` : ''}
node a: t.scale@1 { s <- kept; k = 3.0; }
node b: t.scale@1 { s <- redeclared; }
node c: t.scale@1 { s <- resized; }
output oa <- a.r;
output ob <- b.r;
output oc <- c.r;
`;

/** Every element of an input's first plane. */
const input = (e: ReturnType<typeof engine>, name: string) => [...readField(e.memory, e.fields.input(name)!)[0]];

t.test('keepInputs: what was written into an unchanged input stays; a redeclared, resized or new one starts from its declaration', async (t) => {
  for (const shared of [true, false]) {
    const old = engine(INPUTS('2.0', '3 x 2'));
    for (const name of ['kept', 'redeclared', 'resized']) fillField(old.memory, old.fields.input(name)!, [7]);
    const next = engine(INPUTS('4.0', '2 x 2', '6.0'), { backend: 'interp', ...(shared ? { memory: old.memory } : {}) });
    const how = shared ? 'one memory' : 'a fresh memory';
    t.same(next.keepInputs(old), ['redeclared', 'resized'], `${how}: the inputs it had that start again are named (the input_reset events)`);
    t.same(input(next, 'kept'), all(6, 7), `${how}: the written value kept`);
    t.same(input(next, 'redeclared'), all(6, 4), `${how}: a new value declared: the declaration`);
    t.same(input(next, 'resized'), all(4, 2), `${how}: a new size: the declaration`);
    t.same(input(next, 'added'), all(6, 6), `${how}: a new input: its declaration`);
    await next.evaluate();
    t.same([first(next, 'oa'), first(next, 'ob'), first(next, 'od')], [[21], [4], [6]], `${how}: the next frame reads them`);
  }
});

// `a` counts up from 10; `b` holds its own count; both have outputs.
const COUNTS = `kernel t.up@1 {
  grants field.write;
  state n: field2<f32> = 10.0;
  out r: field2<f32>;
  each (x, y) { n = n + 1.0; r = n + f32(x); }
}
node a: t.up@1 { size = 2 x 2; }
node b: t.up@1 { size = 2 x 2; }
output p <- a.r;
output q <- b.r;
`;

t.test('keepFrame on a tier swap: the last frame readable, its state in both buffers, its replay, then the next frame', async (t) => {
  const old = engine(COUNTS);
  await old.evaluate({ time: 1 });
  await old.evaluate({ time: 2, keys: ['Space'] });
  old.params.set('unused', [1]);
  const next = engine(COUNTS, { backend: 'interp', memory: old.memory });
  t.equal(next.computed, false, 'a new engine has computed nothing');
  next.frame = old.frame;
  next.time = old.time;
  next.keepFrame(old);
  t.equal(next.computed, true, 'the old engine\'s frame is served');
  t.equal(next.version, old.version);
  t.same([first(next, 'p'), first(next, 'q')], [[12], [12]], 'its outputs');
  t.same([...readField(next.memory, next.outputField('p')!)[0]], [12, 13, 12, 13], 'every element');
  t.same(state(next, 'a', 'n'), all(4, 12), 'the current state');
  t.same([...readField(next.memory, next.fields.state('a', 'n')!.next)[0]], all(4, 11), 'the back buffer: the state the last frame started from');
  const copy = engine(COUNTS, { backend: 'interp', memory: old.memory });
  t.same(next.replayInto(copy), { time: 2, pointer: undefined, keys: ['Space'] }, 'trace replays the last frame');
  t.same(state(copy, 'a', 'n'), all(4, 11));
  await next.evaluate({ time: 3 });
  t.same([next.frame, first(next, 'p')], [3, [13]], 'the next frame goes on from the carried state');

  const failed = engine(COUNTS);
  const after = engine(COUNTS);
  after.keepFrame(failed);
  t.equal(after.computed, false, 'nothing computed carries nothing computed');
});

// The same node and port names with another size, another type, or gone: nothing is carried there.
const OTHER = `kernel t.up@1 {
  grants field.write;
  state n: field2<f32> = 10.0;
  out r: field2<f32>;
  each (x, y) { n = n + 1.0; r = n + f32(x); }
}
kernel t.up@2 {
  grants field.write;
  state n: field2<vec2>;
  out r: field2<vec2>;
  each (x, y) { n = n + vec2(1.0, 2.0); r = n; }
}
node a: t.up@1 { size = 4 x 3; }
node b: t.up@2 { size = 2 x 2; }
output p <- a.r;
output q <- b.r;
`;

t.test('keepFrame copies only a port of the same layout: another size or type keeps its own, a port gone is skipped', async (t) => {
  const old = engine(COUNTS.replace('output q <- b.r;', 'node gone: t.up@1 { size = 2 x 2; }\noutput q <- b.r;\noutput g <- gone.r;'));
  await old.evaluate();
  for (const shared of [true, false]) {
    const next = engine(OTHER, { backend: 'interp', ...(shared ? { memory: old.memory } : {}) });
    next.keepFrame(old);
    const how = shared ? 'one memory' : 'a fresh memory';
    t.same(state(next, 'a', 'n'), all(12, 10), `${how}: another size: the declared state`);
    t.same([...readField(next.memory, next.fields.state('a', 'n')!.next)[0]], all(12, 0), `${how}: its back buffer as allocated`);
    t.same([...readField(next.memory, next.outputField('p')!)[0]], all(12, 0), `${how}: its output untouched`);
    t.same(readField(next.memory, next.fields.state('b', 'n')!.current).map((p) => [...p]), [all(4, 0), all(4, 0)], `${how}: another type: the declared state`);
    t.same(readField(next.memory, next.outputField('q')!).map((p) => [...p]), [all(4, 0), all(4, 0)], `${how}: its output untouched`);
  }
});
