// The error a request is answered with: a message for the client and the data that acts on it.

/** An error for the client: a message and the data that acts on it (fields, fix, node, ...). */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
  constructor(
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
