// The benchmark's reference implementations: C (bench/reference/pipelines.c) and plain JS
// (bench/js/pipelines.ts) must compute the same pipelines (checksums agree), and P3's
// initial pattern / Life rule must match a hand-checked expectation.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildReference, runReference, type ReferenceBuildResult } from '../bench/reference/build.js';
import { computeJs, p3Init, p3Step, runJs } from '../bench/js/pipelines.js';
import { PIPELINES, median, p3Hash, p3InitialCell, type Measurement } from '../bench/reference/measurement.js';
import { scratchDir } from './scratch.js';

// Small, non-square, width not a multiple of 4 (exercises the blur's edge/interior split).
// H is EVEN on purpose: with an odd H the centre row of P4 lies exactly on the real axis
// (cy = -1.5 + 3 * (H/2) / H = 0 exactly in JS), where the orbits of c in [-2, -1.4] are
// chaotic; -ffast-math turns the division into a multiply by 1/H, cy becomes ~1e-7 instead
// of 0, and a dozen pixels escape that stay in the set in JS (67x45: rel. checksum gap 6e-3).
const W = 67;
const H = 48;
const REL_TOL = 1e-3; // P1/P2/P4: -ffast-math + sinf (f32) vs Math.sin (f64)

// P3 on a 7 x 5 grid. Initial pattern from hash(x,y) % 3 == 0, e.g. row 0 is x % 3 == 0
// because hash(x,0) = x * 73856093 and 73856093 % 3 == 2 (digit sum 41), and hash(0,1) =
// 19349663 (digit sum 41, % 3 == 2) -> dead.
const TINY_W = 7;
const TINY_H = 5;
const TINY_INITIAL = [
  '#..#..#',
  '.#.#...',
  '..##..#',
  '######.',
  '....###',
];
// One step with wrap-around. Checked by hand, e.g.:
//  (0,0): neighbours rows 4,0,1 x cols 6,0,1 = (#..)+(#_.)+(..#) -> n = 3 -> born.
//  (6,4): rows 3,4,0 x cols 5,6,0 = (#.#)+(#_.)+(.##) -> n = 5 -> dies.
//  (3,1): rows 0,1,2 x cols 2,3,4 = (.#.)+(._.)+(##.) -> n = 3, alive -> survives.
const TINY_STEP1 = [
  '#.##..#',
  '.#.##.#',
  '.....##',
  '##.....',
  '.......',
];

function render(cells: Float32Array, w: number, h: number): string[] {
  const rows: string[] = [];
  for (let y = 0; y < h; y++) {
    let s = '';
    for (let x = 0; x < w; x++) s += cells[y * w + x] === 1 ? '#' : cells[y * w + x] === 0 ? '.' : '?';
    rows.push(s);
  }
  return rows;
}

function relDiff(a: number, b: number): number {
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-30);
}

function checkShape(t: Test, m: Measurement, system: string, runs: number, pipeline: string): void {
  t.equal(m.system, system, 'system');
  t.equal(m.pipeline, pipeline, 'pipeline');
  t.equal(m.width, W, 'width');
  t.equal(m.height, H, 'height');
  t.equal(m.runs.length, runs, 'runs listed (warm-up excluded)');
  t.ok(m.runs.every((r) => r >= 0), 'run times are >= 0');
  t.ok(Math.abs(m.median_ms - median(m.runs)) < 1e-3, 'median_ms is the median of runs');
  t.ok(Number.isFinite(m.checksum) && m.checksum > 0, 'checksum is a positive number');
}

t.test('P3 hash: Math.imul agrees with the exact-integer formula', async (t) => {
  const exact = (x: number, y: number) =>
    Number(((BigInt(x) * 73856093n) ^ (BigInt(y) * 19349663n)) & 0x7fffffffn);
  const pts: [number, number][] = [
    [0, 0], [1, 0], [0, 1], [3, 2], [4095, 4095], [100000, 77777], [123456789, 987654321], [2 ** 31 - 1, 2 ** 30],
  ];
  for (const [x, y] of pts) t.equal(p3Hash(x, y), exact(x, y), `hash(${x},${y})`);
  // literal values (computed with arbitrary-precision integers)
  t.equal(p3Hash(1, 0), 73856093);
  t.equal(p3Hash(0, 1), 19349663);
  t.equal(p3Hash(3, 2), 259677225);
  t.equal(p3Hash(100000, 77777), 2115607279);
  t.equal(p3Hash(123456789, 987654321), 2020196686);
  for (let y = 0; y < 64; y++) for (let x = 0; x < 64; x++) {
    if (p3InitialCell(x, y) !== (exact(x, y) % 3 === 0 ? 1 : 0)) t.fail(`initial cell (${x},${y})`);
  }
});

t.test('P3 tiny grid in JS: initial pattern and one step', async (t) => {
  const a = new Float32Array(TINY_W * TINY_H);
  const b = new Float32Array(TINY_W * TINY_H);
  p3Init(a, TINY_W, TINY_H);
  t.strictSame(render(a, TINY_W, TINY_H), TINY_INITIAL, 'initial pattern');
  p3Step(a, b, TINY_W, TINY_H);
  t.strictSame(render(b, TINY_W, TINY_H), TINY_STEP1, 'after 1 step');
  t.strictSame(render(computeJs('P3', TINY_W, TINY_H, 1), TINY_W, TINY_H), TINY_STEP1, 'computeJs, 1 step');
});

t.test('JS runJs shape', async (t) => {
  for (const p of PIPELINES) checkShape(t, runJs(p, W, H, 3), 'js', 3, p);
  const m = runJs('P3', W, H, 1);
  t.equal(m.workers, 1);
  t.throws(() => runJs('P1', 0, 4, 1), RangeError);
  t.throws(() => runJs('P1', 4, 4, 0), RangeError);
});

// Built before the tests are declared so that "no compiler" can be a declared tap skip.
const built: ReferenceBuildResult = await buildReference();
const skipC = 'skipped' in built ? `C reference not built: ${built.skipped}` : false;

t.test('C reference agrees with JS', { skip: skipC }, async (t) => {
  const build = built;
  if ('skipped' in build) return;
  t.comment(`built with ${build.compiler} ${build.flags.join(' ')}${build.cached ? ' (cached)' : ` in ${build.compile_ms.toFixed(0)} ms`}${build.note ? ' — ' + build.note : ''}`);
  const again = await buildReference();
  t.ok(!('skipped' in again) && again.cached && again.binary === build.binary, 'second build reuses the cached binary');

  const dir = scratchDir('entelechy-bench-ref-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const readF32 = (f: string) => {
    const buf = readFileSync(f);
    return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  };

  await t.test('P3 tiny grid in C: initial pattern and one step', async (t) => {
    for (const [steps, expected] of [[0, TINY_INITIAL], [1, TINY_STEP1]] as const) {
      const f = join(dir, `tiny-${steps}.f32`);
      const m = await runReference(build.binary, 'P3', TINY_W, TINY_H, 1, 1, { steps, dump: f });
      t.strictSame(render(readF32(f), TINY_W, TINY_H), expected, `C after ${steps} step(s)`);
      t.equal(m.checksum, expected.join('').split('#').length - 1, 'checksum = live cells');
    }
  });

  for (const p of PIPELINES) {
    await t.test(`${p} at ${W}x${H}`, async (t) => {
      const js = runJs(p, W, H, 2);
      const f = join(dir, `${p}.f32`);
      const c1 = await runReference(build.binary, p, W, H, 3, 1, { dump: f });
      const c2 = await runReference(build.binary, p, W, H, 3, 2);
      checkShape(t, c1, 'c', 3, p);
      t.equal(c2.workers, build.openmp ? 2 : 1, 'workers');
      t.equal(c2.checksum, c1.checksum, 'C: same checksum on 1 and 2 threads');
      if (p === 'P4') {
        const s = await runReference(build.binary, p, W, H, 1, 2, { p4Scalar: true });
        t.match(s.note ?? '', /scalar/, 'scalar variant says so');
        const d = relDiff(s.checksum, js.checksum);
        t.ok(d < REL_TOL, `scalar P4 agrees too: C ${s.checksum} vs JS ${js.checksum} (rel ${d.toExponential(2)})`);
      }
      const out = readF32(f);
      t.equal(out.length, (p === 'P3' ? 1 : 4) * W * H, 'dumped field size');
      if (p === 'P3') {
        t.equal(c1.checksum, js.checksum, `checksums equal exactly (${js.checksum} live cells after 10 steps)`);
        t.strictSame(render(out, W, H), render(computeJs('P3', W, H), W, H), 'cells identical after 10 steps');
      } else {
        const d = relDiff(c1.checksum, js.checksum);
        t.ok(d < REL_TOL, `checksums agree: C ${c1.checksum} vs JS ${js.checksum} (rel ${d.toExponential(2)})`);
        // element-wise sanity: the fields themselves are close, and alpha is exactly 1
        const ref = computeJs(p, W, H);
        let maxAbs = 0;
        let differing = 0;
        let alphaOk = true;
        for (let i = 0; i < out.length; i++) {
          const d = Math.abs(out[i]! - ref[i]!);
          maxAbs = Math.max(maxAbs, d);
          if (d > 1e-3) differing++;
          if (i % 4 === 3 && out[i] !== 1) alphaOk = false;
        }
        t.ok(alphaOk, 'alpha channel is 1 everywhere');
        if (p === 'P4') {
          // a pixel on the chaotic boundary may take another iteration count in f32 (C) vs f64 (JS)
          t.ok(differing <= 0.01 * out.length, `${differing} of ${out.length} floats differ by > 1e-3 (<= 1 %)`);
        } else {
          t.ok(maxAbs < 1e-3, `max |C - JS| per float ${maxAbs.toExponential(2)} < 1e-3`);
        }
      }
    });
  }
});

t.test('buildReference without a compiler is a skip, not an error', async (t) => {
  const r = await buildReference({ compilers: ['entelechy-no-such-cc-1', 'entelechy-no-such-cc-2'] });
  t.strictSame(r, { skipped: 'no C compiler found (cc, gcc, clang)' });
});

t.test('buildReference falls back to no OpenMP and says so', { skip: skipC || (process.platform === 'win32' ? 'POSIX shell needed' : false) }, async (t) => {
  if ('skipped' in built) return;
  // A "compiler" that rejects -fopenmp and otherwise forwards to the real one. It lives at a
  // stable path in the build cache, so its no-OpenMP binary is compiled once, then reused.
  const dir = join(dirname(built.binary), 'test-no-openmp');
  mkdirSync(dir, { recursive: true });
  const fake = join(dir, 'fake-cc');
  const script = `#!/bin/sh\nfor a in "$@"; do [ "$a" = "-fopenmp" ] && { echo "fake-cc: -fopenmp unsupported" >&2; exit 1; }; done\nexec ${JSON.stringify(built.compiler)} "$@"\n`;
  if (!existsSync(fake) || readFileSync(fake, 'utf8') !== script) {
    const tmp = `${fake}.${process.pid}.tmp`;
    writeFileSync(tmp, script, { mode: 0o755 });
    renameSync(tmp, fake);
  }
  const r = await buildReference({ compilers: [fake], cacheDir: dir });
  if ('skipped' in r) return t.fail('skipped');
  t.equal(r.openmp, false, 'built without OpenMP');
  t.match(r.note ?? '', /without -fopenmp/, 'note says so');
  t.notOk(r.flags.includes('-fopenmp'));
  const m = await runReference(r.binary, 'P3', TINY_W, TINY_H, 1, 2, { steps: 1 });
  t.equal(m.workers, 1, 'ran on one thread');
  t.match(m.note ?? '', /without OpenMP/);
  t.equal(m.checksum, TINY_STEP1.join('').split('#').length - 1, 'still correct');
});
