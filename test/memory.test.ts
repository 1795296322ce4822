// The field allocator: reuse after free, no growth across many scene changes, a clear limit.

import t from 'tap';
import { fieldLayout } from '../src/codegen/layout.js';
import { allocField, packField, unpackField } from '../src/main/field.js';
import { FieldMemory } from '../src/main/memory.js';

t.test('freed space is reused and coalesced', async (t) => {
  const m = new FieldMemory();
  const a = m.alloc(1000);
  const b = m.alloc(5000);
  const c = m.alloc(300);
  t.equal(a % 16, 0);
  t.ok(a > 0 && b > a && c > b);
  m.release(b);
  const d = m.alloc(4000);
  t.equal(d, b, 'first fit takes the freed block');
  m.release(a);
  m.release(d);
  m.release(c);
  t.equal(m.allocations, 0);
  const e = m.alloc(6000);
  t.equal(e, a, 'neighbouring free blocks coalesced');
});

t.test('thousands of allocate/free cycles do not grow the memory', async (t) => {
  const m = new FieldMemory();
  const sizes = [1 << 20, 3 << 18, 12345, 1 << 16, 777777];
  const warm = sizes.map((s) => m.alloc(s));
  warm.forEach((p) => m.release(p));
  const before = m.bytes;
  for (let i = 0; i < 5000; i++) {
    const ps = sizes.map((s, j) => m.alloc(s + ((i * 7 + j) % 13) * 16));
    ps.reverse().forEach((p) => m.release(p));
  }
  t.equal(m.bytes, before, 'no growth');
  t.equal(m.allocations, 0, 'no leak');
});

t.test('the memory grows on demand and refuses past its limit', async (t) => {
  const m = new FieldMemory(64 << 20);
  const big = m.alloc(40 << 20, 'a big field');
  t.ok(m.bytes >= 40 << 20);
  t.throws(() => m.alloc(40 << 20, 'another big field'), { name: 'MemoryLimitError', message: /limit is 64.0 MiB/ });
  t.throws(() => m.alloc(1e12, 'an absurd field'), /more than the memory limit/);
  m.release(big);
  t.ok(m.alloc(40 << 20) > 0, 'freed space is usable again');
});

t.test('field layouts keep a stencil\'s rows and planes out of each other\'s cache sets', async (t) => {
  // Addresses a multiple of 4 KiB apart share a cache set: rows 1 KiB-multiple long and planes
  // ending on a 4 KiB boundary made a 5 x 5 blur over 4 planes evict its own rows.
  for (const [width, height] of [[4096, 4096], [1024, 1024], [1000, 300], [256, 256], [4096, 1]] as const) {
    const { stride, planeBytes, bytes } = fieldLayout({ width, height, depth: 1 }, 4);
    t.ok(stride >= width && stride % 4 === 0, `${width}x${height}: stride ${stride} holds a row in whole vectors`);
    if (height > 1) t.not((stride * 4) % 1024, 0, `${width}x${height}: rows are not a multiple of 1 KiB apart`);
    t.ok(planeBytes >= stride * height * 4 && planeBytes % 16 === 0, `${width}x${height}: planes hold their rows, 16-byte aligned`);
    if (planeBytes >= 4096) t.equal(planeBytes % 4096, 1088, `${width}x${height}: planes are skewed against 4 KiB`);
    t.equal(bytes, 4 * planeBytes);
  }
  t.same(fieldLayout({ width: 3, height: 1, depth: 1 }, 1), { stride: 4, planeBytes: 16, bytes: 16 }, 'small fields are not padded');
});

t.test('packField and unpackField: elements without padding, back from any row layout', async (t) => {
  const memory = new FieldMemory();
  const f = allocField(memory, [1025, 3], ['f32', 'i32'], 'a field'); // rows padded, planes skewed
  t.ok(f.stride > f.width && f.planeBytes > f.stride * f.height * 4, 'the layout pads');
  const value = (c: number, x: number, y: number) => c * 100000 + y * 2000 + x;
  for (let c = 0; c < 2; c++)
    for (let y = 0; y < 3; y++)
      for (let x = 0; x < f.width; x++) {
        const at = (f.ptr + c * f.planeBytes) / 4 + y * f.stride + x;
        if (c === 0) memory.f32[at] = value(c, x, y);
        else memory.i32[at] = value(c, x, y);
      }
  const packed = packField(memory, f);
  t.equal(packed.length, 2 * 3 * 1025 * 4);
  const floats = new Float32Array(packed.buffer, packed.byteOffset, 3 * 1025);
  const ints = new Int32Array(packed.buffer, packed.byteOffset + 3 * 1025 * 4, 3 * 1025);
  t.equal(floats[2 * 1025 + 1024], value(0, 1024, 2));
  t.equal(ints[1025 + 7], value(1, 7, 1));
  const g = allocField(memory, [1025, 3], ['f32', 'i32'], 'another');
  unpackField(memory, g, packed);
  t.same(packField(memory, g), packed, 'unpacked into another field: the same elements');
  // A layout with rows of 1028 elements, planes back to back (snapshots of older versions).
  const legacy = new Uint8Array(2 * 3 * 1028 * 4);
  for (let c = 0; c < 2; c++) for (let y = 0; y < 3; y++) legacy.set(packed.subarray((c * 3 + y) * 1025 * 4, (c * 3 + y + 1) * 1025 * 4), (c * 3 + y) * 1028 * 4);
  const h = allocField(memory, [1025, 3], ['f32', 'i32'], 'a third');
  unpackField(memory, h, legacy, { stride: 1028, planeBytes: 3 * 1028 * 4 });
  t.same(packField(memory, h), packed, 'unpacked from a padded layout');
});
