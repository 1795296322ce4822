// `entelechy help` and the protocol's `help` with no name: the quick start. Its request lines are
// sent to a real session of examples/rings and must get the answers it prints, byte for byte; the
// CLI is run as a real process and must fit one screen, with every operation and its fields.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { helpEntry } from '../src/protocol/help.js';
import { OPERATIONS } from '../src/protocol/operations.js';
import { DOCS, EXAMPLES, fieldUsage } from '../src/protocol/quickstart.js';
import { copyExample } from './fixtures.js';
import { ROOT } from './helpers.js';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}\n${r.stderr}` };
}

t.test('the quick start\'s example requests get the answers it shows', async (t) => {
  const s = await Session.open(join(copyExample('rings', 'quickstart'), 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  for (const e of EXAMPLES) t.equal(await dispatch(s, e.request), e.answer, e.request);
});

t.test('the protocol\'s help without a name: the quick start, the docs, the index', async (t) => {
  const s = await Session.open(join(copyExample('rings', 'quickstart'), 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const help = JSON.parse(await dispatch(s, '{"id":1,"op":"help"}')).ok;
  const lines: string[] = help.quickstart;
  for (const e of EXAMPLES) {
    t.ok(lines.includes(`  > ${e.request}`), `shows ${e.request}`);
    t.ok(lines.includes(`  < ${e.answer}`), 'and its answer');
  }
  for (const o of OPERATIONS) t.ok(lines.some((l) => l.startsWith(`  ${o.name} ${fieldUsage(o)}`)), `a row for ${o.name} with its fields`);
  t.ok(lines.some((l) => l.includes('entelechy serve SCENE --listen')), 'how to listen');
  t.ok(lines.some((l) => l.includes('entelechy mcp SCENE')), 'how to reach it over MCP');
  t.ok(lines.some((l) => l.includes('entelechy render SCENE -o out.png')), "how to render without a session: the README's first command");
  t.ok(lines.some((l) => l.includes('entelechy test FILE.replay')), 'how to run a replay');
  for (const d of help.docs) t.ok(existsSync(d.file), `${d.path} is where it says`);
  t.same(help.docs.map((d: { path: string }) => d.path), DOCS.map((d) => d.path));
  t.ok(help.index.operation.includes('evaluate'), 'the index of names is still there');
});

t.test('each documentation file the quick start names exists', async (t) => {
  for (const d of DOCS) t.ok(existsSync(join(ROOT, d.path)), d.path);
});

t.test('`entelechy help` prints the quick start in one screen; --all lists every name', async (t) => {
  const r = cli(['help']);
  t.equal(r.status, 0, r.ended);
  const lines = r.stdout.trimEnd().split('\n');
  t.ok(lines.length <= 60, `one screen: ${lines.length} lines`);
  t.same(lines.slice(0, -2), helpEntry().quickstart, 'the same lines as the protocol answers');
  t.match(r.stdout, /^ {2}entelechy serve SCENE {2,}protocol lines on standard input/m);
  t.match(r.stdout, /^ {2}read \[output\] \[node\] \[port\] \[input\] \[format\] .* +An output.s field/m);
  t.match(r.stdout, /^ {2}docs\/protocol\.md +every operation/m);
  t.match(r.stdout, /`entelechy help --all` lists every name/);
  const all = cli(['help', '--all']);
  t.equal(all.status, 0, all.ended);
  t.match(all.stdout, /operation:\n {2}status, kernels/);
  t.match(all.stdout, /answer field:\n.*timings/);
  const json = cli(['help', '--json']);
  t.same(JSON.parse(json.stdout).quickstart, helpEntry().quickstart);
});
