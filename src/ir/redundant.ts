// Redundant sets become copies. A `set` whose expression another local already holds (the same
// expression of the same values, set earlier on every path to it) reads that local instead, and
// later reads of a copy read the original. Lowering writes each `f.sample` whole: the ray
// marcher's gradient, sample(p.x + e, p.y, p.z) - sample(p.x - e, p.y, p.z), ..., computes the
// floor, the conversion and the weight of p.y and p.z again in each of its seven samples; here
// 21 axes become 9, and the corners' base locals are the same locals.
//
// Exact: expressions have no effects and read nothing a body writes (fields are stored after it),
// so the same expression of the same locals gives the same value. An expression is available
// from its set until a local it reads or its holder is set again; values set inside an `if`, a
// block or a loop are forgotten after it (they may not have run), and entering a loop forgets the
// values of the locals it writes (they differ from the second repetition on).

import type { Expr, IrFunction, Stmt } from './ir.js';
import { exprChildren, mapExpr, unreachable, visitStmts } from './walk.js';

/** Expressions larger than this (as trees) are neither looked up nor remembered: their keys would cost more than they save. */
const LARGEST = 48;

interface Known {
  /** Expression key -> the local that holds it. */
  held: Map<string, number>;
  /** Local -> the keys that read it or that it holds (possibly more: forgetting more is safe). */
  keysOf: Map<number, Set<string>>;
  /** Local -> the local it is a copy of (never a copy itself). */
  copyOf: Map<number, number>;
}

/** `fn` with each set of an expression a local already holds turned into a copy, and copies' reads into the original's. */
export function dropRedundant(fn: IrFunction): IrFunction {
  const known: Known = { held: new Map(), keysOf: new Map(), copyOf: new Map() };
  let changed = false;
  const body = list(fn.body, known, () => (changed = true));
  return changed ? { ...fn, body: dropUnreadCopies(body, fn) } : fn;
}

/** The copies of locals no statement or store reads (most of the copies made here) left out. */
function dropUnreadCopies(body: Stmt[], fn: IrFunction): Stmt[] {
  const read = new Set(fn.stores.map((st) => st.local));
  visitStmts(body, { expr: (e) => e.k === 'local' && read.add(e.i) });
  const keep = (stmts: Stmt[]): Stmt[] =>
    stmts.flatMap((s): Stmt[] => {
      switch (s.k) {
        case 'set':
          return s.e.k === 'local' && !read.has(s.local) ? [] : [s];
        case 'if':
          return [{ ...s, then: keep(s.then), else: keep(s.else) }];
        case 'block':
        case 'loop':
          return [{ ...s, body: keep(s.body) }];
        case 'break':
          return [s];
        default:
          return unreachable(s);
      }
    });
  return keep(body);
}

function list(stmts: Stmt[], known: Known, changed: () => void): Stmt[] {
  return stmts.map((s) => statement(s, known, changed));
}

function statement(s: Stmt, known: Known, changed: () => void): Stmt {
  switch (s.k) {
    case 'set': {
      let e = readOriginals(s.e, known);
      const key = keyOf(e);
      const holder = key === null ? undefined : known.held.get(key);
      if (holder !== undefined && holder !== s.local) e = { k: 'local', t: e.t, i: holder };
      if (e !== s.e) changed();
      forget(known, [s.local]);
      if (e.k === 'local' && e.i !== s.local) known.copyOf.set(s.local, e.i);
      else if (key !== null && !reads(e, s.local)) remember(known, key, s.local, e);
      return e === s.e ? s : { k: 'set', local: s.local, e };
    }
    case 'if': {
      const c = readOriginals(s.c, known);
      if (c !== s.c) changed();
      const then = list(s.then, copy(known), changed);
      const otherwise = list(s.else, copy(known), changed);
      forget(known, written([...s.then, ...s.else]));
      return { k: 'if', c, then, else: otherwise };
    }
    case 'block': {
      const body = list(s.body, copy(known), changed);
      forget(known, written(s.body));
      return { ...s, body };
    }
    case 'loop': {
      forget(known, written(s.body));
      const body = list(s.body, copy(known), changed);
      return { ...s, body };
    }
    case 'break':
      return s;
    default:
      return unreachable(s);
  }
}

function copy(known: Known): Known {
  return { held: new Map(known.held), keysOf: new Map(known.keysOf), copyOf: new Map(known.copyOf) };
}

function remember(known: Known, key: string, holder: number, e: Expr): void {
  known.held.set(key, holder);
  const index = (local: number) => {
    // A fresh set per copy of Known would cost a copy per branch; one shared with an enclosing
    // statement's Known may gain keys from a branch: that Known then forgets more, which is safe.
    let keys = known.keysOf.get(local);
    if (!keys) known.keysOf.set(local, (keys = new Set()));
    keys.add(key);
  };
  index(holder);
  visitLocalsOf(e, index);
}

/** `e` reading each copy's original instead of the copy. */
function readOriginals(e: Expr, known: Known): Expr {
  if (!known.copyOf.size) return e;
  return mapExpr(e, (x) => {
    const original = x.k === 'local' ? known.copyOf.get(x.i) : undefined;
    return original === undefined ? x : { k: 'local', t: x.t, i: original };
  });
}

/** Forget what the locals `set` held, the expressions that read them and the copies of or by them. */
function forget(known: Known, set: Iterable<number>): void {
  for (const local of set) {
    for (const key of known.keysOf.get(local) ?? []) known.held.delete(key);
    known.keysOf.delete(local);
    known.copyOf.delete(local);
  }
  if (!known.copyOf.size) return;
  const gone = new Set(set);
  for (const [c, original] of known.copyOf) if (gone.has(original)) known.copyOf.delete(c);
}

/** The locals `stmts` set, at any depth. */
function written(stmts: Stmt[]): number[] {
  const out: number[] = [];
  visitStmts(stmts, { stmt: (s) => s.k === 'set' && out.push(s.local) });
  return out;
}

function reads(e: Expr, local: number): boolean {
  return e.k === 'local' ? e.i === local : exprChildren(e).some((c) => reads(c, local));
}

function visitLocalsOf(e: Expr, f: (local: number) => void): void {
  if (e.k === 'local') f(e.i);
  else for (const c of exprChildren(e)) visitLocalsOf(c, f);
}

/**
 * A text that two expressions share exactly when they compute the same value from the same
 * locals; null for leaves (a local, a constant: nothing to save) and for large expressions.
 */
export function keyOf(e: Expr): string | null {
  if (!exprChildren(e).length && !(e.k === 'load')) return null;
  let size = 0;
  const parts: string[] = [];
  const walk = (x: Expr): boolean => {
    if (++size > LARGEST) return false;
    switch (x.k) {
      case 'const':
        parts.push(`${x.t}:${Object.is(x.v, -0) ? '-0' : x.v}`);
        return true;
      case 'local':
        parts.push(`L${x.i}`);
        return true;
      case 'coord':
        parts.push(`c${x.axis}`);
        return true;
      case 'extent':
        parts.push(`e${x.axis}.${x.field ?? ''}`);
        return true;
      case 'uniform':
        parts.push(`u${x.slot}.${x.t}`);
        return true;
      case 'load':
        parts.push(`F${x.field}.${x.comp}.${x.t}${x.at ? `[${x.at.mode}` : ''}`);
        if (x.at && !x.at.coords.every(walk)) return false;
        parts.push(x.at ? ']' : '');
        return true;
      case 'op':
        parts.push(`${x.op}(`);
        if (!x.args.every(walk)) return false;
        parts.push(')');
        return true;
      case 'select':
        parts.push(`?${x.t}(`);
        if (![x.c, x.a, x.b].every(walk)) return false;
        parts.push(')');
        return true;
      default:
        return unreachable(x);
    }
  };
  return walk(e) ? parts.join(' ') : null;
}
