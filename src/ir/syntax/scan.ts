// The tokenizer of the top-level language (everything outside the JavaScript bodies).
//
// It lexes on demand from an offset, so the parser can hand a body's braces to the body scanner
// and resume after them. White space and comments are trivia: `lex` skips them. Characters the
// language has no use for become one-character `invalid` tokens, so the scanner never fails and
// error recovery can step through anything (a body's JavaScript included).

import { isLineBreak } from './position.js';

export type TokenType = 'ident' | 'number' | 'string' | 'punct' | 'invalid' | 'eof';

/** One token of the top-level language. */
export interface Tok {
  type: TokenType;
  /** The source text of the token (empty at the end of the document). */
  text: string;
  start: number;
  end: number;
  /** number: its value. */
  num?: number;
  /** number: written without `.` or exponent (hex, octal and binary literals are integral). */
  integral?: boolean;
  /** string: its value with the quotes removed and escapes resolved. */
  value?: string;
  /** string or block comment: the closing quote is missing. */
  unterminated?: boolean;
}

/** The punctuation of the language, longest first where one is a prefix of another. */
export const PUNCTUATION = ['<-', '..', '{', '}', '(', ')', '<', '>', ';', ':', ',', '=', '.', '@', '-'] as const;

export function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

export function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c);
}

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

const WHITE = /\s/;

export function isWhiteSpace(ch: string): boolean {
  return WHITE.test(ch);
}

export type ScanError = (message: string, start: number, end: number) => void;

export class Scanner {
  constructor(
    readonly text: string,
    private readonly onError: ScanError,
  ) {}

  /** The offset of the first non-trivia character at or after `pos`. */
  skipTrivia(pos: number): number {
    const text = this.text;
    let i = pos;
    while (i < text.length) {
      const ch = text[i];
      if (ch === '/' && text[i + 1] === '/') {
        i += 2;
        while (i < text.length && !isLineBreak(text.charCodeAt(i))) i++;
      } else if (ch === '/' && text[i + 1] === '*') {
        const close = text.indexOf('*/', i + 2);
        if (close < 0) {
          this.onError('unterminated comment: `/*` has no closing `*/`', i, i + 2);
          i = text.length;
        } else i = close + 2;
      } else if (WHITE.test(ch)) i++;
      else break;
    }
    return i;
  }

  /** The next token at or after `pos` (trivia skipped). */
  lex(pos: number): Tok {
    const text = this.text;
    const start = this.skipTrivia(pos);
    if (start >= text.length) return { type: 'eof', text: '', start: text.length, end: text.length };
    const c = text.charCodeAt(start);
    const ch = text[start];
    if (isIdentStart(c)) {
      let i = start + 1;
      while (i < text.length && isIdentPart(text.charCodeAt(i))) i++;
      return { type: 'ident', text: text.slice(start, i), start, end: i };
    }
    if (isDigit(c) || (ch === '.' && isDigit(text.charCodeAt(start + 1)))) return this.number(start);
    if (ch === '"' || ch === "'" || ch === '`') return this.string(start);
    for (const p of PUNCTUATION) {
      if (text.startsWith(p, start)) return { type: 'punct', text: p, start, end: start + p.length };
    }
    // One code point (a surrogate pair stays whole).
    const end = c >= 0xd800 && c <= 0xdbff && start + 1 < text.length ? start + 2 : start + 1;
    return { type: 'invalid', text: text.slice(start, end), start, end };
  }

  private number(start: number): Tok {
    const text = this.text;
    let i = start;
    let integral = true;
    const digits = (ok: (c: number) => boolean) => {
      while (i < text.length) {
        const c = text.charCodeAt(i);
        if (ok(c) || (c === 95 && ok(text.charCodeAt(i + 1)) && i > start)) i++;
        else break;
      }
    };
    const radix = text[i] === '0' ? text[i + 1]?.toLowerCase() : undefined;
    if (radix === 'x' && isHexDigit(text.charCodeAt(i + 2))) {
      i += 2;
      digits(isHexDigit);
    } else if (radix === 'o' && /[0-7]/.test(text[i + 2] ?? '')) {
      i += 2;
      digits((c) => c >= 48 && c <= 55);
    } else if (radix === 'b' && /[01]/.test(text[i + 2] ?? '')) {
      i += 2;
      digits((c) => c === 48 || c === 49);
    } else {
      digits(isDigit);
      // `0..1` is a range, not `0.` then `.1`.
      if (text[i] === '.' && text[i + 1] !== '.') {
        integral = false;
        i++;
        digits(isDigit);
      }
      if (text[i] === 'e' || text[i] === 'E') {
        const sign = text[i + 1] === '+' || text[i + 1] === '-' ? 1 : 0;
        if (isDigit(text.charCodeAt(i + 1 + sign))) {
          integral = false;
          i += 1 + sign;
          digits(isDigit);
        }
      }
    }
    const raw = text.slice(start, i);
    return { type: 'number', text: raw, start, end: i, num: Number(raw.replace(/_/g, '')), integral };
  }

  private string(start: number): Tok {
    const text = this.text;
    const quote = text[start];
    let i = start + 1;
    let value = '';
    let unterminated = true;
    while (i < text.length) {
      const ch = text[i];
      if (ch === quote) {
        i++;
        unterminated = false;
        break;
      }
      if (quote !== '`' && isLineBreak(text.charCodeAt(i))) break;
      if (ch === '\\' && i + 1 < text.length) {
        const e = text[i + 1];
        value += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e === '0' ? '\0' : e;
        i += 2;
        continue;
      }
      value += ch;
      i++;
    }
    return { type: 'string', text: text.slice(start, i), start, end: i, value, unterminated };
  }
}

/** How a message names a token: `name`, `8.0`, `{`, or "the end of the document". */
export function describe(tok: Tok): string {
  if (tok.type === 'eof') return 'the end of the document';
  const t = tok.text.length > 24 ? tok.text.slice(0, 21) + '...' : tok.text;
  // A letter outside ASCII ends a name (`wärme` read as `w`): say why it is not part of one.
  const letter = /^\p{L}/u.test(t) && t.charCodeAt(0) > 127 ? ' (a name is ASCII letters, digits and `_`)' : '';
  return '`' + t.replace(/[\r\n\u2028\u2029]+/g, ' ') + '`' + letter;
}
