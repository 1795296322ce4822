// Params across a change of the scene: the running value of each param carries over, except that
// a param whose declared default changed follows the new default when it still held the old one
// (nothing set it: the document's edit is what the agent asked for). A value set with `param`
// is kept, and an event says so, with the `param` request that would apply the new default. A
// carried value the new declaration no longer allows (a narrower range, f32 made i32) is fitted
// to it, as a declaration's own value is (params.ts), and told: a param keeps to its declaration.

import { fitParamValue, paramValueProblem } from '../ir/check/params.js';
import type { ParamInfo, Scene } from '../ir/check/scene.js';
import type { Engine } from './engine.js';
import type { WorldEvent } from './events.js';

const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
const one = (v: readonly number[]) => (v.length === 1 ? v[0] : [...v]);

/** Set `engine`'s params (it starts with `scene`'s defaults) from `old`'s running values; the events of defaults that changed. */
export function carryParams(old: { scene: Scene; engine: Engine }, scene: Scene, engine: Engine): WorldEvent[] {
  const events: WorldEvent[] = [];
  for (const [name, value] of old.engine.params) {
    const param = scene.params.get(name);
    if (!param || param.value.length !== value.length) continue;
    const declared = param.value;
    const was = old.scene.params.get(name)?.value;
    const moved = was !== undefined && !same(was, declared);
    if (moved && same(value, was)) {
      events.push({ kind: 'param_moved', param: name, value: one(declared), from: one(was) });
      continue; // the engine holds the new default already
    }
    const fitted = fitToDeclaration(param, value, moved);
    if (fitted) {
      events.push(fitted.event);
      engine.params.set(name, fitted.value);
      continue;
    }
    if (moved)
      events.push({
        kind: 'param_kept', param: name, value: one(value), default: one(declared),
        message: `param \`${name}\` keeps its running value ${JSON.stringify(one(value))} (set with \`param\`); its declared default is now ${JSON.stringify(one(declared))}: the \`request\` applies it`,
        request: { op: 'param', name, value: one(declared) },
      });
    engine.params.set(name, value);
  }
  return events;
}

/**
 * When the new declaration no longer allows the running `value`: the nearest value it allows (its
 * default should fitting fail, as for an i32 range that holds no integer) and the param_fitted
 * event; with the default changed too, the event carries param_kept's request that applies it.
 */
function fitToDeclaration(param: ParamInfo, value: readonly number[], moved: boolean): { value: number[]; event: WorldEvent } | undefined {
  const problem = paramValueProblem(param, [...value]);
  if (!problem) return undefined;
  let fitted = fitParamValue(param, value);
  if (paramValueProblem(param, fitted)) fitted = [...param.value];
  const name = param.name;
  const event: WorldEvent = {
    kind: 'param_fitted', param: name, value: one(fitted), from: one(value),
    message: `param \`${name}\` was ${JSON.stringify(one(value))}, which its new declaration does not allow: ${problem.why}; it is now ${JSON.stringify(one(fitted))}, the nearest value it allows (set another with \`param\`)`,
  };
  if (moved) Object.assign(event, { default: one(param.value), request: { op: 'param', name, value: one(param.value) } });
  return { value: fitted, event };
}
