// The MCP tools, made from the operations table: one tool per operation, its input schema from the
// operation's fields and its description from the summary and the answer. Nothing here names an
// operation or a field, so a new operation or field in the table is a new tool or property.

import { OPERATIONS, type OperationSpec } from '../protocol/operations.js';

/** The JSON Schema subset the tools use. */
export type JsonSchema = { [key: string]: unknown };

/**
 * A field type of the table as JSON Schema. The table's types are read as strings: a type this
 * map does not know yet is taken as any value (the session still validates it), so the door
 * keeps working when the table grows a type.
 */
export function typeSchema(type: string): JsonSchema {
  switch (type) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
    case 'object':
      return { type };
    // `items` is there for clients that refuse an array schema without one (any item: the session
    // checks each item and says which is wrong).
    case 'array':
      return { type: 'array', items: {} };
    case 'string|null':
      return { type: ['string', 'null'] };
    case 'number|array':
      return { anyOf: [{ type: 'number' }, { type: 'array', items: { type: 'number' } }] };
    default:
      return {};
  }
}

/** The input schema of one operation: its fields, which are required, and no others. */
export function inputSchema(op: OperationSpec): JsonSchema & { type: 'object' } {
  const properties: Record<string, JsonSchema> = {};
  for (const f of op.fields) properties[f.name] = { ...typeSchema(f.type), description: f.meaning };
  const required = op.fields.filter((f) => f.required).map((f) => f.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** What a model reads about a tool: the summary and what it answers (fields are described in the schema). */
export function description(op: OperationSpec): string {
  const answer = op.answer.trim().replace(/\.$/, '');
  return `${op.summary} Answers: ${answer}.`;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  annotations: { title: string; readOnlyHint: boolean; openWorldHint: boolean };
}

/** One tool per operation, in the table's order. */
export function tools(ops: readonly OperationSpec[] = OPERATIONS): ToolDefinition[] {
  return ops.map((op) => ({
    name: op.name,
    title: `${op.name} (${op.group})`,
    description: description(op),
    inputSchema: inputSchema(op),
    // Inspect operations only look; the rest may change the world or its documents. Nothing
    // reaches beyond the scene's folder and the running world.
    annotations: { title: `${op.name} (${op.group})`, readOnlyHint: op.group === 'Inspect', openWorldHint: false },
  }));
}
