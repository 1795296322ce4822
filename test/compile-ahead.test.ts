// `render` starts its compile worker with the process when it will likely compile
// (src/main/compile-ahead.ts): with no disk cache, or a command not rendered before with its files
// as they are; not when the same command's modules are on disk.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { likelyCompiles, renderDone } from '../src/main/compile-ahead.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const dir = scratchDir('entelechy-compile-ahead-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
cpSync(join(ROOT, 'examples', 'rings'), join(dir, 'rings'), { recursive: true });
const scene = join(dir, 'rings', 'scene.esn');

t.test('the guess: a command rendered before, its files unchanged, does not compile', async (t) => {
  const cache = join(dir, 'guess-cache');
  const args = ['render', scene, '-o', join(dir, 'g.png')];
  t.ok(likelyCompiles(args, null), 'no disk cache: it compiles');
  t.ok(likelyCompiles(args, cache), 'never rendered: it compiles');
  t.notOk(likelyCompiles([...args, '--backend', 'interp'], cache), 'the interpreter compiles nothing');
  t.notOk(likelyCompiles(['render', join(dir, 'missing.esn')], null), 'nor a render of a scene that is not there (it fails at once)');
  process.env.ENTELECHY_CACHE_DIR = cache;
  try {
    await renderDone(args, false);
    t.ok(likelyCompiles(args, cache), 'a failed render leaves no marker');
    await renderDone(args, true);
    t.notOk(likelyCompiles(args, cache), 'rendered: its modules are on disk');
    t.ok(likelyCompiles([...args, '--size', '64x64'], cache), 'another command guesses anew');
    utimesSync(scene, new Date(), new Date(Date.now() + 5000));
    t.ok(likelyCompiles(args, cache), 'the scene changed since: it compiles');
  } finally {
    delete process.env.ENTELECHY_CACHE_DIR;
  }
});

t.test('render: the worker starts with the process only when the command will likely compile', async (t) => {
  const cache = join(dir, 'cache');
  const render = (env: Record<string, string> = { ENTELECHY_CACHE_DIR: cache }) => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'render', scene, '-o', join(dir, 'out.png'), '--json'], { encoding: 'utf8', env: { ...process.env, ENTELECHY_TIMELINE: '1', ...env } });
    t.equal(r.status, 0, r.stderr);
    const stages = [...r.stderr.matchAll(/^timeline (.+): /gm)].map((m) => m[1]);
    const done = JSON.parse(r.stdout.trim().split('\n').pop()!);
    return { started: stages.includes('compile worker started'), loaded: stages.includes('compiler loaded'), cached: done.cached_modules as number };
  };
  t.same(render(), { started: true, loaded: true, cached: 0 }, 'first render: the worker starts at once and compiles');
  t.same(readdirSync(join(cache, 'renders')).length, 1, 'the render left its marker');
  t.same(render(), { started: false, loaded: false, cached: 1 }, 'the same again: no worker, the module read from disk');
  utimesSync(scene, new Date(), new Date(Date.now() + 10_000));
  t.same(render(), { started: true, loaded: false, cached: 1 }, 'the scene touched: the worker starts (a wrong guess: the module is on disk)');
  t.same(render({ ENTELECHY_CACHE_DIR: 'off' }), { started: true, loaded: true, cached: 0 }, 'no disk cache: always');
  t.ok(existsSync(join(dir, 'out.png')));
});
