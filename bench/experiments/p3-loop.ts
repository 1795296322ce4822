// Life's interior loop written by hand in variants, timed against each other in one process
// (issue 19): where the loop's time goes, without the engine. Each variant is one wasm function
// stepping the interior of a W x W board laid out as the engine lays a field (rows 1 .. W - 2, x from 16 to the last 64-byte line
// before the row's end, so every variant covers the same cells); V8 compiles it with TurboFan.
//
//   [PAD=16] node dist/bench/experiments/p3-loop.js SIZE REPS ROUNDS [VARIANT ...]
//
// Prints per variant min / median / max ns per vector (4 cells) of CPU over the rounds (each
// round runs every variant REPS times, the order reversing each round), and how each variant's
// output compares with `base`'s bit for bit.
//
// Variants (taps at x - 1 and x + 1 are 16-byte loads 4 bytes off alignment; the centre's is
// aligned; one in four of each unaligned load crosses a 64-byte cache line):
//   base     the kernel's order, as codegen emits it: 9 loads, 7 dependent additions, 3 compares
//   tree     the sum as a tree (NOT exact in general: only to see whether the chain's latency binds)
//   loads    base's 9 loads and its store, xor instead of the arithmetic (cost only)
//   aligned  9 loads at aligned offsets, xor (cost only: what the line splits cost)
//   alignedlife  life's arithmetic on 9 aligned loads (cost only: the splits gone, the arithmetic kept)
//   shuf     exact: per row 3 aligned blocks, x - 1 and x + 1 by `i8x16.shuffle` (2 per row)
//   line0    exact: base's code, 4 vectors (one cache line) per step
//   line     exact: 4 vectors per step, the only 2 taps per row that cross a line (x0 - 1 at the
//            line's start, x0 + 1 at its end) made by a shuffle of aligned blocks; needs the rows
//            64-byte aligned (they are here: the board's base and the row's 4 * (W + PAD) bytes)

import binaryen from 'binaryen';
import { optimisedModule } from './turbofan.js';

const [size, reps, rounds] = process.argv.slice(2, 5).map(Number);
const chosen = process.argv.slice(5);
if (!(size >= 64 && size % 16 === 0 && reps > 0 && rounds > 0)) throw new Error('usage: p3-loop.js SIZE(>= 64, multiple of 16) REPS ROUNDS [VARIANT ...]');

type Row = '$u' | '$m' | '$d';
/** A 16-byte load at byte `at` from the row's x0 (x0 - 1 is at -4), as wasm text. */
const load = (row: Row, at: number) => `(v128.load offset=${at + 16} align=4 (i32.add (local.get $o) (local.get ${row})))`;
/** The block at x0 + 4k - 4 .. x0 + 4k - 1 and the block at x0 + 4k: the 4 lanes from x0 + 4k - 1. */
const fromPrev = (prev: string, cur: string) => `(i8x16.shuffle 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 ${prev} ${cur})`;
/** The block at x0 + 4k and the next: the 4 lanes from x0 + 4k + 1. */
const fromNext = (cur: string, next: string) => `(i8x16.shuffle 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 ${cur} ${next})`;

/** The 8 neighbours' taps of vector k (its x0 + 4k), in the kernel's order, and the centre's. */
type Taps = (row: Row, k: number, dx: -1 | 0 | 1) => string;
const unaligned: Taps = (row, k, dx) => load(row, 16 * k + 4 * dx);
const shuffled: Taps = (row, k, dx) =>
  dx === 0 ? load(row, 16 * k) : dx < 0 ? fromPrev(load(row, 16 * k - 16), load(row, 16 * k)) : fromNext(load(row, 16 * k), load(row, 16 * k + 16));
/** Only the taps crossing a 64-byte line (x0 - 1 of the line's first vector, x0 + 1 of its last) shuffled. */
const lineAware: Taps = (row, k, dx) => ((dx < 0 && k === 0) || (dx > 0 && k === 3) ? shuffled(row, k, dx) : unaligned(row, k, dx));
const alignedOnly: Taps = (row, k, dx) => load(row, 16 * k + 16 * dx);

function neighbours(taps: Taps, k: number): string[] {
  return [taps('$u', k, -1), taps('$u', k, 0), taps('$u', k, 1), taps('$m', k, -1), taps('$m', k, 1), taps('$d', k, -1), taps('$d', k, 0), taps('$d', k, 1)];
}
const inOrder = (xs: string[], op: string) => xs.reduce((a, b) => `(${op} ${a} ${b})`);
const asTree = (xs: string[], op: string): string => (xs.length === 1 ? xs[0] : `(${op} ${asTree(xs.slice(0, xs.length >> 1), op)} ${asTree(xs.slice(xs.length >> 1), op)})`);
const splat = (v: number) => `(v128.const f32x4 ${v} ${v} ${v} ${v})`;

/** Life's rule on vector k: store (n == 3 || (c == 1 && n == 2)) ? 1 : 0. */
function life(taps: Taps, k: number, sum: (xs: string[], op: string) => string): string {
  return `(local.set $n ${sum(neighbours(taps, k), 'f32x4.add')})
    (v128.store offset=${16 * k} (i32.add (local.get $o) (local.get $out))
      (v128.and ${splat(1)} (v128.or (f32x4.eq (local.get $n) ${splat(3)})
        (v128.and (f32x4.eq ${taps('$m', k, 0)} ${splat(1)}) (f32x4.eq (local.get $n) ${splat(2)})))))`;
}
/** The same loads and store, xor for the arithmetic. */
const loadsOnly = (taps: Taps, k: number) =>
  `(v128.store offset=${16 * k} (i32.add (local.get $o) (local.get $out)) ${asTree([...neighbours(taps, k), taps('$m', k, 0)], 'v128.xor')})`;

const variants: Record<string, { vectors: number; body: (k: number) => string; exact: boolean }> = {
  base: { vectors: 1, body: (k) => life(unaligned, k, inOrder), exact: true },
  tree: { vectors: 1, body: (k) => life(unaligned, k, asTree), exact: false },
  loads: { vectors: 1, body: (k) => loadsOnly(unaligned, k), exact: false },
  aligned: { vectors: 1, body: (k) => loadsOnly(alignedOnly, k), exact: false },
  alignedlife: { vectors: 1, body: (k) => life(alignedOnly, k, inOrder), exact: false },
  shuf: { vectors: 1, body: (k) => life(shuffled, k, inOrder), exact: true },
  line0: { vectors: 4, body: (k) => life(unaligned, k, inOrder), exact: true },
  line: { vectors: 4, body: (k) => life(lineAware, k, inOrder), exact: true },
};

/** run(W, S, src, dst): one step of the interior, rows S floats apart; $o is x0's byte offset, the row locals point 16 bytes before x0 = 0. */
function compile(name: string): WebAssembly.Module {
  const v = variants[name];
  if (!v) throw new Error(`no variant ${name}: ${Object.keys(variants).join(', ')}`);
  const body = Array.from({ length: v.vectors }, (_, k) => v.body(k)).join('\n');
  const text = `(module (import "env" "memory" (memory 1 65536 shared))
  (func (export "run") (param $W i32) (param $S i32) (param $src i32) (param $dst i32)
    (local $y i32) (local $o i32) (local $end i32) (local $stride i32) (local $u i32) (local $m i32) (local $d i32) (local $out i32) (local $n v128)
    (local.set $stride (i32.shl (local.get $S) (i32.const 2)))
    (local.set $end (i32.sub (i32.shl (local.get $W) (i32.const 2)) (i32.const 64)))
    (local.set $y (i32.const 1))
    (loop $rows
      (local.set $m (i32.sub (i32.add (local.get $src) (i32.mul (local.get $y) (local.get $stride))) (i32.const 16)))
      (local.set $u (i32.sub (local.get $m) (local.get $stride)))
      (local.set $d (i32.add (local.get $m) (local.get $stride)))
      (local.set $out (i32.add (local.get $dst) (i32.mul (local.get $y) (local.get $stride))))
      (local.set $o (i32.const 64))
      (loop $x
        ${body}
        (br_if $x (i32.lt_s (local.tee $o (i32.add (local.get $o) (i32.const ${16 * v.vectors}))) (local.get $end))))
      (br_if $rows (i32.lt_s (local.tee $y (i32.add (local.get $y) (i32.const 1))) (i32.sub (local.get $W) (i32.const 1)))))))`;
  const m = binaryen.parseText(text);
  try {
    m.setFeatures(binaryen.Features.All);
    if (!m.validate()) throw new Error(`variant ${name} does not validate`);
    binaryen.setOptimizeLevel(3);
    binaryen.setShrinkLevel(0);
    m.optimize();
    return optimisedModule(m.emitBinary() as Uint8Array<ArrayBuffer>);
  } finally {
    m.dispose();
  }
}

const names = chosen.length ? chosen : Object.keys(variants);
// Rows padded as the engine pads them (layout: a 4096-wide field's stride is 4112 floats, so rows
// do not alias at 4 KiB); PAD=0 in the environment for unpadded rows.
const stride = size + Number(process.env.PAD ?? 16);
const cells = stride * size;
const src = 64;
// The output as far from the board as the engine's two state buffers lie at 4096 (1088 bytes past
// a multiple of 4 KiB: its stores do not alias the rows' loads).
const dst = src + 4 * cells + 1088;
const memory = new WebAssembly.Memory({ initial: Math.ceil((dst + 4 * cells) / 65536), maximum: 65536, shared: true });
const board = new Float32Array(memory.buffer, src, cells);
// A third of the cells alive, from xorshift32 (a multiplicative hash of i gave a board so regular
// that xor of the 9 cells agreed with life's rule everywhere).
for (let i = 0, r = 2463534242; i < cells; i++) {
  r ^= r << 13;
  r ^= r >>> 17;
  r ^= r << 5;
  board[i] = r >>> 0 < 0x55555555 ? 1 : 0;
}
const run: Record<string, (w: number, stride: number, s: number, d: number) => void> = {};
for (const name of names) run[name] = (new WebAssembly.Instance(compile(name), { env: { memory } }).exports as { run: typeof run[string] }).run;

// Exactness: each variant's output against base's, bit for bit.
const output = (name: string) => {
  new Float32Array(memory.buffer, dst, cells).fill(-1);
  run[name](size, stride, src, dst);
  return new Uint32Array(memory.buffer, dst, cells).slice();
};
const reference = run.base ? output('base') : undefined;
// Every variant is compared (a cost-only one may differ; on a 0/1 board `tree` may not): an exact
// variant that differs is a bug in this file.
const agree = names.filter((n) => n !== 'base' && reference).map((n) => {
  const equal = output(n).every((b, i) => b === reference![i]);
  return `${n} ${equal ? 'equal' : variants[n].exact ? 'DIFFERS (a bug)' : 'differs (cost only)'}`;
});

for (const name of names) for (let i = 0; i < 10; i++) run[name](size, stride, src, dst);
const ns: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < rounds; r++) {
  for (const name of r % 2 ? [...names].reverse() : names) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < reps; i++) run[name](size, stride, src, dst);
    const used = process.cpuUsage(c0);
    ns[name].push(((used.user + used.system) * 1000) / reps / ((size * size) / 4));
  }
}
const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(3)} / ${s[s.length >> 1].toFixed(3)} / ${s[s.length - 1].toFixed(3)}`;
};
console.log(`life's interior loop, ${size} x ${size} (rows ${stride} floats apart), ${reps} steps per round, ${rounds} rounds; bits against base: ${agree.join(', ') || 'none checked'}`);
for (const name of names) console.log(`${name.padEnd(8)} ${spread(ns[name])} ns per vector`);
