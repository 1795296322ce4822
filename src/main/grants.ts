// The grants the session checks itself: the rows of the operations table's `grants` that name a
// grant (the `kernels` rows are the checker's: src/ir/check/scene.ts refuses a kernel needing a
// grant the session lacks, for every path that loads one). One function for every such path, so
// `write`, `restore`, `compose`, saved edits and the Player's drops refuse alike: a `write_refused`
// event and a GrantRefused naming the grant (the protocol's door answers it with the grant as data).

import type { Scene } from '../ir/check/scene.js';
import { grantOption, type Grant } from '../ir/grants.js';
import type { Session } from './session.js';
import { UserError } from './user-error.js';
import { changedInputs } from './engine.js';

/** A change or write the session's grants do not allow: nothing was changed. */
export class GrantRefused extends UserError {
  override name = 'GrantRefused';
  readonly data: { grant: Grant };
  constructor(
    message: string,
    readonly grant: Grant,
  ) {
    super(message);
    this.data = { grant };
  }
}

/** Refuse `what` (a phrase: "`write` into input `canvas`") unless the session holds `grant`. */
export function needGrant(s: Session, grant: Grant, what: string, about: Record<string, unknown> = {}): void {
  if (s.grants.includes(grant)) return;
  s.pending.push({ kind: 'write_refused', ...about, reason: `the session does not grant ${grant}` });
  throw new GrantRefused(`${what} needs the grant ${grant}, which this session does not hold (start it with ${grantOption(s.grants, [grant])}: what it holds and this): nothing was changed`, grant);
}

/**
 * The check of a change that may set inputs (a compose, a saved edit picked up by sync or the
 * Player's watcher): an input it adds or redeclares gets its declared value, a write into it, so
 * it needs field.write. `what` names the path ("`compose`", "the saved edit").
 */
export function inputWritesGranted(s: Session, what: string): (next: Scene) => void {
  return (next) => {
    for (const name of changedInputs(s.scene, next)) needGrant(s, 'field.write', `${what} of input \`${name}\``, { input: name });
  };
}

// Inputs a change adds or redeclares: src/main/engine.ts (a publication keeps the others' values).
export { changedInputs };
