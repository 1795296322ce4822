// A value as written in a declaration (`8.0`, `true`, `vec3(1.0, 0.5, 0.0)`) taken as a value of
// a type: one rule for a node's member, a port's default, a param's and an input's value (and
// the ends of a param's range): each number within f32's range, as the protocol's numbers are.

import { LowerError } from '../lower/context.js';
import type { Literal, Span } from '../syntax/tree.js';
import { aType, components, type ElemType } from '../types.js';

/** The largest finite f32. Numbers reach kernels as f32: a larger one would arrive as infinity. */
export const F32_MAX = 3.4028234663852886e38;

/**
 * A number a kernel can be given: finite and within f32's range (JSON's 1e999 parses as Infinity).
 * 3.4028235e38, as the largest f32 is usually written, is a little above F32_MAX but rounds to it:
 * what counts is whether the f32 it becomes is finite.
 */
export function isF32Number(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(Math.fround(v));
}

/** A LowerError at `span` when `value`, written for `what`, is past f32's range (it would run as infinity or NaN). */
export function refusePastF32(value: number, span: Span, what: string): void {
  if (isF32Number(value)) return;
  const written = Number.isFinite(value) ? String(value) : `${value < 0 ? 'below -' : 'above '}1.8e308`;
  throw new LowerError(`${what} is ${written}, past f32's range: kernels compute in f32, whose largest number is ${F32_MAX} (it would run as infinity); write a number from -${F32_MAX} to ${F32_MAX}`, span);
}

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
  for (const v of literal.values) refusePastF32(v, literal.span, what);
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
