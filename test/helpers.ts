// Shared test helpers: load scenes from text or from examples, evaluate them, compare fields.

import './child-env.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { Engine, type EngineOptions, type FrameInput } from '../src/main/engine.js';
import { readField } from '../src/main/field.js';
import { loadCompiler } from '../src/main/modules.js';

// Engines compile: the compiler (binaryen) loads on demand, once, here for every test.
await loadCompiler();

/** The repository's root (tests run from dist/test). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const EXAMPLES = ['rings', 'life', 'castle', 'mandelbrot', 'blur'];

export function exampleScene(name: string, size?: number[]): Scene {
  const root = join(ROOT, 'examples', name);
  return loadScene('scene.esn', { read: (p) => (existsSync(join(root, p)) ? readFileSync(join(root, p), 'utf8') : undefined), size });
}

/** A scene from documents given as text: { 'scene.esn': '...', 'k.esn': '...' }. */
export function textScene(docs: Record<string, string>, entry = 'scene.esn'): Scene {
  return loadScene(entry, { read: (p) => docs[p] });
}

/** Evaluate `frames` frames and return every output's planes, as raw bits (NaNs made canonical). */
export async function run(scene: Scene, options: EngineOptions, frames = 1, input: FrameInput = {}): Promise<Map<string, Uint32Array[]>> {
  if (scene.diagnostics.length) throw new Error(scene.diagnostics.map((d) => `${d.path}:${d.line}:${d.column}: ${d.message}`).join('\n'));
  const engine = new Engine(scene, options);
  try {
    for (let i = 0; i < frames; i++) await engine.evaluate({ time: 0.25 * i, ...input });
    const out = new Map<string, Uint32Array[]>();
    for (const o of scene.outputs) {
      const planes = readField(engine.memory, engine.outputField(o.name)!);
      out.set(o.name, planes.map(bits));
    }
    return out;
  } finally {
    engine.dispose();
  }
}

export function bits(plane: Float32Array): Uint32Array {
  const copy = new Float32Array(plane);
  for (let i = 0; i < copy.length; i++) if (Number.isNaN(copy[i])) copy[i] = NaN;
  return new Uint32Array(copy.buffer);
}

/** The first difference between two runs' outputs, or undefined when they are bit-identical. */
export function firstDifference(a: Map<string, Uint32Array[]>, b: Map<string, Uint32Array[]>): string | undefined {
  for (const [name, planes] of a) {
    const other = b.get(name);
    if (!other) return `output ${name} missing`;
    for (let c = 0; c < planes.length; c++) {
      for (let i = 0; i < planes[c].length; i++) {
        if (planes[c][i] !== other[c][i]) {
          const f = (u: number) => new Float32Array(new Uint32Array([u]).buffer)[0];
          return `output ${name} component ${c} element ${i}: ${f(planes[c][i])} vs ${f(other[c][i])}`;
        }
      }
    }
  }
  return undefined;
}

/**
 * Whether two pictures (or any byte arrays) hold the same bytes. Use it, not t.same/t.notSame, on
 * whole images: tap's deep comparison builds a diff of every element when they differ, which
 * takes minutes on a 96 x 64 frame.
 */
export function sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** A small deterministic PRNG (xorshift32) from a seed, so that failures reproduce: numbers in [0, 1). */
export function xorshift(seed: number): () => number {
  return () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
}
