// A large frame's PNG made on the evaluation pool's threads (src/main/field-png.ts): the same
// bytes as the PNG encoded on the main thread, for colour, gray and bool fields; nothing left
// behind when the file cannot be written.

import t from 'tap';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EvalPool } from '../src/workers/pool.js';
import { FieldMemory } from '../src/main/memory.js';
import { allocField, type Field } from '../src/main/field.js';
import { decodePng, fieldRgbaRows, ImageError, savePng } from '../src/main/image.js';
import { pngOnPool, savePngOnPool } from '../src/main/field-png.js';
import { stripRows } from '../src/main/png.js';
import type { Scalar } from '../src/ir/ir.js';
import { xorshift } from './helpers.js';
import { scratchDir } from './scratch.js';

const dir = scratchDir('entelechy-field-png-');
const memory = new FieldMemory(1 << 30);
const pool = new EvalPool(memory.memory, { workers: 2 });
t.teardown(async () => {
  await pool.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** A field of noise and flat runs (values past [0, 1] and NaN among them), so strips differ. */
function field(width: number, height: number, comps: Scalar[], seed: number): Field {
  const f = allocField(memory, [width, height], comps, 'a test field');
  const next = xorshift(seed);
  comps.forEach((type, c) => {
    for (let y = 0; y < height; y++) {
      const at = (f.ptr + c * f.planeBytes) / 4 + y * f.stride;
      for (let x = 0; x < width; x++) {
        const v = (x >> 6) % 3 === 0 ? next() * 1.2 - 0.1 : ((y >> 4) & 7) / 7;
        if (type === 'f32') memory.f32[at + x] = x === 5 && y % 100 === 0 ? NaN : v;
        else memory.i32[at + x] = type === 'bool' ? (v > 0.5 ? 1 : 0) : Math.round(v * 300);
      }
    }
  });
  return f;
}

t.test('strips made on the pool: the bytes of the PNG encoded on the main thread', async (t) => {
  const cases: [string, number, number, Scalar[]][] = [
    ['vec4', 1500, 2000, ['f32', 'f32', 'f32', 'f32']], // strips of 699 rows: 3, the last short
    ['gray', 777, 6000, ['f32']], // 5 strips: more than two per worker in flight
    ['bool and i32', 1024, 1100, ['bool', 'i32']],
  ];
  for (const [what, w, h, comps] of cases) {
    const f = field(w, h, comps, w);
    t.ok(pngOnPool(f), `${what}: more than one strip (${stripRows(w)} rows each)`);
    const here = join(dir, `${w}-here.png`);
    const onPool = join(dir, `${w}-pool.png`);
    await savePng(here, w, h, fieldRgbaRows(memory, f, 'out'));
    const bytes = await savePngOnPool(pool, onPool, f, 'out');
    const written = readFileSync(onPool);
    t.equal(bytes, written.length, `${what}: its size returned`);
    t.ok(written.equals(readFileSync(here)), `${what}: the same bytes`);
    t.equal(decodePng(written).width, w);
    memory.release(f.ptr);
  }
  t.same(readdirSync(dir).filter((n) => n.endsWith('.tmp')), [], 'no temporary file left');
});

t.test('a file that cannot be written is an ImageError naming it; nothing is left behind', async (t) => {
  const f = field(600, 2000, ['f32'], 3);
  writeFileSync(join(dir, 'a-file'), 'x');
  const file = join(dir, 'a-file', 'out.png');
  const e = await savePngOnPool(pool, file, f, 'out').catch((e: unknown) => e);
  t.ok(e instanceof ImageError, 'an ImageError');
  t.match((e as Error).message, /cannot write `.*a-file\/out.png`: a file is in the way of its folder/);
  t.notOk(existsSync(file));
  memory.release(f.ptr);
});

t.test('a small field is one strip: encoded where it is', async (t) => {
  const f = field(4096, stripRows(4096), ['f32'], 4);
  t.notOk(pngOnPool(f));
  t.notOk(pngOnPool({ ...f, dims: 3 }), 'nor a 3-D field');
  memory.release(f.ptr);
});
