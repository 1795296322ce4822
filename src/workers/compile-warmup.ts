// The compile worker's warm-up (issue 17: an edit's compile). binaryen is a large WebAssembly
// module, and V8 first runs it on baseline code (Liftoff), optimising a function only once it has
// run a while; our codegen's JavaScript warms the same way. In a young worker the fast tier's
// binaryen step of one group took 3-20 ms against 2-4 ms once warm (bench/experiments/fast-codegen.ts),
// so the first edits of a session paid for the warming. Here the worker compiles a small scene of
// the corpus's kind (a loop calling a function, math, a stencil's gathers, a branch) a few times
// while it has nothing else to do, and throws the bytes away.
//
// A real compile goes first: the warm-up starts only once the worker has been idle IDLE_MS, runs
// one group's compile per macrotask (a request that arrives meanwhile waits for at most that one),
// ends when a request has come since it began (the edits warm the compiler themselves from then
// on; on a busy machine the warm-up's compiles took 100-700 ms each and stood before edits), and
// gives up at its first error: a warm-up that fails costs nothing but itself.

import type { IrFunction } from '../ir/ir.js';

/** Idle time before the warm-up starts (after binaryen loads, or after a request): a queued request goes first. */
export const IDLE_MS = 30;
/** Compiles of the warm-up scene's groups, one per macrotask. */
export const WARM_ROUNDS = 6;

const WARM_SCENE = `
fn wave(p: vec3): f32 {
  let sum = 0.0;
  let amp = 0.5;
  let q = p;
  for (let i = 0; i < 4; i++) {
    sum += sin(q.x * 1.7 + q.y) * cos(q.z - q.y * 0.5) * amp;
    q = q * 2.03 + vec3(1.7, 9.2, 3.1);
    amp *= 0.5;
  }
  return sum;
}

kernel warm.source@1 {
  grants time.read;
  out image: field2<vec4>;
  each (x, y) {
    const p = vec3(x * 0.01, y * 0.01, time * 0.2);
    const n = wave(p + vec3(wave(p), 0.3, 0.0));
    const c = hash(x, y) * 0.1;
    image = vec4(n, sqrt(abs(n)) + c, fract(n * 3.0), 1.0);
  }
}

kernel warm.blur@1 {
  grants field.read;
  in src: field2<vec4>;
  out image: field2<vec4>;
  each (x, y) {
    let sum = vec4(0.0);
    for (let j = -1; j <= 1; j++) {
      for (let i = -1; i <= 1; i++) sum += src.at(x + i, y + j) * exp(-(i * i + j * j) * 0.2);
    }
    const l = length(sum.xyz);
    if (l > 1.0) sum = sum / l;
    image = clamp(sum, vec4(0.0), vec4(1.0));
  }
}

node source: warm.source@1 { size = 64 x 64; }
node blur: warm.blur@1 { size = 64 x 64; src <- source.image; }
output image <- blur.image;
`;

/** The warm-up scene's groups, checked and lowered as a session's are (the checker is loaded here, on demand). */
export async function warmUpIrs(): Promise<IrFunction[]> {
  const { loadScene } = await import('../ir/check/scene.js');
  const { sceneGroups } = await import('../main/scene-groups.js');
  const scene = loadScene('warm.esn', { read: (p) => (p === 'warm.esn' ? WARM_SCENE : undefined) });
  if (scene.diagnostics.length) throw new Error(`the compile worker's warm-up scene does not check: ${scene.diagnostics[0].message}`);
  return sceneGroups(scene, [], true).map((g) => g.ir);
}

/** What the warm-up did: rounds compiled; whether a request ended it early (`cut`) or an error did. */
export interface Warmth {
  rounds: number;
  done: boolean;
  cut?: true;
  error?: string;
}

/**
 * Warm `compile` up in the background: once `lastRequest()` (when the worker last answered a
 * request, or loaded) is IDLE_MS ago, compile the warm-up scene's groups WARM_ROUNDS times, one
 * group per macrotask, until a request is answered meanwhile. `irs` makes the scene (warmUpIrs;
 * a parameter for tests).
 */
export function warmUp(compile: (ir: IrFunction) => void, lastRequest: () => number, irs: () => Promise<IrFunction[]> = warmUpIrs): Warmth {
  const warmth: Warmth = { rounds: 0, done: false };
  const fail = (e: unknown) => {
    warmth.error = (e as Error)?.message ?? String(e);
    warmth.done = true;
  };
  let began: number | undefined; // lastRequest() when the first warm-up compile ran
  const step = (groups: IrFunction[], next: number) => {
    if (began !== undefined && lastRequest() !== began) {
      warmth.cut = true;
      warmth.done = true;
      return;
    }
    const idle = performance.now() - lastRequest();
    if (idle < IDLE_MS) {
      setTimeout(step, IDLE_MS - idle, groups, next).unref();
      return;
    }
    began ??= lastRequest();
    try {
      compile(groups[next]);
    } catch (e) {
      fail(e);
      return;
    }
    if (next + 1 < groups.length) setImmediate(step, groups, next + 1).unref();
    else if (++warmth.rounds < WARM_ROUNDS) setImmediate(step, groups, 0).unref();
    else warmth.done = true;
  };
  irs().then((groups) => step(groups, 0), fail);
  return warmth;
}
