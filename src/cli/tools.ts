// Small CLI tools beside the session: `help` and grant options (`test` is test-replays.ts).

import { ALL_GRANTS, isGrant, type Grant } from '../ir/grants.js';
import { ProtocolError } from '../protocol/envelope.js';
import { helpEntry } from '../protocol/help.js';
import { UserError } from '../main/user-error.js';

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
