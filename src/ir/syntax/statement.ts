// Top-level statements: the dispatch on the keyword (with "did you mean"), and the statements
// that are not kernels or nodes: use, param, input, struct, type, fn, output.

import type { Literal, ParamStatement, SizeLiteral, Statement, StatementKind, Token, TypeRef, Trivia } from './tree.js';
import { describe, type Tok } from './scan.js';
import { PART_KEYWORDS, STATEMENT_KEYWORDS } from './forms.js';
import { closest } from '../suggest.js';
import { Failure, orList, type Parser } from './parser.js';
import { parseKernel } from './kernel.js';
import { parseNode } from './node.js';
import { parseTypeRef, parseLiteral, parseSize, parseNumber } from './values.js';

/** What a statement parser has read so far, for the broken item when it fails. */
export interface StatementInfo {
  kind?: StatementKind;
  name?: Token;
}

type StatementParser = (p: Parser, kw: Tok, info: StatementInfo) => Statement;

const PARSERS: Record<StatementKind, StatementParser> = {
  use: parseUse,
  param: parseParam,
  input: parseInput,
  struct: parseStruct,
  type: parseType,
  fn: parseFn,
  kernel: parseKernel,
  node: parseNode,
  output: parseOutput,
};

const KEYWORD_LIST = orList(STATEMENT_KEYWORDS.map((k) => `\`${k}\``));

/** One statement at the cursor: the statement, or (on an error) the broken item for its text. */
export function parseStatement(p: Parser): Statement | Trivia {
  const kw = p.tok;
  const diagnostics = p.diagnostics.length;
  p.edits = [];
  p.pending = [];
  p.depth = 0;
  const info: StatementInfo = {};
  try {
    let statement: Statement;
    if (kw.type === 'ident' && STATEMENT_KEYWORDS.includes(kw.text)) {
      info.kind = kw.text as StatementKind;
      p.advance();
      statement = PARSERS[info.kind](p, kw, info);
      p.settleFixes(statement.kind, statement.name.value, statement.span);
    } else {
      statement = unknownStatement(p, kw, info);
    }
    if (p.diagnostics.length === diagnostics) return statement;
    return { kind: 'trivia', span: { ...statement.span }, broken: { kind: statement.kind, name: statement.name, statement } };
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    p.pending = [];
    p.recover();
    const broken: Trivia['broken'] = {};
    if (info.kind) broken.kind = info.kind;
    if (info.name) broken.name = info.name;
    return { kind: 'trivia', span: { start: kw.start, end: p.prevEnd }, broken };
  }
}

/**
 * Not a statement keyword. When it is close to one and the rest reads as that statement, the fix
 * is the statement with its keyword spelled right; otherwise the statement is abandoned.
 */
function unknownStatement(p: Parser, kw: Tok, info: StatementInfo): Statement {
  if (kw.type !== 'ident') {
    const what = kw.type === 'invalid' ? `unexpected character ${describe(kw)}` : `unexpected ${describe(kw)}`;
    p.error(`${what}; expected a statement (${KEYWORD_LIST})`, kw.start, kw.end);
    p.advance();
    throw new Failure();
  }
  if (PART_KEYWORDS.includes(kw.text)) {
    p.error(`\`${kw.text}\` is a kernel part: it belongs inside \`kernel package.name@1 { ... }\``, kw.start, kw.end);
    p.advance();
    throw new Failure();
  }
  if (kw.text === 'function') {
    // JavaScript's: told in the language's own form; its name is a fn that did not parse, so a
    // call of it is not told again as an unknown function.
    const next = p.peek();
    info.kind = 'fn';
    if (next.type === 'ident') info.name = { value: next.text, span: { start: next.start, end: next.end } };
    p.error(`\`function\` is JavaScript's: a fn is written \`fn ${next.type === 'ident' ? next.text : 'NAME'}(t: f32): f32 { ... }\`, each parameter and the result typed`, kw.start, kw.end);
    p.advance();
    throw new Failure();
  }
  const guess = closest(kw.text, STATEMENT_KEYWORDS) as StatementKind | undefined;
  const message = guess
    ? `unknown statement \`${kw.text}\`; did you mean \`${guess}\`?`
    : `unknown statement \`${kw.text}\`; expected one of ${KEYWORD_LIST}`;
  if (guess) {
    const saved = p.save();
    p.advance();
    try {
      const statement = PARSERS[guess](p, kw, {});
      if (p.diagnostics.length === saved.diagnostics) {
        const text = guess + p.text.slice(kw.end, statement.span.end);
        p.error(message, kw.start, kw.end, { [guess]: statement.name.value, text });
        info.kind = guess;
        info.name = statement.name;
        return statement;
      }
    } catch (e) {
      if (!(e instanceof Failure)) throw e;
    }
    p.restore(saved);
  }
  p.error(message, kw.start, kw.end);
  p.advance();
  throw new Failure();
}

function parseUse(p: Parser, kw: Tok, info: StatementInfo): Statement {
  const s = p.tok;
  if (s.type !== 'string') p.expected('a path in double quotes after `use` (`use "kernels.esn";`)');
  p.advance();
  if (s.unterminated) p.error('unterminated string: the path has no closing `"`', s.start, s.end);
  else if (s.text[0] !== '"') p.error('a path is written in double quotes: `use "kernels.esn";`', s.start, s.end);
  const name = (info.name = { value: s.value ?? '', span: { start: s.start, end: s.end } });
  const d = p.semicolon('the use statement');
  if (d) p.pending.push(d);
  return { kind: 'use', name, span: { start: kw.start, end: p.prevEnd } };
}

function parseParam(p: Parser, kw: Tok, info: StatementInfo): Statement {
  const name = (info.name = p.name('a param name', 'after `param`'));
  p.expectPunct(':', `after the param name \`${name.value}\` (\`param NAME: TYPE = VALUE;\`)`);
  const type = parseTypeRef(p, `for the param \`${name.value}\``);
  let value: Literal | undefined;
  let range: ParamStatement['range'];
  if (p.isPunct('=')) {
    p.advance();
    value = parseLiteral(p, 'after `=`');
  }
  if (p.isWord('range')) {
    const r = p.advance();
    const lo = parseNumber(p, 'the low end of the range (`range LO..HI`)');
    p.expectPunct('..', 'between the ends of the range (`range LO..HI`)');
    const hi = parseNumber(p, 'the high end of the range (`range LO..HI`)');
    range = { lo: lo.value, hi: hi.value, span: { start: r.start, end: p.prevEnd }, ends: [lo.span, hi.span] };
  }
  const alternatives = [...(value || range ? [] : ['`=`']), ...(range ? [] : ['`range`'])];
  const d = p.semicolon('the param declaration', alternatives);
  if (d) p.pending.push(d);
  return {
    kind: 'param',
    name,
    type,
    ...(value ? { value } : {}),
    ...(range ? { range } : {}),
    span: { start: kw.start, end: p.prevEnd },
  };
}

function parseInput(p: Parser, kw: Tok, info: StatementInfo): Statement {
  const name = (info.name = p.name('an input name', 'after `input`'));
  p.expectPunct(':', `after the input name \`${name.value}\` (\`input NAME: field2<T>;\`)`);
  const type = parseTypeRef(p, `for the input \`${name.value}\``);
  let value: Literal | undefined;
  let size: SizeLiteral | undefined;
  if (p.isPunct('=')) {
    p.advance();
    value = parseLiteral(p, 'after `=`');
  }
  if (p.isWord('size')) {
    p.advance();
    size = parseSize(p, 'after `size`');
  }
  const alternatives = [...(value || size ? [] : ['`=`']), ...(size ? [] : ['`size`'])];
  const d = p.semicolon('the input declaration', alternatives);
  if (d) p.pending.push(d);
  return {
    kind: 'input',
    name,
    type,
    ...(value ? { value } : {}),
    ...(size ? { size } : {}),
    span: { start: kw.start, end: p.prevEnd },
  };
}

function parseStruct(p: Parser, kw: Tok, info: StatementInfo): Statement {
  const name = (info.name = p.name('a struct name', 'after `struct`'));
  p.openBrace(`after the struct name \`${name.value}\``);
  const fields: { name: Token; type: TypeRef; span: { start: number; end: number } }[] = [];
  while (!p.closeBrace(`struct \`${name.value}\``)) {
    if (p.tok.type !== 'ident') p.expected(`a field (\`NAME: TYPE;\`) or \`}\` to close struct \`${name.value}\``);
    const start = p.tok.start;
    const field = p.name('a field name', `in struct \`${name.value}\``);
    p.expectPunct(':', `after the field name \`${field.value}\` (\`NAME: TYPE;\`)`);
    const type = parseTypeRef(p, `for the field \`${field.value}\``);
    const d = p.semicolon(`the struct field \`${field.value}\``);
    if (d) p.pending.push(d);
    fields.push({ name: field, type, span: { start, end: p.prevEnd } });
  }
  if (p.isPunct(';') && p.text[p.prevEnd - 1] === '}') p.advance();
  return { kind: 'struct', name, fields, span: { start: kw.start, end: p.prevEnd } };
}

function parseType(p: Parser, kw: Tok, info: StatementInfo): Statement {
  const name = (info.name = p.name('a type name', 'after `type`'));
  p.expectPunct('=', `after the type name \`${name.value}\` (\`type NAME = TYPE;\`)`);
  const type = parseTypeRef(p, 'after `=`');
  const d = p.semicolon('the type declaration');
  if (d) p.pending.push(d);
  return { kind: 'type', name, type, span: { start: kw.start, end: p.prevEnd } };
}

function parseFn(p: Parser, kw: Tok, info: StatementInfo): Statement {
  const name = (info.name = p.name('a function name', 'after `fn`'));
  p.expectPunct('(', `after the function name \`${name.value}\` (\`fn NAME(a: f32): f32 { ... }\`)`);
  const params: { name: Token; type: TypeRef; span: { start: number; end: number } }[] = [];
  if (!p.isPunct(')')) {
    for (;;) {
      const start = p.tok.start;
      const param = p.name('a parameter name', `of \`${name.value}\``);
      p.expectPunct(':', `after the parameter name \`${param.value}\` (\`NAME: TYPE\`)`);
      const type = parseTypeRef(p, `for the parameter \`${param.value}\``);
      params.push({ name: param, type, span: { start, end: p.prevEnd } });
      if (!p.isPunct(',')) break;
      p.advance();
    }
  }
  if (!p.isPunct(')')) p.expected(`\`,\` or \`)\` in the parameters of \`${name.value}\``);
  p.advance();
  let returns: TypeRef | undefined;
  if (p.isPunct(':')) {
    p.advance();
    returns = parseTypeRef(p, `for the result of \`${name.value}\``);
  }
  const body = p.body(`the body of fn \`${name.value}\``);
  return { kind: 'fn', name, params, ...(returns ? { returns } : {}), body, span: { start: kw.start, end: p.prevEnd } };
}

function parseOutput(p: Parser, kw: Tok, info: StatementInfo): Statement {
  const name = (info.name = p.name('an output name', 'after `output`'));
  p.expectPunct('<-', `after the output name \`${name.value}\` (\`output NAME <- NODE.PORT;\`)`);
  const from = p.ref(`after \`output ${name.value} <-\``);
  const d = p.semicolon('the output declaration');
  if (d) p.pending.push(d);
  return { kind: 'output', name, from, span: { start: kw.start, end: p.prevEnd } };
}
