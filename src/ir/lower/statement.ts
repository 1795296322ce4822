// Lowering JavaScript-subset statements to structured IR: if, block, loop and break.

import type { Node as AcornNode } from 'acorn';
import type { Expr } from '../ir.js';
import type { FnStatement } from '../syntax/tree.js';
import { closest } from '../suggest.js';
import { BUILTIN_VALUES } from '../builtins.js';
import { F32, aType, components, type ElemType } from '../types.js';
import { cst, op, type Value } from './build.js';
import { BodyContext, FollowOnError, LowerError, type Env } from './context.js';
import { blockOrStatements } from './blocks.js';
import { MAX_CALL_DEPTH } from '../syntax/nesting.js';
import { assignable, binary, fail, lowerExpr, toBool } from './expression.js';

type N = AcornNode & Record<string, any>;

/** What people call the JavaScript statements kernels do not have. */
const STATEMENT_NAMES: Record<string, string> = {
  LabeledStatement: 'a label (`name: ...`)',
  TryStatement: '`try`',
  ThrowStatement: '`throw`',
  WithStatement: '`with`',
  ClassDeclaration: 'a class',
  DebuggerStatement: '`debugger`',
  ImportDeclaration: '`import`',
  ExportNamedDeclaration: '`export`',
  ExportDefaultDeclaration: '`export`',
};

/** Lower a list of statements; a mistake in one is reported and the rest still checked. */
export function lowerStatements(ctx: BodyContext, nodes: N[], errors: LowerError[]): void {
  for (const node of nodes) {
    try {
      lowerStatement(ctx, node, errors);
    } catch (e) {
      if (!(e instanceof LowerError)) throw e;
      if (!(e instanceof FollowOnError)) errors.push(e);
    }
  }
}

function lowerStatement(ctx: BodyContext, node: N, errors: LowerError[]): void {
  ctx.enter(node, () => lowerStatementHere(ctx, node, errors));
}

function lowerStatementHere(ctx: BodyContext, node: N, errors: LowerError[]): void {
  switch (node.type) {
    case 'EmptyStatement':
      return;
    case 'BlockStatement':
      ctx.withScope(() => lowerStatements(ctx, node.body, errors));
      return;
    case 'VariableDeclaration':
      for (const d of node.declarations) declare(ctx, node.kind, d);
      return;
    case 'ExpressionStatement':
      return expressionStatement(ctx, node.expression);
    case 'IfStatement': {
      const c = toBool(lowerExpr(ctx, node.test), node.test);
      const then = ctx.collect(() => ctx.withScope(() => lowerStatements(ctx, [node.consequent], errors)));
      const otherwise = node.alternate ? ctx.collect(() => ctx.withScope(() => lowerStatements(ctx, [node.alternate], errors))) : [];
      ctx.emit({ k: 'if', c, then, else: otherwise });
      return;
    }
    case 'ForStatement':
      ctx.withScope(() => {
        if (node.init) {
          if (node.init.type === 'VariableDeclaration') for (const d of node.init.declarations) declare(ctx, node.init.kind, d);
          else expressionStatement(ctx, node.init);
        }
        loop(ctx, node, node.update, false, errors);
      });
      return;
    case 'WhileStatement':
      loop(ctx, node, null, false, errors);
      return;
    case 'DoWhileStatement':
      loop(ctx, node, null, true, errors);
      return;
    case 'BreakStatement':
    case 'ContinueStatement': {
      if (node.label) fail(node, 'labelled break and continue are not supported');
      const depth = ctx.depthTo(node.type === 'BreakStatement' ? 'break' : 'continue');
      if (depth < 0) fail(node, `\`${node.type === 'BreakStatement' ? 'break' : 'continue'}\` outside a loop`);
      ctx.emit({ k: 'break', depth });
      return;
    }
    case 'ReturnStatement':
      return returnStatement(ctx, node);
    case 'ForInStatement':
    case 'ForOfStatement':
      return fail(node, 'for-in and for-of need collections, which kernels do not have: use `for (let i = 0; i < n; i++)`');
    case 'FunctionDeclaration':
      return fail(node, 'functions are declared at top level with `fn NAME(a: f32): f32 { ... }`');
    case 'SwitchStatement':
      return fail(node, '`switch` is not supported: use if / else if');
    default:
      return fail(node, `${STATEMENT_NAMES[node.type] ?? 'this kind of statement'} is not part of the kernel language (docs/language.md lists what is)`);
  }
}

function declare(ctx: BodyContext, kind: string, d: N): void {
  if (d.id.type !== 'Identifier') fail(d.id, 'destructuring is not supported: declare one name at a time');
  if (!d.init && d.id.type === 'Identifier') ctx.failedNames.add(d.id.name); // its uses are not told again
  if (!d.init) fail(d, `give \`${d.id.name}\` a value where it is declared: \`${kind} ${d.id.name} = 0.0;\``);
  if (kind === 'var') fail(d, 'use `let` or `const`, not `var`');
  const name = d.id.name as string;
  // The each body's coordinates and ports are its parameters: a `let x` anywhere in it hid the
  // coordinate (and read as it before its line), a `let gain` left the node's value of the port
  // unread. (JavaScript refuses such a `let` at a function body's top level; a second `let` of a
  // name in one block acorn refuses.)
  // A builtin value hidden by a variable (`let time = 0.0;`, which "declare it first" had advised
  // for `time = 0.0;`) froze the clock for the rest of the body without a word.
  const builtin = builtinValue(name);
  if (builtin) fail(d.id, `\`${name}\` is a builtin value (${builtin}): a variable of that name would hide it; name the variable otherwise`);
  const outer = ctx.fnStack.length ? undefined : ctx.lookup(name);
  if (outer?.kind === 'coord') fail(d.id, `\`${name}\` is the element's coordinate: a variable of that name would hide it; name the variable otherwise`);
  if (outer?.kind === 'port') fail(d.id, `\`${name}\` is a port of the kernel: a variable of that name would hide it${outer.port.kind === 'in' ? ' (and the value the node gives it)' : ''}; name the variable otherwise`);
  let v: Value;
  try {
    v = lowerExpr(ctx, d.init);
  } catch (e) {
    if (e instanceof LowerError) ctx.failedNames.add(d.id.name);
    throw e;
  }
  // A variable first given an integer and later a float holds floats throughout (see `widen`).
  if (ctx.widen.has(d) && v.type.kind === 'scalar' && v.type.name !== 'f32') v = assignable(v, F32, d, '');
  const locals = ctx.newLocals(v.type);
  v.comps.forEach((e, i) => ctx.emit({ k: 'set', local: locals[i], e }));
  ctx.declare(d.id.name, { kind: 'var', type: v.type, locals, mutable: kind !== 'const', decl: d });
}

/** Where an assignment writes: a variable or port's locals, or some of their components. */
function target(ctx: BodyContext, node: N): { type: ElemType; locals: number[]; decl?: AcornNode } {
  if (node.type === 'Identifier') {
    const b = ctx.lookup(node.name);
    if (!b && ctx.failedNames.has(node.name)) throw new FollowOnError(`\`${node.name}\` did not lower`, node);
    const builtin = !b && builtinValue(node.name);
    if (builtin) return fail(node, `\`${node.name}\` is a builtin value (${builtin}) and cannot be assigned; give a variable of another name the value: \`let t = ...;\``);
    if (!b) {
      // A misspelt out port read "declare it first" alone, as if a new variable were meant.
      const near = closest(node.name, ctx.visibleNames());
      const declare = `\`let ${node.name} = ...;\``;
      return fail(node, `unknown name \`${node.name}\`${near ? `; did you mean \`${near}\`? (a new variable is declared first: ${declare})` : `: declare it first with ${declare}`}`);
    }
    if (b.kind === 'coord') return fail(node, `\`${node.name}\` is the element's coordinate and cannot change`);
    if (b.kind === 'port') {
      if (!b.port.locals) return fail(node, `\`${node.name}\` is an in port: a kernel writes only its out and state ports`);
      return { type: b.port.type, locals: b.port.locals };
    }
    if (!b.mutable) return fail(node, `\`${node.name}\` is a const: declare it with let to change it`);
    return { type: b.type, locals: b.locals, decl: b.decl };
  }
  if (node.type === 'MemberExpression' && !node.computed) {
    const outer = target(ctx, node.object);
    const prop: string = node.property.name;
    if (outer.type.kind === 'struct') {
      let offset = 0;
      for (const f of outer.type.fields) {
        const n = components(f.type).length;
        if (f.name === prop) return { type: f.type, locals: outer.locals.slice(offset, offset + n) };
        offset += n;
      }
      return fail(node.property, `${outer.type.name} has no field \`${prop}\``);
    }
    if (outer.type.kind === 'vec' && /^[xyzwrgba]{1,4}$/.test(prop)) {
      const idx = [...prop].map((ch) => 'xyzw'.indexOf(ch) >= 0 ? 'xyzw'.indexOf(ch) : 'rgba'.indexOf(ch));
      const missing = [...prop].find((_, k) => idx[k] >= outer.locals.length);
      if (missing) fail(node.property, `cannot assign to \`.${prop}\`: ${aType(outer.type.name)} has no \`${missing}\` component`);
      const repeated = [...prop].find((ch, k) => idx.indexOf(idx[k]) !== k);
      if (repeated) fail(node.property, `cannot assign to \`.${prop}\`: it names a component twice (\`${repeated}\`), so the value would have two places; assign each component once`);
      const locals = idx.map((i) => outer.locals[i]);
      return { type: locals.length === 1 ? F32 : { kind: 'vec', name: `vec${locals.length}` as 'vec2', size: locals.length as 2 }, locals };
    }
    return fail(node.property, `cannot assign to \`.${prop}\` of ${aType(outer.type.name)}`);
  }
  return fail(node, 'only variables, out and state ports, and their components can be assigned');
}

function assign(ctx: BodyContext, t: { type: ElemType; locals: number[]; decl?: AcornNode }, v: Value, node: AcornNode): void {
  // An i32 variable given a float, or a bool one given a number: from now on (and in the retry)
  // it holds floats, as the JavaScript variable would hold the number (`let m = false; m = 0.5;`
  // kept a bool, and m * 2.0 was 2).
  const widens = t.type.kind === 'scalar' && v.type.kind === 'scalar' && ((t.type.name === 'i32' && v.type.name === 'f32') || (t.type.name === 'bool' && v.type.name !== 'bool'));
  if (t.decl && widens && !ctx.widen.has(t.decl)) {
    ctx.widen.add(t.decl);
    ctx.widened = true;
  }
  const fitted = assignable(v, t.type, node, 'the target');
  fitted.comps.forEach((e, i) => ctx.emit({ k: 'set', local: t.locals[i], e }));
}

const COMPOUND: Record<string, string> = { '+=': '+', '-=': '-', '*=': '*', '/=': '/', '%=': '%', '&=': '&', '|=': '|', '^=': '^', '<<=': '<<', '>>=': '>>', '>>>=': '>>>', '**=': '**' };

function expressionStatement(ctx: BodyContext, e: N): void {
  if (e.type === 'AssignmentExpression') {
    const t = target(ctx, e.left);
    let v = lowerExpr(ctx, e.right);
    if (e.operator !== '=') {
      const bin = COMPOUND[e.operator];
      if (!bin) fail(e, `the operator \`${e.operator}\` is not part of the kernel language`);
      v = binary(ctx, bin, current(ctx, t), v, e);
    }
    return assign(ctx, t, v, e);
  }
  if (e.type === 'UpdateExpression') {
    const t = target(ctx, e.argument);
    if (t.type.kind !== 'scalar' || t.type.name === 'bool') fail(e, `\`${e.operator}\` needs a number`);
    const one: Expr = { k: 'const', t: t.type.name, v: 1 };
    return assign(ctx, t, { type: t.type, comps: [op(`${t.type.name}.${e.operator === '++' ? 'add' : 'sub'}`, current(ctx, t).comps[0], one)] }, e);
  }
  if (e.type === 'SequenceExpression') {
    for (const x of e.expressions) expressionStatement(ctx, x);
    return;
  }
  if (e.type === 'CallExpression') {
    lowerExpr(ctx, e); // a fn called for nothing: allowed, though it computes nothing visible
    return;
  }
  fail(e, 'this expression computes a value and throws it away: assign it (`result = ...;`)');
}

function current(ctx: BodyContext, t: { type: ElemType; locals: number[] }): Value {
  return { type: t.type, comps: t.locals.map((i) => ({ k: 'local', t: ctx.locals[i], i } as Expr)) };
}

/**
 * for / while / do-while:  loop { [if (!test) break]  block { body }  update  [if (!test) break] }
 * `continue` leaves the inner block (so the update still runs); `break` leaves the loop.
 */
function loop(ctx: BodyContext, node: N, update: N | null, testAfter: boolean, errors: LowerError[]): void {
  const test: N | null = node.test;
  const body: N = node.body;
  // It would run out of fuel at every element, every frame: refused here, where it has a line.
  if (neverEnds(test, body)) fail(node, 'this loop never ends: its condition is always true and nothing in its body leaves it (no `break` or `return`); give it a condition that turns false, or a `break` under an `if`');
  const exitUnless = () => {
    if (!test) return;
    const c = toBool(lowerExpr(ctx, test), test);
    ctx.emit({ k: 'if', c: op('bool.not', c), then: [{ k: 'break', depth: 0 }], else: [] });
  };
  const stmts = ctx.inConstruct('break', () => {
    if (!testAfter) exitUnless();
    const inner = ctx.inConstruct('continue', () => ctx.withScope(() => lowerStatements(ctx, [body], errors)));
    blockOrStatements(inner).forEach((s) => ctx.emit(s));
    if (update) expressionStatement(ctx, update);
    if (testAfter) exitUnless();
  });
  ctx.emit({ k: 'loop', body: stmts, node: ctx.nodeIndex });
}

/** A loop whose test is absent or `true` and whose body holds no `break` of it and no `return`. */
function neverEnds(test: N | null, body: N): boolean {
  if (test && !(test.type === 'Literal' && test.value === true)) return false;
  const leaves = (n: unknown, nested: boolean): boolean => {
    if (!n || typeof n !== 'object') return false;
    if (Array.isArray(n)) return n.some((x) => leaves(x, nested));
    const t = (n as N).type;
    if (t === 'ReturnStatement' || (t === 'BreakStatement' && (!nested || (n as N).label))) return true;
    const inner = nested || t === 'ForStatement' || t === 'WhileStatement' || t === 'DoWhileStatement';
    return Object.entries(n).some(([k, v]) => k !== 'loc' && k !== 'range' && typeof v === 'object' && leaves(v, inner));
  };
  return !leaves(body, false);
}

function returnStatement(ctx: BodyContext, node: N): void {
  const fn = ctx.fnStack[ctx.fnStack.length - 1];
  const depth = ctx.depthTo('return');
  if (!fn) {
    // `return;` in an each body ends the element (its outputs keep what they hold).
    if (node.argument) fail(node, 'an each body returns nothing: assign its out ports instead');
    if (depth < 0) fail(node, 'internal: return outside its block');
    ctx.emit({ k: 'break', depth });
    return;
  }
  if (!node.argument) fail(node, `fn \`${fn.name}\` must return a value`);
  const v = lowerExpr(ctx, node.argument);
  if (!fn.result) {
    const type = fn.declared ?? v.type;
    fn.result = { type, locals: ctx.newLocals(type) };
  }
  const fitted = assignable(v, fn.result.type, node.argument, `the return type of fn \`${fn.name}\``);
  fitted.comps.forEach((e, i) => ctx.emit({ k: 'set', local: fn.result!.locals[i], e }));
  if (depth >= 0) ctx.emit({ k: 'break', depth });
}

/** returnsOnEveryPath's answers by body. */
const everyPath = new WeakMap<N[], boolean>();

/**
 * Whether every way through a fn's body ends at a `return`: one of its statements always returns
 * (a `return`, a block that always does, an `if` whose branches both do). A loop is not counted
 * on: its body may run no time at all.
 */
export function returnsOnEveryPath(body: N[]): boolean {
  let every = everyPath.get(body);
  if (every === undefined) everyPath.set(body, (every = body.some(alwaysReturns)));
  return every;
}

function alwaysReturns(n: N): boolean {
  if (n.type === 'ReturnStatement') return true;
  if (n.type === 'BlockStatement') return (n.body as N[]).some(alwaysReturns);
  if (n.type === 'IfStatement') return !!n.alternate && alwaysReturns(n.consequent as N) && alwaysReturns(n.alternate as N);
  return false;
}

/** needsReturnBlock's answers by body: a fn's body is walked once, not at each of its calls (a parsed body never changes). */
const returnBlocks = new WeakMap<N[], boolean>();

/** Does a body hold a `return` anywhere but as its last top-level statement? */
export function needsReturnBlock(body: N[]): boolean {
  let needs = returnBlocks.get(body);
  if (needs === undefined) returnBlocks.set(body, (needs = walkReturns(body)));
  return needs;
}

function walkReturns(body: N[]): boolean {
  const found = (n: any, top: boolean): boolean => {
    if (!n || typeof n !== 'object') return false;
    if (Array.isArray(n)) return n.some((x, i) => found(x, top && i === n.length - 1));
    if (n.type === 'ReturnStatement') return !top;
    if (n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression') return false;
    return Object.entries(n).some(([k, v]) => k !== 'loc' && typeof v === 'object' && found(v, false));
  };
  return body.some((s, i) => found(s, i === body.length - 1 && s.type === 'ReturnStatement'));
}

/** Inline a call of a top-level `fn`: its parameters become fresh locals, its returns a result. */
export function callFn(ctx: BodyContext, fn: FnStatement, args: Value[], node: N): Value {
  const name = fn.name.value;
  ctx.env.inlined?.add(name);
  const again = ctx.fnStack.findIndex((f) => f.name === name);
  if (again >= 0) {
    const through = ctx.fnStack.slice(again + 1).map((f) => f.name);
    const how = through.length ? ` through ${through.map((n) => `\`${n}\``).join(', ')} (${[name, ...through, name].join(' -> ')})` : '';
    fail(node, `fn \`${name}\` calls itself${how}: recursion is not supported (kernels have no call stack)`);
  }
  if (ctx.fnStack.length >= MAX_CALL_DEPTH) {
    const chain = [...ctx.fnStack.map((f) => f.name), name];
    fail(node, `fn \`${name}\` is called ${chain.length} calls deep (${chain.slice(0, 3).join(' -> ')} -> ... -> ${chain.slice(-2).join(' -> ')}): every call is inlined, at most ${MAX_CALL_DEPTH} inside one another; call it from fewer fns in between (docs/language.md, Limits)`);
  }
  if (args.length !== fn.params.length)
    fail(node, `fn \`${name}\` takes ${fn.params.length} argument${fn.params.length === 1 ? '' : 's'} (${fn.params.map((p) => p.name.value).join(', ')}); got ${args.length}`);
  const frame: (typeof ctx.fnStack)[number] = { name, call: node, declared: fn.returns ? ctx.env.resolveType(fn.returns) : undefined };
  ctx.copies.set(name, (ctx.copies.get(name) ?? 0) + 1);
  const errors: LowerError[] = [];
  ctx.withScope(() => {
    fn.params.forEach((p, i) => {
      const type = ctx.env.resolveType(p.type);
      // An f32 passed for an i32 was cut to an integer without a word (a band index of x / width: always 0).
      if (type.kind === 'scalar' && type.name === 'i32' && args[i].type.kind === 'scalar' && args[i].type.name === 'f32')
        fail((node.arguments as N[])[i], `argument ${i + 1} of \`${name}\` is an f32, but its parameter \`${p.name.value}\` is an i32, and the f32 would be cut to an integer: convert it where you mean to, i32(...) (toward zero) or i32(floor(...)), or declare \`${p.name.value}: f32\``);
      const v = assignable(args[i], type, (node.arguments as N[])[i], `parameter \`${p.name.value}\` of \`${name}\``);
      const locals = ctx.newLocals(type);
      v.comps.forEach((e, c) => ctx.emit({ k: 'set', local: locals[c], e }));
      ctx.declare(p.name.value, { kind: 'var', type, locals, mutable: true, decl: node });
    });
    ctx.fnStack.push(frame);
    const savedConstructs = ctx.constructs;
    ctx.constructs = [];
    try {
      const body = fn.body.statements as N[];
      if (needsReturnBlock(body)) {
        blockOrStatements(ctx.inConstruct('return', () => lowerStatements(ctx, body, errors))).forEach((s) => ctx.emit(s));
      } else {
        lowerStatements(ctx, body, errors);
      }
    } finally {
      ctx.constructs = savedConstructs;
      ctx.fnStack.pop();
    }
  }, true);
  if (errors.length) throw errors[0];
  if (!frame.result) fail(node, `fn \`${name}\` returns no value`);
  const body = fn.body.statements as N[];
  if (!returnsOnEveryPath(body)) {
    const last = body[body.length - 1];
    // The way out depends on what the fn ends with: an `if` wants its `else`; a loop may not run at all.
    const fix = last?.type === 'IfStatement' ? 'end it with a `return`, or give the `if` an `else` that returns' : /Loop|While|For/.test(String(last?.type)) ? 'end it with a `return` after the loop (the loop may end, or never run, without returning)' : 'end it with a `return`';
    fail(last ?? node, `not every path of fn \`${name}\` returns a value (one that ends without a \`return\` would give 0): ${fix}`);
  }
  return { type: frame.result.type, comps: frame.result.locals.map((i) => ({ k: 'local', t: ctx.locals[i], i } as Expr)) };
}

/**
 * Lower a fn that no body calls, on its own (each parameter a zero of its type), so that its
 * mistakes are told now, where it is, not the day a kernel first calls it. Throws its first
 * LowerError; widens as a kernel's body does.
 */
export function lowerFnAlone(env: Env, fn: FnStatement, fuel: number): void {
  const widen = new Set<AcornNode>();
  const at = { type: 'Identifier', start: fn.name.span.start, end: fn.name.span.end, arguments: [] } as unknown as N;
  for (let attempt = 0; ; attempt++) {
    const ctx = new BodyContext(env, [], new Map(), ['x', 'y'], 0, fuel, widen);
    const args = fn.params.map((p) => {
      const type = env.resolveType(p.type);
      return { type, comps: components(type).map((t) => cst(t, 0)) } as Value;
    });
    callFn(ctx, fn, args, at);
    if (!ctx.widened || attempt > 4) return;
  }
}

/** What a builtin value a body can read but never set is (`time`, `width`, `PI`, ...), or undefined. */
function builtinValue(name: string): string | undefined {
  if (name === 'pointer' || name === 'keys') return name === 'pointer' ? 'the pointer: `pointer.xy`, `pointer.down`' : 'the keys held: `keys.NAME`';
  return BUILTIN_VALUES.find((v) => v.name === name)?.summary;
}
