// Offsets <-> positions for people (1-based line and column).
//
// Lines break where acorn breaks them (`\r\n`, `\r`, `\n`, U+2028, U+2029), so a position computed
// here and one acorn reports inside a body agree. Columns count UTF-16 code units, as JavaScript
// strings index them, plus one.

import type { Position } from './tree.js';

/** True for the characters that end a line (the second half of `\r\n` included). */
export function isLineBreak(code: number): boolean {
  return code === 10 || code === 13 || code === 0x2028 || code === 0x2029;
}

/** The start offsets of a text's lines; answers positions by binary search. */
export class LineIndex {
  /** lineStarts[i] is the offset where line i + 1 begins; lineStarts[0] is 0. */
  readonly lineStarts: number[];

  constructor(readonly text: string) {
    const starts = [0];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
      if (isLineBreak(c)) starts.push(i + 1);
    }
    this.lineStarts = starts;
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  /** The 1-based line and column of an offset (clamped into [0, text.length]). */
  positionAt(offset: number): Position {
    const o = Math.max(0, Math.min(this.text.length, Math.floor(offset) || 0));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: o - this.lineStarts[lo] + 1 };
  }

  /** The offset of a 1-based line and column (clamped into the text). */
  offsetAt(line: number, column: number): number {
    const l = Math.max(1, Math.min(this.lineStarts.length, Math.floor(line) || 1));
    const start = this.lineStarts[l - 1];
    const end = l < this.lineStarts.length ? this.lineStarts[l] : this.text.length;
    return Math.max(start, Math.min(end, start + (Math.floor(column) || 1) - 1));
  }
}

/** The 1-based line and column of an offset in a text (builds an index: use LineIndex for many). */
export function positionAt(text: string, offset: number): Position {
  return new LineIndex(text).positionAt(offset);
}
