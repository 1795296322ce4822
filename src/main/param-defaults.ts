// Params across a change of the scene: the running value of each param carries over, except that
// a param whose declared default changed follows the new default when it still held the old one
// (nothing set it: the document's edit is what the agent asked for). A value set with `param`
// is kept, and an event says so, with the `param` request that would apply the new default.

import type { Scene } from '../ir/check/scene.js';
import type { Engine } from './engine.js';
import type { WorldEvent } from './events.js';

const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

/** Set `engine`'s params (it starts with `scene`'s defaults) from `old`'s running values; the events of defaults that changed. */
export function carryParams(old: { scene: Scene; engine: Engine }, scene: Scene, engine: Engine): WorldEvent[] {
  const events: WorldEvent[] = [];
  for (const [name, value] of old.engine.params) {
    const declared = scene.params.get(name)?.value;
    if (!declared || declared.length !== value.length) continue;
    const was = old.scene.params.get(name)?.value;
    const one = (v: readonly number[]) => (v.length === 1 ? v[0] : [...v]);
    if (was && !same(was, declared)) {
      if (same(value, was)) {
        events.push({ kind: 'param_moved', param: name, value: one(declared), from: one(was) });
        continue; // the engine holds the new default already
      }
      events.push({
        kind: 'param_kept', param: name, value: one(value), default: one(declared),
        message: `param \`${name}\` keeps its running value ${JSON.stringify(one(value))} (set with \`param\`); its declared default is now ${JSON.stringify(one(declared))}: the \`request\` applies it`,
        request: { op: 'param', name, value: one(declared) },
      });
    }
    engine.params.set(name, value);
  }
  return events;
}
