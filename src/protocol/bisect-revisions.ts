// What bisect's `good` and `bad` name: a point of one document's history (bisect-candidates.ts),
// as `history` answers them.
//   - a document version: a position in history's `versions`, counted from 0 (the version the
//     session loaded): one to three digits (`"0"`, `"12"`; four or more read as a digest); a
//     version digest (16 hex characters), or its first 4 or more when they begin one digest only;
//     `disk` (the version the file holds now);
//   - a published generation: `KERNEL gN` (the kernel's generation N, published over the protocol:
//     `publish` answers it, history's `generations` list it), or `pI`, the position in history's
//     `generations` (a retire or restore names no single generation);
//   - `running`: the point the running world was built from (its document version and protocol
//     kernels).
// A document version can stand at several points (a rollback composes an old text again; a
// generation published over it runs that text too): it names the points it was composed, loaded
// or saved at, not the generations over it. `bad` names its last, `good` its last before `bad`.

import { ProtocolError } from './error.js';
import { publishedKey, type Candidate } from './bisect-candidates.js';

export const REVISION_HELP = 'a position in `history`\'s versions ("0" = the first), a version digest from it (or its first 4 or more characters), `running`, `disk`, or a generation published over the protocol: `KERNEL gN` or `pI` (history\'s `generations`)';

/** Where the running world stands: its document version and protocol kernels; and the file's version (null: none). */
export interface Words {
  running: string | null;
  disk: string | null;
  published: ReadonlyMap<string, string>;
}

/** The indices in `list` of the points `rev` names, for `path` with `versions` document versions and `generations` published ones. */
function pointsOf(list: readonly Candidate[], rev: unknown, field: string, path: string, words: Words, counts: { versions: number; generations: number }): number[] {
  const bad = (message: string, more: Record<string, unknown> = {}) =>
    new ProtocolError(`${message}; \`${field}\` is ${REVISION_HELP} (\`history\` lists them)`, { field, ...more });
  if (typeof rev !== 'string') throw bad(`\`${field}\` must be a string; got ${JSON.stringify(rev)}`);
  const where = (test: (c: Candidate) => boolean) => list.flatMap((c, i) => (test(c) ? [i] : []));
  if (/^\d{1,3}$/.test(rev)) {
    const n = Number(rev);
    if (n >= counts.versions) throw bad(`\`${field}\` is position ${rev}, but \`history\` lists ${counts.versions} version${counts.versions === 1 ? '' : 's'} of \`${path}\` (positions 0 to ${counts.versions - 1})`);
    return where((c) => c.kind === 'document' && c.position === n);
  }
  const generation = /^p(\d{1,4})$/.exec(rev);
  if (generation) {
    const n = Number(generation[1]);
    if (n >= counts.generations) throw bad(`\`${field}\` is generation p${n}, but \`history\` lists ${counts.generations ? `${counts.generations} (p0 to p${counts.generations - 1})` : 'none: no kernel was published over the protocol in this session'}`);
    const at = where((c) => c.kind === 'generation' && c.index === n);
    if (!at.length) throw bad(`generation p${n} came before the session saw \`${path}\`: name a later one`);
    return at;
  }
  const kernel = /^(\S+)\s+g(\d+)$/.exec(rev);
  if (kernel) {
    const [, id, g] = kernel;
    const at = where((c) => c.kind === 'generation' && c.kernels.some((k) => k.kernel === id && k.generation === Number(g)));
    if (at.length) return at;
    const held = list.flatMap((c) => (c.kind === 'generation' ? c.kernels.filter((k) => k.kernel === id && k.generation !== null).map((k) => `g${k.generation}`) : []));
    throw bad(`no generation ${id} g${g} was published over the protocol while the session saw \`${path}\`${held.length ? ` (of ${id}: ${[...new Set(held)].join(', ')})` : ''}; a generation a document's own change made is that document's version: name it by position`);
  }
  if (rev === 'running') {
    if (words.running === null) throw bad(`\`${path}\` has no running version (the running world was built without it)`);
    const key = `${words.running}:${publishedKey(words.published)}`;
    const at = where((c) => c.key === key);
    if (!at.length) throw bad(`the running version of \`${path}\` (${words.running}) is not among those this session has seen`);
    return at;
  }
  if (rev === 'disk') {
    if (words.disk === null) throw bad(`\`${path}\` has no disk version (no such file on disk)`);
    const at = where((c) => c.kind === 'document' && c.version === words.disk);
    if (!at.length) throw bad(`the disk version of \`${path}\` (${words.disk}) is not among those this session has seen: \`sync\` picks up a saved edit`);
    return at;
  }
  const prefix = rev.toLowerCase();
  if (!/^[0-9a-f]{4,16}$/.test(prefix)) throw bad(`\`${rev}\` names no version`);
  const at = where((c) => c.kind === 'document' && c.version.startsWith(prefix));
  const digests = [...new Set(at.map((i) => list[i]!.version))];
  if (!digests.length) throw bad(`no version of \`${path}\` in this session's history begins \`${rev}\``);
  if (digests.length > 1) throw bad(`\`${rev}\` begins ${digests.length} versions (${digests.join(', ')}): give more of the digest`, { versions: digests });
  return at;
}

/** The indices of `good` and `bad` in `list`, good before bad. */
export function resolveRange(list: readonly Candidate[], good: unknown, bad: unknown, path: string, words: Words, counts: { versions: number; generations: number }): { good: number; bad: number } {
  const b = Math.max(...pointsOf(list, bad, 'bad', path, words, counts));
  const goods = pointsOf(list, good, 'good', path, words, counts);
  const before = goods.filter((i) => i < b);
  if (!before.length) {
    const g = Math.max(...goods);
    const at = (i: number) => {
      const c = list[i]!;
      return c.kind === 'document' ? `position ${c.position}` : `p${c.index}`;
    };
    const where = g === b ? 'is the bad version itself' : `comes after the bad one (${at(b)})`;
    throw new ProtocolError(`the good version (${at(g)}) ${where}: \`good\` names a version before the failure began, \`bad\` a later one at which the replay fails (\`history\` lists them in order)`, { field: 'good' });
  }
  return { good: Math.max(...before), bad: b };
}
