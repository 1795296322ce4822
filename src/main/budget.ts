// Memory budgets: how many bytes of fields a session (or a render) may hold, and what a read may
// answer. A change whose fields do not fit is refused before anything is allocated or written.

import { totalmem } from 'node:os';
import { MAX_PAGES } from './memory.js';

/** What WebAssembly's 32-bit memory can address, less the page the allocator keeps. */
export const MAX_MEMORY = (MAX_PAGES - 1) * 65536;

/**
 * The default budget: an eighth of the machine's memory (at most 4 GiB, WebAssembly's limit).
 * Fields are not all a session holds: a read copies what it answers and encodes it again as
 * text, trace and migrations allocate a second world beside the first, and several sessions may
 * share the machine.
 */
export function defaultMemoryBudget(): number {
  return Math.min(MAX_MEMORY, Math.floor(totalmem() / 8));
}

/**
 * What to do when `bytes` of fields do not fit a budget: more memory, where --memory can give
 * that much; else only less (its most is WebAssembly's 4 GiB, and advising it would mislead).
 */
export function moreMemoryHint(bytes: number, who: 'session' | 'render'): string {
  return bytes <= MAX_MEMORY ? `, or give the ${who} more memory (--memory)` : ` (more memory cannot help: --memory gives at most ${mib(MAX_MEMORY)}, WebAssembly's limit)`;
}

/** The bytes a `--memory` value means: 512M, 2G, 1.5GiB, 800MB or a number of bytes. */
export function parseMemory(text: string): number | { problem: string } {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  const units: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };
  if (!m) return { problem: `--memory takes a size such as 512M or 2G (bytes, K, M, G); got \`${text}\`` };
  const bytes = Math.floor(Number(m[1]) * units[m[2].toLowerCase()]);
  if (bytes < 2 ** 20) return { problem: `--memory must be at least 1M; got \`${text}\`` };
  if (bytes > 2 ** 32) return { problem: `--memory can be at most 4G (WebAssembly's 4 GiB); got \`${text}\`` };
  // 4G, as the help says it may be: the allocator keeps the last page of it.
  return Math.min(bytes, MAX_MEMORY);
}

/** Bytes an answer of `read` may carry before it is encoded (base64 adds a third): past it, read a region. */
export const READ_LIMIT = 256 << 20;

export function mib(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
