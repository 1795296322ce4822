// Bisect: the first point of a document's history (its versions and the generations published over
// the protocol meanwhile, in the order the session saw them: bisect-candidates.ts) at which a
// replay starts failing. Each point tried is replayed as `entelechy test` replays a file
// (replay-session.ts): against a fresh session on a scratch copy of the scene's folder holding that
// version of the document (the others as the running world has them), with the kernels then
// published over the protocol published in it, with this session's grants, workers, tiles (rows per
// tile a frame runs in on the pool: SessionOptions.bandRows) and memory budget. The running world, the scene's folder, the history and the generations are never
// touched. The bad version is replayed first and the good one next (each must be what it is said
// to be); then binary search over what lies between: about log2 N replays for N versions, and a
// version seen twice (a rollback) is replayed once.

import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import { throwIfCancelled } from '../main/cancel.js';
import type { Session } from '../main/session.js';
import { candidatesOf, describe, label } from './bisect-candidates.js';
import { resolveRange, type Words } from './bisect-revisions.js';
import { ProtocolError } from './error.js';
import { parseReplay, ReplayError, type ReplayScript } from './replay.js';
import { replayOnCopy } from './replay-session.js';

/** The most steps a bisect's replay may have: each version tried replays all of them. */
export const BISECT_MAX_STEPS = 200;

export interface BisectRequest {
  /** The document whose versions are searched. */
  path: string;
  good: unknown;
  bad: unknown;
  /** The replay's text, and the file it came from (`test`), if it came from one. */
  replay: string;
  test?: string;
  /** The document's running and on-disk versions (history's words). */
  words: Words;
  signal?: AbortSignal;
}

/** The first failed expectation of a replay: its line in the replay, the request and what differed. */
export interface StepFailure {
  line: number;
  column: number;
  request: string;
  message: string;
  expected?: unknown;
  actual?: unknown;
  answer: string;
}

/** One version tried. */
interface Outcome {
  passed: boolean;
  failure?: StepFailure;
}

/** An answer line in the answer, cut at 300 characters. */
const cut = (line: string) => (line.length > 300 ? `${line.slice(0, 300)}… (${line.length} characters)` : line);

/** The replay's script, checked: it parses, is for this scene, and is not too long. */
function scriptOf(s: Session, req: BisectRequest, called: string): ReplayScript {
  let script: ReplayScript;
  try {
    script = parseReplay(req.replay, req.test ?? 'replay');
  } catch (e) {
    if (e instanceof ReplayError) throw new ProtocolError(e.message, { field: req.test === undefined ? 'replay' : 'test' });
    throw e;
  }
  if (script.scene !== undefined && script.scene !== s.entry)
    throw new ProtocolError(`${called} replays \`${script.scene}\` (its @scene line), but this session's scene is \`${s.entry}\`: bisect a replay of this scene`, { field: 'replay' });
  if (!script.steps.length) throw new ProtocolError(`${called} has no requests (\`> {...}\` lines): nothing would fail`, { field: 'replay' });
  if (script.steps.length > BISECT_MAX_STEPS) throw new ProtocolError(`${called} has ${script.steps.length} requests; bisect replays at most ${BISECT_MAX_STEPS} for each version it tries: keep the steps that show the failure`, { field: 'replay' });
  return script;
}

export async function bisect(s: Session, req: BisectRequest) {
  const called = req.test === undefined ? 'the replay' : `\`${req.test}\``;
  const script = scriptOf(s, req, called);
  if (!s.history.has(req.path)) throw new ProtocolError(`this session has seen no document \`${req.path}\`; its documents: ${[...s.history.keys()].join(', ')}`, { field: 'path' });
  const versions = s.history.get(req.path)!;
  const list = candidatesOf(versions, s.generations);
  if (list.length < 2)
    throw new ProtocolError(`\`${req.path}\` has one version in this session's history: bisect needs a good version and a later bad one. History holds the versions this session has seen (loaded, composed, saved and synced) and the kernels published over the protocol: make the changes in this session, then bisect`, { field: 'good' });
  const range = resolveRange(list, req.good, req.bad, req.path, req.words, { versions: versions.length, generations: s.generations.length });

  // What each version tried is replayed against: the running world's documents with this one's text.
  const base = new Map(s.texts);
  const options = {
    workers: s.pool?.workers ?? 1, bandRows: s.bandRows, grants: s.grants, memory: s.memory.limitBytes, fuse: s.fuse, cacheDir: s.cacheDir,
    ...(s.compiler ? { compiler: s.compiler } : { inline: true }),
  };
  const byKey = new Map<string, Outcome>();
  const runs: (ReturnType<typeof describe> & { passed: boolean; line?: number })[] = [];
  const tryAt = async (i: number): Promise<Outcome> => {
    throwIfCancelled(req.signal);
    const { key, text, published } = list[i]!;
    let outcome = byKey.get(key);
    if (!outcome) {
      const { results } = await replayOnCopy(script, { folder: s.folder.root, entry: s.entry, texts: new Map(base).set(req.path, text), published, session: options, signal: req.signal });
      const failed = results.find((r) => r.failures.length);
      const f = failed?.failures[0];
      outcome = f ? { passed: false, failure: { line: f.line, column: f.column, request: failed!.request, message: f.message, expected: f.expected, actual: f.actual, answer: cut(failed!.answer) } } : { passed: true };
      byKey.set(key, outcome);
      const { at: _at, origin: _origin, ...where } = describe(list[i]!);
      runs.push({ ...where, passed: outcome.passed, ...(outcome.failure ? { line: outcome.failure.line } : {}) } as (typeof runs)[number]);
    }
    return outcome;
  };

  const bad = await tryAt(range.bad);
  if (bad.passed)
    throw new ProtocolError(`the bad version (${label(list[range.bad]!)}) passes ${called}: there is no failure to find. Name as \`bad\` a version at which the replay fails, or make the replay expect what the bad version gets wrong`, { field: 'bad', candidates: runs.length });
  const good = await tryAt(range.good);
  if (!good.passed)
    throw new ProtocolError(
      `the good version (${label(list[range.good]!)}) fails ${called} too, at line ${good.failure!.line}: ${good.failure!.message.replace(/\.$/, '')}. ${
        range.good === 0
          ? 'It is the first point this session has seen, so no earlier one can pass: the replay fails for a reason no version of this document mends (the scene\'s other documents are taken as the running world has them), or it expects what no version made'
          : 'The failure began before it: name an earlier version that passes as `good` (`history` lists them)'
      }`,
      { field: 'good', failure: good.failure, candidates: runs.length },
    );

  // lo passes, hi fails: halve what lies between until they are neighbours.
  let lo = range.good;
  let hi = range.bad;
  let failure = bad.failure!;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const o = await tryAt(mid);
    if (o.passed) lo = mid;
    else {
      hi = mid;
      failure = o.failure!;
    }
  }
  const [from, to] = [list[lo]!, list[hi]!];
  return {
    path: req.path,
    first_bad: describe(to),
    last_good: describe(from),
    // Two generations over one version of the document: its diff was a header with nothing under it.
    diff: from.text === to.text ? '' : createTwoFilesPatch(`${req.path}@${from.version}`, `${req.path}@${to.version}`, from.text, to.text, undefined, undefined, { context: 3, headerOptions: FILE_HEADERS_ONLY }),
    ...(kernelsDiff(from.published, to.published) ?? {}),
    failure,
    candidates: runs.length,
    runs,
  };
}

/** What changed in the protocol's kernels between two points (none: undefined): `kernels_diff`, unified, one file per kernel changed. */
function kernelsDiff(from: ReadonlyMap<string, string>, to: ReadonlyMap<string, string>): { kernels_diff: string } | undefined {
  const ids = [...new Set([...from.keys(), ...to.keys()])].filter((id) => from.get(id) !== to.get(id)).sort();
  if (!ids.length) return undefined;
  const patch = (id: string) =>
    createTwoFilesPatch(from.has(id) ? `(protocol ${id})` : '/dev/null', to.has(id) ? `(protocol ${id})` : '/dev/null', from.get(id) ?? '', to.get(id) ?? '', undefined, undefined, { context: 3, headerOptions: FILE_HEADERS_ONLY });
  return { kernels_diff: ids.map(patch).join('') };
}
