// A replay against a fresh session on a scratch copy of a scene's folder: what `entelechy test`
// runs for each file, and what bisect runs for each version it tries (with that version's
// documents written into the copy). The folder itself is never written: whatever the replay
// composes, writes or snapshots lands in the copy, which is removed after.

import { cpSync, lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cancelledBy, throwIfCancelled } from '../main/cancel.js';
import { resolveUnder } from '../main/documents.js';
import { CheckFailed } from '../main/refusals.js';
import { Session, type SessionOptions } from '../main/session.js';
import { dispatch } from './dispatcher.js';
import { ReplayStepStopped, runReplay, type ReplayResult, type ReplayScript } from './replay.js';
import { makeFolders } from '../main/files.js';

export interface ReplayCopy {
  /** The folder to copy (the scene's). */
  folder: string;
  /** The scene document under it that the session opens. */
  entry: string;
  /** Documents written into the copy before the session opens: path under the folder → text. */
  texts?: ReadonlyMap<string, string>;
  /** Kernels published over the protocol in the session once it opens, by id (bisect's point of the history). */
  published?: ReadonlyMap<string, string>;
  session: SessionOptions;
  /** Stops the replay: between steps, and inside a step's evaluation (as a closed connection stops it). */
  signal?: AbortSignal;
  /** Milliseconds a request may take before the replay stops there and that step fails (entelechy test --timeout); none if absent. */
  stepLimitMs?: number;
}

/** A replay's answers, and why the scene did not check when the session opened (null if it did). */
export interface ReplayRun {
  results: ReplayResult[];
  sceneRefused: string | null;
}

/** How long a request stopped for its time limit may take to answer before the replay gives up on it. */
const STOP_GRACE_MS = 5000;

/** Files, folders and links are copied; a FIFO or socket beside the scene (an agent's pipes) is not the scene's. */
function isCopied(path: string): boolean {
  const s = lstatSync(path);
  return s.isFile() || s.isDirectory() || s.isSymbolicLink();
}

/** Replay `script` against a fresh session on a copy of `copy.folder`; the copy is removed after. */
export async function replayOnCopy(script: ReplayScript, copy: ReplayCopy): Promise<ReplayRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'entelechy-replay-'));
  let session: Session | undefined;
  try {
    cpSync(copy.folder, scratch, { recursive: true, filter: isCopied });
    for (const [path, text] of copy.texts ?? []) {
      const file = resolveUnder(scratch, path);
      makeFolders(dirname(file));
      // A link copied as a link would be written through, into the folder it points at: replace it.
      rmSync(file, { force: true });
      writeFileSync(file, text);
    }
    throwIfCancelled(copy.signal);
    session = await Session.open(join(scratch, copy.entry), copy.session);
    const s = session;
    const sceneRefused = s.refused?.message ?? null;
    if (copy.published?.size) await publishAll(s, copy.published);
    // The signal, or a request's time limit, reaches a step's evaluation as a lost connection would: it stops at once.
    const stop = new AbortController();
    const onSignal = () => stop.abort(copy.signal!.reason);
    copy.signal?.addEventListener('abort', onSignal, { once: true });
    const conn = { kind: 'replay', id: 0, lost: stop.signal };
    try {
      const results = await runReplay(script, async (line) => {
        throwIfCancelled(copy.signal);
        const limit = copy.stepLimitMs;
        const timer = limit ? setTimeout(() => stop.abort(new ReplayStepStopped(`the request took longer than the test's limit of ${limit} ms a request, and was stopped: give it a \`deadline\` of its own, or run \`entelechy test --timeout MS\``)), limit) : undefined;
        try {
          const answer = await Promise.race([dispatch(s, line, conn), givenUp(stop.signal)]);
          if (stop.signal.reason instanceof ReplayStepStopped) throw stop.signal.reason;
          throwIfCancelled(copy.signal);
          return answer;
        } finally {
          clearTimeout(timer);
        }
      });
      return { results, sceneRefused };
    } finally {
      copy.signal?.removeEventListener('abort', onSignal);
    }
  } finally {
    await session?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Never resolves; rejects with the signal's reason STOP_GRACE_MS after it aborts (a request that did not stop in that time is left behind). */
function givenUp(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const later = () => setTimeout(() => reject(signal.reason instanceof ReplayStepStopped ? signal.reason : cancelledBy(signal)), STOP_GRACE_MS).unref();
    if (signal.aborted) later();
    else signal.addEventListener('abort', later, { once: true });
  });
}

/**
 * Publish the kernels as `publish` would, in one change. Kernels that do not check with the
 * documents leave the session as it opened (refused, as a refused publish leaves it): the replay
 * then tells what runs, as it would have in the session that published them.
 */
async function publishAll(s: Session, published: ReadonlyMap<string, string>): Promise<void> {
  await s.change(async () => {
    try {
      await s.commit({ reason: 'publish', texts: s.texts, published, refusal: 'the kernels published at this point do not check with the document' });
    } catch (e) {
      if (!(e instanceof CheckFailed)) throw e;
      s.refused = { message: e.message, at: new Date().toISOString() };
    }
  });
}
