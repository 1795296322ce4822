// A value as written in a declaration (`8.0`, `true`, `vec3(1.0, 0.5, 0.0)`) taken as a value of
// a type: one rule for a node's member, a port's default, a param's and an input's value.

import { LowerError } from '../lower/context.js';
import type { Literal } from '../syntax/tree.js';
import { aType, components, type ElemType } from '../types.js';

/**
 * The components of `literal` as a value of `type` (one number fills a vector), or a LowerError at
 * the literal saying why it is none: `what` names what takes it (`count`, param `warmth`). A param's
 * numbers are left to its own rule (params.ts: 0 or 1 for a bool, as the `param` op takes it;
 * whole numbers for an i32), which also mends the statement.
 */
export function literalValue(type: ElemType, literal: Literal, what: string, numbers = true): number[] {
  const scalars = components(type);
  const n = scalars.length;
  const fail = (why: string): never => {
    throw new LowerError(`${what} takes ${aType(type.name)}${why}`, literal.span);
  };
  if (literal.values.length !== n && !(literal.values.length === 1 && n > 1))
    fail(` (${n} component${n > 1 ? 's' : ''}); this value has ${literal.values.length}`);
  const values = literal.values.length === n ? literal.values : new Array(n).fill(literal.values[0]);
  // A struct's components all start at the one number given (docs/language.md), whatever their types.
  if (type.kind === 'struct') return values;
  // Bools are written true or false, and only they are: `count = true` for an f32 was taken as 1.
  const bools = scalars.map((s) => s === 'bool');
  if (literal.form === 'bool' && !bools.every(Boolean)) fail(`, not true or false: write a number, e.g. ${scalars[0] === 'i32' ? '1' : '1.0'}`);
  if (numbers && literal.form !== 'bool' && bools.some(Boolean)) fail(': write true or false');
  if (numbers && scalars.some((s, i) => s === 'i32' && !Number.isInteger(values[i]))) fail(`, which holds whole numbers: write an integer, e.g. ${Math.round(values.find((v) => !Number.isInteger(v))!)}`);
  return values;
}
