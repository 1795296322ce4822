// Threads that encode PNGs (png-worker.ts) while the main thread evaluates the next frame: the
// local render's FrameWriter writes each frame's file on one, a farm worker gets the bytes back
// to send. Threads start on demand and stay until close (idleTimeout), so that every thread
// started is still there to count itself loaded before the pool ends them (loaded.ts).

import { Piscina } from 'piscina';
import { loadedCounter, untilLoaded } from './loaded.js';
import type { PngTask } from './png-worker.js';
import { WORKER_EXEC_ARGV } from './exec-argv.js';
import { logThreadErrors } from './thread-errors.js';

export class PngThreads {
  private readonly piscina: Piscina;
  private readonly loaded = loadedCounter();

  constructor(readonly threads: number) {
    const filename = new URL('./png-worker.js', import.meta.url).href;
    this.piscina = logThreadErrors(new Piscina({ filename, minThreads: 0, maxThreads: threads, idleTimeout: Infinity, workerData: { loaded: this.loaded }, execArgv: [...WORKER_EXEC_ARGV] }), 'PNG');
  }

  /** Encode and write a PNG file; the pixels are moved (not copied) to the thread. Its size in bytes. */
  save(task: PngTask): Promise<number> {
    return this.piscina.run(task, { transferList: [task.rgba.buffer as ArrayBuffer] }) as Promise<number>;
  }

  /** A PNG's bytes; the pixels are moved (not copied) to the thread and the bytes back. */
  async encode(width: number, height: number, rgba: Uint8Array): Promise<Buffer> {
    const task: PngTask = { file: '', width, height, rgba };
    const png = (await this.piscina.run(task, { name: 'encode', transferList: [rgba.buffer as ArrayBuffer] })) as Uint8Array;
    return Buffer.from(png.buffer, png.byteOffset, png.length);
  }

  private closing?: Promise<void>;

  /** End the threads; a file being written is left where it stands (its temporary file: FrameWriter.abort sweeps it). Once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await untilLoaded(this.loaded, () => this.piscina.threads.length);
      await this.piscina.destroy();
    })();
    return this.closing;
  }
}
