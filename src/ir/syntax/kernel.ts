// `kernel ID { PART* }` and its parts: grants, in/out/state ports, size, each, migrate.

import type { KernelPart, KernelStatement, Literal, PortDecl, PortKind, Token } from './tree.js';
import type { Tok } from './scan.js';
import { PART_KEYWORDS } from './forms.js';
import { closest } from '../suggest.js';
import { orList, type Parser } from './parser.js';
import type { StatementInfo } from './statement.js';
import { parseTypeRef, parseLiteral, parseSize } from './values.js';

export function parseKernel(p: Parser, kw: Tok, info: StatementInfo): KernelStatement {
  const name = p.kernelId('a kernel id `package.name@1` after `kernel`');
  info.name = name;
  p.openBrace(`after the kernel id \`${name.value}\``);
  const parts: KernelPart[] = [];
  for (;;) {
    // A fn written inside the kernel (as in GLSL or a JavaScript class): told as that, with no fix.
    // Taken for a missing `}`, its fix closed the kernel before the fn, and a kernel replaced by it
    // lost its `each` body.
    if (p.isWord('fn')) {
      const next = p.peek();
      const fn = next.type === 'ident' ? `fn ${next.text}` : 'fn';
      p.error(`\`${fn}\` is inside kernel \`${name.value}\`: a fn is declared at the top level of a document, outside every kernel; move \`${fn}\` above \`kernel ${name.value}\` (the kernel calls it from there)`, p.tok.start, p.tok.end); // no fix: the statement is not the place to mend it
      p.depth--;
      break;
    }
    if (p.closeBrace(`kernel \`${name.value}\``)) break;
    parts.push(parsePart(p, name));
  }
  return { kind: 'kernel', name, parts, span: { start: kw.start, end: p.prevEnd } };
}

function parsePart(p: Parser, kernel: Token): KernelPart {
  const t = p.tok;
  const where = `or \`}\` to close kernel \`${kernel.value}\``;
  if (t.type !== 'ident' || !PART_KEYWORDS.includes(t.text)) {
    const guess = t.type === 'ident' ? closest(t.text, PART_KEYWORDS) : undefined;
    if (guess) p.fail(`unknown kernel part \`${t.text}\`; did you mean \`${guess}\`?`);
    p.expected(`a kernel part (${orList(PART_KEYWORDS.map((k) => `\`${k}\``))}) ${where}`);
  }
  p.advance();
  switch (t.text) {
    case 'grants': {
      const grants: Token[] = [];
      for (;;) {
        grants.push(p.dotted('a capability (`field.read`, `time.read`, ...)'));
        if (!p.isPunct(',')) break;
        p.advance();
      }
      const d = p.semicolon('the grants', ['`,`']);
      if (d) p.pending.push(d);
      return { part: 'grants', grants, span: { start: t.start, end: p.prevEnd } };
    }
    case 'in':
    case 'out':
    case 'state': {
      const kind = t.text as PortKind;
      const name = p.name('a port name', `after \`${kind}\``);
      p.expectPunct(':', `after the port name \`${name.value}\` (\`${kind} NAME: TYPE\`)`);
      const type = parseTypeRef(p, `for the port \`${name.value}\``);
      let value: Literal | undefined;
      if (p.isPunct('=')) {
        const eq = p.advance();
        value = parseLiteral(p, `after \`=\``);
        if (kind === 'out') {
          p.edits.push({ start: type.span.end, end: value.span.end, text: '' });
          p.pending.push(p.error('an `out` port takes no value: the body assigns it', eq.start, value.span.end));
        }
      }
      const clauses = parseCarryClauses(p, name);
      const d = p.semicolon(`the \`${kind}\` port \`${name.value}\``, [...(value || kind === 'out' ? [] : ['`=`']), ...(kind === 'state' ? CARRY_CLAUSES.filter((c) => !(c in clauses)).map((c) => `\`${c}\``) : [])]);
      if (d) p.pending.push(d);
      return { part: 'port', kind, name, type, ...(value ? { value } : {}), ...clauses, span: { start: t.start, end: p.prevEnd } };
    }
    case 'size': {
      if (p.isPunct('=')) {
        // A node's size is `size = W x H;`, a kernel's is `size W x H;`: mend it.
        const eq = p.advance();
        p.edits.push({ start: eq.start, end: p.tok.start, text: '' });
        p.pending.push(p.error("a kernel's size takes no `=`: it is written `size W x H;`", eq.start, eq.end));
      }
      const size = parseSize(p, 'after `size`');
      const d = p.semicolon('the kernel size');
      if (d) p.pending.push(d);
      return { part: 'size', size, span: { start: t.start, end: p.prevEnd } };
    }
    case 'each': {
      p.expectPunct('(', 'after `each` (`each (x, y) { ... }`)');
      const coords: Token[] = [];
      for (;;) {
        coords.push(p.name('a coordinate name', 'in `each (...)`'));
        if (!p.isPunct(',')) break;
        p.advance();
      }
      if (!p.isPunct(')')) p.expected('`,` or `)` after a coordinate name of `each`');
      p.advance();
      if (coords.length > 3) {
        const extra = coords[3].span.start;
        p.error(`\`each\` takes 1 to 3 coordinate names (x, y, z), found ${coords.length}`, extra, coords[coords.length - 1].span.end);
      }
      const body = p.body(`the each body of kernel \`${kernel.value}\``);
      return { part: 'each', coords, body, span: { start: t.start, end: p.prevEnd } };
    }
    default: {
      // migrate
      if (!p.isWord('from')) p.expected('`from` after `migrate` (`migrate from package.name@1 { ... }`)');
      p.advance();
      const from = p.kernelId('the kernel id migrated from');
      const body = p.body(`the migrate body of kernel \`${kernel.value}\``);
      return { part: 'migrate', from, body, span: { start: t.start, end: p.prevEnd } };
    }
  }
}

/** The clauses after a port's type and value that say how its state is carried (auto-migrate.ts). */
const CARRY_CLAUSES = ['resample', 'narrow'];
const FILTERS = ['nearest', 'bilinear'];

/**
 * `resample nearest|bilinear` and `narrow`, in either order, each once. Read on any port; the
 * checker says where they do not belong (only a state is carried).
 */
function parseCarryClauses(p: Parser, port: Token): Pick<PortDecl, 'resample' | 'narrow'> {
  const out: Pick<PortDecl, 'resample' | 'narrow'> = {};
  while (p.tok.type === 'ident' && CARRY_CLAUSES.includes(p.tok.text)) {
    const word = p.advance();
    if (word.text in out) p.error(`the port \`${port.value}\` says \`${word.text}\` twice`, word.start, word.end);
    if (word.text === 'narrow') {
      out.narrow = { start: word.start, end: word.end };
      continue;
    }
    const f = p.tok;
    if (f.type !== 'ident' || !FILTERS.includes(f.text)) {
      const guess = f.type === 'ident' ? closest(f.text, FILTERS) : undefined;
      p.fail(`\`resample\` takes a filter: \`nearest\` or \`bilinear\`${guess ? ` (did you mean \`${guess}\`?)` : ''}, found ${f.type === 'ident' ? `\`${f.text}\`` : 'none'}`, f.start, f.end);
    }
    p.advance();
    out.resample = { filter: { value: f.text, span: { start: f.start, end: f.end } }, span: { start: word.start, end: f.end } };
  }
  return out;
}
