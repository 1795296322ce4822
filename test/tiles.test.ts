// Renders in tiles (src/main/tiles): byte for byte the untiled render, for every example and
// bench scene at tile sizes that do not divide the picture; each tile computes only what its
// footprints need; what is computed whole, and why; a region of a frame from documents alone.

import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { Engine } from '../src/main/engine.js';
import { fieldToRgba } from '../src/main/image.js';
import { FieldMemory, MemoryLimitError } from '../src/main/memory.js';
import { renderRegion, StatefulSceneError } from '../src/main/tiles/region.js';
import { TiledRenderer } from '../src/main/tiles/renderer.js';
import { EXAMPLES, ROOT, exampleScene, sameBytes, textScene } from './helpers.js';

const MiB = 1 << 20;

function benchScene(name: string, size: number[]): Scene {
  const dir = join(ROOT, 'bench', 'scenes');
  return loadScene(`${name}.esn`, { read: (p) => readFileSync(join(dir, p), 'utf8'), size });
}

/** The output's RGBA bytes per frame, untiled (the engine). */
async function untiled(scene: Scene, frames: number): Promise<Buffer[]> {
  const out = scene.outputs[0].name;
  const engine = new Engine(scene, { memory: new FieldMemory(256 * MiB) });
  const pictures: Buffer[] = [];
  for (let f = 0; f < frames; f++) {
    await engine.evaluate({ time: 0.25 + f / 30 });
    pictures.push(Buffer.from(fieldToRgba(engine.memory, engine.outputField(out)!, out)));
  }
  engine.dispose();
  return pictures;
}

/** The same in tiles of tw x th, the rows checked to come in order and whole. */
async function tiled(t: { equal: (a: unknown, b: unknown, m: string) => void; fail: (m: string) => void }, scene: Scene, frames: number, tw: number, th: number): Promise<Buffer[]> {
  const renderer = new TiledRenderer(scene, { output: scene.outputs[0].name, memory: new FieldMemory(256 * MiB) });
  const pictures: Buffer[] = [];
  for (let f = 0; f < frames; f++) {
    const picture = Buffer.alloc(renderer.width * renderer.height * 4);
    let next = 0;
    await renderer.render(tw, th, { time: 0.25 + f / 30 }, (rgba, y0) => {
      if (y0 !== next) t.fail(`rows from ${y0} came when ${next} was next`);
      picture.set(rgba, y0 * renderer.width * 4);
      next = y0 + rgba.length / (renderer.width * 4);
    });
    t.equal(next, renderer.height, `frame ${f}: every row, in order`);
    pictures.push(picture);
  }
  renderer.dispose();
  return pictures;
}

const scenes: { name: string; scene: () => Scene; frames: number }[] = [
  ...EXAMPLES.map((name) => ({ name, scene: () => exampleScene(name, [61, 45]), frames: name === 'life' ? 3 : 1 })),
  { name: 'photo', scene: () => exampleScene('photo'), frames: 1 },
  ...readdirSync(join(ROOT, 'bench', 'scenes')).filter((f) => f.endsWith('.esn')).map((f) => f.replace('.esn', '')).map((name) => ({ name: `bench ${name}`, scene: () => benchScene(name, [61, 45]), frames: name === 'p3' ? 3 : 1 })),
];

for (const { name, scene, frames } of scenes) {
  t.test(`${name}: tiled is the untiled render, byte for byte`, async (t) => {
    const s = scene();
    t.same(s.diagnostics, []);
    const want = await untiled(s, frames);
    // Tiles that divide neither side, thinner than a vector, as wide as the picture, one tile.
    for (const [tw, th] of [[13, 7], [5, 11], [1000, 6], [1000, 1000]]) {
      const got = await tiled(t, s, frames, tw, th);
      got.forEach((p, f) => t.ok(sameBytes(p, want[f]), `${tw} x ${th} tiles, frame ${f}: the same bytes`));
    }
  });
}

t.test('a tile computes what its footprints need: the blur reads 2 more on each side, columns in whole vectors', async (t) => {
  const r = new TiledRenderer(exampleScene('blur', [100, 80]), { output: 'result', memory: new FieldMemory(64 * MiB) });
  const [board, blur] = r.plan.needs({ x0: 30, x1: 50, y0: 20, y1: 30 });
  t.same(blur, { x0: 28, x1: 52, y0: 20, y1: 30, lanes: 52 }, 'the blur: the tile, its columns widened to vectors of 4');
  t.same(board, { x0: 24, x1: 56, y0: 18, y1: 32, lanes: 56 }, 'the checker board: the blur\'s 5 x 5 window around that');
  const [edge] = r.plan.needs({ x0: 90, x1: 100, y0: 0, y1: 3 });
  t.same(edge, { x0: 84, x1: 100, y0: 0, y1: 5, lanes: 100 }, 'at the edges, clamped coordinates stay inside the field');
  t.ok(r.tileBytes(20, 10) < 100 * 80 * 16 / 4, 'a tile\'s fields are a fraction of the whole');
  r.dispose();
});

t.test('what is computed whole: state, 3-D domains, reads that no bound holds', async (t) => {
  const life = new TiledRenderer(exampleScene('life', [64, 64]), { output: 'result', memory: new FieldMemory(64 * MiB) });
  t.same(life.plan.whole, [{ kind: 'state' }], 'life keeps state: computed whole each frame');
  life.dispose();
  const castle = new TiledRenderer(exampleScene('castle', [64, 48]), { output: 'image', memory: new FieldMemory(64 * MiB) });
  t.same(castle.plan.whole, [{ kind: 'dims' }, undefined], 'the castle\'s voxels are 3-D: whole; its view is tiled');
  castle.dispose();
  const sampled = textScene({
    'scene.esn': `kernel t.grad@1 { out result: field2<f32>; each (x, y) { result = x * 0.01 + y; } }
kernel t.look@1 { grants field.read; in src: field2<f32>; out result: field2<vec4>;
  each (x, y) { const v = src.sample(fract(x * 0.37), 0.5); const w = src.at(i32(v * 7.0) % 16, y); result = vec4(v, w, 0.0, 1.0); } }
node grad: t.grad@1 { size = 40 x 30; }
node look: t.look@1 { src <- grad.result; }
output result <- look.result;`,
  });
  t.same(sampled.diagnostics, []);
  const r = new TiledRenderer(sampled, { output: 'result', memory: new FieldMemory(64 * MiB) });
  t.same(r.plan.whole[0], { kind: 'unbounded', consumer: 'look', port: 'src' }, 'coordinates from data: the producer is computed whole');
  t.equal(r.plan.whole[1], undefined, 'and its reader is tiled');
  r.dispose();
  const want = await untiled(sampled, 1);
  const got = await tiled(t, sampled, 1, 9, 4);
  t.ok(sameBytes(got[0], want[0]), 'and the bytes are the untiled render\'s');
});

t.test('a tile that does not fit the memory budget is refused, naming the budget and what to do', async (t) => {
  const r = new TiledRenderer(exampleScene('blur', [2000, 2000]), { output: 'result', memory: new FieldMemory(8 * MiB) });
  const e = (() => {
    try {
      r.tileSize([2000, 2000]);
    } catch (e) {
      return e;
    }
  })();
  t.ok(e instanceof MemoryLimitError, 'a MemoryLimitError');
  t.match((e as Error).message, /a 2000 x 2000 tile of `result` needs .* MiB of fields, more than the .* the memory budget leaves: use smaller tiles \(--tile\), or give the render more memory \(--memory\)/);
  const [tw, th] = r.tileSize();
  t.equal(tw, 2000, 'chosen tiles are whole rows');
  t.ok(th >= 8 && r.tileBytes(tw, th) <= 8 * MiB / 4, `${th} rows: their fields fit a quarter of the budget`);
  r.dispose();
});

t.test('a region of a frame from the documents alone: the rows of the whole picture', async (t) => {
  const documents = { 'scene.esn': readFileSync(join(ROOT, 'bench', 'scenes', 'p2.esn'), 'utf8') };
  const scene = loadScene('scene.esn', { read: (p) => (documents as Record<string, string>)[p], size: [70, 50] });
  const engine = new Engine(scene, { memory: new FieldMemory(64 * MiB) });
  engine.frame = 4;
  await engine.evaluate({ time: 1.5 });
  const whole = fieldToRgba(engine.memory, engine.outputField('result')!, 'result');
  engine.dispose();
  const region = { x0: 9, x1: 47, y0: 13, y1: 40 };
  const rows: Buffer[] = [];
  const size = await renderRegion({ documents, entry: 'scene.esn', size: [70, 50], frame: 4, time: 1.5, region, tile: [10, 6] }, (rgba, y0) => {
    t.equal(y0, region.y0 + rows.reduce((n, r) => n + r.length / (38 * 4), 0), 'rows in order');
    rows.push(Buffer.from(rgba));
  });
  t.same(size, { width: 38, height: 27 });
  const got = Buffer.concat(rows);
  let wrong = 0;
  for (let y = region.y0; y < region.y1; y++)
    if (!sameBytes(got.subarray((y - region.y0) * 38 * 4, (y - region.y0 + 1) * 38 * 4), whole.subarray((y * 70 + 9) * 4, (y * 70 + 47) * 4))) wrong++;
  t.equal(wrong, 0, 'every row is the whole picture\'s');
  const life = { 'scene.esn': readFileSync(join(ROOT, 'examples', 'life', 'scene.esn'), 'utf8') };
  await t.rejects(renderRegion({ documents: life, entry: 'scene.esn', frame: 3, time: 0 }, () => {}), StatefulSceneError, 'a later frame of a stateful scene is refused');
  await t.rejects(renderRegion({ documents: life, entry: 'scene.esn', frame: 3, time: 0 }, () => {}), /node `board` keeps state across frames: frame 3 needs every frame before it/);
  await t.rejects(renderRegion({ documents, entry: 'scene.esn', frame: 0, time: 0, region: { x0: 0, x1: 5000, y0: 0, y1: 2 } }, () => {}), /region \[0, 5000\) x \[0, 2\) is not inside the output's 4096 x 4096/);
  await t.rejects(renderRegion({ documents: { 'scene.esn': 'node a: nope@1 {}' }, entry: 'scene.esn', frame: 0, time: 0 }, () => {}), /the scene does not check:\nscene.esn:1:/);
});
