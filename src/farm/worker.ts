// `entelechy farm worker`: takes frames from the farm's queue in Redis (a BullMQ Worker), renders
// each from the documents its job carries, and leaves the PNG under the job's result key for the
// submitter.
//
// A worker works as the local render does (render.ts): one frame evaluates at a time, on one field
// memory and evaluation pool, while the frames before it are encoded to PNG on threads of their
// own (png-threads.ts) and sent. So --concurrency N holds N jobs at once: one evaluating, the others
// waiting for it or being encoded and sent. Engines are kept by the scene's digest: the next frame
// of a render reuses the engine (and the modules, cached by the digest of their IR on disk and in
// memory). Frames are evaluated on the pool's threads, never on this one, so BullMQ can renew a
// job's lock while it runs (a worker whose event loop is blocked past the lock looks dead, and its
// job is given to another).

import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { loadScene, type Scene } from '../ir/check/scene.js';
import { formatDiagnostic } from '../ir/check/report.js';
import { LineIndex } from '../ir/syntax/position.js';
import { defaultMemoryBudget } from '../main/budget.js';
import { EvaluationError, type Engine } from '../main/engine.js';
import { fieldToRgba } from '../main/image.js';
import { FieldMemory } from '../main/memory.js';
import { openEngine } from '../main/render.js';
import { prepareModules } from '../main/modules.js';
import { TileError, TiledRenderer } from '../main/tiles/renderer.js';
import { sceneGroups } from '../main/engine.js';
import { BandEncoder } from './bands.js';
import { EvalPool } from '../workers/pool.js';
import { PngThreads } from '../workers/png-threads.js';
import { aliveKey, connect, QUEUE, RESULT_SECONDS, resultKey, type FrameJob, type FrameResult } from './jobs.js';

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

/** Engines a slot keeps, the last used: a worker serving a few renders at once does not compile again for each frame. */
const ENGINES_PER_SLOT = 3;

/** Bytes of pixels waiting to be encoded, past which the next frame waits (as render.ts's FrameWriter). */
const PIXELS_IN_FLIGHT = 2 ** 30;

/** What the worker renders with: one memory and pool, engines kept by scene, one frame at a time. */
class Renderer {
  readonly memory: FieldMemory;
  readonly pool: EvalPool;
  private readonly engines = new Map<string, { scene: Scene; engine: Engine }>();
  private readonly renderers = new Map<string, { scene: Scene; renderer: TiledRenderer }>();

  constructor(options: FarmWorkerOptions) {
    this.memory = new FieldMemory(options.memory ?? defaultMemoryBudget());
    this.pool = new EvalPool(this.memory.memory, { workers: options.workers, lazy: true });
  }

  private turn = Promise.resolve();

  /** Run `work` when the frames before it have evaluated: one at a time, in the order asked. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work);
    this.turn = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** The engine for a job's scene: kept from an earlier frame, or loaded from its documents. */
  async engine(data: FrameJob): Promise<{ scene: Scene; engine: Engine }> {
    let hit = this.engines.get(data.scene);
    if (hit) {
      this.engines.delete(data.scene); // to the end: the last used
    } else {
      const scene = sceneOf(data);
      // No frame is taken from the last one's cache: that is keyed by time, not frame number.
      const { engine } = await openEngine(scene, { backend: data.backend, fuse: data.fuse, memory: this.memory, pool: this.pool, cacheFrames: false });
      hit = { scene, engine };
      while (this.engines.size >= ENGINES_PER_SLOT) {
        const [key, old] = this.engines.entries().next().value!;
        old.engine.dispose();
        this.engines.delete(key);
      }
    }
    this.engines.set(data.scene, hit);
    return hit;
  }

  /** A tiled renderer for a job's scene (a band of a huge picture), kept as engines are. */
  async tiled(data: FrameJob): Promise<{ scene: Scene; renderer: TiledRenderer }> {
    let hit = this.renderers.get(data.scene);
    if (hit) {
      this.renderers.delete(data.scene);
    } else {
      const scene = sceneOf(data);
      if (data.backend === 'jit') await prepareModules(sceneGroups(scene, [], data.fuse).map((g) => g.ir));
      let renderer: TiledRenderer;
      try {
        renderer = new TiledRenderer(scene, { output: data.output, memory: this.memory, pool: this.pool, prepared: data.backend === 'jit', backend: data.backend, fuse: data.fuse });
      } catch (e) {
        if (e instanceof TileError) throw new UnrecoverableError(e.message);
        throw e;
      }
      hit = { scene, renderer };
      while (this.renderers.size >= ENGINES_PER_SLOT) {
        const [key, old] = this.renderers.entries().next().value!;
        old.renderer.dispose();
        this.renderers.delete(key);
      }
    }
    this.renderers.set(data.scene, hit);
    return hit;
  }

  async destroy(): Promise<void> {
    for (const { engine } of this.engines.values()) engine.dispose();
    for (const { renderer } of this.renderers.values()) renderer.dispose();
    this.engines.clear();
    this.renderers.clear();
    await this.pool.destroy();
  }
}

export async function farmWorker(options: FarmWorkerOptions): Promise<void> {
  const connection = await connect(options.redis);
  const name = `${hostname()}:${process.pid}`;
  const say = (line: object, text: string) => (options.json ? process.stdout.write(JSON.stringify(line) + '\n') : process.stderr.write(text + '\n'));
  const concurrency = options.concurrency ?? options.workers + 1;
  const renderer = new Renderer(options);
  const encoder = new PngThreads(options.workers);
  let inFlight = 0;
  let encoded: Promise<unknown> = Promise.resolve();

  const render = async (job: Job<FrameJob, FrameResult>): Promise<FrameResult> => {
    const data = job.data;
    // The submitter is gone (it exited without removing this job): nobody takes the frame.
    if (!(await connection.exists(aliveKey(data.render)))) throw new UnrecoverableError(`render ${data.render} was abandoned: its submitter is gone`);
    say({ started: job.id, render: data.render, frame: data.frame, attempt: job.attemptsMade + 1 }, `frame ${data.frame} of render ${data.render}: started`);
    const t0 = performance.now();
    if (data.band) {
      const result = await renderer.exclusive(() => renderBand(renderer, data as FrameJob & { band: NonNullable<FrameJob['band']> }));
      await connection.set(resultKey(job.id!), result, 'EX', RESULT_SECONDS);
      const millis = Math.round((performance.now() - t0) * 1000) / 1000;
      say({ done: job.id, render: data.render, band: data.band, millis }, `rows ${data.band.y0}-${data.band.y1 - 1} of render ${data.render}: done in ${millis.toFixed(0)} ms`);
      return { bytes: result.length, millis, worker: name };
    }
    // Evaluated in turn; the pixels copied out (the next frame overwrites the field), then
    // encoded on a thread while the next job evaluates.
    const { width, height, rgba } = await renderer.exclusive(async () => {
      const { scene, engine } = await renderer.engine(data);
      for (const [param, p] of scene.params) engine.params.set(param, [...p.value]);
      for (const { name: param, value } of data.params) engine.params.set(param, value);
      engine.frame = data.frame;
      try {
        await engine.evaluate({ time: data.time });
      } catch (e) {
        // The scene's own failure (a loop out of fuel): the same on every worker, so not retried.
        if (e instanceof EvaluationError) throw new UnrecoverableError(`${nodePlace(scene, e.node)}frame ${data.frame}: ${e.message}`);
        throw e;
      }
      const field = engine.outputField(data.output)!;
      while (inFlight > 0 && inFlight + field.width * field.height * 4 > PIXELS_IN_FLIGHT) await encoded;
      return { width: field.width, height: field.height, rgba: fieldToRgba(engine.memory, field, data.output) };
    });
    const bytes = rgba.length; // (rgba is moved to the thread: its length is 0 after)
    inFlight += bytes;
    const encoding = encoder.encode(width, height, rgba).finally(() => (inFlight -= bytes));
    encoded = encoding.catch(() => {});
    const png = await encoding;
    await connection.set(resultKey(job.id!), png, 'EX', RESULT_SECONDS);
    const millis = Math.round((performance.now() - t0) * 1000) / 1000;
    say({ done: job.id, render: data.render, frame: data.frame, millis }, `frame ${data.frame} of render ${data.render}: done in ${millis.toFixed(0)} ms`);
    return { bytes: png.length, millis, worker: name };
  };

  const worker = new Worker<FrameJob, FrameResult>(QUEUE, render, {
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
    await worker.close(); // waits for the frames in hand
    await Promise.all([renderer.destroy(), encoder.close()]);
    connection.disconnect();
  };
  const stopped = new Promise<void>((resolve) => {
    const onSignal = () => void stop().then(resolve);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  void worker.run();
  await worker.waitUntilReady();
  say({ ready: true, worker: name, queue: QUEUE, concurrency }, `farm worker ${name}: taking frames from ${options.redis} (${concurrency} at once)`);
  await stopped;
}

/** A job's scene, from the documents it carries; its errors fail the job without retries. */
function sceneOf(data: FrameJob): Scene {
  const texts = new Map(data.documents.map((d) => [d.path, d.text]));
  const scene = loadScene(data.entry, { read: (p) => texts.get(p), size: data.size });
  if (scene.diagnostics.length) throw new UnrecoverableError(scene.diagnostics.slice(0, 5).map(formatDiagnostic).join('\n'));
  return scene;
}

/** A band of a huge picture, in tiles: its sums (a, b, length as 32-bit words) and its IDAT chunks (bands.ts). */
async function renderBand(from: Renderer, data: FrameJob & { band: NonNullable<FrameJob['band']> }): Promise<Buffer> {
  const { scene, renderer } = await from.tiled(data);
  for (const [param, p] of scene.params) renderer.params.set(param, [...p.value]);
  for (const { name, value } of data.params) renderer.params.set(name, value);
  renderer.frame = data.frame;
  const { y0, y1, tile } = data.band;
  const [tw, th] = renderer.tileSize(tile);
  const encoder = new BandEncoder(renderer.width, renderer.height, y0, y1);
  try {
    await renderer.render(tw, th, { time: data.time }, (rgba) => encoder.add(rgba), { x0: 0, x1: renderer.width, y0, y1 });
  } catch (e) {
    if (e instanceof EvaluationError) throw new UnrecoverableError(`${nodePlace(scene, e.node)}frame ${data.frame}: ${e.message}`);
    throw e;
  }
  const band = await encoder.end();
  const head = Buffer.alloc(12);
  head.writeUInt32BE(band.a, 0);
  head.writeUInt32BE(band.b, 4);
  head.writeUInt32BE(band.length >>> 0, 8);
  return Buffer.concat([head, band.chunks]);
}

/** `path:line:column: ` of a node's statement, or nothing for an unknown node. */
function nodePlace(scene: Scene, node: string | undefined): string {
  const n = scene.nodes.find((x) => x.name === node);
  const doc = n && scene.documents.find((d) => d.path === n.path);
  if (!n || !doc) return '';
  const { line, column } = new LineIndex(doc.text).positionAt(n.statement.span.start);
  return `${doc.path}:${line}:${column}: `;
}
