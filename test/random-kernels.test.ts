// Property: for randomly generated kernels (source text through the whole front end), the
// compiled WebAssembly and the interpreter agree bit for bit, fused and unfused.

import t from 'tap';
import { firstDifference, run, textScene } from './helpers.js';

/** A small deterministic generator (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const num = () => (r() < 0.5 ? (r() * 8 - 4).toFixed(2) : String(Math.floor(r() * 9) - 4) + '.0');
  const vars: string[] = [];
  const expr = (depth: number, gather: boolean): string => {
    if (depth <= 0 || r() < 0.2) {
      const leaves = ['x', 'y', 'width', num(), num(), ...vars, ...(gather ? ['src.x', 'src.y'] : [])];
      return pick(leaves);
    }
    const a = () => expr(depth - 1, gather);
    switch (Math.floor(r() * 16)) {
      case 0: return `(${a()} + ${a()})`;
      case 1: return `(${a()} - ${a()})`;
      case 2: return `(${a()} * ${a()})`;
      case 3: return `(${a()} / (abs(${a()}) + 1.0))`;
      case 4: return `${pick(['sin', 'cos', 'fract', 'floor', 'abs', 'atan', 'ceil'])}(${a()})`;
      case 5: return `sqrt(abs(${a()}))`;
      case 6: return `${pick(['min', 'max', 'atan2'])}(${a()}, ${a()})`;
      case 7: return `mix(${a()}, ${a()}, ${a()})`;
      case 8: return `clamp(${a()}, -2.0, 2.0)`;
      case 9: return `(${a()} < ${a()} ? ${a()} : ${a()})`;
      case 10: return `exp(min(${a()}, 8.0))`;
      case 11: return `log(abs(${a()}) + 1.0)`;
      case 12: return `pow(abs(${a()}), ${pick(['0.5', '1.5', '2.0', '3.0'])})`;
      case 13: return `((x * ${Math.floor(r() * 9) + 1} + y * ${Math.floor(r() * 5)}) % ${Math.floor(r() * 6) + 1})`;
      case 14: return gather ? `src.${pick(['at', 'wrap'])}(x + ${Math.floor(r() * 7) - 3}, y + ${Math.floor(r() * 5) - 2}).${pick(['x', 'y', 'z'])}` : `hash(x, y)`;
      default: return `length(vec2(${a()}, ${a()}))`;
    }
  };
  const body = (gather: boolean): string => {
    vars.length = 0;
    const lines: string[] = [];
    const n = 2 + Math.floor(r() * 5);
    for (let i = 0; i < n; i++) {
      const v = `v${i}`;
      lines.push(`let ${v} = ${expr(3, gather)};`);
      vars.push(v);
      const roll = r();
      if (roll < 0.3) lines.push(`if (${expr(2, gather)} > ${expr(2, gather)}) { ${v} = ${expr(2, gather)}; } else { ${v} += 1.0; }`);
      else if (roll < 0.55) {
        const k = Math.floor(r() * 5);
        lines.push(`for (let i = 0; i < ${k} + (x % 3); i++) { ${v} = ${v} * 0.5 + ${expr(2, gather)}; if (${v} > 3.0) break; }`);
      } else if (roll < 0.7) {
        lines.push(`let j${i} = 0;\n    while (j${i} < 6 && ${v} < 2.0) { ${v} = ${v} + 0.75; j${i}++; if (j${i} == 2) continue; }`);
      }
    }
    return lines.join('\n    ');
  };
  const a = body(false);
  const av = [...vars];
  const b = body(true);
  const bv = [...vars];
  return `kernel gen.a@1 {
  out result: field2<vec4>;
  each (x, y) {
    ${a}
    result = vec4(${av[0]}, ${av[av.length - 1]}, ${pick(av)}, 1.0);
  }
}
kernel gen.b@1 {
  grants field.read;
  in src: field2<vec4>;
  out result: field2<vec4>;
  each (x, y) {
    ${b}
    result = vec4(${bv[0]}, ${pick(bv)}, ${bv[bv.length - 1]}, src.w);
  }
}
node a: gen.a@1 { size = ${5 + Math.floor(r() * 12)} x ${1 + Math.floor(r() * 6)}; }
node b: gen.b@1 { src <- a.result; }
output o <- b.result;
`;
}

t.test('random kernels: jit = interpreter, fused = unfused, fast tier = optimised tier', async (t) => {
  const cases = 60;
  let failures = 0;
  for (let seed = 1; seed <= cases; seed++) {
    const source = generator(seed);
    const scene = textScene({ 'scene.esn': source });
    if (scene.diagnostics.length) {
      t.fail(`seed ${seed} does not check: ${scene.diagnostics[0].message}\n${source}`);
      failures++;
      continue;
    }
    const interp = await run(scene, { backend: 'interp', fuse: false });
    const jit = await run(scene, { backend: 'jit', fuse: true });
    const unfused = await run(scene, { backend: 'jit', fuse: false });
    const fast = await run(scene, { backend: 'jit', fuse: true, tier: 'fast' });
    const d1 = firstDifference(jit, interp);
    const d2 = firstDifference(jit, unfused);
    const d3 = firstDifference(fast, interp);
    if (d1 || d2 || d3) {
      failures++;
      t.fail(`seed ${seed}: ${d1 ?? d2 ?? `fast tier: ${d3}`}\n${source}`);
    }
    if (failures > 3) break;
  }
  t.equal(failures, 0, `${cases} random scenes agree`);
});
