// The MCP tools, made from the operations table: one tool per operation, its zod input schema from
// the operation's fields (the SDK validates calls with it and lists it as JSON Schema), its output
// schema from what the operation returns, its annotations from its effect. Nothing here names an
// operation or a field, so a new operation or field in the table is a new tool or property.

import * as z from 'zod';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { F32_MAX, missingField, unknownField, wrongType } from '../protocol/envelope.js';
import { OPERATIONS, type FieldType, type OperationSpec } from '../protocol/operations.js';

/** A number a kernel can be given (the envelope's f32 check): finite, within ±3.4e38. */
const f32 = () => z.number().min(-F32_MAX).max(F32_MAX);

/**
 * The zod type of a field type of the table. A type this map does not know yet is any value (the
 * session still validates it), so the door keeps working when the table grows a type.
 */
export function typeSchema(type: FieldType | string, error?: z.core.$ZodErrorMap): z.ZodType {
  const e = error ? { error } : {};
  switch (type) {
    case 'string':
      return z.string(e);
    case 'number':
      return z.number(e).min(-F32_MAX, e).max(F32_MAX, e);
    case 'integer':
      return z.int(e);
    case 'boolean':
      return z.boolean(e);
    case 'object':
      return z.record(z.string(), z.unknown(), e);
    case 'array':
      return z.array(z.unknown(), e);
    case 'string|null':
      return z.string(e).nullable();
    case 'number|array':
      return z.union([f32(), z.array(f32())], e);
    default:
      return z.unknown();
  }
}

/**
 * The input schema of one operation: its fields, which are required, and no others. A call that
 * does not fit is refused with the message the protocol gives the same request (envelope.ts).
 */
export function inputSchema(op: OperationSpec): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const f of op.fields) {
    const message: z.core.$ZodErrorMap = (issue) => (issue.input === undefined ? missingField(op, f) : wrongType(op, f)).message;
    const type = typeSchema(f.type, message).describe(f.meaning);
    shape[f.name] = f.required ? type : type.optional();
  }
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? unknownField(op, issue.keys[0]!).message : undefined),
  });
}

/** The output schema: what `ok` may hold, each member optional, others allowed. */
export function outputSchema(op: OperationSpec): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, type] of Object.entries(op.returns)) shape[name] = typeSchema(type).optional();
  return z.looseObject(shape);
}

/** What a model reads about a tool: the summary and what it answers (fields are described in the schema). */
export function description(op: OperationSpec): string {
  const answer = op.answer.trim().replace(/\.$/, '');
  return `${op.summary} Answers: ${answer}.`;
}

/**
 * The table's effect as MCP's hints. Nothing reaches beyond the scene's folder and the running
 * world (openWorldHint false); destructiveHint means something only when readOnlyHint is false.
 */
export function annotations(op: OperationSpec): ToolAnnotations {
  return {
    title: `${op.name} (${op.group})`,
    readOnlyHint: op.effect === 'read',
    destructiveHint: op.effect === 'destroy',
    idempotentHint: op.idempotent,
    openWorldHint: false,
  };
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  annotations: ToolAnnotations;
}

/** One tool per operation, in the table's order. */
export function tools(ops: readonly OperationSpec[] = OPERATIONS): ToolDefinition[] {
  return ops.map((op) => ({
    name: op.name,
    title: `${op.name} (${op.group})`,
    description: description(op),
    inputSchema: inputSchema(op),
    outputSchema: outputSchema(op),
    annotations: annotations(op),
  }));
}
