// The protocol's side of the limits (the table itself: src/main/limits.ts): a request line's
// nesting, measured before JSON.parse reads it, and every field of a parsed request held to its limit.

import { fieldLimit, LimitError, LIMITS, pathProblem } from '../main/limits.js';

export { editWorkProblem, fieldLimit, LIMIT_LIST, LimitError, LIMITS, pathProblem, textProblem, type Limit, type LimitKey } from '../main/limits.js';

/** The offset just past the string whose opening quote is at `i`, or -1 when it never ends. */
function stringEnd(line: string, i: number): number {
  let j = i + 1;
  for (;;) {
    j = line.indexOf('"', j);
    if (j < 0) return -1;
    // A quote escaped by an odd run of backslashes does not end it.
    let k = j - 1;
    while (line.charCodeAt(k) === 92) k--;
    if ((j - 1 - k) % 2 === 0) return j + 1;
    j++;
  }
}

/**
 * Where a JSON line nests arrays and objects deeper than the nesting limit: the offset of the
 * bracket that goes past it, or undefined. Strings are skipped whole (indexOf), so a line that is
 * mostly text costs little; JSON.parse itself takes seconds on millions of levels.
 */
export function tooDeep(line: string, max = LIMITS.nesting.limit): number | undefined {
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) {
      const end = stringEnd(line, i);
      if (end < 0) return undefined; // unterminated: JSON.parse says so
      i = end - 1;
    } else if (c === 91 || c === 123) {
      if (++depth > max) return i;
    } else if (c === 93 || c === 125) depth--;
  }
  return undefined;
}

/**
 * The line with each array or object inside the outer one replaced by `null`: it parses cheaply
 * however deep the line nests, so a request refused for its nesting still has its `id` echoed.
 */
export function shallow(line: string): string {
  let out = '';
  let from = 0;
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) {
      const end = stringEnd(line, i);
      if (end < 0) break;
      i = end - 1;
    } else if (c === 91 || c === 123) {
      if (++depth === 2) out += line.slice(from, i) + 'null';
    } else if (c === 93 || c === 125) {
      if (depth-- === 2) from = i + 1;
    }
  }
  return depth >= 2 ? out : out + line.slice(from);
}

/**
 * Every field of a parsed request held to its limit, at any depth (`documents[1].edits[0].text`),
 * and every other array to the items limit; the request's nesting is already bounded (tooDeep),
 * so this recursion is too. Returns the first field past its limit.
 */
export function checkLimits(fields: Record<string, unknown>): LimitError | undefined {
  let edits = 0;
  const visit = (value: unknown, name: string, where: string): LimitError | undefined => {
    const lim = fieldLimit(name);
    if (typeof value === 'string') {
      if (lim === LIMITS.path) return pathProblem(value, where);
      if (lim && value.length > lim.limit) return new LimitError(where, lim, `is ${value.length} characters long`);
      return undefined;
    }
    if (Array.isArray(value)) {
      const own = lim === LIMITS.edits || lim === LIMITS.documents ? lim : LIMITS.items;
      if (value.length > own.limit) return new LimitError(where, own, `holds ${value.length} ${own.unit}`);
      if (own === LIMITS.edits && (edits += value.length) > own.limit) return new LimitError(where, own, `brings the edits of this compose to ${edits}`);
      for (let i = 0; i < value.length; i++) {
        const e = visit(value[i], name, `${where}[${i}]`);
        if (e) return e;
      }
      return undefined;
    }
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const e = visit(v, k, where ? `${where}.${k}` : k);
        if (e) return e;
      }
    }
    return undefined;
  };
  return visit(fields, '', '');
}

