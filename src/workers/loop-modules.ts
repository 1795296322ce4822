// The modules the evaluation pool's band loops hold: each numbered once per digest and sent to a
// loop over its port the first time the loop may need it (a WebAssembly.Module cannot live in the
// shared control words, a number can). Past LIMIT, the least recently run are dropped from the
// loops, so a long session of edits does not pile modules up in the workers.

import type { MessagePort } from 'node:worker_threads';
import type { LoopMessage } from './doorbell.js';

/** Modules the loops keep. */
const LIMIT = 256;

export interface ModuleEntry {
  id: number;
  digest: string;
  module: WebAssembly.Module;
  /** Runs in flight using it (never dropped meanwhile). */
  uses: number;
}

/** A loop's end of its port, and what went over it. */
export interface LoopPort {
  port: MessagePort;
  /** Module ids sent. */
  sent: Set<number>;
}

export class LoopModules {
  /** By digest, the least recently run first. */
  private readonly entries = new Map<string, ModuleEntry>();
  private next = 1;

  /** The module's entry, in use until the caller lowers `uses`; forgets the oldest past the limit. */
  take(digest: string, module: WebAssembly.Module, loops: readonly (LoopPort | undefined)[]): ModuleEntry {
    let entry = this.entries.get(digest);
    if (entry) this.entries.delete(digest);
    else entry = { id: this.next++, digest, module, uses: 0 };
    this.entries.set(digest, entry);
    entry.uses++;
    for (const [d, old] of this.entries) {
      if (this.entries.size <= LIMIT) break;
      if (old.uses > 0) continue;
      this.entries.delete(d);
      for (const loop of loops) if (loop?.sent.delete(old.id)) post(loop, { drop: old.id });
    }
    return entry;
  }

  /** Send the module to the loop unless it has it. */
  send(loop: LoopPort, entry: ModuleEntry): void {
    if (loop.sent.has(entry.id)) return;
    loop.sent.add(entry.id);
    post(loop, { id: entry.id, digest: entry.digest, module: entry.module });
  }
}

function post(loop: LoopPort, message: LoopMessage): void {
  loop.port.postMessage(message);
}
