// What the Player tests share: a real `entelechy-player` process on a copy of an example, its
// stdin protocol door, and Debian's chromium driven by playwright-core.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = join(ROOT, 'test', 'out', 'player');

/** Debian's chromium, headless. Missing, the tests fail and say how to get it (CI installs it). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`the Player's browser tests need Debian's chromium at ${CHROMIUM}: install it (apt-get install chromium; .ci/run does)`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A copy of an example in a temporary folder: tests edit it on disk. */
export function copyExample(name: string): { dir: string; remove: () => void } {
  const dir = scratchDir(`entelechy-player-${name}-`);
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface PlayerProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  port: number;
  dir: string;
  /** A protocol request on stdin (--serve); resolves with its answer. */
  ask(request: Record<string, unknown>): Promise<any>;
  stderr(): string;
  stop(): Promise<void>;
}

let nextId = 0;

/** `entelechy-player <copy of example> --listen 127.0.0.1:0 --serve`, once it prints its URL. */
export async function startPlayerProcess(example: string, extra: string[] = [], env: Record<string, string> = {}): Promise<PlayerProcess> {
  const { dir, remove } = copyExample(example);
  const args = [join(ROOT, 'bin', 'entelechy-player.js'), join(dir, 'scene.esn'), '--listen', '127.0.0.1:0', '--serve', '--workers', '1', ...extra];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // A player outlives the end of its stdin (it goes on serving pages): if this test process ends
  // without stopping it (a failure, a timeout), it is ended here.
  process.once('exit', () => child.kill());
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d.toString();
      const m = /player at (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    void exit.then((code) => reject(new Error(`entelechy-player exited (${code}) before printing its URL: ${err}`)));
  });
  // Answers come in order, each with the id of its request.
  const waiting = new Map<string, (answer: any) => void>();
  let buffer = '';
  child.stdout.on('data', (d) => {
    const parts = (buffer + d.toString()).split('\n');
    buffer = parts.pop()!;
    for (const line of parts) {
      if (!line.trim()) continue;
      const answer = JSON.parse(line);
      waiting.get(String(answer.id))?.(answer);
      waiting.delete(String(answer.id));
    }
  });
  return {
    child, url, dir,
    port: Number(new URL(url).port),
    ask: (request) =>
      new Promise((resolve, reject) => {
        const id = `t${++nextId}`;
        const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(request)}; stderr: ${err}`)), 30000);
        waiting.set(id, (a) => {
          clearTimeout(timer);
          resolve(a);
        });
        child.stdin.write(JSON.stringify({ ...request, id }) + '\n');
      }),
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null) {
        child.stdin.end(JSON.stringify({ op: 'quit' }) + '\n');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(timer);
      }
      remove();
    },
  };
}

/** Wait until `test` (run in the page) returns something truthy; fail with `what` after `ms`. */
/**
 * Real players for a test file, started at once (a session takes seconds to start on a busy
 * machine), and one chromium; all stopped when the file's tests end. A player that fails to
 * start is reported by the test that asks for it.
 */
export function startPlayers<N extends string>(t: Test, which: Record<N, { example: string; args?: string[]; env?: Record<string, string> }>): { browser: () => Browser; player: (name: N) => Promise<PlayerProcess> } {
  const started = new Map<N, Promise<PlayerProcess>>();
  for (const name of Object.keys(which) as N[]) {
    const p = startPlayerProcess(which[name].example, which[name].args, which[name].env);
    p.catch(() => undefined);
    started.set(name, p);
  }
  let browser: Browser | undefined;
  t.before(async () => {
    browser = await launchChromium();
  });
  t.teardown(async () => {
    await browser?.close();
    for (const p of started.values()) await p.then((x) => x.stop(), () => undefined);
  });
  return { browser: () => browser!, player: (name) => started.get(name)! };
}

export async function until<T>(page: Page, what: string, test: () => T, ms = 30000): Promise<T> {
  try {
    const handle = await page.waitForFunction(test, undefined, { timeout: ms, polling: 50 });
    return (await handle.jsonValue()) as T;
  } catch {
    throw new Error(`timed out after ${ms} ms waiting for: ${what}`);
  }
}

/** The canvas's pixels, as the page drew them. */
export async function canvasPixels(page: Page): Promise<{ width: number; height: number; rgba: Uint8Array; frame: number }> {
  const got = await page.evaluate(() => {
    const canvas = document.getElementById('canvas') as HTMLCanvasElement;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    return { width: canvas.width, height: canvas.height, bytes: Array.from(data), frame: (window as any).player.frame as number };
  });
  return { width: got.width, height: got.height, rgba: Uint8Array.from(got.bytes), frame: got.frame };
}

/** A page that has drawn at least one frame. */
export async function openPlayer(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 860 } });
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
  // Clicks and screenshots wait for a busy machine rather than fail.
  page.setDefaultTimeout(120000);
  await page.goto(url);
  await until(page, 'a first frame on the canvas', () => (window as any).player?.framesDrawn > 0, 60000);
  return page;
}

export const frameOf = (page: Page): Promise<number> => page.evaluate(() => (window as any).player.frame as number);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
