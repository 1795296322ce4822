// The parser's state and the pieces every statement shares: the token cursor, diagnostics and
// fixes, error recovery, names, kernel ids and bodies (types and values are in values.ts).
//
// A statement parser reports what is wrong with `error` and goes on where it can (a missing `;`
// on a line's end is mended: the statement ends there and its fix inserts the `;`); where it
// cannot, `fail` reports and throws a Failure, and `recover` skips to the next statement.

import type { Body, Diagnostic, FixEdit, Span, Token } from './tree.js';
import { LineIndex, isLineBreak } from './position.js';
import { Scanner, describe, isIdentPart, type Tok } from './scan.js';
import { PART_KEYWORDS, STATEMENT_KEYWORDS, isReserved } from './forms.js';
import { matchBrace, parseBody } from './body.js';

/** Thrown to abandon a statement; its diagnostic is already reported. */
export class Failure extends Error {
  constructor() {
    super('statement abandoned');
  }
}

/** A change the current statement's fix makes to the text: insert `;`, drop a stray `=`. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export interface Saved {
  tok: Tok;
  prevEnd: number;
  depth: number;
  diagnostics: number;
  edits: number;
  pending: number;
}

export class Parser {
  readonly scanner: Scanner;
  readonly lines: LineIndex;
  readonly diagnostics: Diagnostic[] = [];
  /** The current token (not yet consumed). */
  tok: Tok;
  /** The end of the last consumed token. */
  prevEnd = 0;
  /** Braces the current statement has opened and not closed. */
  depth = 0;
  /** The current statement's mending edits (for its fixes). */
  edits: Edit[] = [];
  /** The current statement's diagnostics whose fix is the whole statement's corrected text. */
  pending: Diagnostic[] = [];

  constructor(
    readonly path: string,
    readonly text: string,
  ) {
    this.scanner = new Scanner(text, (message, start, end) => {
      if (!this.diagnostics.some((d) => d.span.start === start && d.message === message)) this.error(message, start, end);
    });
    this.lines = new LineIndex(text);
    this.tok = this.scanner.lex(0);
  }

  // --- cursor -----------------------------------------------------------------------------

  advance(): Tok {
    const t = this.tok;
    this.prevEnd = t.end;
    this.tok = this.scanner.lex(t.end);
    return t;
  }

  /** The token after the current one (the cursor does not move). */
  peek(): Tok {
    return this.scanner.lex(this.tok.end);
  }

  /** Put the cursor at `pos`: the next token is lexed from there. */
  seek(pos: number): void {
    this.prevEnd = pos;
    this.tok = this.scanner.lex(pos);
  }

  isPunct(p: string): boolean {
    return this.tok.type === 'punct' && this.tok.text === p;
  }

  isWord(word: string): boolean {
    return this.tok.type === 'ident' && this.tok.text === word;
  }

  isKeyword(tok: Tok = this.tok): boolean {
    return tok.type === 'ident' && (STATEMENT_KEYWORDS.includes(tok.text) || PART_KEYWORDS.includes(tok.text));
  }

  isStatementKeyword(tok: Tok = this.tok): boolean {
    return tok.type === 'ident' && STATEMENT_KEYWORDS.includes(tok.text);
  }

  /** True when a line break lies between `a` and `b`. */
  lineBreakBetween(a: number, b: number): boolean {
    for (let i = a; i < b; i++) if (isLineBreak(this.text.charCodeAt(i))) return true;
    return false;
  }

  /** True when only spaces and tabs stand between the start of its line and `pos`. */
  startsLine(pos: number): boolean {
    for (let i = pos - 1; i >= 0; i--) {
      const c = this.text.charCodeAt(i);
      if (isLineBreak(c)) return true;
      if (c !== 32 && c !== 9) return false;
    }
    return true;
  }

  save(): Saved {
    const { tok, prevEnd, depth } = this;
    return { tok, prevEnd, depth, diagnostics: this.diagnostics.length, edits: this.edits.length, pending: this.pending.length };
  }

  restore(s: Saved): void {
    this.tok = s.tok;
    this.prevEnd = s.prevEnd;
    this.depth = s.depth;
    this.diagnostics.length = s.diagnostics;
    this.edits.length = s.edits;
    this.pending.length = s.pending;
  }

  // --- diagnostics ------------------------------------------------------------------------

  error(message: string, start: number, end: number = start, fix?: FixEdit): Diagnostic {
    const { line, column } = this.lines.positionAt(start);
    const d: Diagnostic = { severity: 'error', message, path: this.path, span: { start, end }, line, column };
    if (fix) d.fix = fix;
    this.diagnostics.push(d);
    return d;
  }

  fail(message: string, start: number = this.tok.start, end: number = this.tok.end): never {
    this.error(message, start, end);
    throw new Failure();
  }

  /** `expected WHAT, found TOKEN` at the current token, and abandon the statement. */
  expected(what: string): never {
    return this.fail(`expected ${what}, found ${describe(this.tok)}`);
  }

  expectPunct(p: string, where: string): Tok {
    if (!this.isPunct(p)) this.expected(`\`${p}\` ${where}`);
    return this.advance();
  }

  openBrace(where: string): Tok {
    const t = this.expectPunct('{', where);
    this.depth++;
    return t;
  }

  /**
   * The `}` that closes a block (`what`: "kernel `demo.rings@1`"). When the block's next item is
   * a statement keyword or the end of the document instead, its `}` is missing: mended like a
   * missing `;` (the fix adds the `}` on a line of its own). False while the block goes on.
   */
  closeBrace(what: string): boolean {
    if (this.isPunct('}')) {
      this.advance();
      this.depth--;
      return true;
    }
    const t = this.tok;
    if (t.type !== 'eof' && !this.isStatementKeyword(t)) return false;
    this.edits.push({ start: this.prevEnd, end: this.prevEnd, text: '\n}' });
    this.pending.push(this.error(`expected \`}\` to close ${what}, found ${describe(t)}`, this.prevEnd));
    this.depth--;
    return true;
  }

  /**
   * The `;` that ends a declaration. When it is missing and what follows starts another line, a
   * keyword, a `}` or the end, the declaration is mended: it ends at its last token, the error
   * says so (at the place the `;` belongs) and the returned diagnostic gets a fix. Otherwise the
   * statement is abandoned with what could have come instead (`alternatives`).
   */
  semicolon(after: string, alternatives: string[] = []): Diagnostic | undefined {
    if (this.isPunct(';')) {
      this.advance();
      return undefined;
    }
    const t = this.tok;
    const mendable =
      t.type === 'eof' ||
      (t.type === 'punct' && t.text === '}' && this.depth > 0) ||
      this.isKeyword(t) ||
      this.lineBreakBetween(this.prevEnd, t.start);
    if (!mendable) this.expected(`${orList([...alternatives, '`;`'])} after ${after}`);
    this.edits.push({ start: this.prevEnd, end: this.prevEnd, text: ';' });
    return this.error(`expected \`;\` after ${after}, found ${describe(t)}`, this.prevEnd);
  }

  /** The text of [start, end) with this statement's edits applied. */
  mended(start: number, end: number): string {
    let out = '';
    let at = start;
    const edits = this.edits.filter((e) => e.start >= start && e.end <= end).sort((a, b) => a.start - b.start);
    for (const e of edits) {
      if (e.start < at) continue;
      out += this.text.slice(at, e.start) + e.text;
      at = e.end;
    }
    return out + this.text.slice(at, end);
  }

  /** Give the statement's pending diagnostics their fix: the statement's corrected text. */
  settleFixes(kind: string, name: string, span: Span): void {
    const text = this.mended(span.start, span.end);
    for (const d of this.pending) d.fix = { [kind]: name, text };
    this.pending = [];
  }

  // --- recovery ---------------------------------------------------------------------------

  /**
   * Skip to the next token that starts a statement: a statement keyword, followed by a name or a
   * string, at the start of a line or after a `;` or `}`, outside the braces the broken statement
   * opened (or in the first column, for a statement whose `}` is missing). `prevEnd` becomes the
   * end of the last token skipped, where the broken statement's text ends.
   */
  recover(): void {
    let depth = this.depth;
    let last = this.prevEnd;
    let prev: Tok | undefined;
    for (;;) {
      const t = this.tok;
      if (t.type === 'eof') break;
      if (this.isStatementKeyword(t)) {
        const afterEnd = prev !== undefined && prev.type === 'punct' && (prev.text === ';' || prev.text === '}');
        const lineStart = this.startsLine(t.start);
        const column1 = t.start === 0 || isLineBreak(this.text.charCodeAt(t.start - 1));
        if ((lineStart || afterEnd) && (depth <= 0 || column1)) {
          const next = this.scanner.lex(t.end);
          if (next.type === 'ident' || next.type === 'string') break;
        }
      }
      if (t.type === 'punct' && t.text === '{') depth++;
      if (t.type === 'punct' && t.text === '}') depth--;
      last = t.end;
      prev = t;
      this.tok = this.scanner.lex(t.end);
    }
    this.prevEnd = last;
    this.depth = 0;
  }

  // --- names ------------------------------------------------------------------------------

  /** A declared name: an identifier that is not a reserved word. */
  name(role: string, where: string): Token {
    const t = this.tok;
    if (t.type !== 'ident') this.expected(`${role} ${where}`);
    if (isReserved(t.text)) this.error(`\`${t.text}\` is a reserved word; it can't be ${role}`, t.start, t.end);
    this.advance();
    return { value: t.text, span: { start: t.start, end: t.end } };
  }

  /** `a.b.c` written without spaces. */
  dotted(what: string): Token {
    const t = this.tok;
    if (t.type !== 'ident') this.expected(what);
    const parts = [t.text];
    this.advance();
    while (this.isPunct('.') && this.tok.start === this.prevEnd) {
      this.advance();
      if (this.tok.type !== 'ident' || this.tok.start !== this.prevEnd) this.expected(`a name right after \`.\` in ${what}`);
      parts.push(this.advance().text);
    }
    return { value: parts.join('.'), span: { start: t.start, end: this.prevEnd } };
  }

  /** A kernel id `package.name@1`, written without spaces. */
  kernelId(what: string): Token {
    const id = this.dotted(what);
    if (!this.isPunct('@') || this.tok.start !== this.prevEnd) {
      this.expected(`\`@VERSION\` right after \`${id.value}\` (a kernel id is written \`package.name@1\`)`);
    }
    this.advance();
    const v = this.tok;
    if (v.type !== 'number' || v.start !== this.prevEnd || !/^\d+$/.test(v.text) || isIdentPart(this.text.charCodeAt(v.end))) {
      this.expected(`an integer version right after \`${id.value}@\``);
    }
    this.advance();
    return { value: `${id.value}@${v.text}`, span: { start: id.span.start, end: this.prevEnd } };
  }

  /** `NODE[.PORT]` */
  ref(where: string): { node: Token; port?: Token } {
    const n = this.tok;
    if (n.type !== 'ident') this.expected(`a node name ${where}`);
    this.advance();
    const node = { value: n.text, span: { start: n.start, end: n.end } };
    if (!this.isPunct('.') || this.tok.start !== this.prevEnd) return { node };
    this.advance();
    const p = this.tok;
    if (p.type !== 'ident' || p.start !== this.prevEnd) this.expected(`a port name right after \`${n.text}.\``);
    this.advance();
    return { node, port: { value: p.text, span: { start: p.start, end: p.end } } };
  }

  // --- bodies -----------------------------------------------------------------------------

  /** `{ JavaScript }` for the body `what` (`the each body of kernel demo.rings@1`). */
  body(what: string): Body {
    if (!this.isPunct('{')) this.expected(`\`{\` to open ${what}`);
    const open = this.tok;
    const close = matchBrace(this.text, open.start);
    if (close < 0) {
      this.seek(open.end);
      this.depth++;
      this.fail(`\`{\` of ${what} is never closed: no matching \`}\``, open.start, open.end);
    }
    const at = this.lines.positionAt(open.end);
    const parsed = parseBody(this.text, open.end, close, at.line, at.column);
    const body: Body = { span: { start: open.start, end: close + 1 }, statements: parsed.statements };
    for (const g of parsed.glsl ?? []) {
      // Mended in the statement's fix: the type becomes `let` (or goes, after `const`).
      this.edits.push({ start: g.start, end: g.end, text: g.text });
      this.pending.push(this.error(`\`${g.written}\` in ${what} is a GLSL declaration: declare with \`let\` or \`const\`: \`${g.meant}\` (the type follows from the value)`, g.start, g.end));
      body.failed = true;
    }
    if (parsed.error) {
      this.error(`${parsed.error.message} in ${what}${parsed.error.hint ? `: ${parsed.error.hint}` : ''}`, parsed.error.pos);
      body.failed = true;
    }
    this.seek(close + 1);
    return body;
  }
}

/** `a`, `a or b`, `a, b or c`. */
export function orList(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
