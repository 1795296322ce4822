// `node NAME: ID { MEMBER* }` and its members: values, params, edges and the size.

import type { NodeMember, NodeStatement, Token } from './tree.js';
import type { Tok } from './scan.js';
import { CONSTRUCTORS, isReserved } from './forms.js';
import type { Parser } from './parser.js';
import type { StatementInfo } from './statement.js';
import { parseLiteral, parseSize } from './values.js';

export function parseNode(p: Parser, kw: Tok, info: StatementInfo): NodeStatement {
  const name = p.name('a node name', 'after `node`');
  info.name = name;
  p.expectPunct(':', `after the node name \`${name.value}\` (\`node NAME: package.kernel@1 { ... }\`)`);
  const kernel = p.kernelId(`the kernel id node \`${name.value}\` runs`);
  p.openBrace(`after the kernel id \`${kernel.value}\``);
  const members: NodeMember[] = [];
  while (!p.closeBrace(`node \`${name.value}\``)) members.push(parseMember(p, name.value));
  return { kind: 'node', name, kernel, members, span: { start: kw.start, end: p.prevEnd } };
}

function parseMember(p: Parser, node: string): NodeMember {
  const t = p.tok;
  if (t.type !== 'ident') {
    p.expected(`a member (\`NAME = VALUE;\`, \`NAME <- NODE.PORT;\` or \`size = W x H;\`) or \`}\` to close node \`${node}\``);
  }
  const name: Token = { value: t.text, span: { start: t.start, end: t.end } };
  p.advance();
  let member: NodeMember;
  if (t.text === 'size') {
    p.expectPunct('=', "after `size` (a node's size is `size = W x H;`)");
    const size = parseSize(p, 'after `size =`');
    const d = p.semicolon('the member `size`');
    member = { form: 'size', name, size, span: { start: t.start, end: p.prevEnd } };
    if (d) d.fix = { node, member: 'size', text: p.mended(t.start, p.prevEnd) };
    return member;
  }
  if (isReserved(t.text)) p.error(`\`${t.text}\` is a reserved word; it can't name a member`, t.start, t.end);
  if (p.isPunct('=')) {
    const eq = p.advance();
    const v = p.tok;
    if (v.type === 'ident' && v.text !== 'true' && v.text !== 'false' && !CONSTRUCTORS.has(v.text)) {
      if (isReserved(v.text)) p.expected(`a value or a param name after \`${t.text} =\``);
      p.advance();
      if (p.isPunct('.')) {
        // `src = g.result;`: a port read with `=`, as in most languages; an edge is written with `<-`.
        p.seek(v.start);
        const from = p.ref(`after \`${t.text} =\``);
        p.edits.push({ start: eq.start, end: eq.end, text: '<-' });
        p.pending.push(p.error(`\`${t.text} = ${from.node.value}${from.port ? `.${from.port.value}` : ''}\` reads another node's port: an edge is written with \`<-\`, \`${t.text} <- ${from.node.value}${from.port ? `.${from.port.value}` : ''};\` (\`=\` gives a member a value or a param)`, eq.start, eq.end));
        member = { form: 'edge', name, from, span: { start: t.start, end: 0 } };
      } else {
        const param = { value: v.text, span: { start: v.start, end: v.end } };
        member = { form: 'param', name, param, span: { start: t.start, end: 0 } };
      }
    } else {
      const value = parseLiteral(p, `after \`${t.text} =\``);
      member = { form: 'value', name, value, span: { start: t.start, end: 0 } };
    }
  } else if (p.isPunct('<-')) {
    p.advance();
    const from = p.ref(`after \`${t.text} <-\``);
    member = { form: 'edge', name, from, span: { start: t.start, end: 0 } };
  } else {
    return p.expected(`\`=\` or \`<-\` after the member name \`${t.text}\``);
  }
  const d = p.semicolon(`the member \`${t.text}\``);
  member.span.end = p.prevEnd;
  if (d) d.fix = { node, member: t.text, text: p.mended(t.start, p.prevEnd) };
  return member;
}
