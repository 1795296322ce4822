// The bench pipelines (bench/scenes) on the engine, both backends, against the plain-JavaScript
// implementations of bench/js element by element, and against the C reference's checksum
// (bench/reference, built with the machine's compiler as test/bench-reference.test.ts builds it):
// an independent value, not the other backend. Tolerances in docs/testing.md.

import t from 'tap';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { computeJs } from '../bench/js/pipelines.js';
import { buildReference, runReference } from '../bench/reference/build.js';
import { P3_STEPS, PIPELINES, type PipelineName } from '../bench/reference/measurement.js';
import { loadScene } from '../src/ir/check/scene.js';
import { Engine, type Backend } from '../src/main/engine.js';
import { readField } from '../src/main/field.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

// Non-square, a width not a multiple of 4, an even height (see test/bench-reference.test.ts).
const W = 67;
const H = 48;

/** Per pipeline: the largest |engine - JS| of an element, and how many elements may differ more (P4's escape counts at chaotic points). */
const TOLERANCE: Record<PipelineName, { abs: number; outliers: number }> = {
  P1: { abs: 5e-6, outliers: 0 }, // sin in f32 (the engine's) against Math.sin (f64), colours in [0, 1]
  P2: { abs: 2e-6, outliers: 0 }, // a 5 x 5 blur: sums in another order
  P3: { abs: 0, outliers: 0 }, // life: exact
  P4: { abs: 1e-6, outliers: 48 }, // escape-time colours: orbits in f32 against f64 escape a step or two apart near the set (24 of 3216 elements)
};

async function engineOutput(pipeline: PipelineName, backend: Backend): Promise<Float32Array> {
  const dir = join(ROOT, 'bench', 'scenes');
  const scene = loadScene(`${pipeline.toLowerCase()}.esn`, { read: (p) => readFileSync(join(dir, p), 'utf8'), size: [W, H] });
  if (scene.diagnostics.length) throw new Error(scene.diagnostics[0].message);
  const e = new Engine(scene, { backend, cacheFrames: false });
  try {
    const frames = pipeline === 'P3' ? 1 + P3_STEPS : 1; // P3: the seeding frame, then the steps
    for (let i = 0; i < frames; i++) await e.evaluate({ time: 0.5 });
    const planes = readField(e.memory, e.outputField(scene.outputs[0].name)!);
    // Interleaved per element, as bench/js lays it out.
    const out = new Float32Array(W * H * planes.length);
    for (let i = 0; i < W * H; i++) for (let c = 0; c < planes.length; c++) out[i * planes.length + c] = planes[c][i];
    return out;
  } finally {
    e.dispose();
  }
}

for (const pipeline of PIPELINES) {
  t.test(`${pipeline} at ${W} x ${H}: the engine against plain JavaScript, element by element`, async (t) => {
    const js = computeJs(pipeline, W, H);
    const { abs, outliers } = TOLERANCE[pipeline];
    for (const backend of ['jit', 'interp'] as Backend[]) {
      const got = await engineOutput(pipeline, backend);
      t.equal(got.length, js.length, `${backend}: as many floats`);
      let over = 0;
      let worst = 0;
      let first = '';
      for (let i = 0; i < js.length; i++) {
        const d = Math.abs(got[i] - js[i]);
        if (!(d <= abs)) {
          if (over++ === 0) first = `; first at float ${i} (element ${Math.floor(i / (js.length / (W * H)))}): ${got[i]} vs ${js[i]}`;
        } else worst = Math.max(worst, d);
      }
      t.ok(over <= outliers, `${backend}: ${over} floats differ by more than ${abs} (at most ${outliers}); worst within: ${worst.toExponential(2)}${first}`);
    }
  });
}

/** The C reference's tolerances: it is built with -ffast-math and computes sin with sinf. */
const C_TOLERANCE: Record<PipelineName, { abs: number; outliers: number }> = {
  P1: { abs: 2e-5, outliers: 0 },
  P2: { abs: 2e-6, outliers: 0 },
  P3: { abs: 0, outliers: 0 },
  P4: { abs: 1e-6, outliers: 32 },
};

// Built before the tests are declared so that "no compiler" is a declared skip.
const built = await buildReference();
t.test('the engine against the C reference, element by element', { skip: 'skipped' in built ? `C reference not built: ${built.skipped}` : false }, async (t) => {
  if ('skipped' in built) return;
  const dir = scratchDir('entelechy-pipelines-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const pipeline of PIPELINES) {
    const file = join(dir, `${pipeline}.f32`);
    await runReference(built.binary, pipeline, W, H, 1, 1, { dump: file });
    const bytes = readFileSync(file);
    const c = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    const got = await engineOutput(pipeline, 'jit');
    const { abs, outliers } = C_TOLERANCE[pipeline];
    let over = 0;
    let first = '';
    for (let i = 0; i < c.length; i++)
      if (!(Math.abs(got[i] - c[i]) <= abs) && over++ === 0) first = `; first at float ${i}: ${got[i]} vs ${c[i]}`;
    t.equal(got.length, c.length, `${pipeline}: as many floats`);
    t.ok(over <= outliers, `${pipeline}: ${over} floats differ by more than ${abs} (at most ${outliers})${first}`);
  }
});
