// JSON-RPC errors the MCP door answers itself (a malformed call, a resource that is not there).

/**
 * A JSON-RPC error -32602 whose message is the reason alone: an McpError's own message starts
 * with "MCP error -32602: ", which the client's McpError prefixes again.
 */
export function invalidParams(message: string): Error {
  return Object.assign(new Error(message), { code: -32602 });
}
