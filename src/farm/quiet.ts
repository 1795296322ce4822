// What a submitter says while nothing happens: a render whose Redis is unreachable, or whose jobs
// no worker takes, waited without a word, and a pipeline could not tell a hang from a slow frame.
// It says when Redis goes and comes back, and when no worker has taken or finished a job for a while.

import type { Redis } from 'ioredis';
import { RedisWatch, type Say } from './redis-watch.js';

/** How long without a job taken or done before it is said (ENTELECHY_FARM_QUIET_MS for tests). */
export const QUIET_MS = Number(process.env.ENTELECHY_FARM_QUIET_MS) || 30_000;

export type { Say };

export class QuietWatch {
  private last = performance.now();
  private told = false;
  private readonly redis: RedisWatch;
  private readonly timer: NodeJS.Timeout;

  constructor(
    connection: Redis,
    private readonly url: string,
    private readonly say: Say,
  ) {
    this.redis = new RedisWatch(connection, url, say, QUIET_MS, 'render', () => this.progress());
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
    this.redis.stop();
  }

  private check(): void {
    if (this.told || this.redis.away || performance.now() - this.last < QUIET_MS) return;
    this.told = true;
    const seconds = Math.round((performance.now() - this.last) / 1000);
    this.say({ note: `no worker has taken or finished a job of this render for ${seconds} s: is \`entelechy farm worker --redis ${this.url}\` running, and free?`, quiet_s: seconds });
  }
}
