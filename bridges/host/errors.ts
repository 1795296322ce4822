// The errors a host sees, each saying what happened in words a person can act on. None of them
// is a bug of the host: they carry no stack worth reading, only the message and the data.

/** The engine answered a request with an error: `message`, and what acts on it (fix, field, node...). */
export class EntelechyError extends Error {
  override name = 'EntelechyError';
  /** The whole `error` object of the answer (message, fix, field, expected, diagnostics...). */
  readonly data: Record<string, unknown>;
  constructor(
    readonly op: string,
    readonly id: unknown,
    error: Record<string, unknown>,
  ) {
    super(typeof error.message === 'string' ? error.message : `\`${op}\` failed`);
    this.data = error;
  }
  /** Where one mends it: an item to hand back to `compose` (or a request, e.g. a pin). */
  get fix(): unknown {
    return this.data.fix;
  }
}

/** No answer came within the request's timeout. */
export class EntelechyTimeoutError extends Error {
  override name = 'EntelechyTimeoutError';
  constructor(
    readonly op: string,
    readonly id: number,
    readonly milliseconds: number,
  ) {
    super(
      `\`${op}\` (request ${id}) got no answer within ${milliseconds} ms; the session answers each connection's ` +
        'requests in order, so a slow earlier request delays it too (give a longer `timeout` if that is expected)',
    );
  }
}

/** The connection could not be made, or it ended while requests were waiting. */
export class EntelechyConnectionError extends Error {
  override name = 'EntelechyConnectionError';
  constructor(
    message: string,
    readonly address: string,
  ) {
    super(message);
  }
}

/** Words for a socket error code, so the message says what to check. */
export function socketProblem(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused (nothing listens there: is `entelechy serve SCENE --listen HOST:PORT` running?)';
    case 'ECONNRESET': return 'the connection was reset by the session';
    case 'ENOTFOUND': return 'no such host';
    case 'ETIMEDOUT': return 'the connection timed out';
    case 'EHOSTUNREACH': return 'the host is unreachable';
    case 'EPIPE': return 'the session closed the connection';
  }
  const message = err instanceof Error ? err.message : String(err ?? 'unknown error');
  return typeof code === 'string' ? `${message} (${code})` : message;
}
