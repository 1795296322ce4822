// Whether Redis is there, told as it changes: the submitter and the workers retry a lost
// connection for as long as it takes (ioredis), and said nothing while they did, so a pipeline
// could not tell a farm waiting for Redis from a hang. Said when Redis goes, again every
// `repeatMs` while it stays away, and when it is back.

import type { Redis } from 'ioredis';

/** A note: its words, and what a `--json` line carries beside them. */
export type Say = (line: { note: string; [detail: string]: unknown }) => void;

export class RedisWatch {
  private lost: number | undefined;
  private lastSaid = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly connection: Redis,
    private readonly url: string,
    private readonly say: Say,
    private readonly repeatMs: number,
    /** Whose watch: a render's submitter or a farm worker (the words differ). */
    private readonly role: 'render' | 'worker',
    /** Called when Redis is back. */
    private readonly onBack: () => void = () => {},
  ) {
    connection.on('close', this.onClose);
    connection.on('ready', this.onReady);
    this.timer = setInterval(() => this.remind(), Math.min(repeatMs, 10_000) / 2);
    this.timer.unref();
  }

  /** Redis is away now. */
  get away(): boolean {
    return this.lost !== undefined;
  }

  stop(): void {
    clearInterval(this.timer);
    this.connection.off('close', this.onClose);
    this.connection.off('ready', this.onReady);
  }

  private readonly onClose = () => {
    if (this.lost !== undefined) return;
    this.lost = this.lastSaid = performance.now();
    this.say({ note: `lost the connection to Redis at ${this.url}: retrying; ${this.role === 'render' ? 'the render goes on' : 'this worker takes frames again'} when it is back`, redis: 'lost' });
  };

  private readonly onReady = () => {
    if (this.lost === undefined) return;
    const seconds = Math.round((performance.now() - this.lost) / 1000);
    this.lost = undefined;
    this.onBack();
    this.say({ note: `Redis at ${this.url} is back after ${seconds} s`, redis: 'back' });
  };

  private remind(): void {
    if (this.lost === undefined || performance.now() - this.lastSaid < this.repeatMs) return;
    this.lastSaid = performance.now();
    const seconds = Math.round((this.lastSaid - this.lost) / 1000);
    this.say({ note: `Redis at ${this.url} is still away after ${seconds} s: retrying; start it again, or stop with Ctrl-C`, redis: 'away', away_s: seconds });
  }
}
