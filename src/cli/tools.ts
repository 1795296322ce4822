// Small CLI tools beside the session: `help`, `test` (replay files), grant options.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { ALL_GRANTS, isGrant, type Grant } from '../ir/grants.js';
import { ProtocolError } from '../protocol/envelope.js';
import { helpEntry } from '../protocol/help.js';
import { parseReplay, ReplayError, short, type ReplayFailure, type ReplayScript } from '../protocol/replay.js';
import { PathError, resolveUnder } from '../main/documents.js';
import { UserError } from '../main/user-error.js';
import { replayOnCopy } from '../protocol/replay-session.js';

export class ToolError extends UserError {
  override name = 'ToolError';
}

export function sessionGrants(grant?: string[], deny?: string[]): Grant[] {
  for (const g of [...(grant ?? []), ...(deny ?? [])]) {
    if (!isGrant(g)) throw new ToolError(`\`${g}\` is not a grant; the grants are ${ALL_GRANTS.join(', ')}`);
  }
  // `--grant` alone (no names) granted everything: the opposite of what it asks for.
  if (grant !== undefined && grant.length === 0) throw new ToolError(`--grant names no grant: give the ones to grant (of ${ALL_GRANTS.join(', ')}), or leave --grant out to grant them all`);
  const base = grant?.length ? (grant as Grant[]) : ALL_GRANTS;
  return base.filter((g) => !(deny ?? []).includes(g));
}

/** `entelechy help [NAME] [--json] [--all]`: the quick start, one entry, or (--all) every name. */
export function printHelp(name: string | undefined, json: boolean, all = false): number {
  try {
    const entry = helpEntry(name);
    if (json) process.stdout.write(JSON.stringify(entry) + '\n');
    else if (entry.quickstart && !all) process.stdout.write((entry.quickstart as string[]).join('\n') + '\n\n`entelechy help --all` lists every name help knows.\n');
    else process.stdout.write(formatHelp(entry) + '\n');
    return 0;
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
    if (json) process.stdout.write(JSON.stringify({ error: { message: e.message, ...e.data } }) + '\n');
    else process.stderr.write(`entelechy: ${e.message.replace('{"op": "help"} lists every name', '`entelechy help --all` lists every name')}\n`);
    return 1;
  }
}

function formatHelp(entry: Record<string, unknown>): string {
  if (entry.index) {
    return Object.entries(entry.index as Record<string, string[]>).map(([kind, names]) => `${kind}:\n  ${names.join(', ')}`).join('\n') + '\n\n`entelechy help NAME` describes one (--json: as the protocol answers it)';
  }
  const list = (entry.entries as Record<string, unknown>[] | undefined) ?? [entry];
  return list
    .map((e) => {
      const lines = [`${e.name} (${e.kind})${e.signature ? `: ${e.signature}` : ''}${e.syntax ? `\n  ${e.syntax}` : ''}`, `  ${e.summary ?? ''}`];
      if (Array.isArray(e.fields) && e.fields.length) {
        for (const f of e.fields as { name: string; type: string; required?: boolean; meaning: string }[]) lines.push(`  ${f.name}${f.required ? '' : '?'}: ${f.type} — ${f.meaning}`);
      }
      if (Array.isArray(e.not_together)) lines.push(`  not together: ${(e.not_together as string[][]).map(([a, b]) => `${a} and ${b}`).join('; ')}`);
      if (Array.isArray(e.takes)) for (const f of e.takes as { op: string; type: string; meaning: string }[]) lines.push(`  ${f.op}: ${f.type} — ${f.meaning}`);
      if (e.answer) lines.push(`  answers: ${e.answer}`);
      if (Array.isArray(e.answered_by) && e.answered_by.length) lines.push(`  in the answer of: ${e.answered_by.join(', ')}`);
      if (e.within) lines.push(`  within: ${e.within}`);
      if (Array.isArray(e.names)) lines.push(`  ${e.names.join(', ')}`);
      if (Array.isArray(e.aliases)) lines.push(`  also: ${e.aliases.join(', ')}`);
      if (e.doc) lines.push(`  more: ${e.doc}`);
      if (e.open) lines.push(`  open: ${e.open}`);
      if (e.example) lines.push(`  e.g. ${e.example}`);
      return lines.join('\n');
    })
    .join('\n\n');
}

/** A failed expectation: its file:line:column and message, then expected and actual one above the other. */
function failureReport(file: string, f: ReplayFailure, answer: string): string {
  const lines = [`  ${file}:${f.line}:${f.column}: ${f.message}`];
  if ('expected' in f || 'actual' in f) lines.push(`    expected: ${short(f.expected)}`, `    actual:   ${short(f.actual)}`);
  lines.push(`    answer:   ${answer.length > 300 ? `${answer.slice(0, 300)}…` : answer}`);
  return lines.join('\n') + '\n';
}

function replayFilesUnder(path: string): string[] {
  if (!existsSync(path)) throw new ToolError(`no such file or folder: ${path} (name .replay files or folders that hold them: entelechy test PATH...)`);
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((d) => !d.name.startsWith('.') && d.name !== 'node_modules')
    .flatMap((d) => (d.isDirectory() ? replayFilesUnder(join(path, d.name)) : d.name.endsWith('.replay') ? [join(path, d.name)] : []))
    .sort();
}

/**
 * The scene a replay runs against, under its folder. A missing one would open an empty session
 * (as `serve` does, for an agent to compose) in which the replay passes while checking no scene.
 */
function sceneOf(file: string, script: ReplayScript): string {
  if (!script.steps.length) throw new ReplayError(`${file}: the replay has no requests (\`> {...}\` lines), so it checks nothing: add a request and the answer you expect (\`< {...}\`)`);
  const folder = dirname(file);
  const entry = script.scene ?? 'scene.esn';
  const where = script.sceneLine === undefined ? `${file}` : `${file}:${script.sceneLine}`;
  let path: string;
  try {
    path = resolveUnder(folder, entry);
  } catch (e) {
    if (e instanceof PathError) throw new ReplayError(`${where}: @scene ${e.message}`);
    throw e;
  }
  if (existsSync(path) && statSync(path).isFile()) return entry;
  throw new ReplayError(script.sceneLine === undefined
    ? `${where}: no scene.esn beside the replay, and no @scene line names another: add \`@scene FILE.esn\` naming the scene to replay against, or move the replay beside its scene`
    : `${where}: @scene names \`${entry}\`, but there is no such file beside the replay (in ${folder}): name the scene file beside the replay (or under its folder) to replay against`);
}

/** Replay each file against a fresh session on a copy of its scene's folder. */
export async function replayFiles(paths: string[], grants?: Grant[]): Promise<number> {
  const files = paths.flatMap(replayFilesUnder);
  let failed = 0;
  for (const file of files) {
    try {
      const script = parseReplay(readFileSync(file, 'utf8'), file);
      const results = await replayOnCopy(script, { folder: dirname(file), entry: sceneOf(file, script), session: { workers: 1, grants } });
      const bad = results.filter((r) => r.failures.length);
      if (bad.length) {
        failed++;
        process.stdout.write(`FAIL ${file} (${results.length - bad.length}/${results.length} steps)\n`);
        for (const r of bad) for (const f of r.failures) process.stdout.write(failureReport(file, f, r.answer));
      } else {
        process.stdout.write(`ok   ${file} (${results.length} steps)\n`);
      }
    } catch (e) {
      failed++;
      const message = e instanceof ReplayError ? e.message : `${relative('.', file)}: ${(e as Error).message}`;
      process.stdout.write(`FAIL ${basename(file)}: ${message}\n`);
    }
  }
  process.stdout.write(`${files.length - failed} passed, ${failed} failed\n`);
  return failed ? 1 : 0;
}
