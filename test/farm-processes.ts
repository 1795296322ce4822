// Real processes for the farm tests: a redis-server of the test's own on a free loopback port,
// `entelechy farm worker`s and `entelechy render --farm` submitters, each read line by line.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Test } from 'tap';
import { QUEUE } from '../src/farm/jobs.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

export { SLOW_SCENE } from './fixtures.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
/** Compiled modules cached for these tests alone. */
export const CACHE = scratchDir('entelechy-cache-');

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A process whose stdout is read as lines (JSON where it parses), with a way to wait for one. */
export class Proc {
  readonly lines: any[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: { test: (l: any) => boolean; resolve: (l: any) => void }[] = [];

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: any;
      try {
        line = JSON.parse(text);
      } catch {
        line = { text };
      }
      this.lines.push(line);
      this.waiters = this.waiters.filter((w) => !(w.test(line) && (w.resolve(line), true)));
    });
    child.stderr!.on('data', (d) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** The first line (seen already or to come) that passes `test`; rejects if the process ends first, or after `ms` (a test never hangs to tap's timeout). */
  line(test: (l: any) => boolean, ms = 120_000): Promise<any> {
    const seen = this.lines.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no such line in ${ms / 1000} s; the lines: ${JSON.stringify(this.lines).slice(-2000)}\n${this.stderr}`)), ms);
      this.waiters.push({ test, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      void this.exited.then(({ code, signal }) => (clearTimeout(timer), reject(new Error(`ended (status ${code}, signal ${signal}) before the line awaited\n${this.stderr}`))));
    });
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

export function entelechy(args: string[], env: Record<string, string> = {}): Proc {
  return new Proc(spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** A farm worker, once it says it is taking frames. */
export async function startWorker(url: string, args: string[] = [], env: Record<string, string> = {}): Promise<Proc> {
  const w = entelechy(['farm', 'worker', '--redis', url, '--json', ...(args.includes('--workers') ? [] : ['--workers', '1']), ...args], env);
  await w.line((l) => l.ready);
  return w;
}

export async function stopWorker(w: Proc): Promise<void> {
  if (w.child.exitCode === null && w.child.signalCode === null) w.kill('SIGTERM');
  await w.exited;
}

/** A redis-server on a loopback port, without persistence; stop() ends it by its PID. */
export class RedisServer {
  private proc?: ChildProcess;
  constructor(readonly port: number) {}

  /** The running redis-server's PID. */
  get pid(): number {
    return this.proc!.pid!;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const r = new RedisServer(await freePort());
    await r.restart();
    return r;
  }

  /** Start (again, on the same port: empty, as a restarted Redis without persistence is). */
  async restart(): Promise<void> {
    const proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('Ready to accept connections')) resolve();
      });
      proc.on('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    process.kill(proc.pid!, signal);
    await exited;
  }

  /** The farm queue's jobs by state. */
  async counts(): Promise<Record<string, number>> {
    const connection = new Redis(this.url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE, { connection });
    try {
      return await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }

  /** The keys matching a pattern (KEYS: a test's small Redis). */
  async keys(pattern: string): Promise<string[]> {
    const connection = new Redis(this.url, { maxRetriesPerRequest: null });
    try {
      return await connection.keys(pattern);
    } finally {
      connection.disconnect();
    }
  }
}

export function redisInstalled(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

/** Poll `until` (a condition on real state, not a clock) every 100 ms. */
export async function eventually<T>(what: () => Promise<T>, until: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await what();
    if (until(v)) return v;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A redis-server and two farm workers for a test file, stopped (by PID) when its tests end. */
export async function startFarm(t: Test): Promise<{ redis: RedisServer; workers: Proc[] }> {
  if (!redisInstalled()) throw new Error('these tests need redis-server (Debian\'s redis-server package; .ci/run installs it)');
  const redis = await RedisServer.start();
  const workers: Proc[] = [await startWorker(redis.url), await startWorker(redis.url)];
  t.teardown(async () => {
    await Promise.all(workers.map(stopWorker));
    await redis.stop();
  });
  return { redis, workers };
}

/** `entelechy render ARGS` on this machine, one worker: what a farm render must equal. */
export function localRender(args: string[]): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'render', ...args, '--workers', '1'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ENTELECHY_CACHE_DIR: CACHE } });
  if (r.status !== 0) throw new Error(r.stderr);
}
