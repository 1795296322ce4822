// What a submitter says while nothing happens: a render whose Redis is unreachable, or whose jobs
// no worker takes, waited without a word, and a pipeline could not tell a hang from a slow frame.
// It says when Redis goes and comes back, and when no worker has taken or finished a job for a while.

import type { Redis } from 'ioredis';

/** How long without a job taken or done before it is said (ENTELECHY_FARM_QUIET_MS for tests). */
const QUIET_MS = Number(process.env.ENTELECHY_FARM_QUIET_MS) || 30_000;

/** A note: a `--json` line, or its text on stderr. */
export type Say = (line: { note: string; [detail: string]: unknown }) => void;

export class QuietWatch {
  private last = performance.now();
  private told = false;
  private lost: number | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly connection: Redis,
    private readonly url: string,
    private readonly say: Say,
  ) {
    connection.on('close', this.onClose);
    connection.on('ready', this.onReady);
    this.timer = setInterval(() => this.check(), Math.min(QUIET_MS, 10_000) / 2);
    this.timer.unref();
  }

  /** A job was taken, advanced or done: the farm is at work. */
  progress(): void {
    this.last = performance.now();
    this.told = false;
  }

  stop(): void {
    clearInterval(this.timer);
    this.connection.off('close', this.onClose);
    this.connection.off('ready', this.onReady);
  }

  private readonly onClose = () => {
    if (this.lost !== undefined) return;
    this.lost = performance.now();
    this.say({ note: `lost the connection to Redis at ${this.url}: retrying; the render goes on when it is back`, redis: 'lost' });
  };

  private readonly onReady = () => {
    if (this.lost === undefined) return;
    const seconds = Math.round((performance.now() - this.lost) / 1000);
    this.lost = undefined;
    this.progress();
    this.say({ note: `Redis at ${this.url} is back after ${seconds} s`, redis: 'back' });
  };

  private check(): void {
    if (this.told || this.lost !== undefined || performance.now() - this.last < QUIET_MS) return;
    this.told = true;
    const seconds = Math.round((performance.now() - this.last) / 1000);
    this.say({ note: `no worker has taken or finished a job of this render for ${seconds} s: is \`entelechy farm worker --redis ${this.url}\` running, and free?`, quiet_s: seconds });
  }
}
