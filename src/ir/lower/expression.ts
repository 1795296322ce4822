// Lowering JavaScript-subset expressions to typed, scalarised IR values.

import type { Node as AcornNode } from 'acorn';
import { BUILTIN_CONSTANTS, BUILTIN_FUNCTIONS, BuiltinError, findBuiltin, findMathBuiltin } from '../builtins.js';
import type { Grant } from '../grants.js';
import type { Expr, Op, Scalar } from '../ir.js';
import { cornerLoads } from '../sample.js';
import { closest } from '../suggest.js';
import { BOOL, F32, I32, SWIZZLE, aType, sameType, vec, type ElemType } from '../types.js';
import { convert, cst, op, scalarValue, select, type Value } from './build.js';
import { BodyContext, FollowOnError, LowerError, type PortView } from './context.js';
import { callFn } from './statement.js';

// acorn's nodes, loosely typed: the subset reads only a few properties of each.
type N = AcornNode & Record<string, any>;

export function fail(node: AcornNode, message: string): never {
  throw new LowerError(message, node);
}

/** Note that the body needs `grant`, first at `node` (the checker refuses a kernel lacking it, there). */
function need(ctx: BodyContext, grant: Grant, node: AcornNode): void {
  if (!ctx.grantsUsed.has(grant)) ctx.grantsUsed.set(grant, node);
}

const scalarType = (t: Scalar): ElemType => (t === 'f32' ? F32 : t === 'i32' ? I32 : BOOL);

function isNumber(v: Value): boolean {
  return v.type.kind === 'scalar' && v.type.name !== 'bool';
}

/** The common numeric scalar type of two operands: f32 if either is f32, else i32. */
function joinNumeric(a: Expr, b: Expr): Scalar {
  return a.t === 'f32' || b.t === 'f32' ? 'f32' : 'i32';
}

export function lowerExpr(ctx: BodyContext, node: N): Value {
  return ctx.enter(node, () => lowerExprHere(ctx, node));
}

function lowerExprHere(ctx: BodyContext, node: N): Value {
  switch (node.type) {
    case 'Literal':
      return literal(node);
    case 'Identifier':
      return identifier(ctx, node);
    case 'MemberExpression':
      return member(ctx, node);
    case 'CallExpression':
      return call(ctx, node);
    case 'BinaryExpression':
      return binary(ctx, node.operator, lowerExpr(ctx, node.left), lowerExpr(ctx, node.right), node);
    case 'LogicalExpression': {
      const a = toBool(lowerExpr(ctx, node.left), node.left);
      const b = toBool(lowerExpr(ctx, node.right), node.right);
      if (node.operator === '??') fail(node, '`??` has no meaning here: values are never null');
      return scalarValue(op(node.operator === '&&' ? 'bool.and' : 'bool.or', a, b));
    }
    case 'UnaryExpression':
      return unary(ctx, node);
    case 'ConditionalExpression': {
      const c = toBool(lowerExpr(ctx, node.test), node.test);
      const a = lowerExpr(ctx, node.consequent);
      const b = lowerExpr(ctx, node.alternate);
      const [x, y] = unify(a, b, node);
      return { type: x.type, comps: x.comps.map((e, i) => select(c, e, y.comps[i])) };
    }
    case 'ParenthesizedExpression':
      return lowerExpr(ctx, node.expression);
    case 'AssignmentExpression':
    case 'UpdateExpression':
      return fail(node, 'an assignment inside an expression is not supported: write it as its own statement');
    case 'TemplateLiteral':
      return fail(node, 'strings are not values in kernels');
    case 'ArrayExpression':
      return fail(node, 'arrays are not values in kernels: use vec2/vec3/vec4 or a struct');
    case 'ObjectExpression':
      return fail(node, 'objects are not values in kernels: declare a struct and call its constructor');
    case 'ArrowFunctionExpression':
    case 'FunctionExpression':
      return fail(node, 'closures are not supported: declare a top-level `fn`');
    case 'ThisExpression':
      return fail(node, '`this` has no meaning in a kernel');
    default:
      return fail(node, `this kind of expression (${node.type}) is not part of the kernel language`);
  }
}

const MATH_CONSTANTS = ['E', 'LN2', 'LN10', 'LOG2E', 'LOG10E', 'SQRT2', 'SQRT1_2'];

function literal(node: N): Value {
  if (typeof node.value === 'boolean') return scalarValue(cst('bool', node.value ? 1 : 0));
  if (typeof node.value === 'number') {
    const raw = String(node.raw);
    const integral = /^(0[xXbBoO][0-9a-fA-F_]+|[0-9_]+)$/.test(raw);
    // An i32 literal: a decimal one that fits (3000000000 wrapped to -1294967296, so x < 3000000000
    // was false), or a hex, octal or binary one of 32 bits, taken as its bits (0xFFFFFFFF is -1).
    const bits = /^0[xXbBoO]/.test(raw);
    if (integral && Number.isSafeInteger(node.value) && (bits ? Math.abs(node.value) <= 0xffffffff : Math.abs(node.value) <= 0x7fffffff)) return scalarValue(cst('i32', node.value | 0));
    return scalarValue(cst('f32', node.value));
  }
  return fail(node, `${node.value === null ? 'null' : 'strings'} are not values in kernels`);
}

export function toBool(v: Value, node: AcornNode): Expr {
  if (v.type.kind !== 'scalar') fail(node, `a condition must be a bool or a number, not ${aType(v.type.name)}`);
  return convert(v.comps[0], 'bool');
}

function portValue(ctx: BodyContext, port: PortView, node: AcornNode): Value {
  if (port.locals) return { type: port.type, comps: port.locals.map((i, c) => ({ k: 'local', t: ctx.locals[i], i } as Expr)) };
  if (port.readField !== undefined) {
    ctx.pointwise.add(port.name);
    const f = ctx.fields[port.readField];
    return { type: port.type, comps: f.comps.map((t, comp) => ({ k: 'load', t, field: port.readField!, comp } as Expr)) };
  }
  // A plain `in` value: one uniform per component, filled from the node's member or a param.
  const comps = componentsOf(port.type);
  void node;
  return { type: port.type, comps: comps.map((t, c) => ctx.uniform({ kind: 'in', port: port.name, comp: c }, t)) };
}

function componentsOf(t: ElemType): Scalar[] {
  if (t.kind === 'scalar') return [t.name];
  if (t.kind === 'vec') return new Array(t.size).fill('f32');
  return t.fields.flatMap((f) => componentsOf(f.type));
}

function identifier(ctx: BodyContext, node: N): Value {
  const name: string = node.name;
  const b = ctx.lookup(name);
  if (b) {
    if (b.kind === 'var') return { type: b.type, comps: b.locals.map((i) => ({ k: 'local', t: ctx.locals[i], i } as Expr)) };
    if (b.kind === 'coord') return scalarValue({ k: 'coord', t: 'i32', axis: b.axis });
    return portValue(ctx, b.port, node);
  }
  switch (name) {
    case 'width': return scalarValue({ k: 'extent', t: 'i32', axis: 0 });
    case 'height': return scalarValue({ k: 'extent', t: 'i32', axis: 1 });
    case 'depth': return scalarValue({ k: 'extent', t: 'i32', axis: 2 });
    case 'time':
      need(ctx, 'time.read', node);
      return scalarValue(ctx.uniform({ kind: 'time' }, 'f32'));
    case 'frame':
      need(ctx, 'time.read', node);
      return scalarValue(ctx.uniform({ kind: 'frame' }, 'i32'));
    case 'undefined':
    case 'NaN':
      if (name === 'NaN') return scalarValue(cst('f32', NaN));
      break;
    case 'Infinity':
      return scalarValue(cst('f32', Infinity));
  }
  if (name in BUILTIN_CONSTANTS) return scalarValue(cst('f32', BUILTIN_CONSTANTS[name]));
  if (name === 'pointer' || name === 'keys') fail(node, `\`${name}\` is not a value: use ${name === 'pointer' ? '`pointer.xy` or `pointer.down`' : '`keys.NAME`, e.g. `keys.space`'}`);
  if (ctx.failedNames.has(name)) throw new FollowOnError(`\`${name}\` did not lower`, node);
  // A coordinate the each does not name (`z` in `each (x, y)`): the each names them.
  const axes = ['x', 'y', 'z'];
  const coords = ctx.coordNames;
  if (axes.includes(name) && coords.length > 0 && coords.length < 3 && coords.every((c, i) => c === axes[i]))
    throw new LowerError(`unknown name \`${name}\`: the kernel's each names ${coords.length === 1 ? 'one coordinate' : `${coords.length} coordinates`} (${coords.join(', ')}); a ${axes.indexOf(name) + 1}-D kernel names ${axes.slice(0, axes.indexOf(name) + 1).join(', ')}: \`each (${axes.slice(0, axes.indexOf(name) + 1).join(', ')})\`, its out ports field${axes.indexOf(name) + 1}`, node);
  const known = [...ctx.visibleNames(), 'width', 'height', 'depth', 'time', 'frame', 'TAU', 'PI'];
  const near = closest(name, known);
  throw new LowerError(`unknown name \`${name}\`${near ? `; did you mean \`${near}\`?` : ''}`, node);
}

function swizzle(v: Value, prop: string, node: AcornNode): Value {
  if (v.type.kind === 'struct') {
    let offset = 0;
    for (const f of v.type.fields) {
      const n = componentsOf(f.type).length;
      if (f.name === prop) return { type: f.type, comps: v.comps.slice(offset, offset + n) };
      offset += n;
    }
    const near = closest(prop, v.type.fields.map((f) => f.name));
    fail(node, `${v.type.name} has no field \`${prop}\`${near ? `; did you mean \`${near}\`?` : ''}`);
  }
  const size = v.type.kind === 'vec' ? v.type.size : 1;
  if (!/^[xyzwrgba]{1,4}$/.test(prop)) fail(node, `\`.${prop}\` is not a swizzle of ${aType(v.type.name)}: use letters of xyzw or rgba`);
  const idx = [...prop].map((ch) => SWIZZLE[ch]);
  if (idx.some((i) => i >= size)) fail(node, `\`.${prop}\` reaches past the ${size} component${size > 1 ? 's' : ''} of ${aType(v.type.name)}`);
  const comps = idx.map((i) => v.comps[i]);
  return comps.length === 1 ? scalarValue(comps[0]) : { type: vec(comps.length as 2 | 3 | 4), comps };
}

function member(ctx: BodyContext, node: N): Value {
  if (node.computed) fail(node, 'indexing with [] is not supported: use swizzles (`.x`, `.xy`) or struct fields');
  const prop: string = node.property.name;
  const obj: N = node.object;
  if (obj.type === 'Identifier' && !ctx.lookup(obj.name)) {
    // In a migration, `old.PORT` reads the state the old kernel left.
    const old = obj.name === 'old' ? ctx.ports.get(`old.${prop}`) : undefined;
    if (old) return portValue(ctx, old, node);
    if (obj.name === 'old' && [...ctx.ports.keys()].some((k) => k.startsWith('old.')))
      fail(node.property, `the old kernel has no state port \`${prop}\`; it has ${[...ctx.ports.keys()].filter((k) => k.startsWith('old.')).map((k) => k.slice(4)).join(', ')}`);
    if (obj.name === 'pointer') {
      need(ctx, 'input.read', node);
      const px = ctx.uniform({ kind: 'pointer', axis: 'x' }, 'f32');
      const py = ctx.uniform({ kind: 'pointer', axis: 'y' }, 'f32');
      if (prop === 'down') return scalarValue(ctx.uniform({ kind: 'pointer', axis: 'down' }, 'bool'));
      return swizzle({ type: vec(2), comps: [px, py] }, prop, node);
    }
    if (obj.name === 'keys') {
      need(ctx, 'input.read', node);
      return scalarValue(ctx.uniform({ kind: 'key', key: prop.toLowerCase() }, 'bool'));
    }
    // Math's constants, as f32 (Math.E gave "unknown name `Math`").
    if (obj.name === 'Math' && prop.toUpperCase() === 'PI') return scalarValue(cst('f32', Math.PI));
    if (obj.name === 'Math' && MATH_CONSTANTS.includes(prop)) return scalarValue(cst('f32', (Math as unknown as Record<string, number>)[prop]));
  }
  if (obj.type === 'Identifier') {
    const b = ctx.lookup(obj.name);
    if (b?.kind === 'port' && b.port.dims && ['width', 'height', 'depth'].includes(prop)) {
      const field = b.port.readField ?? b.port.writeField;
      const axis = (['width', 'height', 'depth'] as const).indexOf(prop as 'width') as 0 | 1 | 2;
      if (b.port.readField === undefined) return scalarValue({ k: 'extent', t: 'i32', axis });
      return scalarValue({ k: 'extent', t: 'i32', axis, field });
    }
  }
  return swizzle(lowerExpr(ctx, obj), prop, node.property);
}

function call(ctx: BodyContext, node: N): Value {
  const callee: N = node.callee;
  const args = node.arguments as N[];
  if (callee.type === 'MemberExpression' && !callee.computed && callee.object.type === 'MemberExpression' && callee.object.object.type === 'Identifier' && callee.object.object.name === 'old') {
    const old = ctx.ports.get(`old.${callee.object.property.name}`);
    if (old?.dims) return gather(ctx, old, callee.property.name, args, node);
  }
  if (callee.type === 'MemberExpression' && !callee.computed && callee.object.type === 'Identifier') {
    const b = ctx.lookup(callee.object.name);
    const method: string = callee.property.name;
    if (b?.kind === 'port' && b.port.dims) return gather(ctx, b.port, method, args, node);
    if (!b && callee.object.name === 'Math') return builtinCall(ctx, method, args, node, findMathBuiltin(method));
  }
  if (callee.type !== 'Identifier') fail(callee, 'only builtins, fns, struct constructors and field methods can be called');
  const name: string = callee.name;
  const s = ctx.env.structs.get(name);
  if (s && s.kind === 'struct') {
    const vals = args.map((a) => lowerExpr(ctx, a));
    if (vals.length !== s.fields.length) fail(node, `${name} takes ${s.fields.length} values (${s.fields.map((f) => f.name).join(', ')}); got ${vals.length}`);
    const comps = vals.flatMap((v, i) => assignable(v, s.fields[i].type, args[i], `field \`${s.fields[i].name}\``).comps);
    return { type: s, comps };
  }
  const fn = ctx.env.fns.get(name);
  if (fn) return callFn(ctx, fn, args.map((a) => lowerExpr(ctx, a)), node);
  return builtinCall(ctx, name, args, node);
}

/** JavaScript's calls that kernels cannot have, and what to write instead. */
const NOT_IN_KERNELS: Record<string, string> = {
  random: '`Math.random` is not available: a kernel computes the same value each time it runs; for a pseudo-random value use `hash(x, y)` (in [0, 1), repeatable; `hash(x, y, frame)` changes it each frame)',
};

function builtinCall(ctx: BodyContext, name: string, args: N[], node: N, b = findBuiltin(name)): Value {
  if (!b && NOT_IN_KERNELS[name]) fail(node.callee, NOT_IN_KERNELS[name]);
  if (!b && ctx.env.brokenFns?.has(name)) throw new FollowOnError(`fn \`${name}\` did not parse`, node.callee);
  if (!b) {
    const near = closest(name, [...BUILTIN_FUNCTIONS.map((f) => f.name), ...ctx.env.fns.keys(), ...ctx.env.structs.keys()]);
    fail(node.callee, `unknown function \`${name}\`${near ? `; did you mean \`${near}\`?` : ': call a builtin (`help builtins` lists them), a fn the scene declares, or a struct constructor'}`);
  }
  const [lo, hi] = b.arity;
  if (args.length < lo || args.length > hi)
    fail(node, `${name} takes ${lo === hi ? lo : `${lo} to ${hi}`} argument${hi === 1 ? '' : 's'}: ${b.signature}; got ${args.length}${name.endsWith('atan') && args.length === 2 ? '; the angle of (x, y) is atan2(y, x)' : ''}`);
  const vals = args.map((a) => lowerExpr(ctx, a));
  try {
    return b.lower(vals);
  } catch (e) {
    if (e instanceof BuiltinError) fail(node, e.message);
    throw e;
  }
}

/** `f.at(x, y)`, `f.wrap(x, y)`, `f.sample(u, v)`: reads at other elements; needs field.read. */
function gather(ctx: BodyContext, port: PortView, method: string, args: N[], node: N): Value {
  const dims = port.dims!;
  if (port.readField === undefined) fail(node, `\`${port.name}\` is an ${port.kind} port: only in fields and state can be read at other elements`);
  if (!['at', 'wrap', 'sample'].includes(method)) {
    const near = closest(method, ['at', 'wrap', 'sample']);
    fail(node.callee.property, `fields have no method \`${method}\`${near ? `; did you mean \`${near}\`?` : ''} (at, wrap, sample)`);
  }
  if (args.length !== dims) fail(node, `\`${port.name}\` is a ${dims}-D field: ${method} takes ${dims} coordinate${dims > 1 ? 's' : ''}, got ${args.length}`);
  need(ctx, 'field.read', node);
  ctx.gathered.add(port.name);
  const field = port.readField;
  const comps = ctx.fields[field].comps;
  const coords = args.map((a) => {
    const v = lowerExpr(ctx, a);
    if (!isNumber(v)) fail(a, `a coordinate must be a number, not ${aType(v.type.name)}`);
    return v.comps[0];
  });
  if (method !== 'sample') {
    // Float coordinates round down, so `f.at(x + 0.5, y)` means the element containing it.
    const ints = coords.map((c) => (c.t === 'f32' ? op('f32.to_i32', op('f32.floor', c)) : c));
    const at = { mode: method === 'at' ? 'clamp' : 'wrap', coords: ints } as const;
    return { type: port.type, comps: comps.map((t, comp) => ({ k: 'load', t, field, comp, at } as Expr)) };
  }
  if (port.type.kind === 'struct') fail(node, 'sample filters numbers and vectors, not structs: use at()');
  // Bilinear (trilinear) filtering at normalised coordinates, clamped at the edges.
  const base: Expr[] = [];
  const frac: Expr[] = [];
  coords.forEach((c, axis) => {
    const extent: Expr = op('i32.to_f32', { k: 'extent', t: 'i32', axis: axis as 0 | 1 | 2, field });
    const p = ctx.materialize(scalarValue(op('f32.sub', op('f32.mul', convert(c, 'f32'), extent), cst('f32', 0.5)))).comps[0];
    const fl = ctx.materialize(scalarValue(op('f32.floor', p))).comps[0];
    base.push(ctx.materialize(scalarValue(op('f32.to_i32', fl))).comps[0]);
    frac.push(ctx.materialize(scalarValue(op('f32.sub', p, fl))).comps[0]);
  });
  // Each corner's components in locals of their own, set in one run (src/ir/sample.ts): codegen
  // loads the run's x pairs at once.
  const loads = ctx.materialize({ type: port.type, comps: cornerLoads(field, comps, base) }).comps;
  const corner = (bits: number) => loads.slice(bits * comps.length, (bits + 1) * comps.length).map((e) => convert(e, 'f32'));
  const blend = (axis: number, bits: number): Expr[] => {
    if (axis < 0) return corner(bits);
    const a = blend(axis - 1, bits);
    const b = blend(axis - 1, bits | (1 << axis));
    return a.map((e, i) => op('f32.add', e, op('f32.mul', op('f32.sub', b[i], e), frac[axis])));
  };
  return { type: port.type.kind === 'scalar' ? F32 : port.type, comps: blend(dims - 1, 0) };
}

function unary(ctx: BodyContext, node: N): Value {
  const v = lowerExpr(ctx, node.argument);
  switch (node.operator) {
    case '-':
      if (v.type.kind === 'struct' || v.type.name === 'bool') fail(node, `cannot negate ${aType(v.type.name)}`);
      return { type: v.type, comps: v.comps.map((e) => (e.t === 'i32' ? op('i32.neg', e) : op('f32.neg', e))) };
    case '+':
      if (v.type.name === 'bool') return scalarValue(convert(v.comps[0], 'i32'));
      return v;
    case '!':
      return scalarValue(op('bool.not', toBool(v, node.argument)));
    case '~':
      if (v.type.kind !== 'scalar') fail(node, `~ takes an integer, not ${aType(v.type.name)}`);
      return scalarValue(op('i32.not', convert(v.comps[0], 'i32')));
    default:
      return fail(node, `the operator \`${node.operator}\` is not part of the kernel language`);
  }
}

const ARITH: Record<string, string> = { '+': 'add', '-': 'sub', '*': 'mul', '/': 'div', '%': 'rem' };
const COMPARE: Record<string, string> = { '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge', '==': 'eq', '===': 'eq', '!=': 'ne', '!==': 'ne' };
const BITWISE: Record<string, string> = { '&': 'and', '|': 'or', '^': 'xor', '<<': 'shl', '>>': 'shr_s', '>>>': 'shr_u' };

/** A binary operator on two lowered values (also used by compound assignment). */
export function binary(_ctx: BodyContext, operator: string, a: Value, b: Value, node: AcornNode): Value {
  if (operator in ARITH) {
    const name = ARITH[operator];
    const num = (v: Value) => (v.type.name === 'bool' ? scalarValue(convert(v.comps[0], 'i32')) : v);
    a = num(a);
    b = num(b);
    if (a.type.kind === 'struct' || b.type.kind === 'struct') fail(node, `\`${operator}\` does not apply to a struct`);
    if (a.type.kind === 'scalar' && b.type.kind === 'scalar') {
      const t: Scalar = operator === '/' ? 'f32' : joinNumeric(a.comps[0], b.comps[0]);
      return scalarValue(op(`${t}.${name}` as Op, convert(a.comps[0], t), convert(b.comps[0], t)));
    }
    const n = Math.max(a.comps.length, b.comps.length);
    if ((a.comps.length !== n && a.comps.length !== 1) || (b.comps.length !== n && b.comps.length !== 1))
      fail(node, `\`${operator}\` needs vectors of one size (or a vector and a number); got ${a.type.name} and ${b.type.name}`);
    const comp = (v: Value, i: number) => convert(v.comps.length === 1 ? v.comps[0] : v.comps[i], 'f32');
    const comps = Array.from({ length: n }, (_, i) => op(`f32.${name}` as Op, comp(a, i), comp(b, i)));
    return { type: vec(n as 2 | 3 | 4), comps };
  }
  if (operator in COMPARE) {
    const name = COMPARE[operator];
    if (a.type.kind !== 'scalar' || b.type.kind !== 'scalar')
      fail(node, `\`${operator}\` compares numbers or bools, not ${a.type.name} and ${b.type.name} (compare components, e.g. \`a.x ${operator} b.x\`)`);
    const x = a.comps[0];
    const y = b.comps[0];
    if (x.t === 'bool' && y.t === 'bool' && (name === 'eq' || name === 'ne')) return scalarValue(op(`bool.${name}` as Op, x, y));
    const t = joinNumeric(convert(x, x.t === 'bool' ? 'i32' : x.t), convert(y, y.t === 'bool' ? 'i32' : y.t));
    return scalarValue(op(`${t}.${name}` as Op, convert(x, t), convert(y, t)));
  }
  if (operator in BITWISE) {
    if (a.type.kind !== 'scalar' || b.type.kind !== 'scalar') fail(node, `\`${operator}\` takes integers, not ${a.type.name} and ${b.type.name}`);
    return scalarValue(op(`i32.${BITWISE[operator]}` as Op, convert(a.comps[0], 'i32'), convert(b.comps[0], 'i32')));
  }
  if (operator === '**') return binaryPow(a, b, node);
  return fail(node, `the operator \`${operator}\` is not part of the kernel language`);
}

function binaryPow(a: Value, b: Value, node: AcornNode): Value {
  if (a.type.kind !== 'scalar' || b.type.kind !== 'scalar') fail(node, '`**` takes numbers: use pow() for vectors');
  return scalarValue(op('f32.pow', convert(a.comps[0], 'f32'), convert(b.comps[0], 'f32')));
}

/** Bring two values to one type for a ternary (numbers widen to f32). */
function unify(a: Value, b: Value, node: AcornNode): [Value, Value] {
  if (sameType(a.type, b.type)) return [a, b];
  if (isNumber(a) && isNumber(b)) return [scalarValue(convert(a.comps[0], 'f32')), scalarValue(convert(b.comps[0], 'f32'))];
  return fail(node, `the two branches have different types: ${a.type.name} and ${b.type.name}`);
}

/** Check that a value fits a slot of type `t` (converting numbers), or fail naming `what`. */
export function assignable(v: Value, t: ElemType, node: AcornNode, what: string): Value {
  if (sameType(v.type, t)) return v;
  if (t.kind === 'scalar' && v.type.kind === 'scalar') return { type: t, comps: [convert(v.comps[0], t.name)] };
  // "fn `palette` holds a vec3, not an f32" read backwards: which is declared, which was given.
  const make = t.kind === 'vec' && v.type.kind === 'scalar' ? `; make one of it, e.g. ${t.name}(...)` : '';
  return fail(node, `${what} is ${aType(t.name)}, and this is ${aType(v.type.name)}${make}`);
}

export { scalarType };
