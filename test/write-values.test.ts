// `write` into integer and bool components: a value such a component cannot hold (an i32's 0.5 or
// 3.7e9, a bool's 0.5) is refused with the component and what it holds, as `param` refuses it;
// before, 0.5 was stored as 0 and 3.7e9 wrapped to -594967296. Both `value` and `data` are
// checked, and a refused write leaves the field as it was. And an input a compose redeclares
// loses what was written into it: the answer says so (input_reset), as state_reset does for state.
// A write without `port` into a node of several state ports is refused rather than guessed.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

const SCENE = `kernel t.cells@1 {
  grants field.write;
  state cells: field2<i32> = 0;
  state flags: field2<bool> = false;
  out image: field2<f32>;
  each (x, y) { image = f32(cells) + (flags ? 0.5 : 0.0); }
}
node board: t.cells@1 { size = 4 x 4; }
output image <- board.image;
`;

const f32Base64 = (...v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64');

t.test('integer and bool components refuse values they cannot hold; the field stays as it was', async (t) => {
  const dir = scratchDir('entelechy-write-values-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const at00 = async () => (await ask({ op: 'trace', x: 0, y: 0 })).ok.values.filter((v: { port: string }) => v.port !== 'image').map((v: { value: number }) => v.value);

  t.ok((await ask({ op: 'write', node: 'board', port: 'cells', value: -7 })).ok, 'an integer is written');
  await ask({ op: 'evaluate' });
  t.same(await at00(), [-7, 0]);

  const refused: [object, RegExp, string][] = [
    [{ port: 'cells', value: 0.5 }, /^`board\.cells`: 0\.5 is not an i32: write an integer from -2147483648 to 2147483647/, 'value'],
    [{ port: 'cells', value: 3.7e9 }, /^`board\.cells`: 3700000000 is not an i32/, 'value'],
    [{ port: 'flags', value: 0.5 }, /^`board\.flags`: 0\.5 is not a bool: write 0 or 1/, 'value'],
    [{ port: 'cells', data: f32Base64(1, 2, 2.5, 4), region: { x: 0, y: 0, width: 2, height: 2 } }, /^data holds 2\.5 at element 2 of component 0, not an i32/, 'data'],
    [{ port: 'flags', data: f32Base64(1, 2), region: { x: 0, y: 0, width: 2, height: 1 } }, /^data holds 2 at element 1 of component 0, not a bool/, 'data'],
  ];
  for (const [fields, message, field] of refused) {
    const a = await ask({ op: 'write', node: 'board', ...fields });
    t.match(a.error?.message, message, JSON.stringify(fields));
    t.equal(a.error?.field, field);
  }
  await ask({ op: 'evaluate' });
  t.same(await at00(), [-7, 0], 'nothing of the refused writes was stored');
  t.ok((await ask({ op: 'write', node: 'board', port: 'flags', data: f32Base64(1, 0, 0, 0), region: { x: 0, y: 0, width: 4, height: 1 } })).ok, 'a bool of 1 is written');
  await ask({ op: 'evaluate' });
  t.same(await at00(), [-7, 1]);
  // Two state ports: a write without `port` would guess; it is refused, naming both.
  const unnamed = await ask({ op: 'write', node: 'board', value: 3 });
  t.match(unnamed.error, { field: 'port', expected: 'cells | flags', message: /^node `board` has 2 state ports \(cells, flags\): name the one to write with `port`$/ });
  await ask({ op: 'evaluate' });
  t.same(await at00(), [-7, 1], 'and nothing was written');
});

t.test('an input a compose redeclares starts from its declaration again, and the answer says so (input_reset)', async (t) => {
  const dir = scratchDir('entelechy-write-values-');
  const scene = (value: string) => `input canvas: field2<f32> = ${value} size 4 x 4;\nkernel t.show@1 {\n  grants input.read;\n  in src: field2<f32>;\n  out r: field2<f32>;\n  each (x, y) { r = src; }\n}\nnode show: t.show@1 { src <- canvas; }\noutput r <- show.r;\n`;
  writeFileSync(join(dir, 'scene.esn'), scene('0.25'));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  const shown = async () => (await ask({ op: 'evaluate' }), (await ask({ op: 'trace', x: 0, y: 0 })).ok.values.find((v: { port: string }) => v.port === 'r').value);
  t.ok((await ask({ op: 'write', input: 'canvas', value: 0.75 })).ok);
  t.equal(await shown(), 0.75);
  const kept = await ask({ op: 'compose', edits: [{ node: 'show', member: 'size', text: 'size = 4 x 4;' }] });
  t.notOk(kept.ok.events.some((e: { kind: string }) => e.kind === 'input_reset'), 'a change that leaves the input alone tells nothing of it');
  t.equal(await shown(), 0.75, 'and the written value stays');
  const redeclared = await ask({ op: 'compose', edits: [{ input: 'canvas', text: 'input canvas: field2<f32> = 0.5 size 4 x 4;' }] });
  t.match(redeclared.ok.events.find((e: { kind: string }) => e.kind === 'input_reset'), { input: 'canvas', message: /^input `canvas` was redeclared: it holds its declared value now, and anything written into it is gone; write it again/ });
  t.equal(await shown(), 0.5, 'its declared value');
});
