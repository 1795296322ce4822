// `entelechy help serve`, `help test` and the other CLI commands: the protocol's help knows them
// from the table yargs registers them with, and the CLI (run as a real process) adds their options.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS } from '../src/cli/commands.js';
import { helpEntry } from '../src/protocol/help.js';
import { ROOT } from './helpers.js';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ended: `status ${r.status}\n${r.stderr}` };
}

const entriesOf = (name: string) => {
  const e = helpEntry(name) as { entries?: Record<string, unknown>[] } & Record<string, unknown>;
  return e.entries ?? [e];
};

t.test('every command yargs knows is in the commands table, and help describes each', async (t) => {
  const usage = cli(['--help']).stdout;
  const listed = [...usage.matchAll(/^ {2}entelechy (\w+)/gm)].map((m) => m[1]);
  t.same(listed.sort(), COMMANDS.map((c) => c.name).sort(), 'entelechy --help lists the same commands');
  for (const c of COMMANDS) {
    const entry = entriesOf(c.name).find((e) => e.kind === 'command');
    t.match(entry, { syntax: `entelechy ${c.usage}`, example: c.example }, `help ${c.name}`);
    t.ok(existsSync(join(ROOT, c.doc.split('#')[0])), `${c.doc} exists`);
    t.ok(usage.includes(c.summary.slice(0, 30)), `yargs registers ${c.name} with the table's summary`);
  }
});

t.test('entelechy help serve: the usage, an example and its options; help test too', async (t) => {
  const serve = cli(['help', 'serve']);
  t.equal(serve.status, 0, serve.ended);
  t.match(serve.stdout, /^serve \(command\)\n {2}entelechy serve <scene>\n/);
  t.match(serve.stdout, /e\.g\. printf '%s\\n' '\{"id":1,"op":"status"\}' '\{"op":"quit"\}' \| entelechy serve examples\/rings\/scene\.esn/);
  t.match(serve.stdout, /^Options:$/m);
  t.match(serve.stdout, /--listen +host:port for TCP and WebSocket/);
  t.notMatch(serve.stdout, /^entelechy serve <scene>$/m, 'yargs\' own usage line is not repeated');
  const test = cli(['help', 'test']);
  t.equal(test.status, 0, test.ended);
  t.match(test.stdout, /entelechy test \[paths\.\.\]/);
  t.match(test.stdout, /--deny +replay with these capabilities withheld/);
  const json = cli(['help', 'serve', '--json']);
  t.match(JSON.parse(json.stdout), { name: 'serve', kind: 'command' }, '--json: the protocol\'s entry, no yargs text');
});
