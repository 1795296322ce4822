// `entelechy render SCENE --frames A:B --farm redis://...`: the frames as BullMQ jobs for the farm
// workers, each PNG written here as its job completes (or handed to ffmpeg in order for a video:
// frame-outputs.ts). Without --frames, one picture in bands (bands.ts). A scene with state is one
// job, its frames run in order on one worker and announced by the job's progress. --input images
// go to Redis once each (inputs.ts).
//
// The jobs carry the scene's documents, so the workers need no shared filesystem. Progress comes
// from the queue's events (QueueEvents). What BullMQ cannot know is handled here:
// - a Redis that restarted without its data forgets the jobs: when the connection is back, the
//   frames not yet written are added again (a job id names its frame, so a job that survived is
//   not added twice);
// - a submitter that goes away: on SIGINT/SIGTERM it removes its jobs; killed outright, its key
//   stops being renewed and workers drop its jobs unrendered (jobs.ts).

import { createHash, randomBytes } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import cliProgress from 'cli-progress';
import type { Scene } from '../ir/check/scene.js';
import { InputImageError } from '../main/image-input.js';
import { markPrinted } from '../main/user-error.js';
import { isVideoFile, requireFfmpeg } from '../main/video.js';
import { bandsOf } from './bands.js';
import { FrameFiles, VideoFrames, type FrameOutput } from './frame-outputs.js';
import { InputUploads, type JobInput } from './inputs.js';
import { PictureFile } from './picture-file.js';
import { QuietWatch } from './quiet.js';
import { sweepLeftBehind } from '../main/files.js';
import { checkOutputFile, outputSize, RenderError, type RenderOptions } from '../main/render.js';
import { frameFile } from '../main/frame-pattern.js';
import { isCompletePng } from '../main/shard.js';
import { aliveKey, connect, FarmError, frameOfJob, jobId, QUEUE, resultKey, type FrameJob, type FrameResult, type JobDocument } from './jobs.js';
import { onStopSignals } from '../main/cancel.js';

export interface FarmOptions {
  /** The Redis URL. */
  farm: string;
  /** The size the scene was loaded with (--size), for the workers to load it the same way. */
  size?: number[];
  /** The sizes its inputs were loaded with (their images'), likewise. */
  inputSizes?: Record<string, number[]>;
}

/** How long the submitter's key outlives its last renewal (renewed every third of it). */
const ALIVE_MS = Number(process.env.ENTELECHY_FARM_ALIVE_MS) || 15_000;
/** Attempts of a frame that fails for a reason other than the scene (a worker's disk, its memory). */
const ATTEMPTS = 3;

export async function farmRender(scene: Scene, options: RenderOptions & FarmOptions): Promise<void> {
  const frames = options.frames;
  const video = isVideoFile(options.file);
  checkOutputFile(options.file, Boolean(frames));
  if (video) requireFfmpeg();
  // What renders of these files killed outright left (their PNGs' temporary files; a video's: VideoWriter).
  if (!video) sweepLeftBehind(options.file, 'tmp');
  // State is made frame by frame: such frames cannot be rendered apart, so they go as one job,
  // run in order from frame 0 on one worker (a sequence), each frame sent as it is done.
  const stateful = scene.nodes.some((n) => n.kernel.ports.some((p) => p.kind === 'state'));
  const sequence = stateful || (video && !frames);

  const out = (line: object) => options.json && process.stdout.write(JSON.stringify(line) + '\n');
  const [width, height] = outputSize(scene, options.output);
  // The jobs' units: frames, or without --frames the bands of one picture (bands.ts).
  const todo = new Set<number>();
  const skipped: number[] = [];
  const bands = frames || sequence ? [] : bandsOf(width, height);
  const first = frames?.first ?? 0;
  const last = frames?.last ?? 0;
  if (frames || sequence) {
    for (let f = first; f <= last; f++) {
      if (frames && !video && options.resume && isCompletePng(frameFile(options.file, f), width, height)) skipped.push(f);
      else todo.add(f);
    }
  } else {
    bands.forEach((_, i) => todo.add(i));
  }
  let picture: PictureFile | undefined;
  const output: FrameOutput = video ? new VideoFrames(options, first) : new FrameFiles(options.file, Boolean(frames));
  if (frames || sequence) output.prepare?.(todo);

  const render = randomBytes(6).toString('hex');
  const documents: JobDocument[] = scene.documents.map((d) => ({ path: d.path, text: d.text, digest: sha256(d.text) }));
  const base: Omit<FrameJob, 'frame' | 'time'> = {
    render, entry: scene.entry, documents, size: options.size, inputSizes: options.inputSizes, params: options.params ?? [], output: options.output, backend: options.backend, fuse: options.fuse,
    scene: sha256(JSON.stringify([scene.entry, documents.map((d) => [d.path, d.digest]), options.size, options.inputSizes, options.output, options.backend, options.fuse])),
  };
  // Each frame's --input images, in Redis (inputs.ts): read when the jobs are made.
  const inputs = new Map<number, JobInput[]>();
  const job = (unit: number) => ({
    name: sequence ? 'sequence' : frames ? 'frame' : 'band',
    data: (sequence
      ? { ...base, frame: first, time: options.time, sequence: { last, send: [...todo], fps: options.fps, inputs: options.inputs?.length ? [...Array(last + 1).keys()].map((f) => inputs.get(f)!) : undefined } }
      : frames
        ? { ...base, frame: unit, time: options.time + unit / options.fps, inputs: inputs.get(unit) }
        : { ...base, frame: 0, time: options.time, inputs: inputs.get(0), band: { ...bands[unit], tile: options.tile } }) satisfies FrameJob,
    opts: { jobId: jobId(render, unit), attempts: ATTEMPTS, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: true },
  });
  // What is left to render, as jobs: a sequence is one job (named by its first frame).
  const jobs = () => (sequence ? (todo.size ? [job(first)] : []) : [...todo].map(job));

  const connection = await connect(options.farm);
  const uploads = new InputUploads(connection, render, options.inputs ?? []);
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
  const bar = options.progress ? new cliProgress.SingleBar({ format: `rendering on the farm [{bar}] {value}/{total} ${frames ? 'frames' : 'bands'} | {eta_formatted} left`, hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  bar?.start(frames ? last - first + 1 : bands.length || 1, skipped.length);
  const started = performance.now();
  let written = 0;
  let pixels = 0;
  let timer: NodeJS.Timeout | undefined;
  let handBack: (() => void) | undefined;
  let ready = false;
  let quiet: QuietWatch | undefined;
  const onReady = () => {
    // Back after a lost connection: Redis may have restarted empty.
    if (ready) void keepAlive().then(() => uploads.again()).then(() => queue.addBulk(jobs())).catch(() => {});
    ready = true;
  };

  try {
    // A state's frames from 0 (their inputs too), or the frames to render.
    for (let f = sequence ? 0 : first; f <= last; f++) {
      if (!sequence && frames && !todo.has(f)) continue;
      try {
        inputs.set(f, await uploads.forFrame(f));
      } catch (e) {
        if (e instanceof InputImageError) throw new RenderError(frames ? `frame ${f}: ${e.message}` : e.message, f);
        throw e;
      }
    }
    if (!frames && !sequence) picture = await PictureFile.create(options.file, width, height, bands.length);
    await events.waitUntilReady();
    quiet = new QuietWatch(connection, options.farm, (line) => (options.json ? out(line) : process.stderr.write(`note: ${line.note}\n`)));
    await keepAlive();
    timer = setInterval(() => void keepAlive().catch(() => {}), ALIVE_MS / 3);
    connection.on('ready', onReady);
    onReady();
    let ended = false;
    await new Promise<void>((resolve, reject) => {
      const told = () => skipped.forEach((frame) => out({ frame, file: frameFile(options.file, frame), skipped: true }));
      if (todo.size === 0) return (told(), resolve()); // all done before: nothing is submitted
      let chain = Promise.resolve();
      // A unit's result, taken one at a time in the order they are done.
      const take = (unit: number, id: string) => {
        chain = chain.then(async () => {
          if (ended || !todo.has(unit)) return; // written already, or the render failed
          const png = await connection.getBuffer(resultKey(id));
          if (ended) return;
          if (!png) {
            // Lost with a restarted Redis: its job again (a sequence's is there still, or added again on reconnection).
            if (!sequence) await queue.add(job(unit).name, job(unit).data, job(unit).opts);
            return;
          }
          const millis = Math.round((performance.now() - started) * 1000) / 1000;
          if (picture) {
            await picture.band(unit, png);
            out({ band: unit, rows: [bands[unit].y0, bands[unit].y1], millis });
          } else {
            for (const w of await output.frame(unit, png, started)) {
              written++;
              pixels += width * height;
              out({ frame: w.frame, file: w.file, millis: w.millis });
            }
          }
          await connection.del(resultKey(id));
          todo.delete(unit);
          bar?.increment();
          if (todo.size === 0) resolve();
        }).catch(reject);
      };
      for (const kind of ['active', 'completed', 'progress'] as const) events.on(kind, ({ jobId: id }: { jobId: string }) => frameOfJob(render, id) !== undefined && quiet?.progress());
      events.on('completed', ({ jobId: id }) => {
        const unit = frameOfJob(render, id);
        if (unit === undefined || !todo.has(unit)) return;
        if (sequence) return void (chain = chain.then(() => (todo.size && !ended ? reject(new RenderError(`internal: the sequence's job completed with ${todo.size} frames not sent`)) : undefined)));
        take(unit, id);
      });
      // A sequence's frames, each announced as its job's progress.
      events.on('progress', ({ jobId: id, data }) => {
        const frame = (data as { frame?: number })?.frame;
        if (!sequence || frameOfJob(render, id) === undefined || typeof frame !== 'number' || !todo.has(frame)) return;
        take(frame, jobId(render, frame));
      });
      events.on('failed', ({ jobId: id, failedReason }) => {
        const unit = frameOfJob(render, id);
        if (unit === undefined || (!todo.has(unit) && !sequence)) return;
        if (picture) reject(new RenderError(`${failedReason} (rows ${bands[unit].y0}-${bands[unit].y1 - 1})`));
        else reject(new RenderError(sequence || failedReason.includes(`frame ${unit}: `) ? failedReason : `frame ${unit}: ${failedReason}`, sequence ? undefined : unit));
      });
      events.on('stalled', ({ jobId: id }) => {
        const unit = frameOfJob(render, id);
        if (unit !== undefined && todo.has(unit)) out({ [picture ? 'band' : 'frame']: unit, stalled: true });
      });
      // Interrupted: the jobs go with it (finally, below).
      handBack = onStopSignals(() => reject(new RenderError('interrupted: the render\'s jobs were removed from the farm')));
      out({ submitted: render, ...(sequence ? { sequence: { first, last, frames: todo.size } } : { [frames ? 'frames' : 'bands']: todo.size }), queue: QUEUE });
      told(); // the frames a resume found done, after the first line (docs/distributed.md: `submitted` comes first)
      void queue.addBulk(jobs()).catch(reject);
    }).finally(() => (ended = true));
    await picture?.finish();
    await output.complete();
    const millis = performance.now() - started;
    bar?.stop();
    if (picture) {
      out({ done: true, file: options.file, width, height, bands: bands.length, farm: { render }, millis: Math.round(millis) });
      if (!options.json) process.stderr.write(`wrote ${options.file} (${width} x ${height}, in ${bands.length} bands from the farm) in ${(millis / 1000).toFixed(2)} s\n`);
      return;
    }
    const videoFacts = output instanceof VideoFrames ? output : undefined;
    out({ done: true, frames: written, ...(skipped.length ? { skipped: skipped.length } : {}), ...(videoFacts ? { video: videoFacts.describe() } : {}), farm: { render, ...(sequence ? { sequence: true } : {}) }, millis: Math.round(millis) });
    if (videoFacts?.padded && !options.json) process.stderr.write(`note: ${videoFacts.padded}\n`);
    if (!options.json) {
      const how = sequence && stateful ? ', in order on one worker (the scene has state)' : '';
      process.stderr.write(`wrote ${frames ? `${written} frames to ` : ''}${options.file} from the farm${how}${skipped.length ? ` (${skipped.length} already there skipped)` : ''} in ${(millis / 1000).toFixed(2)} s (${(pixels / millis / 1000).toFixed(1)} Mpix/s)\n`);
    }
  } catch (e) {
    bar?.stop();
    await picture?.abort();
    await output.abort();
    if (e instanceof RenderError && options.json) {
      out({ error: { message: e.message, frame: e.frame } });
      markPrinted(e);
    }
    throw e;
  } finally {
    clearInterval(timer);
    quiet?.stop();
    handBack?.();
    connection.off('ready', onReady);
    // Frames not written: their jobs are removed (a job a worker holds cannot be; without the
    // render's key it is dropped if it runs again, and its result expires).
    const ids = sequence ? (todo.size ? [jobId(render, first)] : []) : [...todo].map((f) => jobId(render, f));
    await Promise.all(ids.map((id) => queue.remove(id).catch(() => 0)));
    await connection.del(aliveKey(render)).catch(() => 0);
    // Results workers kept before the key went, not taken: dropped (none can come after: worker.ts keeps one only while the key lives).
    const results = [...todo].map((unit) => resultKey(jobId(render, unit)));
    if (results.length) await connection.del(...results).catch(() => 0);
    await uploads.remove().catch(() => 0);
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
