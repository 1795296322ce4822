// `--json` means JSON: every error of a command run with --json is one JSON line on stdout too
// ({"error": {"message": ...}}), besides the message on stderr, and never two lines for one error.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';
import { hangsAtFrame } from './fixtures.js';
import { scratchDir } from './scratch.js';

const CACHE = scratchDir('entelechy-cache-');

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  const lines = r.stdout.trim().split('\n').filter(Boolean);
  const errors = lines.map((l) => JSON.parse(l)).filter((l) => l.error);
  return { status: r.status, stderr: r.stderr, lines, errors };
}

t.test('errors before anything runs: a missing scene, a bad option value, an unknown option', async (t) => {
  const cases: [string[], RegExp][] = [
    [['render', 'nope.esn', '--json'], /cannot open `nope\.esn`: no such file/],
    [['check', 'nope.esn', '--json'], /cannot open `nope\.esn`: no such file/],
    [['render', 'examples/rings/scene.esn', '--size', '3y', '--json'], /--size takes WIDTHxHEIGHT/],
    [['render', 'examples/rings/scene.esn', '--param', 'warmth=9', '--json'], /--param warmth=9: `warmth` keeps to 0\.\.1/],
    [['render', 'examples/rings/scene.esn', '--bogus', '--json'], /Unknown argument: bogus/],
    [['bench', '--pipelines', 'P9', '--json'], /`P9` is not a pipeline/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args);
    t.equal(r.status, 1, args.join(' '));
    t.equal(r.lines.length, 1, `${args.join(' ')}: one line on stdout`);
    t.match(r.errors[0]?.error?.message, message);
    t.equal(r.stderr, `entelechy: ${r.errors[0]?.error?.message}\n`, 'the same message on stderr');
  }
  t.equal(cli(['render', 'nope.esn']).lines.length, 0, 'without --json, stdout stays empty');
});

t.test('errors a command reports itself with more detail are not printed twice', async (t) => {
  const dir = scratchDir('entelechy-json-');
  writeFileSync(join(dir, 'bad.esn'), 'param warmth: f32 = 1.5 range 0..1;\n');
  const bad = cli(['render', join(dir, 'bad.esn'), '--json']);
  t.equal(bad.status, 1);
  t.equal(bad.errors.length, 1, 'one error line');
  t.match(bad.errors[0].error, { message: /has 1 error: nothing rendered/, diagnostics: [{ line: 1, column: 21 }] });

  writeFileSync(join(dir, 'hang.esn'), hangsAtFrame(1));
  const hang = cli(['render', join(dir, 'hang.esn'), '--frames', '0:2', '-o', join(dir, '%d.png'), '--json']);
  t.equal(hang.status, 1);
  t.equal(hang.errors.length, 1, 'one error line');
  t.match(hang.errors[0].error, { message: /frame 1: node `hang` ran out of fuel/, frame: 1, node: 'hang' });
});
