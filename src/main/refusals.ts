// Why the session refuses a change, as errors of its own (the protocol turns them into answers at
// its door, src/protocol/dispatcher.ts): a scene that does not check, a migration that fails. Each
// carries its diagnostics or the node it concerns as data a client acts on.

import type { Diagnostic } from '../ir/syntax/tree.js';
import { UserError } from './user-error.js';

/** `lead: path:line:column: message (and N more)`. */
export function diagnosticsMessage(lead: string, diagnostics: Diagnostic[]): string {
  const d = diagnostics[0];
  return `${lead}: ${d.path}:${d.line}:${d.column}: ${d.message}${diagnostics.length > 1 ? ` (and ${diagnostics.length - 1} more)` : ''}`;
}

/** A scene that does not check, as the error the change answers. */
export class CheckFailed extends UserError {
  override name = 'CheckFailed';
  constructor(
    readonly lead: string,
    readonly diagnostics: Diagnostic[],
  ) {
    super(diagnosticsMessage(lead, diagnostics));
  }
}

/** Where a scene fails to check, as errors and events carry it: every diagnostic, the first's position and fix. */
export function diagnosticsData(diagnostics: Diagnostic[]): Record<string, unknown> {
  const first = diagnostics[0];
  return {
    diagnostics: diagnostics.map((d) => ({ path: d.path, line: d.line, column: d.column, message: d.message, ...(d.fix ? { fix: d.fix } : {}) })),
    path: first.path, line: first.line, column: first.column, ...(first.fix ? { fix: first.fix } : {}),
  };
}

/** A node's state could not be carried by its kernel's `migrate from`: the old generation keeps running. */
export class MigrationFailed extends UserError {
  override name = 'MigrationFailed';
  constructor(
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
  }
}
