// The IR as text for people (`ENTELECHY_DUMP=after:lower`, `entelechy check --dump fuse`): one
// statement a line, locals L0.., uniforms U0.., fields F0.. with their names alongside.

import type { Expr, IrFunction, Stmt } from './ir.js';
import { unreachable } from './walk.js';

export function printFunction(fn: IrFunction): string {
  const lines = [`function ${fn.nodes.join(' + ')} (${fn.dims}-d, fuel ${fn.fuel})`];
  fn.fields.forEach((f, i) => lines.push(`  F${i} ${f.role} ${f.name}: ${f.comps.join(', ')}`));
  fn.uniforms.forEach((u, i) => lines.push(`  U${i} ${u.name}: ${u.t}`));
  if (fn.locals.length) lines.push(`  locals ${fn.locals.map((t, i) => `L${i}: ${t}`).join(', ')}`);
  const body = (stmts: Stmt[], indent: string) => {
    for (const s of stmts) lines.push(...printStmt(fn, s, indent));
  };
  body(fn.body, '  ');
  for (const st of fn.stores) lines.push(`  store F${st.field}.${st.comp} = L${st.local}`);
  return lines.join('\n');
}

function printStmt(fn: IrFunction, s: Stmt, indent: string): string[] {
  const nested = (stmts: Stmt[]) => stmts.flatMap((t) => printStmt(fn, t, indent + '  '));
  switch (s.k) {
    case 'set':
      return [`${indent}L${s.local} = ${printExpr(s.e)}`];
    case 'if':
      return [`${indent}if ${printExpr(s.c)} {`, ...nested(s.then), ...(s.else.length ? [`${indent}} else {`, ...nested(s.else)] : []), `${indent}}`];
    case 'block':
      return [`${indent}block {`, ...nested(s.body), `${indent}}`];
    case 'loop':
      return [`${indent}loop (fuel of ${fn.nodes[s.node] ?? s.node}) {`, ...nested(s.body), `${indent}}`];
    case 'break':
      return [`${indent}break ${s.depth}`];
    default:
      return unreachable(s);
  }
}

export function printExpr(e: Expr): string {
  switch (e.k) {
    case 'const':
      return e.t === 'f32' ? String(e.v) : e.t === 'bool' ? (e.v ? 'true' : 'false') : `${e.v}i`;
    case 'local':
      return `L${e.i}`;
    case 'coord':
      return 'xyz'[e.axis];
    case 'extent':
      return `${['width', 'height', 'depth'][e.axis]}${e.field === undefined ? '' : `(F${e.field})`}`;
    case 'uniform':
      return `U${e.slot}`;
    case 'load':
      return `F${e.field}.${e.comp}` + (e.at ? `[${e.at.coords.map(printExpr).join(', ')} ${e.at.mode}]` : '');
    case 'op':
      return `${e.op}(${e.args.map(printExpr).join(', ')})`;
    case 'select':
      return `(${printExpr(e.c)} ? ${printExpr(e.a)} : ${printExpr(e.b)})`;
    default:
      return unreachable(e);
  }
}
