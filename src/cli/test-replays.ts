// `entelechy test [paths]`: each .replay file against a fresh session on a copy of its scene's
// folder (protocol/replay-session.ts), a line per file and, for a failure, each failed
// expectation at its file:line:column. The exit status is what a CI job reads: 0 when every
// replay passed, 1 when one failed or none was found, 130, 143 or 129 when Ctrl-C, SIGTERM or SIGHUP stopped it.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Grant } from '../ir/grants.js';
import { Cancelled, failureStatus, interruptedBySignals } from '../main/cancel.js';
import { parseReplay, plural, replayScene, ReplayError, short, type ReplayFailure } from '../protocol/replay.js';
import { replayOnCopy } from '../protocol/replay-session.js';
import { ToolError } from './tools.js';

/** A request's time limit unless `--timeout` says otherwise: a frame that never ends must not hold a CI job for hours. */
export const DEFAULT_STEP_LIMIT_MS = 60_000;

/** A failed expectation: its file:line:column and message, then expected and actual one above the other. */
function failureReport(file: string, f: ReplayFailure, answer: string): string {
  const lines = [`  ${file}:${f.line}:${f.column}: ${f.message}`];
  if ('expected' in f || 'actual' in f) lines.push(`    expected: ${short(f.expected)}`, `    actual:   ${short(f.actual)}`);
  if (answer) lines.push(`    answer:   ${answer.length > 300 ? `${answer.slice(0, 300)}…` : answer}`);
  return lines.join('\n') + '\n';
}

/** The .replay files a path names: the file itself, or those under the folder (hidden ones and node_modules left out). */
function replayFilesUnder(path: string): string[] {
  if (!existsSync(path)) throw new ToolError(`no such file or folder: ${path} (name .replay files or folders that hold them: entelechy test PATH...)`);
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((d) => !d.name.startsWith('.') && d.name !== 'node_modules')
    .flatMap((d) => (d.isDirectory() ? replayFilesUnder(join(path, d.name)) : d.name.endsWith('.replay') ? [join(path, d.name)] : []))
    .sort();
}

/** One file: its line of the report (and the failures under it); whether it passed. */
async function testFile(file: string, grants: Grant[] | undefined, stepLimitMs: number, signal: AbortSignal): Promise<boolean> {
  if (!file.endsWith('.replay')) throw new ReplayError(`${file} is not a .replay file: entelechy test runs .replay files of requests and expected answers (help replay)`);
  const script = parseReplay(readFileSync(file, 'utf8'), file);
  const entry = replayScene(file, script);
  const { results, sceneRefused } = await replayOnCopy(script, { folder: dirname(file), entry, session: { workers: 1, grants }, signal, stepLimitMs: stepLimitMs || undefined });
  const bad = results.filter((r) => r.failures.length);
  const steps = plural(script.steps.length, 'step');
  if (!bad.length) {
    process.stdout.write(`ok   ${file} (${steps})\n`);
    return true;
  }
  process.stdout.write(`FAIL ${file} (${results.length - bad.length} of ${steps} passed)\n`);
  // Every step after a scene that does not check fails: say the cause first, as `check` says it.
  if (sceneRefused) process.stdout.write(`  ${join(dirname(file), entry)} did not check when the session opened, so the steps ran on an empty world: ${sceneRefused} (entelechy check shows every error)\n`);
  for (const r of bad) for (const f of r.failures) process.stdout.write(failureReport(file, f, r.answer));
  return false;
}

/** Replay each file against a fresh session on a copy of its scene's folder; the exit status. */
export async function replayFiles(paths: string[], grants?: Grant[], stepLimitMs = DEFAULT_STEP_LIMIT_MS): Promise<number> {
  const files = paths.flatMap(replayFilesUnder);
  if (!files.length) throw new ToolError(`no .replay files in ${paths.join(', ')}: entelechy test runs .replay files (help replay); name one, or a folder that holds some`);
  const interrupted = interruptedBySignals();
  let passed = 0;
  let failed = 0;
  try {
    for (const file of files) {
      try {
        if (await testFile(file, grants, stepLimitMs, interrupted.signal)) passed++;
        else failed++;
      } catch (e) {
        // Ctrl-C or SIGTERM: the file's scratch copy is removed (replayOnCopy), and no file after it starts.
        if (e instanceof Cancelled && interrupted.signal.aborted) {
          process.stdout.write(`${e.message}: ${file} stopped, its scratch copy removed; ${passed} passed, ${failed} failed, 1 stopped, ${files.length - passed - failed - 1} not run\n`);
          return failureStatus();
        }
        failed++;
        process.stdout.write(`FAIL ${file}\n  ${(e as Error).message}\n`);
      }
    }
  } finally {
    interrupted.dispose();
  }
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  return failed ? 1 : 0;
}
