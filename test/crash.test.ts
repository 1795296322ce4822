// Crash consistency (issue 14.4): a real `entelechy serve` is SIGKILLed at every step of a
// multi-document compose — after its Nth file operation (ENTELECHY_TEST_KILL_AT_STEP=N makes the
// process send itself SIGKILL there, src/main/journal-disk.ts), for every N until the compose
// completes, over a two-document and a three-document compose — and at moments the parent picks.
// After each kill the scene is opened again: its documents are all old or all new (never a mixed
// pair, which would not load: the new scene runs a kernel id only the new kernels.esn declares),
// no journal or temp file is left, and the world loads. The count is in docs/reliability.md.

import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { copyExample, Lines } from './fixtures.js';
import { ROOT } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

// Modules compiled once (by the first child that gets that far) and read by every later run.
const CACHE = scratchDir('entelechy-crash-cache-');
t.teardown(() => rmSync(CACHE, { recursive: true, force: true }));

interface Shape {
  name: string;
  /** The new texts, by path (a path absent before is created). */
  writes: Record<string, string>;
}

const OLD_SCENE = readFileSync(join(ROOT, 'examples/rings/scene.esn'), 'utf8');
const OLD_KERNELS = readFileSync(join(ROOT, 'examples/rings/kernels.esn'), 'utf8');
const NEW_KERNELS = OLD_KERNELS.replaceAll('demo.rings@1', 'demo.rings@38').replace('0.8 * v', '0.75 * v');
const NEW_SCENE = OLD_SCENE.replaceAll('demo.rings@1', 'demo.rings@38').replace('size = 256 x 256;', 'size = 96 x 64;');

const SHAPES: Shape[] = [
  { name: 'two documents', writes: { 'scene.esn': NEW_SCENE, 'kernels.esn': NEW_KERNELS } },
  {
    name: 'three documents, one new in a new folder',
    writes: {
      'scene.esn': NEW_SCENE.replace('use "kernels.esn";', 'use "kernels.esn";\nuse "lib/extra.esn";'),
      'kernels.esn': NEW_KERNELS,
      'lib/extra.esn': 'param extra: f32 = 1.0;\n',
    },
  },
];

/** What a folder's documents are after a crash: all old, all new, or mixed (a failure). */
function verdict(dir: string, shape: Shape): 'old' | 'new' | string {
  const now = (p: string) => {
    try {
      return readFileSync(join(dir, p), 'utf8');
    } catch {
      return undefined;
    }
  };
  const old: Record<string, string | undefined> = { 'scene.esn': OLD_SCENE, 'kernels.esn': OLD_KERNELS };
  const paths = Object.keys(shape.writes);
  if (paths.every((p) => now(p) === old[p])) return 'old';
  if (paths.every((p) => now(p) === shape.writes[p])) return 'new';
  return `mixed: ${paths.map((p) => `${p} is ${now(p) === old[p] ? 'old' : now(p) === shape.writes[p] ? 'new' : 'neither'}`).join(', ')}`;
}

/** Hidden files Entelechy leaves (journal, temps, backups), anywhere under the folder. */
function leftovers(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((d) => {
    const rel = under ? `${under}/${d.name}` : d.name;
    if (d.isDirectory()) return leftovers(dir, rel);
    return d.name.startsWith('.entelechy') || d.name.endsWith('.entelechy-tmp') ? [rel] : [];
  });
}

/**
 * Serve a copy of the rings example, send the compose, and let it be killed: at step `killAt`
 * (the child kills itself), or `afterMs` after the compose was sent (the parent kills it).
 * Resolves with whether the compose answered before the process died.
 */
async function composeAndDie(shape: Shape, kill: { killAt?: number; afterMs?: number }): Promise<{ dir: string; answered: boolean; signal: string | null }> {
  const dir = copyExample('rings', 'crash');
  const env = { ...process.env, ENTELECHY_CACHE_DIR: CACHE, ...(kill.killAt ? { ENTELECHY_TEST_KILL_AT_STEP: String(kill.killAt) } : {}) };
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(dir, 'scene.esn'), '--workers', '1'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const exit = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const out = new Lines(child.stdout);
  child.stdin.write('{"id":0,"op":"status"}\n');
  const ready = JSON.parse((await out.next()) ?? 'null');
  if (!ready?.ok?.loaded) throw new Error(`serve did not open the scene: ${JSON.stringify(ready)} ${stderr.slice(0, 500)}`);
  const documents = Object.entries(shape.writes).map(([path, text]) => ({ path, text }));
  child.stdin.write(JSON.stringify({ id: 1, op: 'compose', documents }) + '\n');
  if (kill.afterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), kill.afterMs);
  const line = await out.next();
  const answered = line !== undefined && JSON.parse(line).ok?.written === true;
  if (line !== undefined && !answered) throw new Error(`the compose answered ${line.slice(0, 300)}`);
  child.stdin.end();
  if (answered && kill.afterMs === undefined) child.kill('SIGKILL');
  return { dir, answered, signal: await exit };
}

/** Open the folder again: the world loads, from all-old or all-new documents, nothing left over. */
async function reopen(t2: Test, dir: string, shape: Shape, what: string): Promise<'old' | 'new'> {
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, inline: true, cacheDir: CACHE });
  try {
    const status = JSON.parse(await dispatch(s, '{"op":"status"}')).ok;
    const v = verdict(dir, shape);
    t2.ok(v === 'old' || v === 'new', `${what}: all old or all new (${v})`);
    t2.ok(status.loaded && status.refused === null, `${what}: the world loads${status.refused ? ` (${status.refused.message})` : ''}`);
    t2.same(leftovers(dir), [], `${what}: no journal, temp or backup left`);
    return v as 'old' | 'new';
  } finally {
    await s.close();
  }
}

const kills = { self: 0, parent: 0, old: 0, new: 0 };

/** Kill at step 1, 2, ... until the compose completes; returns the number of its file steps. */
async function sweep(t2: Test, shape: Shape): Promise<number> {
  for (let step = 1; step < 200; step++) {
    const { dir, answered, signal } = await composeAndDie(shape, { killAt: step });
    if (answered) {
      t2.equal(await reopen(t2, dir, shape, `${shape.name}, no kill (${step} > the compose's steps)`), 'new', 'a compose that answered wrote every document');
      return step - 1;
    }
    t2.equal(signal, 'SIGKILL', `${shape.name}, step ${step}: the process was killed`);
    kills.self++;
    kills[await reopen(t2, dir, shape, `${shape.name}, killed at step ${step}`)]++;
  }
  throw new Error('the compose never completed');
}

t.test('SIGKILL at every file step of a compose (two shapes side by side)', async (t) => {
  const steps = await Promise.all(SHAPES.map((shape) => sweep(t, shape)));
  t.ok(steps.every((n) => n > 20), `the composes took ${steps.join(' and ')} file steps, each a kill point`);
});

t.test('SIGKILL at moments the parent picks', async (t) => {
  for (let i = 0; i < 12; i++) {
    const shape = SHAPES[i % SHAPES.length];
    const { dir, answered } = await composeAndDie(shape, { afterMs: i * 10 });
    if (!answered) kills.parent++;
    const v = await reopen(t, dir, shape, `killed ${i * 10} ms after the compose was sent`);
    if (answered) t.equal(v, 'new', 'answered: all new');
  }
});

t.test('the count', async (t) => {
  t.ok(kills.self + kills.parent >= 50, `${kills.self} kills at file steps and ${kills.parent} timed by the parent: ${kills.old} all old, ${kills.new} all new after reopening`);
  t.comment(`crash kills: ${JSON.stringify(kills)}`);
});
