// Bodies (`each`, `fn`, `migrate`): find the closing brace, then parse the JavaScript with acorn.
//
// acorn parses the body's own text; then the start/end and loc of every node it made are moved to
// the document's offsets, lines and columns (the same as handing acorn the document with all but
// the body blanked out, without scanning the blanks again for every body: that was quadratic).

import { parse as acornParse } from 'acorn';
import type { Node as AcornNode } from 'acorn';
import { isLineBreak } from './position.js';
import { MAX_NESTING, nestingPastLimit } from './nesting.js';

/**
 * The offset of the `}` that closes the `{` at `open`, or -1 when there is none. Braces inside
 * strings, comments and template literals don't count (`${ ... }` nests); regular expression
 * literals are not recognised (bodies have none).
 */
export function matchBrace(text: string, open: number): number {
  const n = text.length;
  const stack: ('{' | '${')[] = ['{'];
  let i = open + 1;
  const template = (from: number): number => {
    let j = from;
    while (j < n) {
      const ch = text[j];
      if (ch === '\\') j += 2;
      else if (ch === '`') return j + 1;
      else if (ch === '$' && text[j + 1] === '{') {
        stack.push('${');
        return j + 2;
      } else j++;
    }
    return n;
  };
  while (i < n) {
    const ch = text[i];
    const next = text[i + 1];
    if (ch === '/' && next === '/') {
      i += 2;
      while (i < n && !isLineBreak(text.charCodeAt(i))) i++;
    } else if (ch === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return -1;
      i = close + 2;
    } else if (ch === '"' || ch === "'") {
      i++;
      while (i < n && text[i] !== ch && !isLineBreak(text.charCodeAt(i))) i += text[i] === '\\' ? 2 : 1;
      i++;
    } else if (ch === '`') {
      i = template(i + 1);
    } else if (ch === '{') {
      stack.push('{');
      i++;
    } else if (ch === '}') {
      const top = stack.pop();
      if (stack.length === 0) return i;
      i = top === '${' ? template(i + 1) : i + 1;
    } else i++;
  }
  return -1;
}

export interface ParsedBody {
  statements: AcornNode[];
  /** acorn's syntax error, its message without the " (line:column)" suffix, and what is likely missing. */
  error?: { message: string; hint?: string; pos: number };
  /** Declarations written as GLSL writes them (`float v = 1.0;`), each with its mending edit. */
  glsl?: GlslDeclaration[];
}

/** `float v = 1.0;` in a body: where the type stands, and the `let` or `const` statement meant. */
export interface GlslDeclaration {
  /** What was written (`float v`) and the statement meant (`let v = 1.0;`). */
  written: string;
  meant: string;
  /** The type's span (document offsets), and what replaces it (`let`, or nothing after `const`). */
  start: number;
  end: number;
  text: string;
}

/** GLSL's (and HLSL's common) type names, written before a variable's name where JavaScript writes `let`. */
const GLSL_TYPE = /(^|[;{}(]|\bconst)\s*\b(float|int|uint|bool|double|half|[biu]?vec[234]|mat[234](?:x[234])?)\s+$/;

/**
 * A GLSL declaration ending at `pos` (acorn stopped at the name after a type): what it is, with the
 * edit that mends it. The body's text is patched with the same number of characters, so that
 * parsing again finds the next one at its own offset.
 */
function glslDeclaration(text: string, start: number, pos: number): GlslDeclaration | undefined {
  const name = /^[A-Za-z_$][\w$]*/.exec(text.slice(pos))?.[0];
  const before = text.slice(start, pos).replace(/\/\/[^\n]*$/gm, '');
  const m = name ? GLSL_TYPE.exec(before) : null;
  if (!m) return undefined;
  const type = m[2]!;
  const typeStart = pos - (before.length - before.lastIndexOf(type));
  const isConst = m[1] === 'const';
  const end = isConst ? pos : typeStart + type.length;
  const replacement = isConst ? '' : 'let';
  // The statement as meant: from the type to its `;` (or the line's end).
  const rest = text.slice(pos);
  const stop = /[;\n]/.exec(rest);
  const tail = (stop ? rest.slice(0, stop[0] === ';' ? stop.index + 1 : stop.index) : rest).trim();
  const meant = `${isConst ? 'const' : 'let'} ${tail}${tail.endsWith(';') ? '' : ';'}`;
  return {
    written: `${type} ${name}`,
    meant,
    start: typeStart,
    end,
    text: replacement,
  };
}

/**
 * Parse the JavaScript between `start` and `end` (the offsets inside the braces) of `text`.
 * `line` and `column` (1-based) are the document's position of `start`.
 */
export function parseBody(text: string, start: number, end: number, line: number, column: number): ParsedBody {
  // acorn is recursive: a body nested too deeply is refused before it reads it.
  const deep = nestingPastLimit(text, start, end);
  if (deep !== undefined) return { statements: [], error: { ...TOO_DEEP, pos: deep } };
  // GLSL habits (`float v = 1.0;`): each is told with its fix, then patched (same length) and the
  // body parsed again, so that every one is found and the rest of the body is still read.
  const glsl: GlslDeclaration[] = [];
  for (;;) {
    const parsed = parseOnce(text, start, end, line, column);
    const found = parsed.error && glsl.length < 64 ? glslDeclaration(text, start, parsed.error.pos) : undefined;
    if (!found) return glsl.length ? { ...parsed, glsl } : parsed;
    glsl.push(found);
    const span = found.end - found.start;
    text = text.slice(0, found.start) + found.text.padEnd(span) + text.slice(found.end);
  }
}

function parseOnce(text: string, start: number, end: number, line: number, column: number): ParsedBody {
  try {
    const program = acornParse(text.slice(start, end), {
      ecmaVersion: 2022,
      sourceType: 'script',
      locations: true,
      allowReturnOutsideFunction: true,
      allowHashBang: false,
    });
    const statements = program.body as AcornNode[];
    shift(statements, start, line - 1, column - 1, new Set());
    return { statements };
  } catch (e) {
    const err = e as { message?: unknown; pos?: unknown };
    const message = String(err?.message ?? e).replace(/\s*\(\d+:\d+\)$/, '');
    const pos = typeof err?.pos === 'number' ? start + Math.max(0, Math.min(end - start, err.pos)) : start;
    if (/stack/i.test(message)) return { statements: [], error: { ...TOO_DEEP, pos } };
    return { statements: [], error: message === 'Unexpected token' ? { ...unexpected(text, start, pos), pos } : { message, pos } };
  }
}

/** What a body nested past the limit is told (docs/language.md, Limits, says how nesting counts). */
export const TOO_DEEP = {
  message: `the code nests more than ${MAX_NESTING} levels deep here`,
  hint: 'bring it nearer the surface: put a part in a variable of its own (`const part = ...;`) or in a fn, or write a long `else if` chain as separate `if`s (docs/language.md, Limits)',
};

/**
 * acorn's "Unexpected token", said with the token and what is likely missing before it: an
 * operand after an operator, a `)` or `]` still open, or a `,` between two values.
 */
function unexpected(text: string, start: number, pos: number): { message: string; hint?: string } {
  const token = /^(\w+|\S)/.exec(text.slice(pos))?.[0];
  const message = token ? `unexpected \`${token}\`` : 'unexpected end of the body';
  const before = text.slice(start, pos).replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, '');
  const last = before.trimEnd().slice(-1);
  if (last && '+-*/%<>=&|!?:,^~'.includes(last)) return { message, hint: `\`${last}\` needs an operand after it` };
  // Brackets of the statement the token ends: an unclosed one is the likeliest mistake.
  const statement = before.slice(Math.max(before.lastIndexOf(';'), before.lastIndexOf('{'), before.lastIndexOf('}')) + 1);
  const open: string[] = [];
  for (const ch of statement) {
    if (ch === '(' || ch === '[') open.push(ch);
    else if ((ch === ')' || ch === ']') && open.length) open.pop();
  }
  if (open.length && (token === ';' || token === '}' || token === undefined)) return { message, hint: `a \`${open[open.length - 1] === '(' ? ')' : ']'}\` is missing before it` };
  if (/[\w)\]]$/.test(before.trimEnd()) && token && /^[\w(]/.test(token)) return { message, hint: 'an operator or `,` is missing before it' };
  // An `else` with no `if` just before it: the `}` closing the if's block is the likeliest to be missing.
  if (token === 'else') return { message, hint: "an `else` follows its `if`'s block directly: is the `}` that closes the `if` block missing before it (or a `;` between them)?" };
  // TypeScript's habit: a variable's type written after its name. Kernels infer it from the value.
  const declared = token === ':' ? /\b(let|const|var)\s+([A-Za-z_$][\w$]*)\s*$/.exec(before) : null;
  if (declared) return { message, hint: `a variable takes no type: it is the value's (\`${declared[1]} ${declared[2]} = 4;\` is an i32, \`= 4.0\` an f32; docs/language.md, Types are inferred)` };
  return { message };
}

/**
 * Move acorn's positions from the body's text to the document's: offsets by `offset`, lines by
 * `lines`, columns on the body's first line by `columns`. acorn shares position objects between
 * a node and its first child (and copies of shorthand properties), so each is moved once.
 */
function shift(value: unknown, offset: number, lines: number, columns: number, seen: Set<object>): void {
  if (Array.isArray(value)) {
    for (const v of value) shift(v, offset, lines, columns, seen);
    return;
  }
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  const node = value as Record<string, unknown> & { loc?: { start: Pos; end: Pos } };
  if (typeof node.type !== 'string') return;
  if (typeof node.start === 'number') node.start += offset;
  if (typeof node.end === 'number') node.end += offset;
  for (const p of node.loc ? [node.loc.start, node.loc.end] : []) {
    if (seen.has(p)) continue;
    seen.add(p);
    if (p.line === 1) p.column += columns;
    p.line += lines;
  }
  for (const key in node) if (key !== 'loc') shift(node[key], offset, lines, columns, seen);
}

interface Pos {
  line: number;
  column: number;
}
