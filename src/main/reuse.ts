// Per-group reuse (docs/architecture.md, Reuse): a group whose result cannot have changed since
// it last ran is not run again, in the next frame or in the next world's engine after an edit.
//
// A stateless group's result is a function of its IR, its uniform values and the fields it reads.
// Each group's outputs and each input carry a stamp: a number no other content ever had (counted
// across every engine), renewed whenever the content may change: a group's before it runs (a run
// that fails leaves part of it written), the inputs' whenever the engine's `version` moves (a
// write; coarse: every input; a reset moves it without renewing them). A group is reused when it has no state and what it would read now,
// its uniform values and its reads' stamps, is exactly what its outputs were computed from.

import type { Group } from '../ir/fuse.js';

let lastStamp = 0;
const fresh = () => ++lastStamp;

/** Whether a group keeps state (double-buffered): its result depends on every frame before, so it always runs. */
const keepsState = (g: Group) => g.fields.some((b) => b.kind === 'state' || (b.kind === 'write' && b.state));

export class GroupReuse {
  /** Per group: the stamp of what its outputs hold (undefined: nothing computed). */
  private readonly stamps: (number | undefined)[] = [];
  /** Per group: what its outputs were computed from (undefined: not reusable). */
  private readonly keys: (number[] | undefined)[] = [];
  private readonly inputStamps = new Map<string, number>();
  /** The engine's `version` the input stamps are of. */
  private inputsAt: number;
  /** The group that writes each node's ports. */
  private readonly producer = new Map<string, number>();
  private readonly stateful: boolean[];

  constructor(
    private readonly groups: Group[],
    inputs: Iterable<string>,
    version: number,
    /** Off: every group runs every frame (stamps and keys are kept all the same). */
    readonly enabled: boolean,
  ) {
    for (const name of inputs) this.inputStamps.set(name, fresh());
    this.inputsAt = version;
    groups.forEach((g, gi) => g.nodes.forEach((n) => this.producer.set(n.name, gi)));
    this.stateful = groups.map(keepsState);
  }

  private inputStamp(name: string, version: number): number | undefined {
    this.inputsOf(version);
    return this.inputStamps.get(name);
  }

  /** The input stamps of the engine at `version`: renewed if it moved. */
  private inputsOf(version: number): void {
    if (version === this.inputsAt) return;
    for (const input of this.inputStamps.keys()) this.inputStamps.set(input, fresh());
    this.inputsAt = version;
  }

  /** The engine's version moved from `before` to `after` by a change of state alone (a reset): the inputs hold what they held. */
  statesChanged(before: number, after: number): void {
    this.inputsOf(before);
    this.inputsAt = after;
  }

  /** What group `gi` would compute from now (its uniform values, then its reads' stamps); undefined if a read holds nothing known. */
  key(gi: number, values: number[], version: number): number[] | undefined {
    const key = [...values];
    for (const b of this.groups[gi].fields) {
      if (b.kind !== 'read') continue;
      const stamp = 'input' in b.from ? this.inputStamp(b.from.input, version) : this.stamps[this.producer.get(b.from.node) ?? -1];
      if (stamp === undefined) return undefined;
      key.push(stamp);
    }
    return key;
  }

  /** Whether group `gi`'s outputs already hold what it would compute from `key`. */
  reusable(gi: number, key: number[] | undefined): boolean {
    const was = this.keys[gi];
    return this.enabled && !!key && !!was && was.length === key.length && was.every((v, i) => Object.is(v, key[i]));
  }

  /** Group `gi` is about to run: its outputs change, and hold nothing reusable until it has run. */
  running(gi: number): void {
    this.stamps[gi] = fresh();
    this.keys[gi] = undefined;
  }

  /** Group `gi` ran from `key`. */
  ran(gi: number, key: number[] | undefined): void {
    if (!this.stateful[gi]) this.keys[gi] = key;
  }

  /** Whether group `gi`'s outputs hold something computed (`reusable`: and what from). */
  holds(gi: number, reusable: boolean): boolean {
    return this.stamps[gi] !== undefined && (!reusable || this.keys[gi] !== undefined);
  }

  /** Group `gi` now holds a copy of group `gj` of `from` (another engine's): the same stamp and key. */
  takeOver(gi: number, from: GroupReuse, gj: number): void {
    this.stamps[gi] = from.stamps[gj];
    this.keys[gi] = from.keys[gj];
  }

  /** Input `name` now holds a copy of `from`'s (its engine at `fromVersion`); this engine is at `version`. */
  keepInput(name: string, from: GroupReuse, fromVersion: number, version: number): void {
    const stamp = from.inputStamp(name, fromVersion);
    this.inputsOf(version); // renew the others first if this engine's version moved
    if (stamp !== undefined) this.inputStamps.set(name, stamp);
  }
}
