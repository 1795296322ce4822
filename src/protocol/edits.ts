// Edits of a document's text, as compose takes them: each names one statement (by kind and name)
// or one member of a node's block, and replaces, adds or removes exactly its bytes. Every other
// byte of the document (comments, blank lines, layout) stays. Pure: no file system.
//
// The rules, in full (predictable rather than clever):
//
// - Finding. An edit `{KIND: NAME}` addresses the first statement of that kind and name in
//   document order (`use` is named by its path, `kernel` by its id `pkg.name@1`). A statement
//   that failed to parse is found too when the parser read its kind and name (`Trivia.broken`):
//   replacing it is how a diagnostic's `fix` is applied. `{node: N, member: M}` addresses the
//   member named M of node N's block (`size` for the size member).
// - Replacing. The addressed bytes (the statement's span: first keyword to closing `;`/`}`; or
//   the member's span: name to `;`) are replaced by `text`, verbatim. Nothing else changes.
// - Adding (`text` given, nothing addressed):
//   * a statement goes on a new line after the line of the last statement of its kind (after a
//     trailing `// comment` on that line; when code follows on that line, right after the
//     statement, separated by a space);
//   * with none of its kind, a `use` goes on a line of its own before the first statement and
//     the `//` comment lines directly above it (those comments belong to it), except when those
//     comments begin the document (a header: it stays first); when the document holds no
//     statement, and for every other kind, it goes at the end of the document on a line of its
//     own (a document that ended with a line break still does, one that did not still does not);
//   * a member goes after the node's last member: on a line of its own, indented as that member
//     is, when that member starts its line (else on the same line, after a space); a node with no
//     member gets it before its closing `}` (on its own line, indented two spaces more than the
//     `}`, when the `}` starts its line; else as `{ text }`).
//   New lines use the document's line break (`\r\n` when it has any, else `\n`).
// - Removing (`text: null`): the addressed bytes go. When that leaves their line(s) empty (only
//   spaces and tabs before the first byte, and after the last nothing but them and comments: a
//   comment trailing what goes is about it), the whole lines go with the line break that follows,
//   comments and all, and if the removal
//   then sits between two blank lines (or between a blank line and the document's start or end),
//   one of those blank lines goes too, so statements set apart by one blank line still are.
//   Removing what does not exist is an error (a typo should not pass silently).
// - Member edits of a node that does not exist, or that failed to parse without being read
//   whole, are errors that say what to do instead.
// - An edit's text holds what it names and nothing more: a statement edit's text is that one
//   statement (its kind and name), a member edit's text that one member. Text that reads as more
//   (`count = 9.0; } node evil: ...` for the member `count`, a second kernel after the one named)
//   or as another is refused: the edit would change what it does not name. Text too broken to
//   read a statement or member in is left to the check, which says where.
// - Edits apply in order, each to the result of the previous (the text is parsed again between
//   edits). The result is not checked here: the caller parses and compiles it.

import { parseDocument, closest } from '../ir/syntax/index.js';
import { isLineBreak } from '../ir/syntax/position.js';
import type { Document, NodeStatement, Span, Statement, StatementKind } from '../ir/syntax/index.js';
import { editWorkProblem, LIMITS, textProblem } from './limits.js';

/** One edit item as agents send it: exactly one statement key naming kind and name, optional member, and text (null removes). */
export type EditItem = {
  node?: string;
  output?: string;
  param?: string;
  input?: string;
  kernel?: string;
  struct?: string;
  type?: string;
  fn?: string;
  use?: string;
  member?: string;
  text: string | null;
};

/** The statement keys of an edit item, in the order messages list them. */
export const EDIT_KINDS: readonly StatementKind[] = ['node', 'output', 'param', 'input', 'kernel', 'struct', 'type', 'fn', 'use'];

const KIND_LIST = EDIT_KINDS.join(', ');

/** A malformed edit item, or one that cannot apply: which edit (0-based), which field, what was expected. */
export class EditError extends Error {
  constructor(
    message: string,
    readonly edit: number,
    readonly field?: string,
    readonly expected?: string,
  ) {
    super(message);
    this.name = 'EditError';
  }
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

/** Check one edit item as it came over the wire; the item with only its own fields, or an EditError. */
export function validateEditItem(item: unknown, index: number): EditItem {
  const at = `edit ${index}`;
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    throw new EditError(
      `${at} must be an object such as {node: 'rings', member: 'count', text: 'count = 12.0;'}, found ${describeValue(item)}`,
      index,
      undefined,
      'an object',
    );
  }
  const rec = item as Record<string, unknown>;
  const kinds: StatementKind[] = [];
  for (const key of Object.keys(rec)) {
    if (rec[key] === undefined) continue;
    if ((EDIT_KINDS as readonly string[]).includes(key)) kinds.push(key as StatementKind);
    else if (key !== 'member' && key !== 'text') {
      const guess = closest(key, [...EDIT_KINDS, 'member', 'text']);
      throw new EditError(
        `${at}: \`${key}\` is not a field of an edit${guess ? ` (did you mean \`${guess}\`?)` : ''}; an edit has exactly one of ${KIND_LIST}, an optional member, and text`,
        index,
        key,
        `one of ${KIND_LIST}, member, text`,
      );
    }
  }
  const expectedKind = `exactly one of ${KIND_LIST}`;
  if (kinds.length === 0) {
    throw new EditError(
      `${at} names no statement: it needs ${expectedKind} (e.g. {node: 'rings', text: '...'}; for a use, its path: {use: 'kernels.esn', text: 'use "kernels.esn";'})`,
      index,
      undefined,
      expectedKind,
    );
  }
  if (kinds.length > 1) {
    throw new EditError(
      `${at} names ${kinds.map((k) => `\`${k}\``).join(' and ')}: an edit addresses one statement, so it has ${expectedKind}; send one edit per statement`,
      index,
      kinds[1],
      expectedKind,
    );
  }
  const kind = kinds[0];
  const name = rec[kind];
  if (typeof name !== 'string' || name.length === 0) {
    const what = kind === 'use' ? 'the path it uses' : kind === 'kernel' ? 'the kernel id (`package.name@1`)' : `the ${kind}'s name`;
    throw new EditError(`${at}: \`${kind}\` must be a non-empty string, ${what}; found ${describeValue(name)}`, index, kind, `a non-empty string: ${what}`);
  }
  const out: EditItem = { [kind]: name, text: null } as EditItem;
  const member = rec.member;
  if (member !== undefined && member !== null) {
    if (kind !== 'node') {
      throw new EditError(
        `${at}: \`member\` addresses a member of a node's block, but this edit names a ${kind}; drop \`member\` and send the whole ${kind} as text, or name a node`,
        index,
        'member',
        'member only with node',
      );
    }
    if (typeof member !== 'string' || member.length === 0) {
      throw new EditError(
        `${at}: \`member\` must be a non-empty string, the member's name (\`size\` for the node's size); found ${describeValue(member)}`,
        index,
        'member',
        "a non-empty string: the member's name",
      );
    }
    out.member = member;
  }
  if (!('text' in rec) || rec.text === undefined) {
    throw new EditError(
      `${at} has no \`text\`: give the ${out.member !== undefined ? "member's" : "statement's"} new text, or null to remove it`,
      index,
      'text',
      'a string or null',
    );
  }
  const text = rec.text;
  if (text !== null && typeof text !== 'string') {
    throw new EditError(`${at}: \`text\` must be a string or null (null removes), found ${describeValue(text)}`, index, 'text', 'a string or null');
  }
  if (typeof text === 'string' && text.trim() === '') {
    throw new EditError(
      `${at}: \`text\` is empty; give the ${out.member !== undefined ? "member's" : "statement's"} text, or null to remove it`,
      index,
      'text',
      'a non-empty string, or null to remove',
    );
  }
  // A member's text is the whole member, name first; a value alone (`64 x 64` for `size`) was told
  // as "expected a member ... found `64`" at the node's line, which did not say what to send.
  if (typeof text === 'string' && out.member !== undefined && !/^\s*[A-Za-z_]\w*\s*(=|<-)/.test(text)) {
    const value = text.trim().replace(/;\s*$/, '');
    const arrow = /^[A-Za-z_]\w*\.[A-Za-z_]\w*$/.test(value) ? '<-' : '=';
    throw new EditError(
      `${at}: \`text\` of a member edit is the whole member, its name first: \`${out.member} ${arrow} ${value};\`, not \`${value}\` alone`,
      index,
      'text',
      `the whole member, e.g. \`${out.member} ${arrow} ${value};\``,
    );
  }
  out.text = text;
  return out;
}

/** Apply edits in order to a document's text; returns the new text. */
export function applyEdits(path: string, text: string, edits: EditItem[]): string {
  if (!Array.isArray(edits)) throw new EditError('`edits` must be an array of edit items', 0, 'edits', 'an array');
  // Each edit parses the document again: the work is bounded before it starts, the text after each.
  // (The document may grow by what the edits add, up to the text limit.)
  const added = edits.reduce((n: number, e) => n + (typeof (e as EditItem)?.text === 'string' ? (e as EditItem).text!.length : 0), 0);
  const work = editWorkProblem(edits.length, Math.min(text.length + added, LIMITS.text.limit));
  if (work) throw work;
  // A document saved with CRLF line ends keeps them: a statement of several lines added to one had
  // LF ends among its CRLF ones.
  const crlf = text.includes('\r\n') && !/(^|[^\r])\n/.test(text);
  const items = edits.map((raw, index) => validateEditItem(raw, index)).map((e) => (crlf && typeof e.text === 'string' ? { ...e, text: e.text.replace(/\r?\n/g, '\r\n') } : e));
  refuseTwice(items);
  let current = text;
  items.forEach((item, index) => {
    current = applyEdit(path, current, item, index);
    const long = textProblem(current, 'text', `the text edit ${index} makes of \`${path}\``);
    if (long) throw long;
  });
  return current;
}

/**
 * Refuse two edits of one statement, or of one member, or a statement's whole text after an edit
 * of one of its members: the last one won without a word (two edits of `count`: the second
 * written). A member after its statement's text applies to that text, as edits apply in order.
 */
function refuseTwice(items: EditItem[]): void {
  const wholes = new Map<string, number>();
  const members = new Map<string, number>();
  /** A statement's first edit of a member. */
  const someMember = new Map<string, number>();
  items.forEach((e, index) => {
    const kind = kindOf(e);
    const statement = `${kind} \`${e[kind]}\``;
    const member = e.member === undefined ? undefined : `member \`${e.member}\` of ${statement}`;
    // A member edited after its statement's whole text edits what that text made: both kept.
    const before = member === undefined ? wholes.get(statement) ?? someMember.get(statement) : members.get(member);
    if (before !== undefined) {
      const what = member !== undefined && items[before].member !== undefined ? member : statement;
      throw new EditError(`edit ${index} changes ${what}, as edit ${before} does: give one edit for it (a statement's whole text holds every change to it)`, index, kind);
    }
    if (member === undefined) wholes.set(statement, index);
    else {
      members.set(member, index);
      if (!someMember.has(statement)) someMember.set(statement, index);
    }
  });
}

// --- one edit -------------------------------------------------------------------------------

/** What an edit addresses: a statement (parsed, or broken with its kind and name read). */
interface Found {
  span: Span;
  /** The statement as read; absent for a broken statement the parser could not read whole. */
  statement?: Statement;
}

/** Whether the document holds the statement an edit addresses (by kind and name). */
export function addresses(doc: Document, e: EditItem): boolean {
  const kind = kindOf(e);
  return ofKind(doc, kind).some((s) => s.name === e[kind]);
}

function kindOf(e: EditItem): StatementKind {
  for (const k of EDIT_KINDS) if (e[k] !== undefined) return k;
  throw new Error('unreachable: a validated edit names a kind');
}

/** Every statement of a kind in document order, broken ones included (those whose kind was read). */
function ofKind(doc: Document, kind: StatementKind): { name?: string; found: Found }[] {
  const out: { name?: string; found: Found }[] = [];
  for (const item of doc.items) {
    if (item.kind === 'trivia') {
      const b = item.broken;
      if (b?.kind === kind) out.push({ name: b.name?.value, found: { span: item.span, statement: b.statement } });
    } else if (item.kind === kind) {
      out.push({ name: item.name.value, found: { span: item.span, statement: item } });
    }
  }
  return out;
}

function similar(word: string, names: string[], what: string): string {
  const unique = [...new Set(names)];
  const guess = closest(word, unique);
  if (guess) return `; did you mean \`${guess}\`?`;
  if (unique.length === 0) return '';
  const shown = unique.slice(0, 12).map((n) => `\`${n}\``).join(', ');
  return `; ${what} ${shown}${unique.length > 12 ? ', ...' : ''}`;
}

/** A document's statements (broken ones too, when their kind and name were read), as `kind \`name\``. */
function statementNames(doc: Document): string[] {
  return doc.items.flatMap((item) => {
    if (item.kind !== 'trivia') return [`${item.kind} \`${item.name.value}\``];
    return item.broken?.kind && item.broken.name ? [`${item.broken.kind} \`${item.broken.name.value}\``] : [];
  });
}

/** The members of node `name` in a document, by name; undefined when it did not parse. */
function memberNames(doc: Document, name: string): string[] | undefined {
  const node = doc.statements.find((st) => st.kind === 'node' && st.name.value === name) as NodeStatement | undefined;
  return node?.members.map((m) => m.name.value);
}

/** What `after` holds that `before` does not, in `after`'s order (each of `before` cancels one). */
function added(after: string[], before: string[]): string[] {
  const left = [...before];
  return after.filter((x) => {
    const i = left.indexOf(x);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/**
 * Refuse an edit whose text reads as more than, or other than, what it names (see the top of this
 * file): what the document holds after it, against before it less what it named. Both parses are
 * the ones the edits and the check make anyway (parseDocument keeps the recent ones).
 */
function checkHeld(before: Document, after: Document, e: EditItem, index: number, kind: StatementKind, name: string): void {
  const named = e.member === undefined ? `${kind} \`${name}\`` : `the member \`${e.member}\` of node \`${name}\``;
  const refuse = (holds: string) => {
    throw new EditError(`edit ${index} names ${named}, but its text holds ${holds}: an edit changes only what it names; give each statement or member an edit of its own`, index, 'text', `the text of ${named} alone`);
  };
  const self = `${kind} \`${name}\``;
  const statements = added(statementNames(after), added(statementNames(before), [self]));
  if (e.member === undefined) {
    if (statements.length > 1) refuse(`${statements.length} statements (${statements.join(', ')})`);
    if (statements.length === 1 && statements[0] !== self) refuse(statements[0]);
    return;
  }
  if (added(statements, [self]).length) refuse(`more than a member: it closes the node's block and goes on (\`}\`)`);
  const [was, now] = [memberNames(before, name), memberNames(after, name)];
  if (!was || !now) return; // the node does not parse: the check says where
  const members = added(now, added(was, [e.member]));
  if (members.length > 1) refuse(`${members.length} members (${members.map((m) => `\`${m}\``).join(', ')})`);
  if (members.length === 1 && members[0] !== e.member) refuse(`the member \`${members[0]}\``);
}

function applyEdit(path: string, text: string, e: EditItem, index: number): string {
  const { doc } = parseDocument(path, text);
  const kind = kindOf(e);
  const name = e[kind] as string;
  const out = spliceEdit(path, text, doc, e, index, kind, name);
  if (e.text !== null) checkHeld(doc, parseDocument(path, out).doc, e, index, kind, name);
  return out;
}

function spliceEdit(path: string, text: string, doc: Document, e: EditItem, index: number, kind: StatementKind, name: string): string {
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const all = ofKind(doc, kind);
  const found = all.find((s) => s.name === name)?.found;
  const names = all.flatMap((s) => (s.name === undefined ? [] : [s.name]));

  if (e.member === undefined) {
    if (found) return e.text === null ? removeRange(text, found.span.start, found.span.end) : splice(text, found.span.start, found.span.end, e.text);
    if (e.text === null) {
      throw new EditError(`no ${kind} \`${name}\` in ${path} to remove${similar(name, names, `its ${kind}s are`)}`, index, kind, `the name of a ${kind} in ${path}`);
    }
    if (all.length > 0) return insertAfter(text, all[all.length - 1].found.span.end, e.text, nl);
    if (kind === 'use') return insertUseAtTop(doc, e.text, nl);
    return appendAtEnd(text, e.text, nl);
  }

  // A member of a node's block.
  const member = e.member;
  const example = `{node: '${name}', text: 'node ${name}: package.kernel@1 { ... }'}`;
  if (!found) {
    throw new EditError(
      `no node \`${name}\` in ${path}; add the node first: ${example}${similar(name, names, 'its nodes are')}`,
      index,
      'node',
      `the name of a node in ${path}`,
    );
  }
  const node = found.statement as NodeStatement | undefined;
  if (!node) {
    throw new EditError(
      `node \`${name}\` in ${path} failed to parse, so its members can't be told apart; replace the whole node: ${example}`,
      index,
      'member',
      'a node that parses',
    );
  }
  const m = node.members.find((x) => x.name.value === member);
  if (m) return e.text === null ? removeRange(text, m.span.start, m.span.end) : splice(text, m.span.start, m.span.end, e.text);
  if (e.text === null) {
    throw new EditError(
      `node \`${name}\` has no member \`${member}\` to remove${similar(member, node.members.map((x) => x.name.value), 'its members are')}`,
      index,
      'member',
      `the name of a member of node \`${name}\``,
    );
  }
  return insertMember(text, node, e.text, nl, index, example);
}

// --- text surgery -------------------------------------------------------------------------

function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}

/** The offset where the line holding `pos` starts. */
function lineStart(text: string, pos: number): number {
  let i = pos;
  while (i > 0 && !isLineBreak(text.charCodeAt(i - 1))) i--;
  return i;
}

/** The offset of the line break that ends the line holding `pos` (text.length on the last line). */
function lineEnd(text: string, pos: number): number {
  let i = pos;
  while (i < text.length && !isLineBreak(text.charCodeAt(i))) i++;
  return i;
}

/** The length of the line break at `pos` (2 for `\r\n`, 0 at the end). */
function breakLength(text: string, pos: number): number {
  if (pos >= text.length) return 0;
  return text.charCodeAt(pos) === 13 && text.charCodeAt(pos + 1) === 10 ? 2 : 1;
}

/** The start of the line before the line that starts at `start` (> 0), and its content's end. */
function previousLine(text: string, start: number): { start: number; end: number } {
  let end = start - 1;
  if (end > 0 && text.charCodeAt(end) === 10 && text.charCodeAt(end - 1) === 13) end--;
  return { start: lineStart(text, end), end };
}

const BLANK = /^[ \t]*$/;
/** Nothing but spaces, tabs, closed block comments and a final line comment. */
const BLANK_OR_COMMENT = /^(?:[ \t]|\/\*(?:(?!\*\/)[\s\S])*\*\/)*(?:\/\/.*)?$/;

/** Remove [start, end) by the rule at the top of this file. */
function removeRange(text: string, start: number, end: number): string {
  const ls = lineStart(text, start);
  const le = lineEnd(text, end);
  // `count = 8.0;  // the node's own value` left the comment alone on its line.
  if (!BLANK.test(text.slice(ls, start)) || !BLANK_OR_COMMENT.test(text.slice(end, le))) return text.slice(0, start) + text.slice(end);
  let cutStart = ls;
  let cutEnd = le + breakLength(text, le);
  const blankBefore = ls === 0 || BLANK.test(text.slice(previousLine(text, ls).start, previousLine(text, ls).end));
  const nextEnd = lineEnd(text, cutEnd);
  const atEnd = cutEnd >= text.length;
  const blankAfter = atEnd || BLANK.test(text.slice(cutEnd, nextEnd));
  if (blankBefore && blankAfter) {
    if (!atEnd) cutEnd = nextEnd + breakLength(text, nextEnd);
    else if (ls > 0) cutStart = previousLine(text, ls).start;
  }
  return text.slice(0, cutStart) + text.slice(cutEnd);
}

/** Insert a statement on a new line after the line of the statement that ends at `end`. */
function insertAfter(text: string, end: number, insert: string, nl: string): string {
  const le = lineEnd(text, end);
  if (BLANK_OR_COMMENT.test(text.slice(end, le))) return splice(text, le, le, nl + insert);
  return splice(text, end, end, ' ' + insert);
}

/** At the end of the document, on a line of its own. */
function appendAtEnd(text: string, insert: string, nl: string): string {
  if (text.length === 0) return insert + nl;
  if (isLineBreak(text.charCodeAt(text.length - 1))) return text + insert + nl;
  return text + nl + insert;
}

/** A first `use`: before the first statement and the `//` lines right above it, after a header. */
function insertUseAtTop(doc: Document, insert: string, nl: string): string {
  const text = doc.text;
  const first = doc.items.find((item) => item.kind !== 'trivia' || item.broken !== undefined);
  if (!first) return appendAtEnd(text, insert, nl);
  const at = lineStart(text, first.span.start);
  let p = at;
  while (p > 0) {
    const prev = previousLine(text, p);
    if (!/^[ \t]*\/\//.test(text.slice(prev.start, prev.end))) break;
    p = prev.start;
  }
  const where = p === 0 ? at : p;
  return splice(text, where, where, insert + nl);
}

function insertMember(text: string, node: NodeStatement, insert: string, nl: string, index: number, example: string): string {
  const last = node.members[node.members.length - 1];
  if (last) {
    const ls = lineStart(text, last.span.start);
    const indent = text.slice(ls, last.span.start);
    if (!BLANK.test(indent)) return splice(text, last.span.end, last.span.end, ' ' + insert);
    const le = lineEnd(text, last.span.end);
    const at = BLANK_OR_COMMENT.test(text.slice(last.span.end, le)) ? le : last.span.end;
    return splice(text, at, at, nl + indent + insert);
  }
  const close = node.span.end - 1;
  if (text[close] !== '}') {
    throw new EditError(
      `node \`${node.name.value}\` has no closing \`}\`, so there is no place for a member; replace the whole node: ${example}`,
      index,
      'member',
      'a node that parses',
    );
  }
  const ls = lineStart(text, close);
  const before = text.slice(ls, close);
  if (BLANK.test(before) && ls > node.span.start) return splice(text, ls, ls, before + '  ' + insert + nl);
  const spaced = close > 0 && (text[close - 1] === ' ' || text[close - 1] === '\t');
  return splice(text, close, close, (spaced ? '' : ' ') + insert + ' ');
}
