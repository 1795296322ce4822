// The error a request is answered with: a message for the client and the data that acts on it.

import type { Diagnostic } from '../ir/syntax/tree.js';
import { diagnosticsData, diagnosticsMessage } from '../main/refusals.js';

/** An error for the client: a message and the data that acts on it (fields, fix, node, ...). */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
  constructor(
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** A request named a node the scene does not have: the nodes it has. */
  static noNode(name: unknown, nodes: readonly { name: string }[]): ProtocolError {
    return new ProtocolError(`no node \`${name}\`; the nodes: ${nodes.map((n) => n.name).join(', ') || 'none'}`, { field: 'node' });
  }

  /** A domain error that carries its own data (a limit passed), as the protocol answers it. */
  static from(e: Error & { data: Record<string, unknown> }): ProtocolError {
    return new ProtocolError(e.message, { ...e.data });
  }
}

/** A failed check or compile, as an error the client can act on. */
export function diagnosticsError(what: string, diagnostics: Diagnostic[]): ProtocolError {
  return new ProtocolError(diagnosticsMessage(what, diagnostics), diagnosticsData(diagnostics));
}
