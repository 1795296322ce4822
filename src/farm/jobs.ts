// What the render farm's submitter and workers share: the queue, a frame job's data, the keys
// beside BullMQ's own, and the Redis connection.
//
// BullMQ does the queueing (jobs, retries with backoff, stalled-job recovery, concurrency, events).
// Two things it does not do are here: a job's result is a PNG of megabytes, kept under a key of
// its own rather than as the job's return value (which BullMQ also copies into its event stream);
// and a render's submitter keeps a key alive while it waits, so that the jobs of a submitter that
// died without removing them are dropped by the workers instead of rendered for nobody.

import { Redis } from 'ioredis';
import { UserError } from '../main/user-error.js';
import type { JobInput } from './inputs.js';

/** The queue every farm worker takes frames from. */
export const QUEUE = 'entelechy-frames';

export class FarmError extends UserError {
  override name = 'FarmError';
}

/** One document of the scene, as the submitter read it. */
export interface JobDocument {
  path: string;
  text: string;
  /** sha256 of the text, hex: what the worker's engine cache is keyed by, with the rest of the scene. */
  digest: string;
}

/** A frame to render: everything the worker needs, so it needs no shared filesystem. */
export interface FrameJob {
  render: string;
  /** The entry document's path (among `documents`). */
  entry: string;
  documents: JobDocument[];
  /** sha256 over the documents' digests, the size, output, backend and fusion: one engine's worth. */
  scene: string;
  size?: number[];
  /** The sizes of inputs whose size follows their image (the render's first frame's). */
  inputSizes?: Record<string, number[]>;
  params: { name: string; value: number[] }[];
  output: string;
  backend: 'jit' | 'interp';
  fuse: boolean;
  frame: number;
  time: number;
  /** Rows [y0, y1) of one huge picture (bands.ts), rendered in tiles (of `tile`, or as memory allows). */
  band?: { y0: number; y1: number; tile?: [number, number] };
  /** The frame's --input images (inputs.ts). */
  inputs?: JobInput[];
  /**
   * A scene with state: frames 0 to `last` evaluated in order on one worker (each frame's state
   * is made from the one before), those in `send` sent as they are done, each under its own
   * frame's result key and announced by the job's progress. `time` is frame 0's; `inputs[f]`
   * frame f's images.
   */
  sequence?: { last: number; send: number[]; fps: number; inputs?: JobInput[][] };
}

/** A job's return value (the PNG itself is under resultKey). */
export interface FrameResult {
  bytes: number;
  millis: number;
  worker: string;
}

export const jobId = (render: string, frame: number) => `${render}-${frame}`;
export const frameOfJob = (render: string, id: string | undefined): number | undefined => {
  if (!id?.startsWith(`${render}-`)) return undefined;
  const n = Number(id.slice(render.length + 1));
  return Number.isInteger(n) ? n : undefined;
};
/** The PNG bytes of a finished job, until its submitter takes them (or they expire). */
export const resultKey = (id: string) => `entelechy:result:${id}`;
/** Exists while the render's submitter is there to take its frames. */
export const aliveKey = (render: string) => `entelechy:render:${render}:alive`;
/** How long the first answer of a Redis server that took the connection is waited for. */
export const CONNECT_ANSWER_MS = Number(process.env.ENTELECHY_TEST_REDIS_ANSWER_MS) || 10_000;
/** How long a result waits for its submitter, in seconds. */
export const RESULT_SECONDS = 3600;

/**
 * A connection to Redis, connected: a URL that cannot be reached is a FarmError at once. Once
 * connected, a lost connection is retried for as long as it takes (a Redis restart), and commands
 * wait for it (BullMQ's workers need maxRetriesPerRequest null).
 */
export async function connect(url: string): Promise<Redis> {
  if (!/^rediss?:\/\//.test(url)) throw new FarmError(`--redis/--farm takes a Redis URL such as redis://127.0.0.1:6379; got \`${url}\``);
  const { db } = redisAddress(url);
  const client = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true });
  let lastError: Error | undefined;
  // Errors while reconnecting are expected (ioredis retries); the last one explains a failed start.
  client.on('error', (e: Error) => (lastError = e));
  // A port that takes the connection and never answers (another service, a proxy, a stopped
  // server) held the render and the worker for ever, without a word: the first answer is bounded.
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<'silent'>((resolve) => (timer = setTimeout(() => resolve('silent'), CONNECT_ANSWER_MS)));
  try {
    if ((await Promise.race([client.connect(), silent])) === 'silent') {
      client.disconnect();
      throw new FarmError(`Redis at ${url} took the connection but did not answer within ${CONNECT_ANSWER_MS / 1000} s: is redis-server listening there, and not another service (or a server stopped with SIGSTOP)?`);
    }
  } catch (e) {
    if (e instanceof FarmError) throw e;
    client.disconnect();
    const tls = url.startsWith('rediss:') ? '; rediss:// is Redis over TLS: a plain redis-server takes redis://' : '';
    const why = (lastError ?? (e as Error)).message;
    // ioredis's own words for a reply that is not Redis's protocol end with "Please report this".
    if (/Unknown RESP type|Protocol error/i.test(why)) throw new FarmError(`something other than Redis answers at ${url}: its reply is not Redis's protocol; name the port redis-server listens on`);
    throw new FarmError(`cannot reach Redis at ${url}: ${why} (is redis-server running there?${tls})`);
  } finally {
    clearTimeout(timer);
  }
  // A database the server does not have was taken silently (ioredis's SELECT on connecting).
  if (db !== undefined) {
    try {
      await client.select(db);
    } catch (e) {
      client.disconnect();
      throw new FarmError(`Redis at ${url} has no database ${db} (${(e as Error).message}): name one it has, e.g. /0 (a server has 16 unless configured otherwise)`);
    }
  }
  return client;
}

/** A Redis URL's parts this module checks itself: a port in range and the database number, if any. */
function redisAddress(url: string): { db?: number } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const port = /:(\d+)(\/|$)/.exec(url)?.[1];
    if (port !== undefined && Number(port) > 65535) throw new FarmError(`${url}: port ${port} is out of range 1..65535`);
    throw new FarmError(`\`${url}\` is not a Redis URL: give redis://HOST:PORT[/DB], e.g. redis://127.0.0.1:6379`);
  }
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  if (!(port >= 1 && port <= 65535)) throw new FarmError(`${url}: port ${parsed.port} is out of range 1..65535`);
  const path = parsed.pathname.replace(/^\//, '');
  if (path === '') return {};
  if (!/^\d+$/.test(path)) throw new FarmError(`${url}: the path names a database by its number (/0, /1, ...); got \`/${path}\``);
  return { db: Number(path) };
}
