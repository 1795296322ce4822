// How deeply code may nest. acorn, and every pass after it (lowering, the interpreter's
// translation, codegen), walk bodies recursively: a body nested thousands deep would overflow
// their stack. So a body's nesting is measured on its text before acorn sees it, in one loop,
// and one past the limit is a diagnostic at the place it goes past, not a crash.
//
// How nesting is counted (docs/language.md says the same): each open bracket `(`, `[`, `{` is a
// level, and inside one each operator (`+`, `=`, `.`, `?`, `!` ...) and each `if`, `else if`,
// `else`, `for`, `while`, `do` is one more, until the next `;` or `,` at that level or the end of
// a block. `a + b + c` nests 2 deep (as its tree does); `if (a) {} else if (b) {} else ...` one
// more for every `else if`, as acorn reads it.

/** The deepest a body may nest, counted as above. */
export const MAX_NESTING = 128;

/** How many `fn` calls may be inlined inside one another (kernels have no call stack: each call is inlined). */
export const MAX_CALL_DEPTH = 16;

const KEYWORDS = new Set(['if', 'else', 'for', 'while', 'do']);
const OPERATOR = /[+\-*/%=<>!~&|^?.]/;

/**
 * The offset in `text` where the body [start, end) nests deeper than `max`, or undefined. Strings,
 * comments and template text are skipped (a template's `${ }` is a level).
 */
export function nestingPastLimit(text: string, start: number, end: number, max = MAX_NESTING): number | undefined {
  // One entry per open level: its operator count (keywords included), how many of those are
  // keywords, and what opened it.
  const ops: number[] = [0];
  const keywords: number[] = [0];
  const kinds: ('(' | '[' | '{' | 'block' | '${')[] = ['block'];
  let total = 1;
  let last = ''; // the previous significant token, to tell a block `{` from an expression's
  let i = start;
  let failed = -1;
  const count = (at: number, keyword = false): void => {
    ops[ops.length - 1]++;
    if (keyword) keywords[keywords.length - 1]++;
    if (++total > max + 1) failed = at;
  };
  /** A statement at this level ended: its count goes, but an `else` after it continues the same `if` (acorn nests the chain). */
  const statementEnds = (after: number): void => {
    const top = ops.length - 1;
    const keep = /^\s*else\b/.test(text.slice(after, Math.min(end, after + 64))) ? keywords[top] : 0;
    total -= ops[top] - keep;
    ops[top] = keep;
    keywords[top] = keep;
  };
  /** Skip a template's text from `j` (after a backtick or a `}` closing `${`); returns where it stopped. */
  const template = (j: number): number => {
    while (j < end) {
      const ch = text[j];
      if (ch === '\\') j += 2;
      else if (ch === '`') return j + 1;
      else if (ch === '$' && text[j + 1] === '{') {
        ops.push(0);
        keywords.push(0);
        kinds.push('${');
        if (++total > max + 1) failed = j;
        return j + 2;
      } else j++;
    }
    return end;
  };
  while (i < end && failed < 0) {
    const ch = text[i];
    const next = text[i + 1];
    if (ch === '/' && next === '/') {
      while (i < end && text[i] !== '\n' && text[i] !== '\r') i++;
    } else if (ch === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 || close >= end ? end : close + 2;
    } else if (ch === '"' || ch === "'") {
      i++;
      while (i < end && text[i] !== ch && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
      i++;
      last = 'value';
    } else if (ch === '`') {
      i = template(i + 1);
      last = 'value';
    } else if (ch === '(' || ch === '[' || ch === '{') {
      const block = ch === '{' && (last === '' || last === ')' || last === 'else' || last === 'do' || last === ';' || last === '{' || last === '}');
      ops.push(0);
      keywords.push(0);
      kinds.push(block ? 'block' : ch);
      if (++total > max + 1) failed = i;
      last = ch;
      i++;
    } else if (ch === ')' || ch === ']' || ch === '}') {
      if (kinds.length > 1) {
        const kind = kinds.pop();
        total -= 1 + ops.pop()!;
        keywords.pop();
        if (kind === '${') {
          i = template(i + 1);
          last = 'value';
          continue;
        }
        // A block ends its statement: what follows is a sibling, unless it is `else` (or a
        // do-while's `while`), which continues the same statement.
        if (kind === 'block' && !/^\s*while\b/.test(text.slice(i + 1, Math.min(end, i + 64)))) statementEnds(i + 1);
      }
      last = ch;
      i++;
    } else if (ch === ';' || ch === ',') {
      if (ch === ';') statementEnds(i + 1);
      else {
        total -= ops[ops.length - 1];
        ops[ops.length - 1] = 0;
        keywords[keywords.length - 1] = 0;
      }
      last = ch;
      i++;
    } else if (/[A-Za-z_$]/.test(ch)) {
      let j = i + 1;
      while (j < end && /[\w$]/.test(text[j])) j++;
      const word = text.slice(i, j);
      if (KEYWORDS.has(word) && !(word === 'if' && last === 'else')) count(i, true); // `else if` is one level
      last = KEYWORDS.has(word) ? word : 'value';
      i = j;
    } else if (/[0-9]/.test(ch) || (ch === '.' && /[0-9]/.test(next ?? ''))) {
      // A number, `1.5e-3` included (its `.` and `-` are not operators).
      let j = i + 1;
      while (j < end && (/[\w.]/.test(text[j]) || ((text[j] === '-' || text[j] === '+') && /[eE]/.test(text[j - 1])))) j++;
      last = 'value';
      i = j;
    } else if (OPERATOR.test(ch)) {
      // A run of operator characters is one operator (`>>>=`, `===`, `&&`), except that a `.`
      // and what may be a prefix operator (`+ - ! ~`) start another: `a+-b` is two.
      let j = i + 1;
      while (j < end && OPERATOR.test(text[j]) && !'.+-!~'.includes(text[j])) j++;
      count(i);
      last = 'op';
      i = j;
    } else i++;
  }
  return failed >= 0 ? failed : undefined;
}
