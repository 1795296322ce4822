// How much a request or a document may hold: one table that validation (src/protocol/envelope.ts,
// edits.ts), the document path check (documents.ts), `help` and docs/protocol.md all read. Requests
// are handled one at a time on the session's coordinator, so a request that costs a lot of its time
// makes every other connection wait; each limit bounds one such cost, and a request past one is
// refused before any work, with the field, the limit and what to do instead. The table lives here,
// below both the session and the protocol, because both hold documents to it.

import { UserError } from './user-error.js';

export interface Limit {
  /** The name `help` knows it by. */
  name: string;
  limit: number;
  unit: string;
  /** What it bounds. */
  applies: string;
  /** What to do instead (the end of a refusal). */
  remedy: string;
}

const limit = (name: string, value: number, unit: string, applies: string, remedy: string): Limit => ({ name, limit: value, unit, applies, remedy });

export const LIMITS = {
  line: limit('line-length', 16 * 1024 * 1024, 'bytes', 'a request line, or a WebSocket message', 'send less at once: write a large field by `region`, one request each'),
  nesting: limit('nesting', 32, 'levels', 'arrays and objects nested in a request', 'no request needs more than 4 levels; send the fields as docs/protocol.md lists them'),
  name: limit('name-length', 256, 'characters', 'a name: `op`, `kernel`, `node`, `port`, `output`, `name`, `member`, `version`, an edit\'s statement name, bisect\'s `good` and `bad`', 'use the name as the scene declares it (`graph` and `kernels` list them)'),
  path: limit('path-length', 1024, 'characters', 'a document path', 'name a document under the scene\'s folder with a shorter path'),
  segments: limit('path-segments', 32, 'names', 'folders and file in a document path', 'keep documents at most 31 folders deep under the scene\'s folder'),
  segment: limit('path-segment-length', 200, 'bytes (UTF-8)', 'one folder or file name in a document path', 'use a shorter file or folder name'),
  text: limit('text-length', 131072, 'characters', "a document's text (compose `text`, or the text its `edits` make), a kernel `source`, an edit's `text`, bisect's `replay`", 'split the document: kernels can live in documents of their own (`use "kernels.esn";`)'),
  edits: limit('edits-count', 1000, 'edits', 'the edits of one compose, all documents together', 'send the whole new `text` of the document instead, or compose in several requests'),
  editWork: limit('edit-work', 262144, 'characters', "edits times the length of the document they change (each edit reads the document again)", 'send the whole new `text` of the document instead of edits'),
  documents: limit('documents-count', 64, 'documents', 'the documents of one compose', 'compose in several requests'),
  frames: limit('frames-count', 10000, 'frames', "`evaluate`'s `frames`: frames run by one request", 'send several requests; each can be cancelled, and `deadline` bounds each'),
  items: limit('items-count', 1024, 'items', 'any other array of a request (`outputs`, `keys`, `value`)', 'send fewer: the scene has far fewer outputs and keys'),
} satisfies Record<string, Limit>;

export type LimitKey = keyof typeof LIMITS;

/** Every limit, in the order docs and help list them. */
export const LIMIT_LIST: Limit[] = Object.values(LIMITS);

/** The fields (at any depth of a request: `documents[0].path` too) that a limit bounds, by name. */
const FIELD_LIMITS: Record<string, LimitKey> = {
  op: 'name', kernel: 'name', node: 'name', port: 'name', output: 'name', name: 'name', member: 'name', version: 'name',
  param: 'name', input: 'name', struct: 'name', type: 'name', fn: 'name', use: 'path',
  path: 'path', text: 'text', source: 'text', edits: 'edits', documents: 'documents',
  // bisect: the versions it names, the replay file or its text
  good: 'name', bad: 'name', test: 'path', replay: 'text',
};

/** The limit a field of a request is held to, when one is. */
export function fieldLimit(field: string): Limit | undefined {
  const key = FIELD_LIMITS[field];
  return key ? LIMITS[key] : undefined;
}

/** A request past a limit: the message says which field, the limit and what to do. */
export class LimitError extends UserError {
  override name = 'LimitError';
  /** What the protocol answers beside the message. */
  readonly data: { field: string; limit: string; max: number };
  constructor(
    readonly field: string,
    readonly limit: Limit,
    found: string,
    subject = `\`${field}\``,
  ) {
    super(`${subject} ${found}; the limit is ${limit.limit} ${limit.unit} (${limit.name}: ${limit.applies}): ${limit.remedy}`);
    this.data = { field, limit: limit.name, max: limit.limit };
  }
}

/** A document path past the path limits (length, names, a name's bytes), as a LimitError. */
export function pathProblem(path: string, field = 'path'): LimitError | undefined {
  if (path.length > LIMITS.path.limit) return new LimitError(field, LIMITS.path, `is ${path.length} characters long`);
  let names = 0;
  for (const name of path.split(/[\\/]+/)) {
    if (name === '' || name === '.') continue;
    if (++names > LIMITS.segments.limit) return new LimitError(field, LIMITS.segments, 'names more folders than that');
    const bytes = Buffer.byteLength(name);
    if (bytes > LIMITS.segment.limit) return new LimitError(field, LIMITS.segment, `holds a name of ${bytes} bytes (\`${name.slice(0, 24)}...\`)`);
  }
  return undefined;
}

/** The edit-work limit for `count` edits of a document of `length` characters, when past it. */
export function editWorkProblem(count: number, length: number, field = 'edits'): LimitError | undefined {
  if (count * length <= LIMITS.editWork.limit) return undefined;
  return new LimitError(field, LIMITS.editWork, `holds ${count} edits of a document of up to ${length} characters (with what they add): ${count * length}`);
}

/** A text (document or source) past the text limit. */
export function textProblem(text: string, field: string, subject?: string): LimitError | undefined {
  return text.length > LIMITS.text.limit ? new LimitError(field, LIMITS.text, `is ${text.length} characters long`, subject) : undefined;
}
