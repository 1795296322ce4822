// The one walker over the IR: what each kind of expression and statement contains, written once.
// Fusion, the analyses and the passes map and visit the IR through these functions instead of
// switching on every kind themselves, so a new kind of expression or statement is a type error
// here (the `never` defaults) rather than a case some traversal silently passes through.

import type { Expr, Stmt } from './ir.js';
import { unreachable } from './unreachable.js';

export { unreachable };

const NONE: readonly Expr[] = [];

/** The sub-expressions of `e`, in evaluation order. */
export function exprChildren(e: Expr): readonly Expr[] {
  switch (e.k) {
    case 'const':
    case 'local':
    case 'coord':
    case 'extent':
    case 'uniform':
      return NONE;
    case 'load':
      return e.at ? e.at.coords : NONE;
    case 'op':
      return e.args;
    case 'select':
      return [e.c, e.a, e.b];
    default:
      return unreachable(e);
  }
}

/** `e` with its sub-expressions replaced by `f` of each (the node itself unchanged otherwise). */
export function mapChildren(e: Expr, f: (e: Expr) => Expr): Expr {
  switch (e.k) {
    case 'const':
    case 'local':
    case 'coord':
    case 'extent':
    case 'uniform':
      return e;
    case 'load':
      return e.at ? { ...e, at: { mode: e.at.mode, coords: e.at.coords.map(f) } } : e;
    case 'op':
      return { ...e, args: e.args.map(f) };
    case 'select':
      return { ...e, c: f(e.c), a: f(e.a), b: f(e.b) };
    default:
      return unreachable(e);
  }
}

/** Rewrite an expression bottom-up: `f` sees each node with its sub-expressions already rewritten. */
export function mapExpr(e: Expr, f: (e: Expr) => Expr): Expr {
  return f(mapChildren(e, (c) => mapExpr(c, f)));
}

// someExpr and visitExpr switch themselves rather than call exprChildren: the analyses call them
// in their inner loops, and a select's children would be a new array at every call.

/** Does `pred` hold for some node of `e` (`e` itself first, then its sub-expressions)? */
export function someExpr(e: Expr, pred: (e: Expr) => boolean): boolean {
  if (pred(e)) return true;
  switch (e.k) {
    case 'const':
    case 'local':
    case 'coord':
    case 'extent':
    case 'uniform':
      return false;
    case 'load':
      return e.at !== undefined && e.at.coords.some((c) => someExpr(c, pred));
    case 'op':
      return e.args.some((c) => someExpr(c, pred));
    case 'select':
      return someExpr(e.c, pred) || someExpr(e.a, pred) || someExpr(e.b, pred);
    default:
      return unreachable(e);
  }
}

/** Call `f` on every node of `e`, parents before their sub-expressions. */
export function visitExpr(e: Expr, f: (e: Expr) => void): void {
  f(e);
  switch (e.k) {
    case 'const':
    case 'local':
    case 'coord':
    case 'extent':
    case 'uniform':
      return;
    case 'load':
      if (e.at) for (const c of e.at.coords) visitExpr(c, f);
      return;
    case 'op':
      for (const c of e.args) visitExpr(c, f);
      return;
    case 'select':
      visitExpr(e.c, f);
      visitExpr(e.a, f);
      visitExpr(e.b, f);
      return;
    default:
      unreachable(e);
  }
}

/** The expressions a statement evaluates itself (not those of the statements it contains). */
export function stmtExprs(s: Stmt): readonly Expr[] {
  switch (s.k) {
    case 'set':
      return [s.e];
    case 'if':
      return [s.c];
    case 'block':
    case 'loop':
    case 'break':
      return NONE;
    default:
      return unreachable(s);
  }
}

const NO_LISTS: readonly Stmt[][] = [];

/** The statement lists a statement contains: an if's branches, a block's or loop's body. */
export function stmtLists(s: Stmt): readonly Stmt[][] {
  switch (s.k) {
    case 'set':
    case 'break':
      return NO_LISTS;
    case 'if':
      return [s.then, s.else];
    case 'block':
    case 'loop':
      return [s.body];
    default:
      return unreachable(s);
  }
}

export interface StmtMap {
  /** Applied bottom-up to every node of every expression (mapExpr). */
  expr?: (e: Expr) => Expr;
  /** Applied to each statement once its expressions and contained statements are rewritten. */
  stmt?: (s: Stmt) => Stmt;
}

/** Rewrite one statement: its expressions, the statements it contains, then `m.stmt` of it. */
export function mapStmt(s: Stmt, m: StmtMap): Stmt {
  const ex = (e: Expr) => (m.expr ? mapExpr(e, m.expr) : e);
  const list = (l: Stmt[]) => mapStmts(l, m);
  let out: Stmt;
  switch (s.k) {
    case 'set':
      out = { k: 'set', local: s.local, e: ex(s.e) };
      break;
    case 'if':
      out = { k: 'if', c: ex(s.c), then: list(s.then), else: list(s.else) };
      break;
    case 'block':
      out = { k: 'block', body: list(s.body) };
      break;
    case 'loop':
      out = { k: 'loop', body: list(s.body), node: s.node };
      break;
    case 'break':
      out = s;
      break;
    default:
      return unreachable(s);
  }
  return m.stmt ? m.stmt(out) : out;
}

/** Rewrite a statement list (mapStmt of each). */
export function mapStmts(stmts: Stmt[], m: StmtMap): Stmt[] {
  return stmts.map((s) => mapStmt(s, m));
}

export interface StmtVisit {
  /** Every node of every expression, parents first. */
  expr?: (e: Expr) => void;
  /** Every statement, before its expressions and the statements it contains. */
  stmt?: (s: Stmt) => void;
}

/** Visit every statement and expression of a list, in order. */
export function visitStmts(stmts: readonly Stmt[], v: StmtVisit): void {
  for (const s of stmts) {
    v.stmt?.(s);
    if (v.expr) for (const e of stmtExprs(s)) visitExpr(e, v.expr);
    for (const l of stmtLists(s)) visitStmts(l, v);
  }
}

/** Does `pred` hold for some statement of the list or of the lists it contains? */
export function someStmt(stmts: readonly Stmt[], pred: (s: Stmt) => boolean): boolean {
  for (const s of stmts) {
    if (pred(s)) return true;
    switch (s.k) {
      case 'set':
      case 'break':
        break;
      case 'if':
        if (someStmt(s.then, pred) || someStmt(s.else, pred)) return true;
        break;
      case 'block':
      case 'loop':
        if (someStmt(s.body, pred)) return true;
        break;
      default:
        unreachable(s);
    }
  }
  return false;
}

/** Does `pred` hold for some node of some expression in the list (at any depth)? */
export function someStmtExpr(stmts: readonly Stmt[], pred: (e: Expr) => boolean): boolean {
  return someStmt(stmts, (s) => stmtExprs(s).some((e) => someExpr(e, pred)));
}
