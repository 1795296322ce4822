// The shared memory every compiled module imports, and a first-fit allocator over it.
//
// Fields are allocated here, freed when a scene stops needing them, and their space reused.
// Blocks are 16-byte aligned so a v128 load of a row start is aligned.

import { UserError } from './user-error.js';

const PAGE = 65536;
const ALIGN = 16;
/** WebAssembly's 32-bit memories end at 4 GiB. */
export const MAX_PAGES = 65536;

/**
 * A WebAssembly memory can grow but never shrink. A session whose memory is past this size and
 * whose next world needs under a quarter of it moves that world to a fresh memory (commit.ts), so
 * the space of large fields that went is returned to the system.
 */
export const RENEW_ABOVE = 256 << 20;

/** Whether a world needing `need` bytes of fields should leave a memory of `bytes` for a fresh one. */
export function shouldRenew(bytes: number, need: number): boolean {
  return bytes > RENEW_ABOVE && need * 4 < bytes;
}

/** Pages for a fresh memory holding `need` bytes of fields, with room for argument blocks and growth. */
export function pagesFor(need: number): number {
  return Math.min(MAX_PAGES, Math.ceil(need / PAGE) + 64);
}

export class MemoryLimitError extends UserError {
  override name = 'MemoryLimitError';
  constructor(
    message: string,
    /** Where the size of the largest field is declared, when a scene's is (field-needs.ts). */
    readonly at?: { path: string; line: number; column: number; node: string },
  ) {
    super(message);
  }
}

interface Block {
  ptr: number;
  size: number;
}

export class FieldMemory {
  readonly memory: WebAssembly.Memory;
  /** Free blocks, sorted by address, never adjacent (freeing coalesces). */
  private free: Block[] = [];
  private used = new Map<number, number>();
  private views?: { buffer: ArrayBufferLike; f32: Float32Array; i32: Int32Array; u8: Uint8Array };

  constructor(
    readonly limitBytes = (MAX_PAGES - 1) * PAGE,
    initialPages = 64,
  ) {
    this.memory = new WebAssembly.Memory({ initial: initialPages, maximum: MAX_PAGES, shared: true });
    // Address 0 is never handed out, so 0 can mean "no field".
    this.free.push({ ptr: ALIGN * 4, size: initialPages * PAGE - ALIGN * 4 });
  }

  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  get allocatedBytes(): number {
    let n = 0;
    for (const size of this.used.values()) n += size;
    return n;
  }

  get allocations(): number {
    return this.used.size;
  }

  /** Typed views over the whole memory, renewed after the memory grows. */
  get f32(): Float32Array {
    return this.view().f32;
  }
  get i32(): Int32Array {
    return this.view().i32;
  }
  get u8(): Uint8Array {
    return this.view().u8;
  }

  private view() {
    const buffer = this.memory.buffer;
    if (!this.views || this.views.buffer !== buffer) {
      this.views = { buffer, f32: new Float32Array(buffer), i32: new Int32Array(buffer), u8: new Uint8Array(buffer) };
    }
    return this.views;
  }

  /** Reserve `bytes` (rounded up to 16); throws MemoryLimitError past the limit. */
  alloc(bytes: number, what = 'a field'): number {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    if (!Number.isFinite(size) || size > this.limitBytes)
      throw new MemoryLimitError(`${what} needs ${mib(size)}, more than the memory limit of ${mib(this.limitBytes)}: use a smaller size`);
    let i = this.free.findIndex((b) => b.size >= size);
    if (i < 0) {
      this.grow(size);
      i = this.free.findIndex((b) => b.size >= size);
      if (i < 0) throw new MemoryLimitError(`${what} needs ${mib(size)}; ${mib(this.allocatedBytes)} is in use and the limit is ${mib(this.limitBytes)}`);
    }
    const block = this.free[i];
    const ptr = block.ptr;
    if (block.size === size) this.free.splice(i, 1);
    else this.free[i] = { ptr: ptr + size, size: block.size - size };
    this.used.set(ptr, size);
    return ptr;
  }

  /** Whether `bytes` fit in a free block now, without growing the memory. */
  fits(bytes: number): boolean {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    return this.free.some((b) => b.size >= size);
  }

  release(ptr: number): void {
    const size = this.used.get(ptr);
    if (size === undefined) return;
    this.used.delete(ptr);
    this.insertFree({ ptr, size });
  }

  private insertFree(block: Block): void {
    let i = 0;
    while (i < this.free.length && this.free[i].ptr < block.ptr) i++;
    this.free.splice(i, 0, block);
    // Coalesce with the neighbours.
    if (i + 1 < this.free.length && block.ptr + block.size === this.free[i + 1].ptr) {
      block.size += this.free[i + 1].size;
      this.free.splice(i + 1, 1);
    }
    if (i > 0 && this.free[i - 1].ptr + this.free[i - 1].size === block.ptr) {
      this.free[i - 1].size += block.size;
      this.free.splice(i, 1);
    }
  }

  private grow(size: number): void {
    const end = this.bytes;
    const last = this.free[this.free.length - 1];
    const tail = last && last.ptr + last.size === end ? last.size : 0;
    const pages = Math.ceil((size - tail) / PAGE);
    const current = end / PAGE;
    // Grow by at least a quarter of what there is, to keep growth steps few.
    const want = Math.min(MAX_PAGES - current, Math.max(pages, Math.ceil(current / 4)));
    if (want < pages || end + pages * PAGE > this.limitBytes + PAGE) {
      throw new MemoryLimitError(`a field needs ${mib(size)}; ${mib(this.allocatedBytes)} is in use and the memory limit is ${mib(this.limitBytes)}: use smaller sizes`);
    }
    const grown = Math.min(want, Math.ceil((this.limitBytes + PAGE - end) / PAGE));
    this.memory.grow(Math.max(pages, grown));
    this.insertFree({ ptr: end, size: this.bytes - end });
  }
}

function mib(bytes: number): string {
  return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}
