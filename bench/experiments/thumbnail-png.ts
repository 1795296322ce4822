// Which PNG settings suit a thumbnail (issue 21): for each example at 256 x 256, its 128
// thumbnail's pixels (as `evaluate` makes them) encoded with each row filter (None, Sub, Up,
// Paeth) and each deflate level and strategy zlib offers, on the calling thread: the CPU time per
// encode (filter + deflate, median of interleaved rounds) and the bytes. Thumbnails travel as
// base64 in JSON and as MCP image content, so bytes count as well as time.
//
//   npx tsc -p tsconfig.json && node dist/bench/experiments/thumbnail-png.js [--rounds 5]

import { loadavg } from 'node:os';
import zlib from 'node:zlib';
import { RowFilter, asWords, type RowFilterType } from '../../src/main/png.js';
import { outputThumbnailPixels } from '../../src/main/thumbnail-cache.js';
import { openExamples, arg } from '../thumbnail-sessions.js';

const rounds = Number(arg('rounds', '5'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

type Filter = (rgba: Uint8Array, width: number, height: number) => Buffer;
const rowFilter = (type: number, f: (cur: Uint8Array, prev: Uint8Array | null, out: Buffer, at: number) => void): Filter => (rgba, width, height) => {
  const rb = width * 4;
  const out = Buffer.allocUnsafe(height * (rb + 1));
  for (let y = 0; y < height; y++) {
    out[y * (rb + 1)] = type;
    f(rgba.subarray(y * rb, (y + 1) * rb), y ? rgba.subarray((y - 1) * rb, y * rb) : null, out, y * (rb + 1) + 1);
  }
  return out;
};
const paeth = (a: number, b: number, c: number) => {
  const p = a + b - c;
  const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};
/** png.ts's own filtering (RowFilter), Adler-32 included. */
function viaPng(rgba: Uint8Array, width: number, height: number, type: RowFilterType): Buffer {
  const filter = new RowFilter(width, type);
  const words = asWords(rgba);
  const out = Buffer.allocUnsafe(height * (width * 4 + 1));
  for (let y = 0; y < height; y++) filter.filter(words, y * width, out, y * (width * 4 + 1));
  return out;
}
const FILTERS: Record<string, Filter> = {
  'none (png.ts)': (rgba, width, height) => viaPng(rgba, width, height, 'none'),
  'sub (png.ts)': (rgba, width, height) => viaPng(rgba, width, height, 'sub'),
  up: rowFilter(2, (cur, prev, out, at) => {
    for (let i = 0; i < cur.length; i++) out[at + i] = cur[i] - (prev ? prev[i] : 0);
  }),
  paeth: rowFilter(4, (cur, prev, out, at) => {
    for (let i = 0; i < cur.length; i++) out[at + i] = cur[i] - paeth(i >= 4 ? cur[i - 4] : 0, prev ? prev[i] : 0, i >= 4 && prev ? prev[i - 4] : 0);
  }),
};
const { Z_DEFAULT_STRATEGY, Z_FILTERED, Z_RLE, Z_HUFFMAN_ONLY } = zlib.constants;
const STRATEGIES: Record<string, number> = { default: Z_DEFAULT_STRATEGY, filtered: Z_FILTERED, rle: Z_RLE, huffman: Z_HUFFMAN_ONLY };
const SETTINGS: { filter: string; level: number; strategy: string }[] = [];
for (const filter of Object.keys(FILTERS)) {
  for (const level of [0, 1, 3, 6, 9]) SETTINGS.push({ filter, level, strategy: 'default' });
  for (const strategy of ['filtered', 'rle', 'huffman']) SETTINGS.push({ filter, level: strategy === 'filtered' ? 6 : 1, strategy });
}

console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(', ')}; ${rounds} rounds`);
const sessions = await openExamples(true);
try {
  const pictures = [];
  for (const e of sessions) pictures.push({ name: e.name, ...(await e.session.read((w) => outputThumbnailPixels(w, e.output, 128))) });
  const cpu = new Map<string, number[]>();
  const bytes = new Map<string, number>();
  for (let r = 0; r < rounds; r++)
    for (const p of pictures)
      for (const s of SETTINGS) {
        const key = `${p.name}|${s.filter}|${s.level}|${s.strategy}`;
        const n = 20;
        let size = 0;
        const c0 = process.cpuUsage();
        for (let i = 0; i < n; i++) size = zlib.deflateRawSync(FILTERS[s.filter](p.rgba, p.width, p.height), { level: s.level, strategy: STRATEGIES[s.strategy] }).length;
        const c = process.cpuUsage(c0);
        (cpu.get(key) ?? cpu.set(key, []).get(key)!).push((c.user + c.system) / 1000 / n);
        bytes.set(key, size);
      }
  console.log(`\n| filter, level, strategy | ${pictures.map((p) => `${p.name} ${p.width} x ${p.height}`).join(' | ')} | total bytes | total CPU |\n|---|${pictures.map(() => '---|').join('')}---|---|`);
  for (const s of SETTINGS) {
    const keys = pictures.map((p) => `${p.name}|${s.filter}|${s.level}|${s.strategy}`);
    const cells = keys.map((k) => `${median(cpu.get(k)!).toFixed(3)} ms, ${(bytes.get(k)! / 1024).toFixed(1)} KB`);
    const total = keys.reduce((a, k) => a + bytes.get(k)!, 0);
    const time = keys.reduce((a, k) => a + median(cpu.get(k)!), 0);
    console.log(`| ${s.filter}, ${s.level}, ${s.strategy} | ${cells.join(' | ')} | ${(total / 1024).toFixed(1)} KB | ${time.toFixed(2)} ms |`);
  }
} finally {
  for (const s of sessions) await s.close();
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(', ')} at the end`);
}
