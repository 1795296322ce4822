// `--optimise-budget MS` on serve, mcp and entelechy-player: one definition of the option and of
// its check, so the three commands take and refuse the same values.

import { UserError } from './user-error.js';

/** Milliseconds an optimised compile may take in the background before the fast tier is kept. */
export const DEFAULT_OPTIMISE_BUDGET_MS = 2000;
const MOST_MS = 3_600_000;

/** The option as yargs takes it. */
export const optimiseBudgetOption = {
  type: 'number',
  default: DEFAULT_OPTIMISE_BUDGET_MS,
  describe: 'milliseconds an optimised compile may take in the background before the fast tier is kept (docs/architecture.md, Tiers)',
} as const;

/** The option's value checked: milliseconds from 0 to an hour, else an error saying so. */
export function optimiseBudget(value: unknown): number {
  const ms = Number(value);
  if (typeof value !== 'number' || !(ms >= 0 && ms <= MOST_MS)) throw new UserError(`--optimise-budget takes milliseconds between 0 and ${MOST_MS}, e.g. --optimise-budget 5000; got ${String(value)}`);
  return ms;
}
