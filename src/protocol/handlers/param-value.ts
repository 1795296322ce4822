// What a param may be set to: the `param` operation and `restore` ask the same question.

import type { ParamInfo } from '../../ir/check/scene.js';

/** Why `value` cannot be the param's value (and what is expected), or undefined when it can. */
export function paramValueProblem(p: ParamInfo, value: unknown[]): { why: string; expected: string } | undefined {
  const n = p.value.length;
  if (value.length !== n || !value.every((v) => typeof v === 'number' && Number.isFinite(v)))
    return { why: `\`${p.name}\` is a ${p.type.name}: give ${n} finite number${n > 1 ? 's' : ''}`, expected: n > 1 ? `array of ${n} numbers` : 'number' };
  const numbers = value as number[];
  if (p.range && numbers.some((v) => v < p.range!.lo || v > p.range!.hi))
    return { why: `\`${p.name}\` keeps to ${p.range.lo}..${p.range.hi} (its range)`, expected: `${p.range.lo}..${p.range.hi}` };
  if (p.type.kind === 'scalar' && p.type.name === 'i32' && numbers.some((v) => !Number.isInteger(v))) return { why: `\`${p.name}\` is an i32: give an integer`, expected: 'integer' };
  return undefined;
}
