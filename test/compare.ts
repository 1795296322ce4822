// Run IR functions on the interpreter or compiled, over random inputs, and compare outcomes bit
// for bit (NaN payloads aside): a small harness for codegen passes' tests.

import type { Test } from 'tap';
import { compileFunction, instantiate, type CompileOptions } from '../src/codegen/index.js';
import { fieldLayout, writeArgs, elementIndex, type Extents, type FieldPlacement } from '../src/codegen/layout.js';
import { ARGS } from '../src/ir/ir.js';
import { FuelTrap, interpret } from '../src/ir/interp.js';
import { randomValues, rng, type RandomCase } from './ir-gen.js';

export type { Extents };

const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
const HEAP = 8192;

export interface Run {
  trap?: string;
  out: Int32Array[];
  /** A word changed outside every row of every written field (a store past a row's end). */
  stray?: string;
}

/** Run the case on the interpreter ('interp') or compiled with these options. */
export function runWith(c: RandomCase, backend: 'interp' | CompileOptions): Run {
  const f = c.fn;
  let at = HEAP;
  const places: FieldPlacement[] = f.fields.map((fd, i) => {
    const l = fieldLayout(c.extents[i], fd.comps.length);
    const p = { base: at, ...c.extents[i], stride: l.stride, planeBytes: l.planeBytes };
    at += l.bytes + 64;
    return p;
  });
  const need = at - memory.buffer.byteLength;
  if (need > 0) memory.grow(Math.ceil(need / 65536));
  const words = new Int32Array(memory.buffer);
  const floats = new Float32Array(memory.buffer);
  words.fill(0x7a7a7a7a, HEAP / 4, at / 4);
  const r = rng(7);
  f.fields.forEach((fd, i) => {
    if (fd.role !== 'read') return;
    const p = places[i];
    fd.comps.forEach((ty, comp) => {
      const data = randomValues(r, ty, p.width * p.height * p.depth);
      let k = 0;
      for (let z = 0; z < p.depth; z++)
        for (let y = 0; y < p.height; y++)
          for (let x = 0; x < p.width; x++) {
            if (data instanceof Float32Array) floats[elementIndex(p, comp, x, y, z)] = data[k++];
            else words[elementIndex(p, comp, x, y, z)] = data[k++];
          }
    });
  });
  writeArgs(memory, 0, f, c.domain, places, c.uniforms);
  const before = new Int32Array(memory.buffer).slice(HEAP / 4, at / 4);
  const rows = c.domain.height * c.domain.depth;
  let trap: string | undefined;
  try {
    if (backend === 'interp') interpret(f, memory, 0, 0, rows);
    else instantiate(compileFunction(f, backend), memory)(0, 0, rows);
  } catch (e) {
    if (!(e instanceof FuelTrap)) throw e;
    trap = `${e.node} (word ${new Int32Array(memory.buffer)[ARGS.trap / 4]}) at (${e.element?.join(', ')})`;
  }
  const out = f.fields.flatMap((fd, i) => {
    if (fd.role === 'read') return [];
    const p = places[i];
    return fd.comps.map((_, comp) => {
      const view = new Int32Array(memory.buffer);
      const plane = new Int32Array(p.width * p.height * p.depth);
      let k = 0;
      for (let z = 0; z < p.depth; z++)
        for (let y = 0; y < p.height; y++)
          for (let x = 0; x < p.width; x++) {
            const b = view[elementIndex(p, comp, x, y, z)];
            // NaN payloads are not fixed by WebAssembly.
            plane[k++] = (b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0 && fd.comps[comp] === 'f32' ? 0x7fc00000 : b;
          }
      return plane;
    });
  });
  return { trap, out, stray: strayWrite(f, places, before) };
}

/**
 * The first word that changed outside the rows of the written fields (each row: its stride of
 * elements, the padding after the width included, which vectors may write), or undefined.
 */
function strayWrite(f: RandomCase['fn'], places: FieldPlacement[], before: Int32Array): string | undefined {
  const allowed = new Uint8Array(before.length);
  f.fields.forEach((fd, i) => {
    if (fd.role === 'read') return;
    const p = places[i];
    fd.comps.forEach((_, comp) => {
      for (let z = 0; z < p.depth; z++)
        for (let y = 0; y < p.height; y++) {
          const row = elementIndex(p, comp, 0, y, z) - HEAP / 4;
          allowed.fill(1, row, row + p.stride);
        }
    });
  });
  const now = new Int32Array(memory.buffer, HEAP, before.length);
  for (let i = 0; i < before.length; i++) {
    if (!allowed[i] && now[i] !== before[i]) return `byte ${HEAP + 4 * i} written, outside every written row`;
  }
  return undefined;
}

export function difference(a: Run, b: Run): string | undefined {
  if (b.stray) return `wasm: ${b.stray}`;
  if (a.trap !== b.trap) return `traps: interpreter ${a.trap ?? 'none'}, wasm ${b.trap ?? 'none'}`;
  if (a.trap) return undefined; // outputs after a trap are discarded
  for (let p = 0; p < a.out.length; p++)
    for (let i = 0; i < a.out[p].length; i++) {
      if (a.out[p][i] !== b.out[p][i]) return `plane ${p} element ${i}: interpreter ${a.out[p][i]}, wasm ${b.out[p][i]}`;
    }
  return undefined;
}

/** Assert that every variant agrees with the interpreter; the interpreter's outcome. */
export function agree(tt: Test, name: string, c: RandomCase, variants: Record<string, CompileOptions>): Run {
  const expected = runWith(c, 'interp');
  for (const [label, options] of Object.entries(variants))
    for (const optimize of [true, false]) {
      const d = difference(expected, runWith(c, { ...options, optimize }));
      if (d === undefined) tt.pass(`${name}, ${label}${optimize ? '' : ', unoptimised'}`);
      else tt.fail(`${name}, ${label}${optimize ? '' : ', unoptimised'}: ${d}`);
    }
  return expected;
}

