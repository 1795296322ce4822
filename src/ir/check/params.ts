// What a param may hold. One rule for every door: the checker asks it of a declaration's value,
// the `param` operation and `restore` of a value sent, and `--param NAME=VALUE` of a command line.

import { LowerError } from '../lower/context.js';
import { closest } from '../suggest.js';
import { isF32Number, refusePastF32 } from './literal.js';
import type { Document, ParamStatement } from '../syntax/tree.js';
import { aType, type ElemType } from '../types.js';
import type { Scene } from './scene.js';

/** The values an i32 holds. */
export const I32_MIN = -2147483648;
export const I32_MAX = 2147483647;

/** What the rule needs of a param: its name, type, arity (its value's length) and range. */
export interface ParamShape {
  name: string;
  type: ElemType;
  value: number[];
  range?: { lo: number; hi: number };
}

/** Why `value` cannot be the param's value (and what is expected), or undefined when it can. */
export function paramValueProblem(p: ParamShape, value: unknown[]): { why: string; expected: string } | undefined {
  const n = p.value.length;
  if (value.length !== n || !value.every((v) => typeof v === 'number' && Number.isFinite(v)))
    return { why: `\`${p.name}\` is ${aType(p.type.name)}: give ${n} finite number${n > 1 ? 's' : ''}`, expected: n > 1 ? `array of ${n} numbers` : 'number' };
  // Past f32's range a kernel would see infinity (the protocol's envelope refuses these first; --param reaches here).
  if (!value.every(isF32Number)) return { why: `\`${p.name}\` is ${aType(p.type.name)}: give ${n > 1 ? `${n} numbers` : 'a number'} within f32's range (±3.4e38), which a kernel can hold`, expected: 'within ±3.4e38' };
  const numbers = value as number[];
  if (p.range && numbers.some((v) => v < p.range!.lo || v > p.range!.hi))
    return { why: `\`${p.name}\` keeps to ${p.range.lo}..${p.range.hi} (its range)`, expected: `${p.range.lo}..${p.range.hi}` };
  if (p.type.name === 'i32' && numbers.some((v) => !Number.isInteger(v))) return { why: `\`${p.name}\` is an i32: give an integer`, expected: 'integer' };
  if (p.type.name === 'i32' && numbers.some((v) => v < I32_MIN || v > I32_MAX)) return { why: `\`${p.name}\` is an i32: give an integer from ${I32_MIN} to ${I32_MAX}`, expected: `integer ${I32_MIN}..${I32_MAX}` };
  if (p.type.name === 'bool' && numbers.some((v) => v !== 0 && v !== 1)) return { why: `\`${p.name}\` is a bool: give 0 or 1 (false or true)`, expected: '0 | 1' };
  return undefined;
}

/**
 * A declaration whose range has an end past f32's range or is reversed, or whose value (given, or the zeros of none) the rule
 * above refuses: a LowerError at the range or the value, with the statement mended as its fix.
 */
export function checkParamDeclaration(doc: Document, st: ParamStatement, p: ParamShape): void {
  const text = (span: { start: number; end: number }) => doc.text.slice(span.start, span.end);
  const mended = (from: { start: number; end: number }, to: string, insert = false) =>
    ({ param: p.name, text: text({ start: st.span.start, end: from.start }) + to + text({ start: insert ? from.start : from.end, end: st.span.end }) });
  if (st.range) {
    refusePastF32(st.range.lo, st.range.ends[0], `the low end of the range of param \`${p.name}\``);
    refusePastF32(st.range.hi, st.range.ends[1], `the high end of the range of param \`${p.name}\``);
  }
  if (st.range && st.range.lo > st.range.hi) {
    const { lo, hi } = st.range;
    throw new LowerError(`the range of param \`${p.name}\` is reversed: ${lo}..${hi} holds no value; write the low end first, \`range ${hi}..${lo}\``, st.range.span, mended(st.range.span, `range ${hi}..${lo}`));
  }
  const problem = paramValueProblem(p, p.value);
  if (!problem) return;
  const fitted = fitParamValue(p, p.value);
  const literal = valueText(p.type, fitted);
  if (!st.value)
    throw new LowerError(`param \`${p.name}\` has no value, and the one it starts with, ${valueText(p.type, p.value)}, does not fit: ${problem.why}; give it one, e.g. \`= ${literal}\``, st.name.span, mended({ start: st.type.span.end, end: st.type.span.end }, ` = ${literal}`, true));
  throw new LowerError(`the value of param \`${p.name}\`, ${text(st.value.span)}, does not fit: ${problem.why}; e.g. \`= ${literal}\``, st.value.span, mended(st.value.span, literal));
}

/**
 * The nearest value to `values` (one number a component) that the param's declaration allows:
 * each component clamped into its range, then an i32 rounded, a bool made 0 or 1 (any other
 * number is true). A declaration's fix and a value carried into a changed declaration use it.
 */
export function fitParamValue(p: ParamShape, values: readonly number[]): number[] {
  return values.map((v) => {
    if (p.range) v = Math.min(p.range.hi, Math.max(p.range.lo, v));
    if (p.type.name === 'bool') return v ? 1 : 0;
    // An i32 rounded into its range: toward the range's inside when rounding leaves it.
    if (p.type.name === 'i32') {
      const [lo, hi] = p.range ? [Math.max(I32_MIN, Math.ceil(p.range.lo)), Math.min(I32_MAX, Math.floor(p.range.hi))] : [I32_MIN, I32_MAX];
      return Math.min(hi, Math.max(lo, Math.round(v)));
    }
    return v;
  });
}

/** A value as the language writes it: `true`, `3`, `0.5`, `1.0` (an f32), `vec3(1.0, 0.5, 0.0)`. */
function valueText(type: ElemType, values: number[]): string {
  const one = (v: number) => (type.name === 'bool' ? (v ? 'true' : 'false') : type.name === 'i32' || !Number.isInteger(v) ? String(v) : v.toFixed(1));
  return values.length === 1 ? one(values[0]) : `${type.name}(${values.map(one).join(', ')})`;
}

/** What setting a param to a value means: the param and its components, or why it cannot be. */
export type ParamSetting = { ok: true; name: string; value: number[] } | { ok: false; message: string; details: Record<string, unknown> };

/**
 * Setting the scene's param `name` to `value` (a number fills every component; an array gives
 * each): the `param` operation and `--param NAME=VALUE` ask this, and say what it answers.
 */
export function paramSetting(scene: Pick<Scene, 'params' | 'nodes'>, name: string, value: unknown): ParamSetting {
  const p = scene.params.get(name);
  if (!p) {
    const params = [...scene.params.keys()];
    // A node's own member of that name: say where it is changed instead.
    const owner = scene.nodes.find((n) => n.values.has(name) && 'value' in n.values.get(name)!);
    if (owner)
      return {
        ok: false,
        message: `\`${name}\` is not a param the scene declares; node \`${owner.name}\` sets its own \`${name}\`, which is the document's: change it there (over the protocol, \`compose\` with \`edits\`, node \`${owner.name}\`, member \`${name}\`), or declare a \`param\` there for the node to name`,
        details: { params, fix: { node: owner.name, member: name, text: `${name} = ${JSON.stringify(value)};` } },
      };
    const near = closest(name, params);
    return { ok: false, message: `\`${name}\` is not a param the scene declares${near ? `; did you mean \`${near}\`?` : ''}; its params: ${params.join(', ') || 'none'}`, details: { params } };
  }
  const values = Array.isArray(value) ? (value as unknown[]) : new Array(p.value.length).fill(value);
  const problem = paramValueProblem(p, values);
  // One number is taken for every component (above): say so where the count is what is wrong.
  const orOne = p.value.length > 1 && values.length !== p.value.length ? ', or one for all of them' : '';
  if (problem) return { ok: false, message: `${problem.why}${orOne}; got ${JSON.stringify(value)}`, details: { fields: ['name', 'value'], field: 'value', expected: problem.expected } };
  return { ok: true, name, value: values as number[] };
}
