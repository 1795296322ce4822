// Constant folding is the runtime's operation (issue 14.11): `i32()` of a constant saturates as the
// running code converts a computed value (docs/language.md), on both backends. Each edge value is
// converted once as a constant (folded while lowering) and once read from an input field (converted
// at run time), and both are held to truncation with saturation computed here.

import t from 'tap';
import { Engine, type Backend } from '../src/main/engine.js';
import { textScene } from './helpers.js';

const EDGES = [0, -0, 0.5, -0.5, 1.9, -1.9, 2147483520, 2147483648, -2147483648, -2147483904, 3e9, -3e9, 1e30, -1e30, Infinity, -Infinity, NaN, 1e-40];
const N = EDGES.length;

/** The reference: truncation toward zero, saturating at i32's ends, NaN to 0 (f32 input). */
function want(v: number): number {
  const f = Math.fround(v);
  if (Number.isNaN(f)) return 0;
  return Math.max(-2147483648, Math.min(2147483647, Math.trunc(f)));
}

const literal = (v: number) => (Number.isNaN(v) ? '(0.0 / 0.0)' : v === Infinity ? '(1.0 / 0.0)' : v === -Infinity ? '(-1.0 / 0.0)' : Object.is(v, -0) ? '-0.0' : v.toExponential());

// One branch per edge value: `i32(CONSTANT)` (folded) beside `i32(v)` (the same value, computed).
const branches = EDGES.map((v, i) => `    ${i ? 'else ' : ''}if (x == ${i}) { folded = i32(${literal(v)}); back = f32(i32(${literal(v)})); }`).join('\n');
const SCENE = `
input values: field2<f32> = 0.0 size ${N} x 1;

kernel fold.probe@1 {
  in v: field2<f32>;
  out folded: field2<i32>;
  out computed: field2<i32>;
  out back: field2<f32>;
  each (x, y) {
    folded = 0;
    back = 0.0;
${branches}
    computed = i32(v);
  }
}

node probe: fold.probe@1 { v <- values; }
output folded <- probe.folded;
output computed <- probe.computed;
output back <- probe.back;
`;

function plane(e: Engine, name: string, kind: 'i32' | 'f32'): number[] {
  const f = e.outputField(name)!;
  const view = kind === 'i32' ? e.memory.i32 : e.memory.f32;
  return Array.from(view.subarray(f.ptr / 4, f.ptr / 4 + N));
}

t.test('the scene checks', async (t) => {
  t.same(textScene({ 'scene.esn': SCENE }).diagnostics.map((d) => `${d.line}:${d.column}: ${d.message}`), []);
});

for (const backend of ['jit', 'interp'] as Backend[]) {
  t.test(`${backend}: i32() of a constant is i32() of the same value computed: truncated, saturating, NaN to 0`, async (t) => {
    const e = new Engine(textScene({ 'scene.esn': SCENE }), { backend });
    t.teardown(() => e.dispose());
    const f = e.fields.input('values')!;
    EDGES.forEach((v, x) => (e.memory.f32[f.ptr / 4 + x] = v));
    e.version++;
    await e.evaluate();
    const folded = plane(e, 'folded', 'i32');
    const computed = plane(e, 'computed', 'i32');
    const back = plane(e, 'back', 'f32');
    EDGES.forEach((v, x) => {
      t.equal(computed[x], want(v), `computed i32(${v}) is ${want(v)}`);
      t.equal(folded[x], want(v), `folded i32(${v}) is ${want(v)}, as computed`);
      t.equal(back[x], Math.fround(want(v)), `folded f32(i32(${v})) is ${Math.fround(want(v))}`);
    });
  });
}
