// The package's in-process API: the session, `dispatch` (one request line in, its answer out), and the
// engine's fields as typed arrays over the shared memory.

export { Session, type SessionOptions } from './main/session.js';
export { call, CallError, type CallArgs } from './protocol/call.js';
export type { Answer, ProtocolEvent } from './protocol/answers.js';
export type { EventKind, OperationName, RequestFields } from './protocol/operations.js';
export { Engine, type FrameReport } from './main/engine.js';
export { EvaluationError } from './main/evaluation-error.js';
export { FieldMemory } from './main/memory.js';
export { readField, type Field } from './main/field.js';
export { loadScene, type Scene } from './ir/check/scene.js';
export { OPERATIONS } from './protocol/operations.js';
export { dispatch } from './protocol/dispatcher.js';
export { helpEntry } from './protocol/help.js';

import type { Field } from './main/field.js';
import type { FieldMemory } from './main/memory.js';

/**
 * One component plane of a field, in place: a typed array over the shared memory (no copy). Rows
 * are `field.stride` elements apart (padded to a multiple of 4); element (x, y, z) is at
 * x + y * stride + z * stride * height. The view is valid until the memory grows or the field is freed.
 */
export function fieldPlane(memory: FieldMemory, field: Field, component = 0): Float32Array | Int32Array {
  const length = field.stride * field.height * field.depth;
  const offset = field.ptr + component * field.planeBytes;
  return field.comps[component] === 'f32' ? new Float32Array(memory.memory.buffer, offset, length) : new Int32Array(memory.memory.buffer, offset, length);
}
