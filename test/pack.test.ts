// The package as users get it: `npm pack`, the tarball installed into an empty folder, and the
// README's package command run from there; the library's two entries (`entelechy`, typed calls on
// the in-process Session, and `entelechy/client`) imported and type-checked as a user's code would.
//
// The install resolves the dependencies from the npm registry (npm's cache first: --prefer-offline);
// the tarball is packed from the built dist (--ignore-scripts: no build while other tests read dist).

import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodePng } from '../src/main/image.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const work = scratchDir('entelechy-pack-');
const app = join(work, 'app');
mkdirSync(app);
t.teardown(() => rmSync(work, { recursive: true, force: true }));

function run(command: string, args: string[], cwd: string) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ended: `${command} ${args.join(' ')}: status ${r.status}${r.signal ? `, signal ${r.signal}` : ''}\n${r.stderr}` };
}

let tarball = '';

t.test('npm pack ships dist, bin, docs, examples, bridges and the Player page, not the tests or the benchmarks', async (t) => {
  const r = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT);
  t.equal(r.status, 0, r.ended);
  const [packed] = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  const files = packed!.files.map((f) => f.path);
  for (const need of ['bin/entelechy.js', 'bin/entelechy-player.js', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli/cli.js', 'dist/bridges/host/index.js',
    'dist/bridges/host/index.d.ts', 'src/player/page/index.html', 'src/player/page/player.js', 'docs/language.md', 'docs/protocol.md', 'examples/rings/scene.esn',
    'examples/photo/photo.jpg', 'bridges/c/entelechy.h', 'bridges/dcc/entelechy_client.py', 'bridges/web/index.html', 'README.md', 'package.json'])
    t.ok(files.includes(need), `ships ${need}`);
  const unwanted = files.filter((f) => /^(test|bench|dist\/test|dist\/bench)\//.test(f) || f.endsWith('.map') || /^src\/.*\.ts$/.test(f) || f.startsWith('bridges/dcc/tests/'));
  t.same(unwanted, [], 'no tests, benchmarks, TypeScript sources or source maps');
  // A bound that a folder shipped by mistake (node_modules, test output) would pass by far; it grows with the source (424 files on 3 Dec).
  t.ok(files.length < 600, `${files.length} files`);
});

t.test('installed into an empty folder, the README\'s package command renders rings.png', async (t) => {
  if (!tarball) return t.fail('no tarball (the pack test failed)');
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const m = /^npm install (\S+\.tgz) && (npx entelechy render .+)$/m.exec(readme);
  t.ok(m, 'the README gives the package command');
  const install = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], app);
  t.equal(install.status, 0, `${install.ended}\n(the dependencies come from npm's cache or the npm registry: is it reachable?)`);
  const render = run('sh', ['-c', m![2]!], app);
  t.equal(render.status, 0, render.ended);
  t.match(render.stderr, /wrote rings\.png \(256 x 256/);
  const png = decodePng(readFileSync(join(app, 'rings.png')));
  t.same([png.width, png.height], [256, 256]);
  t.ok(png.rgba.some((v, i) => i % 4 !== 3 && v > 0), 'not black');
  const bench = run('npx', ['entelechy', 'bench'], app);
  t.equal(bench.status, 1);
  t.match(bench.stderr, /^entelechy: `entelechy bench` runs the benchmarks in bench\/.*which the npm package leaves out: run it in a clone/, 'bench says where the benchmarks are');
});

t.test('from the installed package: call(session, ...) and entelechy/client, typed and run; the Player serves its page', async (t) => {
  if (!tarball) return t.fail('no tarball (the pack test failed)');
  // A user's TypeScript, checked by tsc against the installed package's types.
  writeFileSync(join(app, 'use.mts'), [
    "import { Session, CallError, call } from 'entelechy';",
    "import { connect, EntelechyClient } from 'entelechy/client';",
    "const session = await Session.open('node_modules/entelechy/examples/rings/scene.esn', { workers: 1 });",
    "const answer = await call(session, 'evaluate', { time: 0.5 });",
    'const names: string[] = answer.executed;',
    "const status = await call(session, 'status');",
    'const frame: number = status.frame;',
    "const refused = await call(session, 'param', { name: 'warmth', value: 9 }).catch((e: CallError) => e.message);",
    "console.log(JSON.stringify({ names, frame, refused, connect: typeof connect, client: typeof EntelechyClient }));",
    'await session.close();',
    // A field of the wrong type is refused by the compiler.
    "if (process.env.NEVER) await call(session, 'evaluate', { time: 'soon' });",
    '',
  ].join('\n'));
  const tsc = run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types'), 'use.mts'], app);
  t.match(tsc.stdout, /use\.mts\(11,[0-9]+\): error TS2322: Type 'string' is not assignable to type 'number'/, 'the only compile error is the wrong field type');
  t.equal(tsc.stdout.trim().split('\n').filter((l) => /error TS/.test(l)).length, 1, tsc.stdout);
  const ran = run(process.execPath, ['use.mjs'], app);
  t.equal(ran.status, 0, ran.ended);
  const out = JSON.parse(ran.stdout.trim().split('\n').pop()!);
  t.same(out.names, ['rings', 'tint']);
  t.equal(out.frame, 1);
  t.match(out.refused, /warmth/);
  t.same([out.connect, out.client], ['function', 'function']);

  // The Player from the package: its page is served (src/player/page ships).
  const player = spawn(join(app, 'node_modules', '.bin', 'entelechy-player'), ['node_modules/entelechy/examples/rings/scene.esn', '--listen', '127.0.0.1:0', '--workers', '1'], { cwd: app });
  t.teardown(() => player.kill());
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    player.stdout.on('data', (d) => {
      out += d;
      const found = /player at (http:\/\/\S+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    player.on('exit', (code) => reject(new Error(`entelechy-player exited (${code})`)));
  });
  const page = await fetch(url);
  t.equal(page.status, 200);
  t.match(await page.text(), /Entelechy Player/);
});
