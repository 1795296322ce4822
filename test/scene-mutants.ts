// The scene mutator: small random changes to a scene's text at the level of its tokens — a token
// deleted, duplicated or swapped with another, a number or an operator changed, a name replaced by
// another of the text, the text cut short. Seeded: the same generator state, the same mutant.

import type { Rng } from './reliability.js';

/** Numbers a mutation puts in place of one: edges of every conversion and of the loops. */
const NUMBERS = ['0', '0.0', '-1', '1', '2', '-0.0', '0.5', '3', '7', '255', '256', '1e30', '-1e30', '3e9', '2147483648.0', '2147483647', '-2147483649.0', '1e-45', '65536', '16'];
/** Operators, each replaced by another of its class. */
const OPERATOR_CLASSES = [
  ['+', '-', '*', '/', '%'],
  ['<', '<=', '>', '>=', '==', '!='],
  ['&&', '||'],
  ['&', '|', '^', '<<', '>>', '>>>'],
  ['=', '+=', '-=', '*=', '/='],
  ['++', '--'],
];
const OPERATORS = OPERATOR_CLASSES.flat();

// Tokens: comments and spaces (kept, never mutated), strings, numbers, names, operators (longest first), single characters.
const TOKEN = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|\s+|"(?:[^"\\\n]|\\.)*"?|\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?|[A-Za-z_$][\w$]*|>>>|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|\+=|-=|\*=|\/=|<-|[^]/gy;

export function tokens(text: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = TOKEN.exec(text))) out.push(m[0]);
  return out;
}

const isSpace = (t: string) => /^(\s|\/\/|\/\*)/.test(t);
const isNumber = (t: string) => /^\.?\d/.test(t);
const isName = (t: string) => /^[A-Za-z_$]/.test(t);

export const MUTATIONS = ['delete', 'duplicate', 'swap', 'number', 'operator', 'rename', 'truncate'] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** One mutation of the token list (in place); the kind applied. */
export function mutateOnce(r: Rng, toks: string[], kind: Mutation = r.pick(MUTATIONS)): Mutation {
  const solid = toks.map((t, i) => (isSpace(t) ? -1 : i)).filter((i) => i >= 0);
  if (!solid.length) return kind;
  const at = r.pick(solid);
  switch (kind) {
    case 'delete':
      toks.splice(at, 1);
      break;
    case 'duplicate':
      toks.splice(at, 0, toks[at]!, ' ');
      break;
    case 'swap': {
      // A neighbour most of the time, anywhere sometimes.
      const k = solid.indexOf(at);
      const other = r.chance(0.7) ? solid[Math.min(solid.length - 1, k + 1)]! : r.pick(solid);
      [toks[at], toks[other]] = [toks[other]!, toks[at]!];
      break;
    }
    case 'number': {
      const nums = solid.filter((i) => isNumber(toks[i]!));
      if (nums.length) toks[r.pick(nums)] = r.pick(NUMBERS);
      break;
    }
    case 'operator': {
      const ops = solid.filter((i) => OPERATORS.includes(toks[i]!));
      if (ops.length) {
        const i = r.pick(ops);
        toks[i] = r.pick(OPERATOR_CLASSES.find((c) => c.includes(toks[i]!))!);
      }
      break;
    }
    case 'rename': {
      const names = solid.filter((i) => isName(toks[i]!));
      if (names.length) toks[r.pick(names)] = toks[r.pick(names)]!;
      break;
    }
    case 'truncate':
      toks.length = at;
      break;
  }
  return kind;
}

/**
 * The mutations by weight: numbers and operators most (their mutants often still check, and then
 * run on both backends), truncation least (it rarely leaves a scene that checks).
 */
const WEIGHTED: Mutation[] = [
  ...Array<Mutation>(6).fill('number'), ...Array<Mutation>(5).fill('operator'), ...Array<Mutation>(2).fill('rename'),
  ...Array<Mutation>(2).fill('delete'), ...Array<Mutation>(2).fill('duplicate'), ...Array<Mutation>(2).fill('swap'), 'truncate',
];

/** `count` mutations of a scene text. */
export function mutateScene(r: Rng, text: string, count: number): string {
  const toks = tokens(text);
  for (let i = 0; i < count; i++) mutateOnce(r, toks, r.pick(WEIGHTED));
  return toks.join('');
}
