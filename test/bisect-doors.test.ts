// Bisect through every door: `entelechy serve` (stdin and TCP, the history built over stdin by
// composes and a save), `entelechy bisect` as a real process against that session, and
// `entelechy mcp` (the history built by tool calls). Each finds the planted version, and the
// session's world, history and folder are as before.

import t from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { scratchDir } from './scratch.js';
import net from 'node:net';
import { join } from 'node:path';
import { versionOf } from '../src/main/documents.js';
import { ROOT } from './helpers.js';
import { mcpDoor, serveDoors, type Ask } from './serve-process.js';
import { badKernel, buildHistory, FAILING_LINE, historyDir, versionText } from './bisect-fixtures.js';

const PLANTED = 4;

/**
 * Two generations published over the running (bad) version: the good kernel (p0: the replay
 * passes again), then the bad one (p1: it fails). Bisect from p0 to `running` answers p1, a
 * generation, which a bisect of document versions alone cannot name. Its name in history.
 */
async function publishOver(ask: Ask): Promise<string> {
  const good = versionText(0, PLANTED).split('\nnode ')[0]!;
  for (const source of [good, badKernel()]) {
    const a = await ask({ op: 'publish', source });
    if (!a.ok) throw new Error(`publish: ${JSON.stringify(a.error)}`);
  }
  return (await ask({ op: 'history' })).ok.generations[1].name;
}

/** The world, its history and the folder's files, as one string. */
async function fingerprint(ask: Ask, dir: string): Promise<string> {
  const status = (await ask({ op: 'status' })).ok;
  const history = (await ask({ op: 'history' })).ok;
  const files = readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]);
  return JSON.stringify({ frame: status.frame, revision: status.revision, history, files });
}

/** `entelechy bisect ...` as a process: its exit status, stdout and stderr. */
function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'bisect', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

/** A port nothing listens on: one just opened and closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

t.test('entelechy serve (stdin and TCP) and entelechy bisect as a process', async (t) => {
  const dir = historyDir(t, PLANTED);
  const { stdin, tcp, port } = await serveDoors(t, dir);
  await buildHistory(stdin, dir, PLANTED);
  const before = await fingerprint(tcp, dir);
  const bad = versionOf(versionText(PLANTED, PLANTED));

  for (const [door, ask] of [['stdin', stdin], ['tcp', tcp]] as const) {
    const a = await ask({ op: 'bisect', good: '0', bad: 'running', test: 'check.replay' });
    t.same([a.ok?.first_bad.position, a.ok?.first_bad.version, a.ok?.failure.line], [PLANTED, bad, FAILING_LINE], `${door}: the planted version and the failed step`);
  }

  const scene = join(dir, 'scene.esn');
  const replay = join(dir, 'check.replay');
  const run = await cli([scene, '--good', '0', '--bad', 'running', '--test', replay, '--connect', `127.0.0.1:${port}`]);
  t.equal(run.code, 0, run.err);
  t.match(run.out, new RegExp(`^first bad: position ${PLANTED}, ${bad} \\(compose, `, 'm'), 'the CLI names the first bad version');
  t.match(run.out, new RegExp(`^fails at ${replay.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${FAILING_LINE}:\\d+: `, 'm'), 'the failed step by file:line:column');
  t.match(run.out, /^\+    result = vec4\(0\.25, /m, 'and the diff');
  const json = await cli([scene, '--good', bad.slice(0, 6), '--bad', 'running', '--test', replay, '--connect', `127.0.0.1:${port}`, '--json']);
  t.equal(json.code, 1, 'the bad version as good: refused');
  t.match(JSON.parse(json.out).error.message, /good version \(position 4, [0-9a-f]{16}\) fails the replay too/, '--json prints the error as the protocol answers it');

  const refused = await cli([scene, '--good', '5', '--bad', '6', '--test', replay, '--connect', `127.0.0.1:${port}`]);
  t.equal(refused.code, 1);
  t.match(refused.err, /^entelechy: the good version \(position 5, [0-9a-f]{16}\) fails the replay too, at line 5/m, 'a refusal says what to do, no stack');
  t.notMatch(refused.err, /at .*\.js:\d+/);
  const nobody = await cli([scene, '--good', '0', '--bad', 'running', '--test', replay, '--connect', `127.0.0.1:${await closedPort()}`]);
  t.match([nobody.code, nobody.err], [1, /no session listens on 127\.0\.0\.1:\d+: bisect searches the versions a running session has seen/]);
  const wrong = await cli([join(dir, 'other.esn'), '--good', '0', '--bad', 'running', '--test', replay, '--connect', `127.0.0.1:${port}`]);
  t.match([wrong.code, wrong.err], [1, /runs `scene\.esn`, not `other\.esn`/]);
  // Another folder's scene of the same name: that session was searched with this replay, without a word.
  const elsewhere = scratchDir('entelechy-bisect-elsewhere-');
  writeFileSync(join(elsewhere, 'scene.esn'), readFileSync(scene, 'utf8').replace('output', '// another scene\noutput'));
  const other = await cli([join(elsewhere, 'scene.esn'), '--good', '0', '--bad', 'running', '--test', replay, '--connect', `127.0.0.1:${port}`]);
  t.match([other.code, other.err], [1, /runs a `scene\.esn` whose file holds another text than .*scene\.esn \(version [0-9a-f]{16} there, [0-9a-f]{16} here\): it is another folder's scene/]);
  t.equal(other.out, '', 'and nothing was bisected');
  const broken = await cli([scene, '--good', '0', '--bad', 'running', '--test', join(dir, 'scene.esn'), '--connect', `127.0.0.1:${port}`]);
  t.match([broken.code, broken.err], [1, /scene\.esn:1:1: a line starts with `>`/], 'a file that is not a replay: named by file:line:column');

  t.equal(await fingerprint(tcp, dir), before, 'the session\'s world, history and folder as before');

  // Generations published over the protocol: points of the history, through each door.
  const published = await publishOver(stdin);
  for (const [door, ask] of [['stdin', stdin], ['tcp', tcp]] as const) {
    const a = await ask({ op: 'bisect', good: 'p0', bad: 'running', test: 'check.replay' });
    t.same([a.ok?.first_bad.kind, a.ok?.first_bad.name, a.ok?.last_good.index, a.ok?.failure.line], ['generation', published, 0, FAILING_LINE], `${door}: the generation that broke it`);
    t.equal(a.ok?.diff, '', `${door}: over one version of the document, no document diff (it was a header with nothing under it)`);
  }
  const gen = await cli([scene, '--good', 'p0', '--bad', 'running', '--test', replay, '--connect', `127.0.0.1:${port}`]);
  t.equal(gen.code, 0, gen.err);
  t.match(gen.out, new RegExp(`^first bad: ${published} \\(publish, [^)]+\\) over position 6, `, 'm'), 'the CLI names the generation and the version it ran over');
  t.match(gen.out, /^\+\+\+ \(protocol t\.paint@1\)\n[^]*^\+    result = vec4\(0\.25, /m, 'and the kernels\' diff');
});

t.test('entelechy mcp: bisect is a tool', async (t) => {
  const dir = historyDir(t, PLANTED);
  const { ask, client } = await mcpDoor(t, join(dir, 'scene.esn'));
  await buildHistory(ask, dir, PLANTED);
  const before = await fingerprint(ask, dir);
  const a = await ask({ op: 'bisect', good: '0', bad: 'running', test: 'check.replay' });
  t.same([a.ok?.first_bad.position, a.ok?.last_good.position, a.ok?.failure.line], [PLANTED, PLANTED - 1, FAILING_LINE], JSON.stringify(a.error));
  t.match(a.ok?.diff, /^-    result = vec4\(0\.5, /m);
  const tools = (await client.listTools()).tools;
  const tool = tools.find((x) => x.name === 'bisect');
  t.same([tool?.annotations?.readOnlyHint, (tool?.inputSchema as any)?.required?.sort()], [true, ['bad', 'good']], 'read-only, good and bad required');
  t.equal(await fingerprint(ask, dir), before, 'nothing changed');
  const published = await publishOver(ask);
  const g = await ask({ op: 'bisect', good: 'p0', bad: 'running', test: 'check.replay' });
  t.same([g.ok?.first_bad.kind, g.ok?.first_bad.name, g.ok?.last_good.index], ['generation', published, 0], `a generation published over the protocol: ${JSON.stringify(g.error)}`);
});
