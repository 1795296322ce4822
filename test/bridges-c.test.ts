// bridges/c: entelechy.h and entelechy.c build with the system C compiler without a warning, and
// the C test program drives a real `entelechy serve --listen` session to the end.

import t from 'tap';
import { spawnSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';
import { serveExample } from './bridges-session.js';
import { scratchDir } from './scratch.js';

const SOURCE = join(ROOT, 'bridges', 'c');
const CC = process.env.CC ?? 'cc';
const FLAGS = ['-std=c11', '-O2', '-Wall', '-Wextra', '-Wpedantic', '-Werror'];

const build = scratchDir('entelechy-bridge-c-');
t.teardown(() => rmSync(build, { recursive: true, force: true }));

function compile(args: string[]): { status: number | null; output: string } {
  const run = spawnSync(CC, args, { cwd: SOURCE, encoding: 'utf8' });
  if (run.error) return { status: null, output: `cannot run ${CC}: ${run.error.message} (install a C compiler: gcc and libc6-dev)` };
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

t.test(`entelechy.c and the test program build with ${FLAGS.join(' ')} and print nothing`, async (t) => {
  const library = compile([...FLAGS, '-c', '-o', join(build, 'entelechy.o'), 'entelechy.c']);
  t.equal(library.status, 0, library.output);
  t.equal(library.output, '', 'no warnings');
  const program = compile([...FLAGS, '-o', join(build, 'test_entelechy'), 'test_entelechy.c', 'entelechy.c', '-lm']);
  t.equal(program.status, 0, program.output);
  t.equal(program.output, '', 'no warnings');
  // The header stands alone (it includes what it needs), also under C99.
  const header = spawnSync(CC, ['-x', 'c', '-std=c99', '-Wall', '-Wextra', '-Werror', '-fsyntax-only', 'entelechy.h'], { cwd: SOURCE, encoding: 'utf8' });
  t.equal(header.status, 0, `entelechy.h stands alone under C99: ${header.stderr}`);
});

t.test('the C test program drives a real session', async (t) => {
  const session = await serveExample(t, 'rings');
  const child = spawn(join(build, 'test_entelechy'), ['127.0.0.1', String(session.port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  t.equal(code, 0, output);
  t.notMatch(output, /FAILED/);
  t.match(output, /^ok the first output reads as floats$/m);
  t.match(output, /^ok component 0 at \(5, 7\) is the traced /m);
  t.match(output, /^ok red is now rings' red times \(0\.5 \+ 1\.0\)$/m);
  t.match(output, /^ok entelechy_error says: unknown op `frobnicate`$/m);
  t.match(output, /^all passed$/m);
  t.ok(output.split('\n').filter((l) => l.startsWith('ok ')).length >= 35, 'every check ran');
});
