// The command line's modes that change how a scene runs, not what it computes: `render
// --backend interp` and `--no-fuse` write the same pixels as the default; `entelechy bench` on a
// tiny size prints its ratios and exits 0, and `--json` prints lines that parse.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { decodePng } from '../src/main/image.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const dir = scratchDir('entelechy-modes-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: join(dir, 'cache') } });
  return { status: r.status, stdout: r.stdout, ended: `status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}

t.test('render --backend interp and --no-fuse write the same pixels as the default', async (t) => {
  for (const [example, size] of [['rings', '40x24'], ['life', '24x20'], ['blur', '30x18'], ['castle', '24x16']]) {
    const pixels: Record<string, Buffer> = {};
    for (const [label, extra] of [['default', []], ['interp', ['--backend', 'interp']], ['no-fuse', ['--no-fuse']]] as const) {
      const out = join(dir, `${example}-${label}.png`);
      const r = cli(['render', `examples/${example}/scene.esn`, '-o', out, '--size', size, '--time', '0.75', '--workers', '1', ...extra]);
      t.equal(r.status, 0, `${example} ${label}: ${r.ended}`);
      pixels[label] = Buffer.from(decodePng(readFileSync(out)).rgba);
    }
    t.ok(pixels.default.some((v, i) => i % 4 !== 3 && v !== pixels.default[0]), `${example}: the image is not flat (precondition)`);
    t.ok(pixels.interp.equals(pixels.default), `${example}: --backend interp gives the same pixels`);
    t.ok(pixels['no-fuse'].equals(pixels.default), `${example}: --no-fuse gives the same pixels`);
  }
});

t.test("node's own flags before bin/entelechy.js (a V8 option) do not stop the pool's threads", async (t) => {
  // A Worker refuses V8 options in its execArgv, and inherited the parent's: this ended with an
  // internal error when the pool's first thread started (src/workers/exec-argv.ts).
  const r = spawnSync(process.execPath, ['--max-old-space-size=4096', BIN, 'serve', 'examples/rings/scene.esn', '--workers', '2'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    input: '{"id":1,"op":"evaluate"}\n',
    env: { ...process.env, ENTELECHY_CACHE_DIR: join(dir, 'cache') },
  });
  t.equal(r.status, 0, `status ${r.status}\n${r.stderr}`);
  const answer = JSON.parse(r.stdout.trim().split('\n')[0]);
  t.equal(answer.ok?.frame, 1, `the frame was evaluated: ${r.stdout.slice(0, 300)}`);
  t.notMatch(r.stderr, /internal error/);
});

t.test('entelechy bench: a tiny run prints ratios and exits 0; --json lines parse', async (t) => {
  const args = ['bench', '--size', '32', '--runs', '1', '--pipelines', 'P1,P3', '--workers', '1', '--no-halide'];
  const text = cli(args);
  t.equal(text.status, 0, text.ended);
  t.match(text.stdout, /vs C/, 'a column of ratios against C');
  t.match(text.stdout, /vs JS/, 'and against JavaScript');
  t.match(text.stdout, /P1/);
  t.match(text.stdout, /P3/);
  t.match(text.stdout, /\d+\.\d+x/, 'ratios such as 1.23x');
  const json = cli([...args, '--json']);
  t.equal(json.status, 0, json.ended);
  const lines = json.stdout.trim().split('\n').filter(Boolean);
  const parsed = lines.map((l) => {
    try {
      return JSON.parse(l);
    } catch {
      return undefined;
    }
  });
  t.same(lines.filter((_, i) => parsed[i] === undefined), [], 'every line is JSON');
  t.ok(parsed.some((m) => m?.pipeline === 'P1' && m?.system === 'entelechy' && m?.mpix_s > 0), 'a measurement of P1 on the engine');
  t.ok(parsed.some((m) => m?.pipeline === 'P3' && m?.system === 'js'), 'and of P3 in JavaScript');
});
