// `.replay` files: requests and the answers expected of them — tests an agent can write for its
// own changes, run by `entelechy test` against a fresh session. An expectation is a partial match
// (numbers within a tolerance if given), or a comparison with the answer of a named earlier step;
// a failed one names its own line and the column of what failed, with expected and actual.

import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PathError, resolveUnder } from '../main/documents.js';
import { UserError } from '../main/user-error.js';
import { jsonProblem } from './envelope.js';
import { jsonOffsets } from './json-offsets.js';
import { firstDifference, getPath, parsePath, type Difference } from './replay-compare.js';

export const REPLAY_LINES = [
  { name: '>', syntax: '> {"op": "status"}', summary: 'a request, one JSON object (also written →); `> NAME: {...}` names its answer, for a later `< equals NAME` or `< differs NAME`; a request the session refuses fails the replay unless a `<` line follows it that expects the refusal (`< {"error": {}}`; `< {}` matches any answer but not a refusal)' },
  { name: '<', syntax: '< {"ok": {"loaded": true}}', summary: 'the answer expected for the request before it: a partial match (every key given must match; an array matches element by element and must be as long; `{}` matches any object); a request may have several `<` lines' },
  { name: '< within', syntax: '< within 0.001 {"ok": {"values": [{}, {"value": [0.48, 0.77, 0.87, 1]}]}}', summary: 'a partial match in which each number may differ from the one given by up to the tolerance' },
  { name: '< equals', syntax: '< equals cold ok.values[1].value within 0.001', summary: 'the answer (at a path such as ok.data or ok.values[1].value; without one, the whole answer but its id) equals the one of the earlier step named cold, numbers within the tolerance if one is given' },
  { name: '< differs', syntax: '< differs cold ok.data', summary: 'the answer (at the path) differs from the named earlier step\'s: some value does, a number by more than the tolerance if one is given' },
  { name: '#', syntax: '# a comment', summary: 'a comment (also //); blank lines are ignored too' },
  { name: '@scene', syntax: '@scene scene.esn', summary: 'the scene to replay against, a file beside the replay or under its folder (default: scene.esn beside it); at most one @scene line, and the file must be there' },
] as const;

/** One `<` line: a partial match, or a comparison with a named earlier step's answer. */
export type Expectation = { line: number; column: number; tolerance: number } & (
  | { kind: 'match'; expected: unknown; offsets: Map<string, number> }
  | { kind: 'equals' | 'differs'; step: string; stepLine: number; path: string }
);

export interface ReplayStep {
  line: number;
  request: string;
  name?: string;
  expects: Expectation[];
}

export interface ReplayScript {
  scene?: string;
  /** The line of the `@scene` line, when there is one. */
  sceneLine?: number;
  steps: ReplayStep[];
}

export class ReplayError extends UserError {
  override name = 'ReplayError';
}

const NAMED = /^([A-Za-z_][\w-]*):\s*/;
const COMPARE = /^(equals|differs)\s+([A-Za-z_][\w-]*)(?:\s+(?!within\b)(\S+))?(?:\s+within\s+(\S+))?\s*$/;

export function parseReplay(text: string, path = 'replay'): ReplayScript {
  const steps: ReplayStep[] = [];
  const named = new Map<string, ReplayStep>();
  let scene: string | undefined;
  let sceneLine: number | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    const indent = raw.length - raw.trimStart().length;
    const fail = (column: number, message: string): never => {
      throw new ReplayError(`${path}:${i + 1}:${column}: ${message}`);
    };
    if (!line || line.startsWith('#') || line.startsWith('//')) return;
    const sceneName = /^@scene(?:\s+(.*))?$/.exec(line);
    if (sceneName) {
      // Two would leave one silently unused: say so at the second.
      if (sceneLine !== undefined) fail(indent + 1, `a second @scene line (the first is at line ${sceneLine}): a replay runs against one scene; keep one, or put the other's steps in a replay of their own`);
      scene = sceneName[1]?.trim();
      if (!scene) fail(indent + 1, '`@scene` names the scene file to replay against, such as `@scene scene.esn`');
      sceneLine = i + 1;
      return;
    }
    const mark = line[0];
    let body = line.slice(1).trimStart();
    let column = indent + 1 + (line.length - body.length); // where body starts, from 1
    if (mark === '>' || mark === '→') {
      const m = NAMED.exec(body);
      const step: ReplayStep = { line: i + 1, request: m ? body.slice(m[0].length) : body, expects: [] };
      // A request that is not JSON is a mistake in the file: name it here, at the file's line and column.
      const problem = jsonProblem(step.request);
      if (problem) fail(column + (m ? m[0].length : 0) + problem.position, `the request is not JSON (${problem.reason}): write one JSON object after \`>\`, such as \`> {"op": "status"}\``);
      if (opOf(step.request) === 'quit') fail(column + (m ? m[0].length : 0), "`quit` ends a connection, and a replay's session ends after its last step anyway: leave this line out");
      if (m) {
        if (named.has(m[1]!)) fail(column, `a step named \`${m[1]}\` already is, at line ${named.get(m[1]!)!.line}: give each its own name`);
        step.name = m[1];
        named.set(m[1]!, step);
      }
      steps.push(step);
      return;
    }
    if (mark !== '<' && mark !== '←') fail(indent + 1, 'a line starts with `>` (a request), `<` (the expected answer), `#` (a comment) or `@scene`');
    const last = steps[steps.length - 1];
    if (!last) fail(indent + 1, 'an expected answer (<) before any request (>)');
    let tolerance = 0;
    const within = /^within\s+(\S+)\s+/.exec(body);
    if (within) {
      tolerance = toleranceOf(within[1]!, () => fail(column + 7, `\`within\` takes a tolerance, a number of at least 0 such as 0.001; got \`${within[1]}\``));
      column += within[0].length;
      body = body.slice(within[0].length);
    }
    const compare = COMPARE.exec(body);
    if (!within && /^(equals|differs)\b/.test(body)) {
      if (!compare) fail(column, '`< equals` and `< differs` take a step name, a path if you like and a tolerance if you like: `< equals cold ok.values[1].value within 0.001`');
      const step = named.get(compare![2]!);
      if (!step) fail(column + compare![1]!.length + 1, `no earlier step is named \`${compare![2]}\`: name its request \`> ${compare![2]}: {...}\``);
      const where = compare![3] ?? '';
      if (where && !parsePath(where)) fail(column + body.indexOf(where), `\`${where}\` is not a path: members and indexes such as ok.values[1].value`);
      const tol = compare![4] === undefined ? 0 : toleranceOf(compare![4], () => fail(column + body.lastIndexOf(compare![4]!), `\`within\` takes a tolerance, a number of at least 0 such as 0.001; got \`${compare![4]}\``));
      last!.expects.push({ kind: compare![1] as 'equals' | 'differs', line: i + 1, column, tolerance: tol, step: step!.name!, stepLine: step!.line, path: where });
      return;
    }
    let expected: unknown;
    try {
      expected = JSON.parse(body);
    } catch (e) {
      fail(column, `the expected answer is not JSON (${(e as Error).message}); or compare with an earlier step: \`< equals NAME [PATH]\`, \`< differs NAME [PATH]\``);
    }
    last!.expects.push({ kind: 'match', line: i + 1, column, tolerance, expected, offsets: jsonOffsets(body) });
  });
  return { scene, sceneLine, steps };
}

/** The `op` of a request that parses (jsonProblem said it does), if it names one. */
function opOf(request: string): unknown {
  const r = JSON.parse(request) as unknown;
  return r && typeof r === 'object' ? (r as { op?: unknown }).op : undefined;
}

function toleranceOf(text: string, fail: () => never): number {
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? n : fail();
}

/** A failed expectation: where (file line and column), what, and the two values side by side. */
export interface ReplayFailure {
  line: number;
  column: number;
  message: string;
  expected?: unknown;
  actual?: unknown;
}

export interface ReplayResult {
  line: number;
  request: string;
  answer: string;
  failures: ReplayFailure[];
}

/** Whether an answer meets one expectation (the answers of the named steps so far in `answers`). */
function check(e: Expectation, answer: unknown, answers: Map<string, unknown>): ReplayFailure | undefined {
  if (e.kind === 'match') {
    const d = firstDifference(e.expected, answer, '', { partial: true, tolerance: e.tolerance });
    return d && { line: e.line, column: e.column + (e.offsets.get(d.where) ?? 0), message: describe(d), expected: d.expected, actual: d.actual };
  }
  const path = e.path ? parsePath(e.path)! : [];
  const strip = (a: unknown) => (e.path || !a || typeof a !== 'object' ? a : Object.fromEntries(Object.entries(a).filter(([k]) => k !== 'id')));
  const mine = strip(getPath(answer, path));
  const theirs = strip(getPath(answers.get(e.step), path));
  const at = e.path || 'the answer';
  // Nothing to set one beside the other: the report says which answer lacks the path (this one is printed below it).
  if (theirs === undefined) return { line: e.line, column: e.column, message: `step \`${e.step}\` (line ${e.stepLine}) has no ${at}; its answer: ${short(answers.get(e.step))}` };
  if (mine === undefined) return { line: e.line, column: e.column, message: `this answer has no ${at}` };
  const d = firstDifference(theirs, mine, e.path, { partial: false, tolerance: e.tolerance });
  if (e.kind === 'equals' && d) return { line: e.line, column: e.column, message: `${d.where || 'the answer'} differs from step \`${e.step}\`'s (line ${e.stepLine}): ${d.problem}`, expected: d.expected, actual: d.actual };
  if (e.kind === 'differs' && !d)
    return { line: e.line, column: e.column, message: `${at} is the same as step \`${e.step}\`'s (line ${e.stepLine})${e.tolerance ? `, every number within ${e.tolerance}` : ''}; expected it to differ`, expected: `not ${short(theirs)}`, actual: mine };
  return undefined;
}

function describe(d: Difference): string {
  return `${d.where || 'the answer'}: ${d.problem}`;
}

/** A value in a line of a report. */
export function short(v: unknown, most = 200): string {
  // A `differs` expectation is already shown ("not " and the value, shortened): cut it again and
  // the count would be of the shortened text.
  if (typeof v === 'string' && v.startsWith('not ')) return v;
  const s = JSON.stringify(v) ?? 'nothing';
  return s.length > most ? `${s.slice(0, most)}… (${s.length} characters)` : s;
}

/** Thrown by a replay's request function to stop the replay at that step (it ran past the test's time limit): the step fails with the message, later steps do not run. */
export class ReplayStepStopped extends UserError {
  override name = 'ReplayStepStopped';
}

/**
 * Run a script's steps through a request function; every step runs, failures are collected. A
 * refused request that no `<` line follows fails: a setup step the session refused (a misspelt
 * param) would otherwise leave the test checking something else, and passing.
 */
export async function runReplay(script: ReplayScript, request: (line: string) => Promise<string>): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  const answers = new Map<string, unknown>();
  for (const [i, step] of script.steps.entries()) {
    let answer: string;
    try {
      answer = await request(step.request);
    } catch (e) {
      if (!(e instanceof ReplayStepStopped)) throw e;
      const left = script.steps.length - i - 1;
      const message = `${e.message}${left ? `; the replay stopped here (${plural(left, 'later step')} not run)` : ''}`;
      results.push({ line: step.line, request: step.request, answer: '', failures: [{ line: step.line, column: 1, message }] });
      break;
    }
    const parsed = JSON.parse(answer) as { error?: { message?: string } };
    if (step.name) answers.set(step.name, parsed);
    const failures = step.expects.map((e) => check(e, parsed, answers)).filter((f): f is ReplayFailure => f !== undefined);
    // Refused where no `<` line expects a refusal: `< {}` (any answer) passed a setup step the session refused.
    if (parsed.error && failures.length === 0 && !step.expects.some(expectsRefusal)) {
      const why = step.expects.length ? `; its \`<\` line${step.expects.length > 1 ? 's' : ''} expect${step.expects.length > 1 ? '' : 's'} no refusal (\`{}\` matches any answer, a refusal too)` : '';
      failures.push({ line: step.line, column: 1, message: `the request was refused: ${String(parsed.error.message).replace(/\.$/, '')}${why}; if the test means it to be, say so with \`< {"error": {}}\` on the next line` });
    }
    results.push({ line: step.line, request: step.request, answer, failures });
  }
  return results;
}

/** Whether an expectation is of a refusal: a match naming `error`, or a comparison of an error's member. */
function expectsRefusal(e: Expectation): boolean {
  if (e.kind === 'match') return typeof e.expected === 'object' && e.expected !== null && 'error' in e.expected;
  return e.path.split('.')[0] === 'error';
}

/** `1 step`, `2 steps`. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * The scene a replay runs against, under its folder. A missing one would open an empty session
 * (as `serve` does, for an agent to compose) in which the replay passes while checking no scene.
 */
export function replayScene(
  file: string,
  script: ReplayScript,
  exists: (path: string) => boolean = (path) => existsSync(path) && statSync(path).isFile(),
  /** Where the replay is on disk, when `file` names it otherwise (compose names it under the scene's folder, before it is written). */
  at = file,
): string {
  if (!script.steps.length) throw new ReplayError(`${file}: the replay has no requests (\`> {...}\` lines), so it checks nothing: add a request and the answer you expect (\`< {...}\`)`);
  const folder = dirname(file);
  const entry = script.scene ?? 'scene.esn';
  const where = script.sceneLine === undefined ? `${file}` : `${file}:${script.sceneLine}`;
  let path: string;
  try {
    path = resolveUnder(dirname(at), entry);
  } catch (e) {
    if (e instanceof PathError) throw new ReplayError(`${where}: @scene names \`${entry}\`, which is not under the replay's folder (${folder}): a replay runs against a scene beside it or under its folder, so that its copy holds what the scene reads`);
    // A folder a compose is about to make: the scene there is one it writes, or none.
    if (existsSync(dirname(at))) throw e;
    path = join(dirname(at), entry);
  }
  if (exists(path)) return entry;
  throw new ReplayError(script.sceneLine === undefined
    ? `${where}: no scene.esn beside the replay, and no @scene line names another: add \`@scene FILE.esn\` naming the scene to replay against, or move the replay beside its scene`
    : `${where}: @scene names \`${entry}\`, but there is no such file beside the replay (in ${folder === '.' ? 'its folder' : folder}): name the scene file beside the replay (or under its folder) to replay against`);
}
