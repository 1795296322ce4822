// `read` of a 3-D field (protocol/read-region.ts): a region is a box, z and depth choosing its
// slices (default every one); as f32 each component's plane holds the box's slices in increasing
// z, each slice's rows in increasing y, and the answer says how many slices (`depth`). A PNG
// shows one slice. Checked against values worked out here, through `entelechy serve` (stdin and
// TCP) and `entelechy mcp`.

import t, { type Test } from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodePng } from '../src/main/image.js';
import { mcpDoor, serveDoors, type Ask } from './serve-process.js';
import { scratchDir } from './scratch.js';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';

const [W, H, D] = [4, 3, 5];
const SCENE = `kernel t.vol@1 {
  out result: field3<vec2>;
  each (x, y, z) { result = vec2(x + 10.0 * y + 100.0 * z, 0.0 - x - 10.0 * y - 100.0 * z); }
}
node a: t.vol@1 { size = ${W} x ${H} x ${D}; }
output result <- a.result;
`;

/** What the field holds at (x, y, z), component c. */
const value = (c: number, x: number, y: number, z: number) => (c === 0 ? 1 : -1) * (x + 10 * y + 100 * z);

/** A box's values as read answers them: [c][z][y][x]. */
function box(x0: number, y0: number, z0: number, w: number, h: number, d: number): number[] {
  const out: number[] = [];
  for (let c = 0; c < 2; c++) for (let z = z0; z < z0 + d; z++) for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) out.push(value(c, x, y, z));
  return out;
}

const floats = (data: string) => Array.from(new Float32Array(Uint8Array.from(Buffer.from(data, 'base64')).buffer));

function sceneDir(): string {
  const dir = scratchDir('entelechy-read-3d-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The reads every door is asked, and what each must answer. */
async function reads(t: Test, ask: Ask, door: string): Promise<void> {
  t.ok((await ask({ op: 'evaluate' })).ok, `${door}: a frame runs`);
  const whole = (await ask({ op: 'read', format: 'f32' })).ok;
  t.same([whole?.width, whole?.height, whole?.depth, whole?.components], [W, H, D, 2], `${door}: the whole field`);
  t.same(floats(whole.data), box(0, 0, 0, W, H, D), `${door}: every element, [c][z][y][x]`);

  const part = (await ask({ op: 'read', format: 'f32', region: { x: 1, y: 1, z: 2, width: 2, height: 2, depth: 3 } })).ok;
  t.same([part?.width, part?.height, part?.depth], [2, 2, 3], `${door}: a box answers its size and depth`);
  t.same(floats(part.data), box(1, 1, 2, 2, 2, 3), `${door}: the box's every slice, in increasing z`);

  const columns = (await ask({ op: 'read', format: 'f32', region: { x: 3, y: 0, width: 1, height: 2 } })).ok;
  t.same([columns?.width, columns?.height, columns?.depth], [1, 2, D], `${door}: without z and depth, every slice`);
  t.same(floats(columns.data), box(3, 0, 0, 1, 2, D), `${door}: the region through every slice`);

  const outside = (await ask({ op: 'read', format: 'f32', region: { z: 4, depth: 2 } })).error;
  t.same([outside?.field, outside?.message], ['region', 'region {x: 0, y: 0, z: 4, width: 4, height: 3, depth: 2} is not inside the 4 x 3 x 5 field'], `${door}: a box past the last slice is refused`);
  const picture = (await ask({ op: 'read' })).error;
  t.equal(picture?.field, 'region', `${door}: a PNG of every slice is refused`);
  t.match(picture?.message, /an image needs a 2-D one, so a PNG shows one z-slice of its 5, e.g\. \{"region": \{"z": 0, "depth": 1\}\}/, `${door}: saying how to read one`);
  const slices = (await ask({ op: 'read', region: { z: 3, depth: 2 } })).error;
  t.same(slices?.expected, { z: 3, depth: 1 }, `${door}: the slice suggested is the one asked for (it said z: 0)`);
}

t.test('through entelechy serve: stdin and TCP', async (t) => {
  const { stdin, tcp } = await serveDoors(t, sceneDir());
  for (const [door, ask] of [['stdin', stdin], ['tcp', tcp]] as const) {
    await reads(t, ask, door);
    const slice = (await ask({ op: 'read', region: { x: 0, y: 0, z: 3, width: 4, height: 3, depth: 1 } })).ok;
    const png = decodePng(Buffer.from(slice?.data ?? '', 'base64'));
    t.same([slice?.depth, png.width, png.height], [1, W, H], `${door}: one slice as a PNG`);
  }
});

t.test('through entelechy mcp', async (t) => {
  const dir = sceneDir();
  const { ask } = await mcpDoor(t, join(dir, 'scene.esn'));
  await reads(t, ask, 'mcp');
});

/** A session in process on `scene`, one frame evaluated; its requests answered through the protocol. */
async function evaluated(t: Test, scene: string): Promise<(req: object) => Promise<any>> {
  const dir = scratchDir('entelechy-read-3d-');
  writeFileSync(join(dir, 'scene.esn'), scene);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  await ask({ op: 'evaluate' });
  return ask;
}

t.test('an i32 field read as f32 past 2^24 says its values are rounded, and where the exact ones are', async (t) => {
  const ask = await evaluated(t, 'kernel t.ids@1 {\n  out b: field3<i32>;\n  each (x, y, z) { b = 16777217 + x; }\n}\nnode n: t.ids@1 { size = 4 x 2 x 2; }\noutput b <- n.b;\nkernel t.small@1 {\n  out s: field2<i32>;\n  each (x, y) { s = x; }\n}\nnode m: t.small@1 { size = 4 x 2; }\noutput s <- m.s;\n');
  const big = (await ask({ op: 'read', output: 'b', format: 'f32' })).ok;
  t.equal(floats(big.data)[0], 16777216, 'rounded, as an f32 holds it');
  t.match(big.note, /^`b` holds integers past 2\^24 \(16777216\), which f32 values round .*`trace` an element for its exact value, or `entelechy render -o NAME\.npy`/);
  t.notOk((await ask({ op: 'read', output: 's', format: 'f32' })).ok.note, 'small integers: exact, nothing to say');
});

t.test('a PNG read of a 3-D field one slice deep is that slice (it asked for a region naming it)', async (t) => {
  const ask = await evaluated(t, 'kernel t.thin@1 {\n  out v: field3<f32>;\n  each (x, y, z) { v = f32(x) / 4.0; }\n}\nnode n: t.thin@1 { size = 4 x 3 x 1; }\noutput v <- n.v;\n');
  const whole = (await ask({ op: 'read' })).ok;
  const sliced = (await ask({ op: 'read', region: { z: 0, depth: 1 } })).ok;
  t.same([whole.width, whole.height, whole.depth], [4, 3, 1]);
  t.equal(whole.data, sliced.data, 'the same picture as the slice asked for by region');
  t.equal(decodePng(Buffer.from(whole.data, 'base64')).width, 4);
});
