// `--optimise-budget MS` on serve, mcp and entelechy-player: one definition of the option and of
// its check, so the three commands take and refuse the same values; and how a compile is held to
// it (watchBudget: CPU time of the compile's thread, with a wall-time cap).

import { UserError } from './user-error.js';

/** Milliseconds of CPU an optimised compile may take in the background before the fast tier is kept. */
export const DEFAULT_OPTIMISE_BUDGET_MS = 2000;
const MOST_MS = 3_600_000;

/** A compile also ends after this many times its budget in wall time, however little CPU it got. */
export const WALL_FACTOR = 10;

/** The option as yargs takes it. */
export const optimiseBudgetOption = {
  type: 'number',
  default: DEFAULT_OPTIMISE_BUDGET_MS,
  describe: `milliseconds an optimised compile may take in the background before the fast tier is kept (CPU time where known, with a cap of ${WALL_FACTOR} times it in wall time; docs/architecture.md, Tiers)`,
} as const;

/** The option's value checked: milliseconds from 0 to an hour, else an error saying so. */
export function optimiseBudget(value: unknown): number {
  const ms = Number(value);
  if (typeof value !== 'number' || !(ms >= 0 && ms <= MOST_MS)) throw new UserError(`--optimise-budget takes milliseconds between 0 and ${MOST_MS}, e.g. --optimise-budget 5000; got ${String(value)}`);
  return ms;
}

/** Why a compile was stopped: its CPU past the budget, or its wall time past WALL_FACTOR times it (or past it, with no CPU time known). */
export interface PastBudget {
  why: 'cpu' | 'wall';
  cpu_ms?: number;
  wall_ms: number;
}

/**
 * Watch a compile against `budgetMs` of its thread's CPU (`cpuMs` reads it; undefined where it
 * is not known: then the budget is wall time). On a busy machine a thread that waits for a core
 * (the optimiser's runs at a low priority) is not charged for the wait; the wall-time cap of
 * WALL_FACTOR budgets keeps a starved compile from holding its worker for ever. `past` resolves
 * when either is passed; stop() ends the watch.
 */
export function watchBudget(budgetMs: number, cpuMs: () => number | undefined): { past: Promise<PastBudget>; stop(): void } {
  const wall0 = performance.now();
  const cpu0 = cpuMs();
  let timer: NodeJS.Timeout | undefined;
  const past = new Promise<PastBudget>((resolve) => {
    const look = () => {
      const wall_ms = performance.now() - wall0;
      const now = cpu0 === undefined ? undefined : cpuMs();
      const cpu_ms = now === undefined ? undefined : now - cpu0!;
      if (cpu_ms !== undefined && cpu_ms > budgetMs) return resolve({ why: 'cpu', cpu_ms, wall_ms });
      if (wall_ms > (cpu_ms === undefined ? budgetMs : WALL_FACTOR * budgetMs)) return resolve({ why: 'wall', cpu_ms, wall_ms });
      // Often enough to stop near the budget, rarely enough to cost nothing (20 looks a second at the default).
      timer = setTimeout(look, Math.min(50, Math.max(1, budgetMs / 10)));
      timer.unref();
    };
    look();
  });
  return { past, stop: () => clearTimeout(timer) };
}
