// The seeded protocol fuzzer (issue 14): tens of thousands of request lines against a real session
// — in process through dispatch for volume, and a slice through a spawned `entelechy
// serve` on stdin — covering every operation of the operations table and every field with plausible,
// wrong, missing, huge, nested, non-finite, negative and hostile values, and garbage lines.
// Every answer must be one JSON line with the request's id and no stack, machine path, "this is a
// bug" or internal error; the documents on disk are always the ones the session last wrote (never
// torn); and afterwards the session still answers `status` and evaluates.
//
// ENTELECHY_SEED=N reruns one run; ENTELECHY_LONG=1 runs the long sizes (docs/reliability.md).

import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { OPERATIONS } from '../src/protocol/operations.js';
import { Lines } from './fixtures.js';
import { DEEP, fnChain, nestedIfs, RequestFuzzer, VALUE_KINDS, type ValueKind, type World } from './fuzz-requests.js';
import { ROOT } from './helpers.js';
import { LONG, answerProblem, expectedIdOf, replayHint, seedOf } from './reliability.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

/** Request lines through Session.request, and through `entelechy serve` on stdin. */
const LINES = LONG ? 200_000 : 20_000;
const DOOR_LINES = LONG ? 20_000 : 2_000;
/** Failures printed in full (the rest are counted). */
const SHOWN = 20;

/**
 * Known bugs of issue 14 the fuzzer finds, being fixed in parallel: explicit, printed, and in
 * docs/reliability.md with their reproducers. A failure matching `fails` is reported as a known
 * failure (a tap todo: it shows, it does not pass); an aim matching `slow` is not taken at volume
 * (its one request would take minutes) and is listed as not sent. Remove an entry when its fix
 * lands: the run then holds those lines to every check again.
 */
interface Known {
  name: string;
  reproducer: string;
  /** Whether a failure (its request line and problem) is this bug. */
  fails?: (f: { line: string; problem: string }) => boolean;
  slow?: (op: string, field: string, kind: ValueKind) => boolean;
}
const KNOWN: Known[] = [];
const avoid = (op: string, field: string, kind: ValueKind) => KNOWN.some((k) => k.slow?.(op, field, kind));

const SEED = seedOf(14);
t.comment(`fuzz seed ${SEED} (${replayHint('fuzz', SEED)})`);

/** The fuzzer's scene: two documents, a param, an input, state, three outputs; small fields. */
const SCENE = `// The protocol fuzzer's scene: two documents, a param, an input, state, three outputs.
use "kernels.esn";

param warmth: f32 = 0.5 range 0..1;

input canvas: field2<f32> = 0.0 size 32 x 32;

kernel fuzz.life@1 {
  grants field.read, field.write, input.read, time.read;
  in paint: field2<f32>;
  state cells: field2<f32> = 0.0;
  out result: field2<vec4>;
  each (x, y) {
    let n = 0;
    for (let dy = -1; dy <= 1; dy++)
      for (let dx = -1; dx <= 1; dx++)
        if (dx != 0 || dy != 0) n += cells.wrap(x + dx, y + dy);
    let next = (n == 3 || (cells > 0.5 && n == 2)) ? 1.0 : 0.0;
    if (frame == 0) next = hash(x, y) < 0.3 ? 1.0 : 0.0;
    if (pointer.down && distance(pointer.xy, vec2(x, y)) < 4.0) next = 1.0;
    if (paint > 0.5) next = 1.0;
    cells = next;
    result = vec4(next, next, 0.25, 1.0);
  }
}

node rings: demo.rings@1 {
  size = 32 x 32;
  count = 8.0;
}

node tint: demo.tint@1 {
  src <- rings.result;
  warmth = warmth;
}

node board: fuzz.life@1 {
  size = 32 x 32;
  paint <- canvas;
}

output result <- tint.result;
output plain <- rings.result;
output life <- board.result;
`;

const temps: string[] = [];
process.once('exit', () => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A fresh folder holding the fuzzer's scene. */
function sceneFolder(): string {
  const dir = scratchDir('entelechy-fuzz-');
  temps.push(dir);
  writeFileSync(join(dir, 'scene.esn'), SCENE);
  cpSync(join(ROOT, 'examples', 'rings', 'kernels.esn'), join(dir, 'kernels.esn'));
  return dir;
}

/** What the generator aims at, read from the session's own answers. */
async function worldOf(s: Session, dir: string): Promise<World> {
  const graph = JSON.parse(await dispatch(s, '{"op":"graph"}')).ok;
  const kernels = JSON.parse(await dispatch(s, '{"op":"kernels"}')).ok.kernels as { id: string; ports: { name: string; kind: string }[] }[];
  const ports = kernels.flatMap((k) => k.ports.filter((p) => p.kind !== 'in').map((p) => p.name));
  const statePorts = kernels.flatMap((k) => k.ports.filter((p) => p.kind === 'state').map((p) => p.name));
  return {
    nodes: graph.nodes.map((n: { name: string }) => n.name),
    outputs: graph.outputs.map((o: { name: string }) => o.name),
    params: graph.params.map((p: { name: string }) => p.name),
    inputs: graph.inputs.map((i: { name: string }) => i.name),
    kernels: kernels.map((k) => k.id),
    ports: [...new Set(ports)],
    statePorts: [...new Set(statePorts)],
    documents: ['scene.esn', 'kernels.esn'],
    texts: { 'scene.esn': SCENE, 'kernels.esn': readFileSync(join(dir, 'kernels.esn'), 'utf8') },
    versions: [],
    folder: dir,
  };
}

/** Learn from an answer what later requests can aim at (versions, snapshots, published kernels). */
function learn(world: World, op: string | undefined, answer: string): void {
  if (!op || !answer.includes('"ok"')) return;
  const ok = JSON.parse(answer).ok;
  if (op === 'compose' && typeof ok.version === 'string') world.versions.push(ok.version);
  if (op === 'snapshot' && typeof ok.data === 'string' && ok.data.length < 1_000_000) world.snapshot = ok.data;
  if (op === 'publish' && typeof ok.id === 'string' && !world.kernels.includes(ok.id)) world.kernels.push(ok.id);
  if (world.versions.length > 50) world.versions.splice(0, 25);
}

/**
 * What is wrong with the disk, by file: documents that are not what the session last loaded or
 * wrote (torn, or half of a set), temp files or a journal left behind, snapshot files not whole.
 */
function diskProblems(s: Session, dir: string): Map<string, string> {
  const problems = new Map<string, string>();
  for (const [path, text] of s.texts) {
    const file = join(dir, path);
    const disk = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    const what = disk === undefined ? 'missing' : `${disk.length} chars${disk.startsWith('{"format":"entelechy-snapshot"') ? ', a snapshot' : ''}`;
    if (disk !== text) problems.set(path, `${path} on disk (${what}) is not the text the session runs (${text.length} chars)`);
  }
  const walk = (rel: string): string[] =>
    readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(rel, d.name)) : [join(rel, d.name)]));
  for (const f of walk('')) {
    if (f.endsWith('.entelechy-tmp') || f.endsWith('.entelechy-journal.json')) problems.set(f, `${f} left behind after the answer`);
    else if (f.endsWith('.json') && !s.texts.has(f)) {
      try {
        JSON.parse(readFileSync(join(dir, f), 'utf8'));
      } catch {
        problems.set(f, `snapshot ${f} is not whole JSON`);
      }
    }
  }
  return problems;
}

/** The first problem of the disk, or undefined. */
function diskProblem(s: Session, dir: string): string | undefined {
  return diskProblems(s, dir).values().next().value;
}

interface Failure {
  index: number;
  line: string;
  problem: string;
}

function show(f: Failure): string {
  const line = f.line.length > 300 ? `${f.line.slice(0, 300)}... (${f.line.length} chars)` : f.line;
  return `line ${f.index}: ${f.problem}\n  request: ${line}`;
}

/** Report failures (the first SHOWN in full) with how to rerun; known ones as todos, by name. */
function report(tt: Test, what: string, failures: Failure[]): void {
  const unknown = failures.filter((f) => !KNOWN.some((k) => k.fails?.(f)));
  tt.equal(unknown.length, 0, `${what}: every answer holds`);
  for (const f of unknown.slice(0, SHOWN)) tt.comment(show(f));
  if (unknown.length) tt.comment(replayHint('fuzz', SEED));
  for (const k of KNOWN.filter((k) => k.fails)) {
    const hits = failures.filter((f) => k.fails!(f));
    if (hits.length) tt.fail(`known failure, ${hits.length} lines: ${k.name}\n  reproducer: ${k.reproducer}\n  first: ${show(hits[0]!)}`, { todo: 'being fixed (issue 14)' });
  }
  for (const k of KNOWN.filter((k) => k.slow)) tt.comment(`not sent at volume (known slow): ${k.name}; reproducer: ${k.reproducer}`);
}

t.test(`in process: ${LINES} fuzzed lines through Session.request`, async (t) => {
  const dir = sceneFolder();
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const world = await worldOf(s, dir);
  const fuzzer = new RequestFuzzer(SEED, world, { avoid });
  const failures: Failure[] = [];
  const aimed = new Set<string>();
  const sent = new Set<string>();
  let lastTorn = new Map<string, string>();
  for (let i = 0; i < LINES; i++) {
    const g = fuzzer.next();
    const answer = await dispatch(s, g.line);
    const problem = answerProblem(g.line, answer, expectedIdOf(g.line), [dir]);
    if (problem) failures.push({ index: i, line: g.line, problem });
    if (g.op) sent.add(g.op);
    if (g.field) aimed.add(`${g.op}.${g.field}:${g.kind}`);
    learn(world, g.op, answer);
    if (g.op === 'compose' || g.op === 'snapshot' || g.op === 'restore') {
      // A file that went wrong stays wrong until a write mends it: told when it changes.
      const torn = diskProblems(s, dir);
      for (const [file, problem] of torn) if (lastTorn.get(file) !== problem) failures.push({ index: i, line: g.line, problem: `after the answer: ${problem}` });
      lastTorn = torn;
    }
  }
  report(t, `${LINES} lines`, failures);

  // Every operation was sent, and every field of each given a value of every kind.
  t.same(OPERATIONS.map((o) => o.name).filter((o) => !sent.has(o)), [], 'every operation sent');
  const combos = OPERATIONS.flatMap((o) => o.fields.flatMap((f) => VALUE_KINDS.slice(1).map((k) => `${o.name}.${f.name}:${k}`)));
  const avoided = (c: string) => avoid(...(/^(\w+)\.(\w+):(\w+)$/.exec(c)!.slice(1) as [string, string, ValueKind]));
  t.same(combos.filter((c) => !aimed.has(c) && !avoided(c)), [], `every field of every operation given each kind of value (${combos.length} combinations)`);

  // The session still answers, takes its scene back and evaluates it.
  t.match(JSON.parse(await dispatch(s, '{"id":"after","op":"status"}')), { id: 'after', ok: { loaded: true } }, 'status answers after the run');
  await afterRun(t, (line) => dispatch(s, line), world);
  // The disk at the end: as the session runs it, or as the run already reported it (nothing new).
  const torn = [...diskProblems(s, dir)].filter(([file, problem]) => lastTorn.get(file) !== problem).map(([, problem]) => problem);
  t.same(torn, [], 'the documents on disk are the ones the session runs (or as reported during the run)');
});

/** After a run: the scene composed back as it was, unpaused, evaluated with all its outputs. */
async function afterRun(tt: Test, ask: (line: string) => Promise<string>, world: World): Promise<void> {
  const back = JSON.stringify({ id: 'back', op: 'compose', documents: Object.entries(world.texts).map(([path, text]) => ({ path, text })) });
  const composed = await ask(back);
  const known = KNOWN.find((k) => k.fails?.({ line: back, problem: composed }));
  if (known) tt.fail(`known failure: composing the scene back: ${known.name}`, { todo: 'being fixed (issue 14)' });
  // Written, or nothing to write: the run left the documents as they were.
  else tt.match(JSON.parse(composed), { id: 'back', ok: { written: Boolean } }, `the scene composes back: ${composed.slice(0, 300)}`);
  await ask('{"op":"pause","paused":false}');
  const evaluated = JSON.parse(await ask('{"id":"e","op":"evaluate","time":1.5}'));
  tt.ok(evaluated.ok, `evaluate answers after the run: ${JSON.stringify(evaluated).slice(0, 300)}`);
  if (!known) tt.equal(evaluated.ok?.outputs?.length, 3, 'with the scene\'s three outputs');
}

/**
 * The hostile requests issue 14 lists, each sent once as it is: [what, op, field, kind, line]. A
 * request whose aim a KNOWN entry marks slow is listed as not sent. The snapshot over a document
 * comes last: the disk check after each request would see what it leaves.
 */
const ISSUE_REQUESTS: [string, string, string, ValueKind, () => string][] = [
  ['help with a 100,000-character name', 'help', 'name', 'huge', () => JSON.stringify({ id: 1, op: 'help', name: 'A'.repeat(100_000) })],
  ['help with a 524,288-character name', 'help', 'name', 'huge', () => JSON.stringify({ id: 2, op: 'help', name: 'A'.repeat(524_288) })],
  ['compose of 174,762 edits', 'compose', 'edits', 'huge', () => JSON.stringify({ id: 3, op: 'compose', edits: new Array(174_762).fill({ node: 'rings', member: 'count', text: 'count = 2.0;' }) })],
  ['compose of `documents: []`', 'compose', 'documents', 'hostile', () => '{"id":4,"op":"compose","documents":[]}'],
  ['evaluate with `outputs` nested 10,000 deep', 'evaluate', 'outputs', 'nested', () => `{"id":5,"op":"evaluate","outputs":${'['.repeat(DEEP)}"result"${']'.repeat(DEEP)}}`],
  ['a 5-million-segment path', 'document', 'path', 'huge', () => JSON.stringify({ id: 6, op: 'document', path: 'a/'.repeat(5_000_000) })],
  ['check of 700 nested ifs', 'prepare', 'source', 'hostile', () => JSON.stringify({ id: 7, op: 'prepare', source: nestedIfs(700) })],
  ['compose of a 700-deep fn chain', 'compose', 'edits', 'hostile', () => JSON.stringify({ id: 8, op: 'compose', path: 'deep.esn', text: fnChain(700) })],
  ['snapshot to a 240-character name', 'snapshot', 'path', 'hostile', () => JSON.stringify({ id: 9, op: 'snapshot', path: 'A'.repeat(240) })],
  ['restore of a snapshot with a non-finite clock', 'restore', 'data', 'hostile', () => JSON.stringify({ id: 11, op: 'restore', data: '{"format":"entelechy-snapshot","version":1,"state":[],"clock":{"time":1e999,"frame":-1}}' })],
  // Found by the fuzzer (long run, seed 1023753901): one document twice answered an internal error.
  ['compose naming one document twice', 'compose', 'documents', 'hostile', () => JSON.stringify({ id: 12, op: 'compose', documents: [{ path: 'scene.esn', text: SCENE }, { path: './scene.esn', text: SCENE }] })],
  ['snapshot over a document of the scene', 'snapshot', 'path', 'hostile', () => '{"id":10,"op":"snapshot","path":"kernels.esn"}'],
];

t.test('the hostile requests of issue 14 and the ones the fuzzer found, once each', async (t) => {
  const dir = sceneFolder();
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  t.teardown(() => s.close());
  const failures: Failure[] = [];
  for (const [what, op, field, kind, make] of ISSUE_REQUESTS) {
    if (avoid(op, field, kind)) {
      t.comment(`not sent (known slow): ${what}`);
      continue;
    }
    const line = make();
    const problem = answerProblem(line, await dispatch(s, line), expectedIdOf(line), [dir]) ?? diskProblem(s, dir);
    if (problem) failures.push({ index: ISSUE_REQUESTS.findIndex((r) => r[0] === what), line, problem: `${what}: ${problem}` });
  }
  report(t, `${ISSUE_REQUESTS.length} requests`, failures);
  t.match(JSON.parse(await dispatch(s, '{"id":"after","op":"status"}')), { id: 'after', ok: { loaded: true } }, 'status answers after them');
});

t.test(`entelechy serve on stdin: ${DOOR_LINES} fuzzed lines, answered in order`, async (t) => {
  const dir = sceneFolder();
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(dir, 'scene.esn'), '--workers', '1'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill();
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  const out = new Lines(child.stdout);
  const send = (line: string) => child.stdin.write(line + '\n');

  // The names to aim at, from the served session itself.
  send('{"id":"g","op":"graph"}');
  send('{"id":"k","op":"kernels"}');
  const graph = JSON.parse((await out.next())!).ok;
  const kernels = JSON.parse((await out.next())!).ok.kernels as { id: string; ports: { name: string; kind: string }[] }[];
  const world: World = {
    nodes: graph.nodes.map((n: { name: string }) => n.name), outputs: graph.outputs.map((o: { name: string }) => o.name),
    params: graph.params.map((p: { name: string }) => p.name), inputs: graph.inputs.map((i: { name: string }) => i.name),
    kernels: kernels.map((k) => k.id), ports: ['result', 'cells'], statePorts: ['cells'], documents: ['scene.esn', 'kernels.esn'],
    texts: { 'scene.esn': SCENE, 'kernels.esn': readFileSync(join(dir, 'kernels.esn'), 'utf8') }, versions: [], folder: dir,
  };
  // quit would end the door: it is sent last.
  const fuzzer = new RequestFuzzer(SEED + 1, world, { door: true, ops: OPERATIONS.map((o) => o.name).filter((o) => o !== 'quit'), avoid });
  const failures: Failure[] = [];
  // One line out, its answer in: answers come in request order, so each is matched to its line.
  for (let i = 0; i < DOOR_LINES; i++) {
    const g = fuzzer.next();
    send(g.line);
    const answer = await out.next();
    if (answer === undefined) {
      failures.push({ index: i, line: g.line, problem: `no answer: the door ended (exit ${await exit}; ${stderr.slice(-500)})` });
      break;
    }
    const problem = answerProblem(g.line, answer, expectedIdOf(g.line), [dir]);
    if (problem) failures.push({ index: i, line: g.line, problem });
    learn(world, g.op, answer);
  }
  report(t, `${DOOR_LINES} lines over stdin`, failures);

  send('{"id":"after","op":"status"}');
  t.match(JSON.parse((await out.next())!), { id: 'after', ok: { loaded: true } }, 'status answers after the run');
  await afterRun(t, async (line) => {
    send(line);
    return (await out.next()) ?? '';
  }, world);
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), SCENE, 'the scene composed back is on disk');
  send('{"id":"q","op":"quit"}');
  t.same(JSON.parse((await out.next())!), { id: 'q', ok: {} }, 'quit answers');
  t.equal(await exit, 0, 'and the process ends cleanly');
  t.notOk(/at .*\.js:\d+/.test(stderr), `no stack on stderr: ${stderr.slice(-500)}`);
});
