// Fixtures the process-level tests share: temporary copies of the examples, and lines read from a
// stream (a child's stdout, a socket) one at a time.

import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

/** A copy of examples/NAME in a fresh temporary folder (removed when the test file ends); returns the folder. */
export function copyExample(name: string, tag = 'test'): string {
  const dir = scratchDir(`entelechy-${tag}-${name}-`);
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
  return dir;
}

/** Lines from a stream, awaited one at a time; `undefined` once the stream has ended. */
export class Lines {
  private buf = '';
  private lines: string[] = [];
  private waiters: ((line: string | undefined) => void)[] = [];
  ended = false;
  constructor(stream: NodeJS.ReadableStream) {
    stream.on('data', (chunk: Buffer | string) => {
      // Split only the new chunk: a long line arriving in many chunks is not scanned again each time.
      const parts = chunk.toString().split('\n');
      this.buf += parts[0];
      for (let i = 1; i < parts.length; i++) {
        this.deliver(this.buf);
        this.buf = parts[i]!;
      }
    });
    stream.on('end', () => this.end());
    stream.on('close', () => this.end());
    stream.on('error', () => this.end());
  }
  private deliver(line: string | undefined) {
    const w = this.waiters.shift();
    if (w) w(line);
    else if (line !== undefined) this.lines.push(line);
  }
  private end() {
    if (this.ended) return;
    this.ended = true;
    while (this.waiters.length) this.deliver(undefined);
  }
  /** The next line, or undefined when the stream ended first; rejects after `timeout` ms. */
  next(timeout = 90000): Promise<string | undefined> {
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no line in time')), timeout);
      this.waiters.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  }
  async take(n: number): Promise<(string | undefined)[]> {
    const out: (string | undefined)[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next());
    return out;
  }
}

/** A kernel with state (a counter per element), and a version 2 whose state is a vec2 with a `migrate from`. */
export const COUNT_STEP_V1 = `kernel count.step@1 {
  grants field.write;
  state cells: field2<f32> = 0.0;
  out result: field2<f32>;
  each (x, y) {
    cells = cells + 1.0;
    result = cells;
  }
}`;
export const COUNT_STEP_V2 = `kernel count.step@2 {
  grants field.write;
  state cells: field2<vec2> = vec2(0, 0);
  out result: field2<f32>;
  each (x, y) {
    cells = cells + vec2(1.0, 10.0);
    result = cells.x + cells.y;
  }
  migrate from count.step@1 { cells = vec2(old.cells * 100.0 + x, 0.0); }
}`;

/** A scene of one node counting its frames in a state `n` (its output is the count), `size` like `64 x 64`. */
export const counterScene = (node: string, size: string) => `kernel t.count@1 {
  grants field.write;
  state n: field2<f32> = 0.0;
  out result: field2<f32>;
  each (x, y) { n = n + 1.0; result = n; }
}
node ${node}: t.count@1 { size = ${size}; }
output result <- ${node}.result;
`;

/** A scene whose frame `n` loops until its fuel runs out (the frames before it render). */
export const hangsAtFrame = (n: number) => `kernel t.hang@1 {
  grants time.read;
  out r: field2<f32>;
  each (x, y) {
    let k = 0;
    while (frame == ${n}) { k++; }
    r = k;
  }
}
node hang: t.hang@1 { size = 8 x 8; }
output r <- hang.r;
`;

/**
 * A scene whose frames take a while (a loop of `n` per element, n = 20000; `--size` makes it
 * lighter), each frame different through `frame`.
 */
export const SLOW_SCENE = `kernel t.slow@1 {
  grants time.read;
  in n: i32 = 1000;
  out r: field2<vec4>;
  each (x, y) {
    let a = f32(frame) * 0.1;
    let i = 0;
    while (i < n) {
      a = a + sin(a + f32(x) * 0.01 + f32(y) * 0.02) * 0.5;
      i++;
    }
    r = vec4(fract(a), fract(a * 3.0), f32(frame) * 0.05, 1.0);
  }
}
node slow: t.slow@1 { size = 64 x 64; n = 20000; }
output r <- slow.r;
`;
