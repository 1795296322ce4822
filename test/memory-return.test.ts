// Memory returned to the system after large fields go (issue 14): a WebAssembly memory never
// shrinks, so a world that needs a small part of a large memory moves to a fresh one (commit.ts)
// and the old one is collected. A real `entelechy serve` child: the mapping that holds a 384 MiB
// field is resident, and is gone (or nearly empty) once the scene is composed back to 64 x 64.
// The mapping is followed in /proc/PID/smaps rather than the process's whole resident size,
// which also moves with what the compile worker loads meanwhile (binaryen, on a loaded machine late).

import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';
import { Lines } from './fixtures.js';
import { scratchDir } from './scratch.js';

const SMALL = `kernel t.fill@1 {
  out r: field2<vec4>;
  each (x, y) { r = vec4(x * 0.001, y * 0.001, 0.5, 1.0); }
}
node fill: t.fill@1 { size = 64 x 64; }
output r <- fill.r;
`;
/** One vec4 field of 6144 x 4096: 384 MiB, every page written by the frame. */
const LARGE = SMALL.replace('64 x 64', '6144 x 4096');
const MIB = 2 ** 20;

t.test('composing a large field away returns its memory to the system', async (t) => {
  const dir = scratchDir('entelechy-memory-return-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'scene.esn'), SMALL);
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(dir, 'scene.esn'), '--workers', '1', '--memory', '1G'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const out = new Lines(child.stdout);
  let id = 0;
  const ask = async (req: object) => {
    child.stdin.write(JSON.stringify({ id: ++id, ...req }) + '\n');
    return JSON.parse((await out.next())!);
  };
  /** Each anonymous mapping's start address and resident bytes, from /proc/PID/smaps. */
  const mappings = () => {
    const resident = new Map<string, number>();
    let start = '';
    for (const line of readFileSync(`/proc/${child.pid}/smaps`, 'utf8').split('\n')) {
      const range = /^([0-9a-f]+)-[0-9a-f]+ /.exec(line);
      if (range) start = range[1]!;
      const rss = /^Rss:\s+(\d+) kB/.exec(line);
      if (rss) resident.set(start, Number(rss[1]) * 1024);
    }
    return resident;
  };

  t.ok((await ask({ op: 'evaluate' })).ok, 'precondition: the small scene runs');
  t.ok((await ask({ op: 'compose', text: LARGE })).ok?.written, 'composed to 6144 x 4096');
  t.ok((await ask({ op: 'evaluate' })).ok, 'and evaluated');
  const large = (await ask({ op: 'status' })).ok.memory.bytes;
  // The field's memory is the one mapping with most of its bytes resident.
  const [field, peak] = [...mappings()].reduce((a, b) => (b[1] > a[1] ? b : a));
  t.ok(peak > (large * 3) / 4, `precondition: the field's memory is resident (${Math.round(peak / MIB)} MiB at ${field})`);

  t.ok((await ask({ op: 'compose', text: SMALL })).ok?.written, 'composed back to 64 x 64');
  t.ok((await ask({ op: 'evaluate' })).ok, 'and evaluated');
  const memory = (await ask({ op: 'status' })).ok.memory;
  t.ok(memory.bytes * 16 < large, `the world moved to a fresh memory (${Math.round(memory.bytes / MIB)} MiB, was ${Math.round(large / MIB)} MiB)`);
  // The old memory is returned when collected, after its pool's threads end: ask until it is (a
  // count of requests, not a time; each waits a little so the process is not kept busy).
  let after = mappings().get(field) ?? 0;
  for (let i = 0; i < 300 && after > large / 4; i++) {
    await new Promise((r) => setTimeout(r, 100));
    await ask({ op: 'status' });
    after = mappings().get(field) ?? 0;
  }
  t.ok(after < large / 4, `the field's memory went back to the system: ${Math.round(peak / MIB)} -> ${Math.round(after / MIB)} MiB resident at ${field}`);
  t.same((await ask({ op: 'read', format: 'f32', region: { x: 1, y: 2, width: 1, height: 1 } })).ok?.width, 1, 'the small world reads from its new memory');
  child.stdin.end();
});
