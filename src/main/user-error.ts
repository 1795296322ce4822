// Errors that are the user's to mend (a bad option, a scene that does not fit the memory, a path
// outside the folder...): every command and door shows one as its message, with what to do, never
// as a stack trace or an "internal error". They are told apart by type (`instanceof UserError`),
// so a new kind of user error is one `extends UserError`, not a name added to a list somewhere.

/** A mistake of the user's: printed as a message, never as a stack trace. */
export class UserError extends Error {
  override name = 'UserError';
}

export function isUserError(e: unknown): e is UserError {
  return e instanceof UserError;
}

/** Errors whose JSON line a command has printed already (with more than its message). */
const PRINTED = new WeakSet<object>();

export function markPrinted<E extends Error>(e: E): E {
  PRINTED.add(e);
  return e;
}

export function wasPrinted(e: unknown): boolean {
  return e instanceof Error && PRINTED.has(e);
}
