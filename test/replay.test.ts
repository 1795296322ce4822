// `entelechy test` replays every example's .replay files against a fresh session; expectations
// compare with earlier steps' answers (`< equals`, `< differs`) and within a tolerance
// (`< within`), and a failed one is reported at its own line and column with expected and actual.

import t from 'tap';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { parseReplay, runReplay, short } from '../src/protocol/replay.js';
import { copyExample } from './fixtures.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

function cli(args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 240000 });
}

/** Task 07 of test/agent: warmth changes tint's value at a pixel and leaves rings' as it was. */
const WARMTH = (tint: string, rings: string, tolerance: string) => `# warmth changes the picture
> {"op":"param","name":"warmth","value":0}
> {"op":"evaluate","time":0.5}
> cold: {"op":"trace","x":64,"y":64}
< within 0.0001 {"ok":{"values":[{"node":"rings","value":[0.969,0.7752,0.5814,1]},{"node":"tint"}]}}
> {"op":"param","name":"warmth","value":1}
> {"op":"evaluate","time":0.5}
> {"op":"trace","x":64,"y":64}
< ${tint} cold ok.values[1].value
< ${rings} cold ok.values[0].value within ${tolerance}
`;

async function replay(text: string) {
  const s = await Session.open(join(copyExample('rings', 'replay'), 'scene.esn'), { workers: 1 });
  try {
    return (await runReplay(parseReplay(text, 'w.replay'), (line) => dispatch(s, line))).flatMap((r) => r.failures);
  } finally {
    await s.close();
  }
}

t.test('every example replays', async (t) => {
  const r = cli(['test', 'examples']);
  t.equal(r.status, 0, r.stdout + r.stderr);
  t.match(r.stdout, /6 passed, 0 failed/);
});

t.test('differs, equals and within: a test of "warmth changes the image" without hard-coded pixels', async (t) => {
  t.same(await replay(WARMTH('differs', 'equals', '0')), [], 'tint differs, rings equals');
  const wrong = await replay(WARMTH('equals', 'differs', '0.5'));
  t.equal(wrong.length, 2, 'both comparisons fail when turned around');
  t.match(wrong[0], { line: 9, column: 3, message: /^ok\.values\[1\]\.value\[0\] differs from step `cold`'s \(line 4\): expected 0\.48\d+, got 1\.45\d+$/, expected: 0.4845043420791626, actual: 1.4535130262374878 });
  t.match(wrong[1], { line: 10, column: 3, message: /is the same as step `cold`'s \(line 4\), every number within 0\.5; expected it to differ/ });
  // A long value that should have differed is shown once shortened, with its own length.
  const long = 'x'.repeat(1000);
  t.match(short(`not ${short(long)}`), /^not "x+… \(1002 characters\)$/, 'the count is of the value, not of its shortened text');
});

t.test('within: a number off by more than the tolerance fails at its own column', async (t) => {
  const text = '> {"op":"evaluate","time":0.5}\n> {"op":"trace","x":64,"y":64}\n< within 0.0005 {"ok":{"values":[{"value":[0.97,0.7752,0.5814,1]},{}]}}\n';
  const [f] = await replay(text);
  t.match(f, { line: 3, column: text.split('\n')[2]!.indexOf('0.97') + 1, expected: 0.97, actual: 0.9690086841583252 });
  t.match(f.message, /^ok\.values\[0\]\.value\[0\]: expected 0\.97, got 0\.969\d+ \(off by 0\.000991\d+, more than 0\.0005\)/);
  t.same(await replay(text.replace('0.0005', '0.001')), [], 'within 0.001 it passes');
});

t.test('a replay that does not parse names the line and column and what to write', async (t) => {
  const refused = (text: string) => t.throws(() => parseReplay(text, 'x.replay'));
  refused('> {"op":"status"}\n< equals cold ok\n');
  t.throws(() => parseReplay('> {"op":"status"}\n< equals cold ok\n', 'x.replay'), { message: 'x.replay:2:10: no earlier step is named `cold`: name its request `> cold: {...}`' });
  t.throws(() => parseReplay('> a: {"op":"status"}\n> a: {"op":"status"}\n', 'x.replay'), { message: /^x\.replay:2:3: a step named `a` already is, at line 1/ });
  t.throws(() => parseReplay('> a: {"op":"status"}\n< within lots {"ok":{}}\n', 'x.replay'), { message: /^x\.replay:2:10: `within` takes a tolerance, a number of at least 0/ });
  t.throws(() => parseReplay('> a: {"op":"status"}\n< differs a ok..x\n', 'x.replay'), { message: /^x\.replay:2:13: `ok\.\.x` is not a path/ });
  t.throws(() => parseReplay('> {"op":"status"}\n< {"ok": }\n', 'x.replay'), { message: /^x\.replay:2:3: the expected answer is not JSON/ });
  t.throws(() => parseReplay('  < {"ok":{}}\n', 'x.replay'), { message: /^x\.replay:1:3: an expected answer \(<\) before any request/ });
  // A request that is not JSON: the replay file's line and column (of the second comma), not the JSON text's.
  t.throws(() => parseReplay('> {"op":"status"}\n  > n: {"op": "status",, }\n', 'x.replay'), { message: /^x\.replay:2:24: the request is not JSON \(.*\): write one JSON object after `>`/ });
  t.throws(() => parseReplay('@scene scene.esn\n@scene other.esn\n> {"op":"status"}\n', 'x.replay'), { message: /^x\.replay:2:1: a second @scene line \(the first is at line 1\)/ });
  t.throws(() => parseReplay('@scene\n> {"op":"status"}\n', 'x.replay'), { message: /^x\.replay:1:1: `@scene` names the scene file/ });
  t.match(parseReplay('# c\n@scene scene.esn\n> {"op":"status"}\n', 'x.replay'), { scene: 'scene.esn', sceneLine: 2 });
});

t.test('entelechy test: a replay that would check nothing fails: no scene file, no requests', async (t) => {
  const dir = scratchDir('entelechy-replay-');
  cpSync(join(ROOT, 'examples', 'rings'), join(dir, 'rings'), { recursive: true });
  rmSync(join(dir, 'rings', 'rings.replay')); // only the replays below
  mkdirSync(join(dir, 'bare'));
  writeFileSync(join(dir, 'rings', 'missing.replay'), '# no such scene\n@scene nope.esn\n> {"op":"status"}\n< {"ok":{}}\n');
  writeFileSync(join(dir, 'rings', 'empty.replay'), '# nothing\n@scene scene.esn\n');
  writeFileSync(join(dir, 'bare', 'none.replay'), '> {"op":"status"}\n< {"ok":{}}\n');
  const r = cli(['test', dir]);
  t.equal(r.status, 1, r.stderr);
  t.match(r.stdout, /missing\.replay:2: @scene names `nope\.esn`, but there is no such file beside the replay/);
  t.match(r.stdout, /empty\.replay: the replay has no requests .*so it checks nothing/);
  t.match(r.stdout, /none\.replay: no scene\.esn beside the replay, and no @scene line names another: add `@scene FILE\.esn`/);
  t.match(r.stdout, /0 passed, 3 failed/);
});

t.test('entelechy test: a failure names file:line:column of the expectation, expected and actual side by side', async (t) => {
  const dir = scratchDir('entelechy-replay-');
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  // A FIFO beside the replay (an agent's pipe) is not copied: it would stop the copy.
  execFileSync('mkfifo', [join(dir, 'requests')]);
  writeFileSync(join(dir, 'bad.replay'), '# expects the wrong frame\n> {"op": "evaluate"}\n< {"ok": {"frame": 7}}\n');
  const r = cli(['test', join(dir, 'bad.replay')]);
  t.equal(r.status, 1, r.stderr);
  t.match(r.stdout, /bad\.replay:3:20: ok\.frame: expected 7, got 1\n {4}expected: 7\n {4}actual: {3}1\n {4}answer: {3}\{"ok":\{/);
  t.match(r.stdout, /0 passed, 1 failed/);
  // A path neither answer has: said so, with no "expected: nothing" beside it.
  writeFileSync(join(dir, 'path.replay'), '> a: {"op": "status"}\n> {"op": "status"}\n< equals a ok.nosuch.path\n');
  const path = cli(['test', join(dir, 'path.replay')]);
  t.equal(path.status, 1, path.stderr);
  t.match(path.stdout, /path\.replay:3:3: step `a` \(line 1\) has no ok\.nosuch\.path; its answer: \{"ok":/);
  t.notMatch(path.stdout, /expected: nothing/);
  writeFileSync(join(dir, 'good.replay'), WARMTH('differs', 'equals', '0'));
  const good = cli(['test', join(dir, 'good.replay')]);
  t.equal(good.status, 0, good.stdout + good.stderr);
  t.match(good.stdout, /ok {3}.*good\.replay \(6 steps\)\n1 passed, 0 failed/);
});

t.test('entelechy test: a refused request no `<` line follows fails, naming why; one that expects the refusal passes', async (t) => {
  const failures = await replay('> {"op":"param","name":"warmht","value":1}\n> {"op":"evaluate","time":0.5}\n');
  t.equal(failures.length, 1);
  t.match(failures[0], { line: 1, column: 1, message: /^the request was refused: `warmht` is not a param the scene declares; did you mean `warmth`\?.*say so with `< \{"error": \{\}\}` on the next line$/ });
  t.same(await replay('> {"op":"param","name":"warmht","value":1}\n< {"error":{}}\n'), [], 'an expected refusal passes');
  // `< {}` matches any answer: it passed a refused setup step without a word.
  const any = await replay('> {"op":"param","name":"warmht","value":1}\n< {}\n');
  t.equal(any.length, 1, '`< {}` does not expect a refusal');
  t.match(any[0], { line: 1, message: /^the request was refused: `warmht` is not a param.*; its `<` line expects no refusal \(`\{\}` matches any answer, a refusal too\); if the test means it to be/ });
  t.same(await replay('> {"op":"param","name":"warmth","value":1}\n< {}\n'), [], 'an answer that is ok still passes `< {}`');
  t.same(await replay('> a: {"op":"param","name":"warmht","value":1}\n< {"error":{}}\n> {"op":"param","name":"warmht","value":1}\n< equals a error.message\n'), [], 'a comparison of the error expects it too');
  const failed = await replay('> {"op":"param","name":"warmht","value":1}\n< {"ok":{}}\n');
  t.equal(failed.length, 1, 'a `<` line that fails on the refusal is the one failure told');
});

t.test('entelechy test: quit in a replay, a file that is not a replay and a folder with none are refused', async (t) => {
  t.throws(() => parseReplay('> {"op":"status"}\n> {"op": "quit"}\n', 'x.replay'), { message: /^x\.replay:2:3: `quit` ends a connection/ });
  const dir = scratchDir('entelechy-replay-');
  cpSync(join(ROOT, 'examples', 'rings'), join(dir, 'rings'), { recursive: true });
  mkdirSync(join(dir, 'none'));
  const notReplay = cli(['test', join(dir, 'rings', 'scene.esn')]);
  t.equal(notReplay.status, 1);
  t.match(notReplay.stdout, /scene\.esn is not a \.replay file: entelechy test runs \.replay files/);
  const none = cli(['test', join(dir, 'none')]);
  t.equal(none.status, 1, 'a CI job told of a folder without replays fails');
  t.match(none.stderr, /no \.replay files in .*none: entelechy test runs \.replay files/);
  t.notMatch(none.stdout, /0 passed, 0 failed/);
  writeFileSync(join(dir, 'rings', 'out.replay'), '@scene ../x.esn\n> {"op":"status"}\n');
  t.match(cli(['test', join(dir, 'rings', 'out.replay')]).stdout, /out\.replay:1: @scene names `\.\.\/x\.esn`, which is not under the replay's folder/);
});

t.test('entelechy test: a scene that does not check is named first, with its line and column', async (t) => {
  const dir = scratchDir('entelechy-replay-');
  cpSync(join(ROOT, 'examples', 'rings'), dir, { recursive: true });
  writeFileSync(join(dir, 'scene.esn'), readFileSync(join(dir, 'scene.esn'), 'utf8').replace('count = 8.0;', 'count = 8.0 +;'));
  const r = cli(['test', join(dir, 'rings.replay')]);
  t.equal(r.status, 1);
  const lines = r.stdout.split('\n');
  t.match(lines[0], /^FAIL .*rings\.replay \(0 of 8 steps passed\)$/);
  t.match(lines[1], /scene\.esn did not check when the session opened, so the steps ran on an empty world: .*scene\.esn:8:15: expected `;`/);
});

/** A scene whose frame runs for minutes: 10 million steps an element, under the fuel limit. */
const SLOW = `kernel slow.k@1 {
  out image: field2<vec4>;
  each (x, y) {
    let i = 0;
    let a = 0.0;
    while (i < 10000000) { a += 0.000001; i++; }
    image = vec4(a, 0.0, 0.0, 1.0);
  }
}
node view: slow.k@1 { size = 512 x 512; }
output image <- view.image;
`;

t.test('entelechy test: a request past --timeout stops its replay and fails; Ctrl-C and SIGTERM leave no scratch copy', async (t) => {
  const dir = scratchDir('entelechy-replay-');
  writeFileSync(join(dir, 'scene.esn'), SLOW);
  writeFileSync(join(dir, 'slow.replay'), '> {"op":"status"}\n> {"op":"evaluate"}\n< {"ok":{}}\n> {"op":"status"}\n');
  const r = cli(['test', join(dir, 'slow.replay'), '--timeout', '1500']);
  t.equal(r.status, 1, r.stdout + r.stderr);
  t.match(r.stdout, /slow\.replay:2:1: the request took longer than the test's limit of 1500 ms a request, and was stopped: give it a `deadline` of its own, or run `entelechy test --timeout MS`; the replay stopped here \(1 later step not run\)/);
  t.match(r.stdout, /0 passed, 1 failed/);
  for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    // The scratch copies under a TMPDIR of the test's own, to see that the interrupted one is removed.
    const tmp = scratchDir('entelechy-replay-tmp-');
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'test', join(dir, 'slow.replay'), '--timeout', '0'], { cwd: ROOT, env: { ...process.env, TMPDIR: tmp } });
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    // Once the copy is made and the session's frame runs, stop it.
    for (let i = 0; i < 300 && !readdirSync(tmp).length; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1000));
    t.equal(readdirSync(tmp).length, 1, 'the scratch copy is there while it runs');
    child.kill(signal);
    t.equal(await exited, status, `${signal}: exit status ${status}`);
    t.match(out, new RegExp(`interrupted \\(${signal}\\): .*slow\\.replay stopped, its scratch copy removed; 0 passed, 0 failed, 1 stopped, 0 not run`));
    t.same(readdirSync(tmp), [], `${signal}: the scratch copy is removed`);
  }
});
