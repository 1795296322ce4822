// A scene that never checked runs an empty world. `evaluate`, `trace` and `write` on it are
// refused, on every door, with why the scene is refused and how to mend it (compose), and the
// frame counter does not move; before, evaluate answered a frame of nothing and counted it.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

const SCENE = `kernel t.k@1 {
  out image: field2<f32>;
  each (x, y) { image = warmt; }
}
node n: t.k@1 { size = 4 x 4; }
output image <- n.image;
`;

t.test('evaluate, trace and write on a scene that never checked are refused, saying how to mend it', async (t) => {
  const dir = scratchDir('entelechy-refused-');
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const ask = async (req: object) => JSON.parse(await dispatch(s, JSON.stringify(req)));
  for (const [req, verb] of [[{ op: 'evaluate' }, 'evaluate'], [{ op: 'evaluate', frames: 3 }, 'evaluate'], [{ op: 'trace', x: 0, y: 0 }, 'trace'], [{ op: 'write', node: 'n', value: 1 }, 'write into']] as const) {
    const e = (await ask(req)).error;
    t.match(e?.message, new RegExp(`^the scene is refused, so there is nothing to ${verb}: .*scene\\.esn:3:.*warmt.*\\nMend it with \`compose\``), JSON.stringify(req));
    t.same([e?.refused, e?.request], [true, { op: 'document', path: 'scene.esn' }]);
  }
  t.equal((await ask({ op: 'status' })).ok.frame, 0, 'no frame was counted');
  const mended = await ask({ op: 'compose', edits: [{ kernel: 't.k@1', text: 'kernel t.k@1 {\n  out image: field2<f32>;\n  each (x, y) { image = 0.5; }\n}' }] });
  t.ok(mended.ok?.written, JSON.stringify(mended).slice(0, 200));
  const a = await ask({ op: 'evaluate' });
  t.same([a.ok?.executed, a.ok?.frame], [['n'], 1], 'mended, it evaluates');
});
