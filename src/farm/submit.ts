// `entelechy render SCENE --frames A:B --farm redis://...`: the frames as BullMQ jobs for the farm
// workers, each PNG written here as its job completes.
//
// The jobs carry the scene's documents, so the workers need no shared filesystem. Progress comes
// from the queue's events (QueueEvents). What BullMQ cannot know is handled here:
// - a Redis that restarted without its data forgets the jobs: when the connection is back, the
//   frames not yet written are added again (a job id names its frame, so a job that survived is
//   not added twice);
// - a submitter that goes away: on SIGINT/SIGTERM it removes its jobs; killed outright, its key
//   stops being renewed and workers drop its jobs unrendered (jobs.ts).

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import cliProgress from 'cli-progress';
import type { Scene } from '../ir/check/scene.js';
import { writeFileAtomic } from '../main/files.js';
import { markPrinted } from '../main/cli.js';
import { frameFile, outputSize, RenderError, type RenderOptions } from '../main/render.js';
import { isCompletePng } from '../main/shard.js';
import { aliveKey, connect, FarmError, frameOfJob, jobId, QUEUE, resultKey, type FrameJob, type FrameResult, type JobDocument } from './jobs.js';

export interface FarmOptions {
  /** The Redis URL. */
  farm: string;
  /** The size the scene was loaded with (--size), for the workers to load it the same way. */
  size?: number[];
}

/** How long the submitter's key outlives its last renewal (renewed every third of it). */
const ALIVE_MS = Number(process.env.ENTELECHY_FARM_ALIVE_MS) || 15_000;
/** Attempts of a frame that fails for a reason other than the scene (a worker's disk, its memory). */
const ATTEMPTS = 3;

export async function farmRender(scene: Scene, options: RenderOptions & FarmOptions): Promise<void> {
  const frames = options.frames;
  if (!frames) throw new RenderError('--farm renders a range of frames: give --frames FIRST:LAST and -o out/%04d.png');
  if (!/%0?\d*d/.test(options.file)) throw new RenderError(`-o ${options.file}: the farm writes one PNG per frame: name them with a frame number pattern, e.g. -o out/%04d.png`);
  if (options.inputs?.length) throw new RenderError('--farm cannot send --input images to the workers yet: render scenes with inputs locally');
  const state = scene.nodes.find((n) => n.kernel.ports.some((p) => p.kind === 'state'));
  if (state)
    throw new RenderError(`node \`${state.name}\` has state, made frame by frame: its frames cannot be rendered apart on a farm; render the scene on one machine (without --farm)`);

  const out = (line: object) => options.json && process.stdout.write(JSON.stringify(line) + '\n');
  const [width, height] = outputSize(scene, options.output);
  const todo = new Set<number>();
  const skipped: number[] = [];
  for (let f = frames.first; f <= frames.last; f++) {
    if (options.resume && isCompletePng(frameFile(options.file, f), width, height)) skipped.push(f);
    else todo.add(f);
  }
  for (const frame of skipped) out({ frame, file: frameFile(options.file, frame), skipped: true });

  const render = randomBytes(6).toString('hex');
  const documents: JobDocument[] = scene.documents.map((d) => ({ path: d.path, text: d.text, digest: sha256(d.text) }));
  const base: Omit<FrameJob, 'frame' | 'time'> = {
    render, entry: scene.entry, documents, size: options.size, params: options.params ?? [], output: options.output, backend: options.backend, fuse: options.fuse,
    scene: sha256(JSON.stringify([scene.entry, documents.map((d) => [d.path, d.digest]), options.size, options.output, options.backend, options.fuse])),
  };
  const job = (frame: number) => ({
    name: 'frame',
    data: { ...base, frame, time: options.time + frame / options.fps } satisfies FrameJob,
    opts: { jobId: jobId(render, frame), attempts: ATTEMPTS, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: true },
  });

  const connection = await connect(options.farm);
  const queue = new Queue<FrameJob, FrameResult>(QUEUE, { connection });
  // Events from now on (Redis's clock, as stream ids are), so none of this render's is missed.
  const [seconds, micros] = await connection.time();
  const eventsConnection = connection.duplicate({ maxRetriesPerRequest: null });
  const events = new QueueEvents(QUEUE, { connection: eventsConnection, lastEventId: `${Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)}-0` });
  // Lost connections are retried (ioredis): their errors are no news.
  eventsConnection.on('error', () => {});
  events.on('error', () => {});
  queue.on('error', () => {});
  const keepAlive = () => connection.set(aliveKey(render), '1', 'PX', ALIVE_MS);
  const bar = options.progress ? new cliProgress.SingleBar({ format: 'rendering on the farm [{bar}] {value}/{total} frames | {eta_formatted} left', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  bar?.start(frames.last - frames.first + 1, skipped.length);
  const started = performance.now();
  let written = 0;
  let pixels = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopSignal: (() => void) | undefined;
  let ready = false;
  const onReady = () => {
    // Back after a lost connection: Redis may have restarted empty.
    if (ready) void keepAlive().then(() => queue.addBulk([...todo].map(job))).catch(() => {});
    ready = true;
  };

  try {
    await events.waitUntilReady();
    await keepAlive();
    timer = setInterval(() => void keepAlive().catch(() => {}), ALIVE_MS / 3);
    connection.on('ready', onReady);
    onReady();
    let ended = false;
    await new Promise<void>((resolve, reject) => {
      if (todo.size === 0) return resolve();
      let chain = Promise.resolve();
      // Results are taken one at a time, in the order they complete.
      events.on('completed', ({ jobId: id }) => {
        const frame = frameOfJob(render, id);
        if (frame === undefined || !todo.has(frame)) return;
        chain = chain.then(async () => {
          if (ended || !todo.has(frame)) return; // written already, or the render failed
          const png = await connection.getBuffer(resultKey(id));
          if (ended) return;
          if (!png) return void (await queue.add(job(frame).name, job(frame).data, job(frame).opts)); // lost with a restarted Redis
          const file = frameFile(options.file, frame);
          try {
            mkdirSync(dirname(file) || '.', { recursive: true });
            writeFileAtomic(file, png);
          } catch (e) {
            throw new RenderError(`cannot write \`${file}\`: ${(e as Error).message}`, frame);
          }
          await connection.del(resultKey(id));
          todo.delete(frame);
          written++;
          pixels += width * height;
          out({ frame, file, millis: Math.round((performance.now() - started) * 1000) / 1000 });
          bar?.increment();
          if (todo.size === 0) resolve();
        }).catch(reject);
      });
      events.on('failed', ({ jobId: id, failedReason }) => {
        const frame = frameOfJob(render, id);
        if (frame !== undefined && todo.has(frame)) reject(new RenderError(failedReason.includes(`frame ${frame}: `) ? failedReason : `frame ${frame}: ${failedReason}`, frame));
      });
      events.on('stalled', ({ jobId: id }) => {
        const frame = frameOfJob(render, id);
        if (frame !== undefined && todo.has(frame)) out({ frame, stalled: true });
      });
      // Interrupted: the jobs go with it (finally, below).
      stopSignal = () => reject(new RenderError('interrupted: the render\'s jobs were removed from the farm'));
      process.once('SIGINT', stopSignal);
      process.once('SIGTERM', stopSignal);
      out({ submitted: render, frames: todo.size, queue: QUEUE });
      void queue.addBulk([...todo].map(job)).catch(reject);
    }).finally(() => (ended = true));
    const millis = performance.now() - started;
    bar?.stop();
    out({ done: true, frames: written, ...(skipped.length ? { skipped: skipped.length } : {}), farm: { render }, millis: Math.round(millis) });
    if (!options.json) process.stderr.write(`wrote ${written} frames to ${options.file} from the farm${skipped.length ? ` (${skipped.length} already there skipped)` : ''} in ${(millis / 1000).toFixed(2)} s (${(pixels / millis / 1000).toFixed(1)} Mpix/s)\n`);
  } catch (e) {
    bar?.stop();
    if (e instanceof RenderError && options.json) {
      out({ error: { message: e.message, frame: e.frame } });
      markPrinted(e);
    }
    throw e;
  } finally {
    clearInterval(timer);
    if (stopSignal) {
      process.off('SIGINT', stopSignal);
      process.off('SIGTERM', stopSignal);
    }
    connection.off('ready', onReady);
    // Frames not written: their jobs are removed (a job a worker holds cannot be; without the
    // render's key it is dropped if it runs again, and its result expires).
    await Promise.all([...todo].map((f) => queue.remove(jobId(render, f)).catch(() => 0)));
    await connection.del(aliveKey(render)).catch(() => 0);
    await events.close();
    await queue.close();
    eventsConnection.disconnect();
    connection.disconnect();
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export { FarmError };
