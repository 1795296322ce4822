// `entelechy farm worker`: takes jobs from the farm's queue in Redis (a BullMQ Worker), renders
// each from the documents its job carries, and leaves the PNG under the job's result key for the
// submitter. A job is a frame, a band of one huge picture (bands.ts), or a stateful scene's
// frames in order (a sequence).
//
// --concurrency N holds N jobs at once: one evaluating, the others waiting for it or being encoded
// and sent (worker-engines.ts). Frames are evaluated on the pool's threads, never on this one, so
// BullMQ can renew a job's lock while it runs (a worker whose event loop is blocked past the lock
// looks dead, and its job is given to another).

import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Scene } from '../ir/check/scene.js';
import { EvaluationError, frameFailure } from '../main/evaluation-error.js';
import { InputImageError } from '../main/image-input.js';
import { BandEncoder } from './bands.js';
import { InputFill } from './inputs.js';
import { aliveKey, connect, QUEUE, RESULT_SECONDS, resultKey, jobId, type FrameJob, type FrameResult } from './jobs.js';
import { WorkerEngines } from './worker-engines.js';
import { QUIET_MS } from './quiet.js';
import { RedisWatch } from './redis-watch.js';
import { onStopSignals } from '../main/cancel.js';

export interface FarmWorkerOptions {
  redis: string;
  /** Jobs held at once: one evaluating, the others waiting for it or being encoded and sent (default: --workers + 1). */
  concurrency?: number;
  /** Evaluation threads per frame. */
  workers: number;
  memory?: number;
  /** BullMQ's lockDuration and stalledInterval: how soon the job of a worker that died is given to another. */
  stallMs: number;
  json: boolean;
}

/** SET result EX seconds, only while the render's key (KEYS[1]) exists: 1 if set, else 0. */
const KEEP_WHILE_ALIVE = `if redis.call('exists', KEYS[1]) == 1 then redis.call('set', KEYS[2], ARGV[1], 'EX', ARGV[2]) return 1 end return 0`;

export async function farmWorker(options: FarmWorkerOptions): Promise<void> {
  const connection = await connect(options.redis);
  const name = `${hostname()}:${process.pid}`;
  const say = (line: object, text: string) => (options.json ? process.stdout.write(JSON.stringify(line) + '\n') : process.stderr.write(text + '\n'));
  const concurrency = options.concurrency ?? options.workers + 1;
  const engines = new WorkerEngines(options, new InputFill(connection));

  const render = async (job: Job<FrameJob, FrameResult>): Promise<FrameResult> => {
    const data = job.data;
    // The submitter is gone (it exited without removing this job): nobody takes the frame.
    const abandoned = async () => {
      if (!(await connection.exists(aliveKey(data.render)))) throw new UnrecoverableError(`render ${data.render} was abandoned: its submitter is gone`);
    };
    // A result is kept for the submitter only while it waits (one stopped as this job ran left it in
    // Redis for an hour): set only if its key lives, in one step (the submitter drops what is there once it has deleted the key).
    const keep = async (id: string, png: Buffer) => {
      const kept = await connection.eval(KEEP_WHILE_ALIVE, 2, aliveKey(data.render), resultKey(id), png, RESULT_SECONDS);
      if (!kept) throw new UnrecoverableError(`render ${data.render} was abandoned: its submitter is gone`);
    };
    await abandoned();
    say({ started: job.id, render: data.render, frame: data.frame, attempt: job.attemptsMade + 1 }, `frame ${data.frame} of render ${data.render}: started`);
    const t0 = performance.now();
    let bytes = 0;
    if (data.band) {
      const result = await engines.exclusive(() => renderBand(engines, data as FrameJob & { band: NonNullable<FrameJob['band']> }));
      await keep(job.id!, result);
      bytes = result.length;
    } else if (data.sequence) {
      bytes = await renderSequence(engines, job as Job<FrameJob & { sequence: NonNullable<FrameJob['sequence']> }>, keep);
    } else {
      const { scene, engine } = await engines.engine(data);
      const { png } = await sceneFailure(scene, data.frame, engines.frame(engine, scene, data.output, data));
      const bytesOut = await png;
      await keep(job.id!, bytesOut);
      bytes = bytesOut.length;
    }
    const millis = Math.round((performance.now() - t0) * 1000) / 1000;
    const what = data.band ? `rows ${data.band.y0}-${data.band.y1 - 1}` : data.sequence ? `frames 0-${data.sequence.last}` : `frame ${data.frame}`;
    say({ done: job.id, render: data.render, ...(data.band ? { band: data.band } : { frame: data.frame }), millis }, `${what} of render ${data.render}: done in ${millis.toFixed(0)} ms`);
    return { bytes, millis, worker: name };
  };

  // The jobs in hand, what a stop waits for.
  const running = new Set<string>();
  const holding = async (job: Job<FrameJob, FrameResult>) => {
    running.add(job.id!);
    try {
      return await render(job);
    } finally {
      running.delete(job.id!);
    }
  };
  const worker = new Worker<FrameJob, FrameResult>(QUEUE, holding, {
    connection,
    concurrency,
    lockDuration: options.stallMs,
    stalledInterval: options.stallMs,
    // A frame whose worker died twice is given a third chance before it fails.
    maxStalledCount: 2,
    autorun: false,
  });
  worker.on('failed', (job, e) => job && say({ failed: job.id, render: job.data.render, frame: job.data.frame, message: e.message }, `frame ${job.data.frame} of render ${job.data.render}: failed: ${e.message}`));
  // Lost connections are retried by ioredis; BullMQ reports them here as well.
  worker.on('error', () => {});
  const stop = async () => {
    // Said, so a scheduler's log shows why it has not ended yet (a frame can take minutes).
    const held = running.size;
    say({ stopping: true, held }, `farm worker ${name}: stopping; finishing the ${held} job${held === 1 ? '' : 's'} it holds first (SIGKILL drops them: another worker takes them after --stall-ms)`);
    await worker.close(); // waits for the frames in hand
    await engines.destroy();
    connection.disconnect();
  };
  const stopped = new Promise<void>((resolve) => {
    const onSignal = () => void stop().then(resolve);
    onStopSignals(onSignal);
  });
  void worker.run();
  await worker.waitUntilReady();
  say({ ready: true, worker: name, queue: QUEUE, concurrency }, `farm worker ${name}: taking frames from ${options.redis} (${concurrency} at once)`);
  const watch = new RedisWatch(connection, options.redis, (line) => say(line, `farm worker ${name}: ${line.note}`), QUIET_MS, 'worker');
  await stopped;
  watch.stop();
}

/**
 * A stateful scene's frames 0 to `last`, in order, on an engine of the job's own (its state is
 * made frame by frame, so no other job may touch it); each frame in `send` is put under its own
 * frame's result key, in order, then announced as the job's progress. Returns the bytes sent.
 */
async function renderSequence(engines: WorkerEngines, job: Job<FrameJob & { sequence: NonNullable<FrameJob['sequence']> }>, put: (id: string, png: Buffer) => Promise<unknown>): Promise<number> {
  const data = job.data;
  const { last, send, fps, inputs } = data.sequence;
  const wanted = new Set(send);
  const { scene, engine } = await engines.open(data);
  let sent = Promise.resolve(0);
  try {
    for (let frame = 0; frame <= last; frame++) {
      const call = { frame, time: data.time + frame / fps, params: data.params, render: data.render, inputs: inputs?.[frame] };
      const { png } = await sceneFailure(scene, frame, engines.frame(engine, scene, data.output, call));
      if (!wanted.has(frame)) {
        png.catch(() => {});
        continue;
      }
      sent = sent.then(async (total) => {
        const bytes = await png;
        await put(jobId(data.render, frame), bytes);
        await job.updateProgress({ frame });
        return total + bytes.length;
      });
      sent.catch(() => {}); // awaited below; a later frame may fail first
    }
    return await sent;
  } finally {
    await sent.catch(() => {});
    engine.dispose();
  }
}

/** The scene's own failures (a loop out of fuel, an input that is no image): the same on every worker, so not retried. */
async function sceneFailure<T>(scene: Scene, frame: number, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (e instanceof EvaluationError) throw new UnrecoverableError(frameFailure(scene, frame, e));
    if (e instanceof InputImageError) throw new UnrecoverableError(`frame ${frame}: ${e.message}`);
    throw e;
  }
}

/** A band of a huge picture, in tiles: its sums (a, b, length as 32-bit words) and its IDAT chunks (bands.ts). */
async function renderBand(engines: WorkerEngines, data: FrameJob & { band: NonNullable<FrameJob['band']> }): Promise<Buffer> {
  const { scene, renderer } = await engines.tiled(data);
  for (const [param, p] of scene.params) renderer.params.set(param, [...p.value]);
  for (const { name, value } of data.params) renderer.params.set(name, value);
  renderer.frame = data.frame;
  const { y0, y1, tile } = data.band;
  const [tw, th] = renderer.tileSize(tile);
  const encoder = new BandEncoder(renderer.width, renderer.height, y0, y1);
  await sceneFailure(
    scene,
    data.frame,
    (async () => {
      await engines.fillInputs(renderer, data);
      await renderer.render(tw, th, { time: data.time }, (rgba) => encoder.add(rgba), { x0: 0, x1: renderer.width, y0, y1 });
    })(),
  );
  const band = await encoder.end();
  const head = Buffer.alloc(12);
  head.writeUInt32BE(band.a, 0);
  head.writeUInt32BE(band.b, 4);
  head.writeUInt32BE(band.length >>> 0, 8);
  return Buffer.concat([head, band.chunks]);
}
