// A loop out of fuel, as both backends report it. The first trap of a run claims the argument
// block's trap word (compare-and-swap: the bands of one run trap on several workers at once) and
// writes the element it was at beside it, so the message names the node and the element, the
// same in both backends.

import { ARGS } from './ir.js';

/** A metered loop ran out of fuel at one element; both backends throw this. */
export class FuelTrap extends Error {
  constructor(
    readonly node: string,
    readonly fuel: number,
    /** (x, y), or (x, y, z) in a 3-D domain; absent where no element was recorded. */
    readonly element?: readonly number[],
  ) {
    super(
      `node \`${node}\` ran out of fuel${element ? ` at element (${element.join(', ')})` : ''}: a loop ran more than ${fuel} times ` +
        `${element ? 'there' : 'at one element'}; give the loop a bound (a \`for\` with a count, or a \`while\` whose body brings its condition to false)`,
    );
    this.name = 'FuelTrap';
  }
}

/** Word indices (of an Int32Array over the memory) of the block at byte `args`. */
const word = (args: number, offset: number) => (args + offset) >>> 2;

/** The interpreter's trap: claim the trap word for `node` and record the element, as the compiled code does. */
export function recordTrap(i32: Int32Array, args: number, node: number, x: number, row: number): void {
  if (Atomics.compareExchange(i32, word(args, ARGS.trap), -1, node) !== -1) return;
  i32[word(args, ARGS.trapX)] = x;
  i32[word(args, ARGS.trapRow)] = row;
}

/** The node index a run's trap recorded (-1: none). */
export function trappedNode(i32: Int32Array, args: number): number {
  return i32[word(args, ARGS.trap)];
}

/** The element a run's trap recorded: (x, y), or (x, y, z) in a 3-D domain. */
export function trappedElement(i32: Int32Array, args: number): number[] {
  const x = i32[word(args, ARGS.trapX)];
  const row = i32[word(args, ARGS.trapRow)];
  const height = Math.max(1, i32[word(args, ARGS.height)]);
  const depth = i32[word(args, ARGS.depth)];
  const y = row % height;
  return depth > 1 ? [x, y, (row - y) / height] : [x, y];
}

/** The FuelTrap a run's recorded trap tells, naming its node from `nodes`; null when none of them was recorded. */
export function fuelTrapIn(i32: Int32Array, args: number, nodes: readonly string[], fuel: number): FuelTrap | null {
  const node = trappedNode(i32, args);
  if (!(node >= 0 && node < nodes.length)) return null;
  return new FuelTrap(nodes[node], fuel, trappedElement(i32, args));
}
