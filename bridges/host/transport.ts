// What the client needs of a connection: send one request line, hear answer lines and the end.
// TCP (tcp.ts, Node) and WebSocket (websocket.ts, browser or Node) are the two implementations.

export interface Transport {
  /** Where it is connected, for messages: tcp://host:port or ws://host:port. */
  readonly address: string;
  /** Send one request line (the transport adds the framing: a newline, or one text message). */
  send(line: string): void;
  /** End the connection; `closed` is called once it has ended. */
  close(): void;
}

export interface TransportEvents {
  /** One answer line arrived. */
  line(line: string): void;
  /** The connection ended (with the error that ended it, if one did). Called once. */
  closed(error?: Error): void;
}

/** Opens a connection; resolves once it is open, rejects with an EntelechyConnectionError. */
export type OpenTransport = (events: TransportEvents) => Promise<Transport>;
