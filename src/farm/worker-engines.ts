// What a farm worker renders with, as the local render does (render.ts): one field memory and
// evaluation pool, one frame evaluating at a time, while the frames before it are encoded to PNG
// on threads of their own (png-threads.ts). Engines and tiled renderers are kept by the scene's
// digest, so the next frame of a render reuses them (and the modules, cached by the digest of
// their IR on disk and in memory).

import { UnrecoverableError } from 'bullmq';
import { loadScene, type Scene } from '../ir/check/scene.js';
import { formatDiagnostic } from '../ir/check/report.js';
import { defaultMemoryBudget } from '../main/budget.js';
import type { Engine } from '../main/engine.js';
import { sceneGroups } from '../main/scene-groups.js';
import { fieldToRgba } from '../main/image.js';
import { FieldMemory } from '../main/memory.js';
import { prepareModules } from '../main/modules.js';
import { openEngine } from '../main/render.js';
import { TileError, TiledRenderer } from '../main/tiles/renderer.js';
import { PngThreads } from '../workers/png-threads.js';
import { EvalPool } from '../workers/pool.js';
import type { InputFill, JobInput } from './inputs.js';
import type { FrameJob } from './jobs.js';

/** Engines kept, the last used: a worker serving a few renders at once does not compile again for each frame. */
const KEPT = 3;

/** Bytes of pixels waiting to be encoded, past which the next frame waits (as render.ts's FrameWriter). */
const PIXELS_IN_FLIGHT = 2 ** 30;

/** One frame to evaluate: its number, time, params and inputs. */
export interface FrameCall {
  frame: number;
  time: number;
  params: { name: string; value: number[] }[];
  render: string;
  inputs?: JobInput[];
}

export class WorkerEngines {
  readonly memory: FieldMemory;
  readonly pool: EvalPool;
  private readonly encoder: PngThreads;
  private readonly engines = new Map<string, { scene: Scene; engine: Engine }>();
  private readonly renderers = new Map<string, { scene: Scene; renderer: TiledRenderer }>();
  private turn = Promise.resolve();
  private inFlight = 0;
  private encoded: Promise<unknown> = Promise.resolve();

  constructor(
    options: { workers: number; memory?: number },
    private readonly inputs: InputFill,
  ) {
    this.memory = new FieldMemory(options.memory ?? defaultMemoryBudget());
    this.pool = new EvalPool(this.memory.memory, { workers: options.workers, lazy: true });
    this.encoder = new PngThreads(options.workers);
  }

  /** Run `work` when the frames before it have evaluated: one at a time, in the order asked. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work);
    this.turn = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /**
   * Evaluate a frame in its turn and copy its pixels out (the next frame overwrites the field);
   * resolves when the next frame may evaluate, to the PNG being encoded on a thread meanwhile.
   */
  async frame(engine: Engine, scene: Scene, output: string, call: FrameCall): Promise<{ png: Promise<Buffer> }> {
    const { width, height, rgba } = await this.exclusive(async () => {
      for (const [param, p] of scene.params) engine.params.set(param, [...p.value]);
      for (const { name, value } of call.params) engine.params.set(name, value);
      await this.fillInputs(engine, call);
      engine.frame = call.frame;
      await engine.evaluate({ time: call.time });
      const field = engine.outputField(output)!;
      while (this.inFlight > 0 && this.inFlight + field.width * field.height * 4 > PIXELS_IN_FLIGHT) await this.encoded;
      return { width: field.width, height: field.height, rgba: fieldToRgba(engine.memory, field, output) };
    });
    const bytes = rgba.length; // (rgba is moved to the thread: its length is 0 after)
    this.inFlight += bytes;
    const png = this.encoder.encode(width, height, rgba).finally(() => (this.inFlight -= bytes));
    this.encoded = png.catch(() => {});
    return { png };
  }

  /** A job's --input images into an engine or tiled renderer (inputs.ts). */
  fillInputs(target: Pick<Engine, 'fields' | 'memory' | 'version'>, data: { render: string; inputs?: JobInput[] }): Promise<void> {
    return this.inputs.fill(target, data.render, data.inputs ?? []);
  }

  /** The engine for a job's scene: kept from an earlier frame, or loaded from its documents. */
  async engine(data: FrameJob): Promise<{ scene: Scene; engine: Engine }> {
    let hit = this.engines.get(data.scene);
    if (hit) {
      this.engines.delete(data.scene); // to the end: the last used
    } else {
      hit = await this.open(data);
      while (this.engines.size >= KEPT) {
        const [key, old] = this.engines.entries().next().value!;
        old.engine.dispose();
        this.engines.delete(key);
      }
    }
    this.engines.set(data.scene, hit);
    return hit;
  }

  /** An engine of the job's own, kept by nobody (a stateful sequence's: its state is its own): dispose it. */
  async open(data: FrameJob): Promise<{ scene: Scene; engine: Engine }> {
    const scene = sceneOf(data);
    // No frame is taken from the last one's cache: that is keyed by time, not frame number.
    const { engine } = await openEngine(scene, { backend: data.backend, fuse: data.fuse, memory: this.memory, pool: this.pool, cacheFrames: false });
    return { scene, engine };
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
      while (this.renderers.size >= KEPT) {
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
    await Promise.all([this.pool.destroy(), this.encoder.close()]);
  }
}

/** A job's scene, from the documents it carries; its errors fail the job without retries. */
function sceneOf(data: FrameJob): Scene {
  const texts = new Map(data.documents.map((d) => [d.path, d.text]));
  const scene = loadScene(data.entry, { read: (p) => texts.get(p), size: data.size, inputSizes: data.inputSizes });
  if (scene.diagnostics.length) throw new UnrecoverableError(scene.diagnostics.slice(0, 5).map(formatDiagnostic).join('\n'));
  return scene;
}
