// Types and values as written in declarations: `field2<vec4>`, `-0.5`, `vec4(1, 0, 0, 1)`,
// `true`, and sizes `256 x 256`.

import type { Literal, SizeLiteral, Span, TypeRef } from './tree.js';
import type { Tok } from './scan.js';
import { CONSTRUCTORS, ELEMENT_TYPES, FIELD_TYPES, isReserved } from './forms.js';
import type { Parser } from './parser.js';

const TYPE_LIST = `${ELEMENT_TYPES.join(', ')}, field1<T>, field2<T>, field3<T> or a struct name`;

export function parseTypeRef(p: Parser, where: string): TypeRef {
  const t = p.tok;
  if (t.type !== 'ident') p.expected(`a type (${TYPE_LIST}) ${where}`);
  const dims = FIELD_TYPES.get(t.text);
  if (dims !== undefined) {
    p.advance();
    p.expectPunct('<', `after \`${t.text}\` (a field type is written \`${t.text}<T>\`)`);
    const e = p.tok;
    if (e.type !== 'ident') p.expected(`the element type of \`${t.text}<T>\``);
    if (FIELD_TYPES.has(e.text)) p.fail(`a field's elements can't be fields: \`${e.text}\` inside \`${t.text}<...>\``, e.start, e.end);
    if (isReserved(e.text) && !ELEMENT_TYPES.includes(e.text)) p.expected(`the element type of \`${t.text}<T>\``);
    p.advance();
    p.expectPunct('>', `to close \`${t.text}<\``);
    return { name: { value: e.text, span: { start: e.start, end: e.end } }, fieldDims: dims, span: { start: t.start, end: p.prevEnd } };
  }
  if (/^field\d+$/.test(t.text)) p.fail(`unknown field type \`${t.text}\`: fields are field1<T>, field2<T> and field3<T>`, t.start, t.end);
  if (isReserved(t.text) && !ELEMENT_TYPES.includes(t.text)) p.expected(`a type (${TYPE_LIST}) ${where}`);
  p.advance();
  return { name: { value: t.text, span: { start: t.start, end: t.end } }, span: { start: t.start, end: t.end } };
}

/** `[-]NUMBER` */
export function parseNumber(p: Parser, what: string): { value: number; integral: boolean; span: Span } {
  const start = p.tok.start;
  const negative = p.isPunct('-');
  if (negative) p.advance();
  const n = p.tok;
  if (n.type !== 'number') p.expected(what);
  p.advance();
  const v = n.num ?? NaN;
  return { value: negative ? -v : v, integral: n.integral === true, span: { start, end: p.prevEnd } };
}

export function parseLiteral(p: Parser, where: string): Literal {
  const t = p.tok;
  if (t.type === 'number' || p.isPunct('-')) {
    const n = parseNumber(p, `a number ${where}`);
    return { values: [n.value], form: 'number', integral: n.integral, span: n.span };
  }
  if (t.type === 'ident' && (t.text === 'true' || t.text === 'false')) {
    p.advance();
    return { values: [t.text === 'true' ? 1 : 0], form: 'bool', integral: true, span: { start: t.start, end: t.end } };
  }
  const count = t.type === 'ident' ? CONSTRUCTORS.get(t.text) : undefined;
  if (count !== undefined) {
    p.advance();
    p.expectPunct('(', `after \`${t.text}\` (\`${t.text}(...)\` with ${count} numbers)`);
    const values: number[] = [];
    let integral = true;
    for (;;) {
      const n = parseNumber(p, `a number in \`${t.text}(...)\``);
      values.push(n.value);
      integral &&= n.integral;
      if (!p.isPunct(',')) break;
      p.advance();
    }
    p.expectPunct(')', `to close \`${t.text}(\``);
    const span = { start: t.start, end: p.prevEnd };
    if (values.length !== count) {
      p.error(`\`${t.text}(...)\` takes ${count} numbers, found ${values.length}`, span.start, span.end);
    }
    return { values, form: t.text, integral, span };
  }
  // `P(vec2(0.0, 0.0), 0.0)` for a struct: say how a struct's value is written.
  if (t.type === 'ident') {
    const saved = p.save();
    p.advance();
    const call = p.isPunct('(');
    p.restore(saved);
    if (call) p.fail(`\`${t.text}(...)\` is no value a declaration takes: write a number, true, false or vec2/vec3/vec4(...); a struct's components all start at one number, e.g. \`= 0.0\` (or leave the value out for zeros)`, t.start, t.end);
  }
  return p.expected(`a value (a number, true, false or vec2/vec3/vec4(...)) ${where}`);
}

/**
 * `W [x H [x D]]`: integers separated by `x`, with or without spaces (`256 x 256`, `256x256`:
 * the scanner reads `x256` as a name, taken apart here).
 */
export function parseSize(p: Parser, where: string): SizeLiteral {
  const start = p.tok.start;
  const integer = (t: Tok) => t.type === 'number' && /^\d+$/.test(t.text);
  if (!integer(p.tok)) p.expected(`a size \`W x H [x D]\` of integers ${where}`);
  const dims = [Number(p.advance().text)];
  while (dims.length < 3 && p.tok.type === 'ident' && /^x(\d+x)*\d*$/.test(p.tok.text)) {
    const parts = p.tok.text.slice(1).split('x');
    const open = parts[parts.length - 1] === '';
    if (dims.length + parts.length > 3) break;
    // `x` then not a number: the size ended before it (`size = 4\n x = 1;` lacks a `;`).
    if (open && !integer(p.scanner.lex(p.tok.end))) break;
    p.advance();
    for (const part of parts) if (part !== '') dims.push(Number(part));
    if (open) dims.push(Number(p.advance().text));
  }
  if (p.tok.type === 'ident' && /^x[\dx]*$/.test(p.tok.text) && p.tok.start === p.prevEnd) {
    p.expected(`a size \`W x H [x D]\` of at most 3 integers ${where}`);
  }
  const span = { start, end: p.prevEnd };
  if (dims.some((d) => d < 1)) p.error('a size is made of integers of at least 1', span.start, span.end);
  // Past it, a render's PNG cannot be made (a typed array of that length), and check passed it.
  else if (dims.some((d) => d > MAX_EXTENT)) p.error(`an extent of a size is at most ${MAX_EXTENT}, as --size takes; got ${dims.join(' x ')}: write a smaller size (a render larger than memory is made in tiles, up to ${MAX_EXTENT} on a side)`, span.start, span.end);
  return { dims, span };
}

/** The largest extent of a size, in the language and on the command line (--size). */
export const MAX_EXTENT = 65536;
