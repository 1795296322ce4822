// Memory is a resource: a session's fields have a budget (--memory; default an eighth of the
// machine's), a change whose fields do not fit is refused before anything is allocated or
// written (naming the node and the size), and a read too large to answer says what to read.

import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { defaultMemoryBudget, MAX_MEMORY, parseMemory } from '../src/main/budget.js';
import { memoryOption, UserError } from '../src/cli/cli.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

const KERNELS = `kernel t.paint@1 {
  out result: field2<vec4>;
  each (x, y) {
    result = vec4(f32(x), f32(y), 0.0, 1.0);
  }
}
`;
const scene = (size: string) => `use "kernels.esn";\nnode paint: t.paint@1 { size = ${size}; }\noutput result <- paint.result;\n`;

async function open(t: Test, size: string, memory: number) {
  const dir = scratchDir('entelechy-budget-');
  writeFileSync(join(dir, 'kernels.esn'), KERNELS);
  writeFileSync(join(dir, 'scene.esn'), scene(size));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, memory });
  t.teardown(() => s.close());
  const ask = async (r: object) => JSON.parse(await dispatch(s, JSON.stringify(r)));
  return { s, dir, ask };
}

t.test('a change whose fields exceed the budget is refused, naming the node and the size; the running world stays', async (t) => {
  const { dir, ask } = await open(t, '64 x 64', 64 << 20);
  t.equal((await ask({ op: 'evaluate' })).ok.frame, 1);
  const before = (await ask({ op: 'status' })).ok;
  const refused = await ask({ op: 'compose', edits: [{ node: 'paint', member: 'size', text: 'size = 4096 x 4096;' }] });
  t.match(refused.error.message, /fields need 25\d\.\d MiB, more than the memory budget of 64\.0 MiB.*`paint\.result` of node `paint`, 4096 x 4096, alone needs 25\d\.\d MiB.*--memory/);
  t.notMatch(refused.error.message, /internal/);
  t.match(refused.error, { path: 'scene.esn', line: 2, column: 25, node: 'paint', written: false }, 'at the size that is too large');
  t.match(refused.error.message, /^compose refused: nothing was written: /, 'said as every refused compose is');
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), scene('64 x 64'), 'nothing written');
  const after = (await ask({ op: 'status' })).ok;
  t.same([after.revision, after.frame], [before.revision, before.frame], 'the running world stays');
  t.equal((await ask({ op: 'evaluate', time: 1 })).ok?.frame, 2, 'and runs');
  t.equal((await ask({ op: 'compose', edits: [{ node: 'paint', member: 'size', text: 'size = 1024 x 1024;' }] })).ok?.written, true, 'a change that fits lands');
});

t.test('a read too large to answer says what to read instead', async (t) => {
  const { ask } = await open(t, '4200 x 4200', 512 << 20);
  const big = await ask({ op: 'read', format: 'f32' });
  t.match(big.error, { field: 'region', expected: { x: 0, y: 0 } });
  t.match(big.error.message, /^`result` is 4200 x 4200: the whole field as f32 is 269\.\d MiB, more than a read answers \(256\.0 MiB\)\. Read a region of it/);
  t.equal((await ask({ op: 'evaluate' })).ok?.frame, 1);
  const part = await ask({ op: 'read', format: 'f32', region: big.error.expected });
  t.equal(part.ok?.width, big.error.expected.width, 'the region it suggests is answered');
  const png = await ask({ op: 'read' });
  t.equal(png.ok?.width, 4200, 'as a PNG (one byte per channel) the whole field is within the limit');
});

t.test('--memory sizes, and the default share', async (t) => {
  t.equal(parseMemory('512M'), 512 << 20);
  t.equal(parseMemory('2G'), 2 ** 31);
  t.equal(parseMemory('1.5GiB'), 1.5 * 2 ** 30);
  t.equal(parseMemory('800MB'), 800 << 20);
  t.match(parseMemory('lots'), { problem: /takes a size such as 512M/ });
  t.match(parseMemory('5G'), { problem: /at most 4G/ });
  // 4G is what the help says it may be: taken, as the most WebAssembly's memory leaves fields.
  t.equal(parseMemory('4G'), MAX_MEMORY);
  t.equal(parseMemory('4294967295'), MAX_MEMORY);
  t.match(parseMemory('4294967297'), { problem: /at most 4G/ });
  t.match(parseMemory('10'), { problem: /at least 1M/ });
  t.throws(() => memoryOption('lots'), UserError);
  t.ok(defaultMemoryBudget() > 0 && defaultMemoryBudget() <= MAX_MEMORY);
});
