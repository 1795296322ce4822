// Reading and writing the fields of a world: the protocol's `read`, `write`, `snapshot` and
// `restore` (and anything else outside the engine) go through these, never through the memory's
// layout (field.ts), so how a field is laid out stays the engine's business. A write moves the
// engine's version on: the next frame recomputes from what was written.

import type { Engine } from './engine.js';
import { fillField, readField, storeRegion, type Box, type Field } from './field.js';
import { fieldToRgba, planesToRgba } from './image.js';
import { storePicture, type Picture } from './image-input.js';
import { restoreInto, snapshotOf, type Snapshot } from './snapshot.js';
export { restoredNote, takenWith } from './snapshot.js';
import type { World, WorldEvent } from './world.js';

export { holdsOtherThanSnapshot } from './snapshot.js';

export type { Box, Field, Picture, Snapshot };
export { decodeImageFor, InputImageError } from './image-input.js';
export { encodePng } from './image.js';

// Finding a field: undefined when the world holds no such field.

/** The field behind an output of the scene. */
export function outputField(world: World, name: string): Field | undefined {
  return world.engine.outputField(name);
}

/** The field of a scene input. */
export function inputField(world: World, name: string): Field | undefined {
  return world.engine.fields.input(name);
}

/** The field of a node's out or state port (a state's current buffer); undefined when fusion keeps it inside a loop. */
export function portField(world: World, node: string, port: string): Field | undefined {
  return world.engine.fields.port(node, port);
}

/** The current buffer of a node's state port; undefined when the node does not run. */
export function stateField(world: World, node: string, port: string): Field | undefined {
  return world.engine.fields.state(node, port)?.current;
}

/** The field's values, one Float32Array per component (rows packed, no padding). */
export function readPlanes(world: World, field: Field): Float32Array[] {
  return readField(world.engine.memory, field);
}

/** The field as RGBA8, sRGB-encoded (image.ts): the whole of it, or `planes` already read (a region). */
export function readRgba(world: World, field: Field, name: string, planes?: { planes: Float32Array[]; elements: number }): Uint8Array {
  return planes ? planesToRgba(field.comps, planes.planes, planes.elements) : fieldToRgba(world.engine.memory, field, name);
}

/** Every element of the field set to `value` (one number per component). */
export function fillValue(engine: Engine, field: Field, value: number[]): void {
  fillField(engine.memory, field, value);
  engine.version++;
}

/** The box of the field set from `values` (component-major planes of the box's elements). */
export function storeBox(engine: Engine, field: Field, box: Box, values: Float32Array): void {
  storeRegion(engine.memory, field, box, values);
  engine.version++;
}

/** The field set from a decoded picture (image-input.ts, already resized to the field). */
export function storeImage(engine: Engine, field: Field, picture: Picture): void {
  storePicture(engine.memory, field, picture);
  engine.version++;
}

/** The world's snapshot as text (snapshot.ts): its state, params, clock and published kernels. */
export function snapshotText(world: World, entry: string): string {
  return snapshotOf(world.engine.memory, entry, world);
}

/**
 * The snapshot's state, params and clock put into the engine of the next world (a change's
 * `adjust`). A state that does not fit the engine's (another size, components or length, or no
 * such state) refuses the whole snapshot before anything is put: `refuse(why)` throws. Each state
 * put is told as carried, how `restored` (commit.ts then tells no other carry of it).
 */
export function restoreSnapshot(engine: Engine, snap: Snapshot, refuse: (why: string) => never): WorldEvent[] {
  const put = restoreInto(engine.memory, snap, engine);
  if ('why' in put) refuse(put.why);
  return put.restored.map((key) => {
    const [node, port] = key.split('.');
    return { kind: 'state_carried', node, port, how: ['restored'], message: `\`${key}\` restored from the snapshot` };
  });
}
