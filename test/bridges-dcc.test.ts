// bridges/dcc against a real `entelechy serve --listen` on a copy of examples/rings: the Python
// client's unittest suite (bridges/dcc/tests, one tap assertion per Python test) and the Blender
// add-on in headless Blender (one tap assertion per check it prints). python3 and blender are
// needed: when one is missing the tests fail and say to install it (.ci/run installs both).

import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATIONS } from '../src/protocol/operations.js';
import { serveListening } from './serve-process.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const DCC = join(ROOT, 'bridges', 'dcc');
const temps: string[] = [];
t.teardown(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = scratchDir(prefix);
  temps.push(dir);
  return dir;
}

/** The path of a program, or undefined when it is not installed. */
function which(program: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

interface Served {
  port: number;
  dir: string;
}

/** `entelechy serve scene.esn --listen 127.0.0.1:0` on a copy of examples/rings, stdin kept open. */
async function serve(): Promise<Served> {
  const dir = temp('entelechy-dcc-rings-');
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  const { port } = await serveListening(t, join(dir, 'scene.esn'), { drainStdout: true });
  return { port, dir };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const tail = (text: string, n = 40) => text.split('\n').slice(-n).join('\n');

// The client's OPERATIONS tuple and its methods' arguments, read from its source, against the table
// the server runs (the Python tests check the same against a live session's `help`).
t.test('the Python client has a method for every operation of the table, taking its fields', async (t) => {
  const source = readFileSync(join(DCC, 'entelechy_client.py'), 'utf8');
  const tuple = /^OPERATIONS: Tuple\[str, \.\.\.\] = \(([^)]*)\)/m.exec(source);
  t.ok(tuple, 'entelechy_client.py declares OPERATIONS');
  const listed = [...(tuple?.[1] ?? '').matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
  t.same([...listed].sort(), OPERATIONS.map((o) => o.name).sort(), 'OPERATIONS lists the operations of the table');
  for (const op of OPERATIONS) {
    const def = new RegExp(`^    def ${op.name}\\(\\s*self,?([^)]*)\\)`, 'm').exec(source);
    if (!t.ok(def, `def ${op.name}`)) continue;
    const params = [...`,${def![1] ?? ''}`.matchAll(/,\s*([a-z_]+)\s*:/g)].map((m) => m[1]!);
    t.same(params.sort(), op.fields.map((f) => f.name).sort(), `${op.name}(${op.fields.map((f) => f.name).join(', ')})`);
  }
});

const python = which('python3');
const blender = which('blender');

t.test('bridges/dcc against a real session', async (t) => {
  const session = await serve();
  const env = {
    ENTELECHY_HOST: '127.0.0.1',
    ENTELECHY_PORT: String(session.port),
    ENTELECHY_SCENE_DIR: session.dir,
    ENTELECHY_BIN: join(ROOT, 'bin', 'entelechy.js'),
    PYTHONDONTWRITEBYTECODE: '1',
  };

  await t.test('the Python client (bridges/dcc/tests, unittest)', async (t) => {
    if (!python) {
      t.fail('python3 is not installed: install it (apt-get install python3; .ci/run does) to test bridges/dcc');
      return;
    }
    const ran = await run(python, [join(DCC, 'tests', 'run.py')], env, 600_000);
    const results = ran.stdout
      .split('\n')
      .filter((l) => l.startsWith('RESULT '))
      .map((l) => JSON.parse(l.slice('RESULT '.length)) as { test: string; status: string; doc: string; detail: string });
    for (const r of results) {
      const name = r.test.replace(/^test_client\.ClientTest\./, '') + (r.doc ? ` — ${r.doc}` : '');
      t.equal(r.status, 'ok', name, r.status === 'ok' ? {} : { detail: r.detail });
    }
    const names = new Set(results.map((r) => r.test.split('.').pop()));
    for (const needed of [
      'test_operations_are_the_servers',
      'test_methods_take_each_operations_fields',
      'test_every_operation_answers',
      'test_ids_match',
      'test_param_error_carries_a_fix_that_compose_takes',
      'test_compose_error_has_line_and_column',
      'test_events_are_surfaced',
      'test_read_f32_and_png_agree',
      'test_reconnects_after_quit_closes_the_door',
      'test_survives_a_server_restart',
    ])
      t.ok(names.has(needed), `ran ${needed}`);
    t.equal(ran.code, 0, 'the suite passed', { stderr: tail(ran.stderr) });
  });

  await t.test('the Blender add-on, headless (bridges/dcc/tests/blender_addon_test.py)', async (t) => {
    if (!blender) {
      t.fail("blender is not installed: install Debian's blender (apt-get install blender; .ci/run does) to test the add-on");
      return;
    }
    const scripts = temp('entelechy-dcc-blender-');
    const args = ['-b', '--factory-startup', '--python-exit-code', '1', '--python', join(DCC, 'tests', 'blender_addon_test.py'), '--', '--port', String(session.port), '--scene-dir', session.dir];
    const ran = await run(blender, args, { ...env, BLENDER_USER_SCRIPTS: scripts }, 300_000);
    // `CHECK ok NAME`, or `CHECK not ok NAME` and then `CHECK-DETAIL "..."` (a JSON string).
    const checks: { ok: boolean; name: string; detail?: string }[] = [];
    for (const line of ran.stdout.split('\n')) {
      const m = /^CHECK (ok|not ok) (.+)$/.exec(line);
      if (m) checks.push({ ok: m[1] === 'ok', name: m[2]! });
      else if (line.startsWith('CHECK-DETAIL ') && checks.length) checks[checks.length - 1]!.detail = JSON.parse(line.slice('CHECK-DETAIL '.length)) as string;
    }
    for (const c of checks) t.ok(c.ok, c.name, c.ok ? {} : { detail: c.detail });
    t.ok(checks.length >= 13, `${checks.length} checks ran`, { stdout: tail(ran.stdout) });
    t.match(ran.stdout, /CHECKS DONE passed=\d+ failed=0/, 'no check failed');
    t.equal(ran.code, 0, 'blender exited 0', { output: tail(ran.stdout + ran.stderr) });
    // The compose from a text block reached the disk.
    t.match(readFileSync(join(session.dir, 'scene.esn'), 'utf8'), /node ramp: test\.ramp@1/, 'scene.esn on disk holds what the text block composed');
  });
});
