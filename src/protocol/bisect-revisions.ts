// What bisect's `good` and `bad` name: a version of one document among those `history` lists.
//   - a position in history's `versions`, counted from 0 (the version the session loaded): one to
//     three digits (`"0"`, `"12"`; four or more read as a digest);
//   - a version digest (16 hex characters), or its first 4 or more when they begin one digest only;
//   - `running` (the version the running world was built from) or `disk` (the one the file holds
//     now): history's own words for two of its versions.
// A digest can stand at several positions (a rollback composes an old text again): `bad` names
// its last, `good` its last before `bad`.

import type { DocumentVersion } from '../main/session.js';
import { ProtocolError } from './error.js';

export const REVISION_HELP = 'a position in `history`\'s versions ("0" = the first), a version digest from it (or its first 4 or more characters), `running` or `disk`';

/** Where each word points: the running and on-disk versions' digests (null: none). */
export interface Words {
  running: string | null;
  disk: string | null;
}

/** The positions `rev` names in `list` (several when its digest was seen several times). */
function positionsOf(list: readonly DocumentVersion[], rev: unknown, field: string, path: string, words: Words): number[] {
  const bad = (message: string, more: Record<string, unknown> = {}) =>
    new ProtocolError(`${message}; \`${field}\` is ${REVISION_HELP} (\`history\` lists them)`, { field, ...more });
  if (typeof rev !== 'string') throw bad(`\`${field}\` must be a string; got ${JSON.stringify(rev)}`);
  if (/^\d{1,3}$/.test(rev)) {
    const n = Number(rev);
    if (n >= list.length) throw bad(`\`${field}\` is position ${rev}, but \`history\` lists ${list.length} version${list.length === 1 ? '' : 's'} of \`${path}\` (positions 0 to ${list.length - 1})`);
    return [n];
  }
  if (rev === 'running' || rev === 'disk') {
    const digest = words[rev];
    if (digest === null) throw bad(`\`${path}\` has no ${rev} version (${rev === 'running' ? 'the running world was built without it' : 'no such file on disk'})`);
    const at = list.flatMap((v, i) => (v.version === digest ? [i] : []));
    if (!at.length) throw bad(`the ${rev} version of \`${path}\` (${digest}) is not among those this session has seen${rev === 'disk' ? ': `sync` picks up a saved edit' : ''}`);
    return at;
  }
  const prefix = rev.toLowerCase();
  if (!/^[0-9a-f]{4,16}$/.test(prefix)) throw bad(`\`${rev}\` names no version`);
  const at = list.flatMap((v, i) => (v.version.startsWith(prefix) ? [i] : []));
  const digests = [...new Set(at.map((i) => list[i]!.version))];
  if (!digests.length) throw bad(`no version of \`${path}\` in this session's history begins \`${rev}\``);
  if (digests.length > 1) throw bad(`\`${rev}\` begins ${digests.length} versions (${digests.join(', ')}): give more of the digest`, { versions: digests });
  return at;
}

/** The positions of `good` and `bad` in `list`, good before bad. */
export function resolveRange(list: readonly DocumentVersion[], good: unknown, bad: unknown, path: string, words: Words): { good: number; bad: number } {
  const b = Math.max(...positionsOf(list, bad, 'bad', path, words));
  const goods = positionsOf(list, good, 'good', path, words);
  const before = goods.filter((i) => i < b);
  if (!before.length) {
    const g = Math.max(...goods);
    const where = g === b ? 'is the bad version itself' : `comes after the bad one (position ${b})`;
    throw new ProtocolError(`the good version (position ${g}) ${where}: \`good\` names a version before the failure began, \`bad\` a later one at which the replay fails (\`history\` lists them in order)`, { field: 'good' });
  }
  return { good: Math.max(...before), bad: b };
}
