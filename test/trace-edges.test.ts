// `trace` and `read` off the happy path (a state scientist's probe): a 3-D scene traced without
// `z` traced z = 0 without a word; a point past every field always blamed `x`; `read` of a `port`
// without its `node` read the default output.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

const VOLUME = `kernel t.vol@1 {
  out v: field3<f32>;
  each (x, y, z) { v = f32(x + 10 * y + 100 * z); }
}
node vol: t.vol@1 { size = 4 x 3 x 2; }
output v <- vol.v;
`;

t.test('trace of a 3-D scene needs z; a point past every field names the coordinate and the sizes', async (t) => {
  const dir = scratchDir('entelechy-trace-');
  writeFileSync(join(dir, 'scene.esn'), VOLUME);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  t.ok((await ask({ op: 'evaluate' })).ok, 'evaluates');
  const noZ = await ask({ op: 'trace', x: 1, y: 2 });
  t.match(noZ.error, { field: 'z', message: /^the scene's fields are 3-D \(`vol` 4 x 3 x 2\): give `z` too, e\.g\. \{"op": "trace", "x": 1, "y": 2, "z": 0\}$/ });
  const traced = await ask({ op: 'trace', x: 1, y: 2, z: 1 });
  t.match(traced.ok?.values, [{ value: 121 }], 'with z: the element at (1, 2, 1)');
  const past = await ask({ op: 'trace', x: 1, y: 1, z: 5 });
  t.match(past.error, { field: 'z', message: /^\(1, 1, 5\) is outside every field of the scene: its z is past them all \(the nodes: `vol` 4 x 3 x 2\)$/ });
  const portAlone = await ask({ op: 'read', port: 'v', format: 'f32' });
  t.match(portAlone.error, { field: 'node', message: /^`port` names a port of a node: give `node` too, e\.g\. \{"op": "read", "node": "vol", "port": "v"\}; without `node`, read reads an output$/ });
});

t.test('a field read only by gathers is traced with its value here apart from what was read (a 2-D .at of slice 20 was told with z = 0\'s value)', async (t) => {
  const dir = scratchDir('entelechy-trace-');
  writeFileSync(join(dir, 'scene.esn'), `kernel t.fill@1 {
  out v: field3<f32>;
  each (x, y, z) { v = f32(z * 100 + y * 10 + x); }
}
kernel t.slice@1 {
  grants field.read;
  in src: field3<f32>;
  out o: field2<f32>;
  each (x, y) { o = src.at(x, y, 20); }
}
node s: t.fill@1 { size = 8 x 8 x 32; }
node v: t.slice@1 { src <- s.v; size = 8 x 8; }
output o <- v.o;
`);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  t.ok((await ask({ op: 'evaluate' })).ok, 'evaluates');
  const traced = (await ask({ op: 'trace', x: 3, y: 2, z: 0 })).ok;
  t.match(traced.values, [{ node: 's', port: 'v', value: 23 }, { node: 'v', port: 'o', value: 2023 }]);
  const src = traced.reads.find((r: { node: string; name: string }) => r.node === 'v' && r.name === 'src');
  t.same([src.value, src.here], [undefined, 23], 'no `value` (it read slice 20, not this element): `here` is the field at the element');
  t.match(src.note, /^read by gathers/);
  const mixed = (await ask({ op: 'trace', x: 3, y: 2 })).ok;
  t.match(mixed, { z: 0, note: /the 3-D fields \(`s`\) are traced at z = 0/ }, 'without z in a scene of 2-D and 3-D fields: which slice is said');
});
