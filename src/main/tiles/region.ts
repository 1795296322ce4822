// One region of one frame, from the scene's documents alone: the unit of work a farm worker or a
// shard runs (no files, no shared folder). The rows come back in order, a row of tiles at a time,
// as RGBA bytes; they are the bytes of the same rows of the whole picture rendered in one piece.

import { formatDiagnostic } from '../../ir/check/report.js';
import { loadScene, type Scene } from '../../ir/check/scene.js';
import { EvalPool } from '../../workers/pool.js';
import { defaultMemoryBudget } from '../budget.js';
import { sceneGroups } from '../scene-groups.js';
import { FieldMemory } from '../memory.js';
import { prepareModules } from '../modules.js';
import type { Rect } from './plan.js';
import { TileError, TiledRenderer, type RowsSink } from './renderer.js';

export type { Rect, RowsSink };

export interface RegionJob {
  /** The scene's documents by path, the entry among them (the texts a job carries). */
  documents: Record<string, string>;
  entry: string;
  /** Which output (default the first). */
  output?: string;
  /** The `frame` and `time` the kernels see. */
  frame: number;
  time: number;
  /** `render --size`: the size of every node with as many axes. */
  size?: number[];
  /** Params to start from (checked by the caller, as render's --param is). */
  params?: { name: string; value: number[] }[];
  /** Rows and columns of the output to render (default all of it). */
  region?: Rect;
  /** The tile size inside the region (default: full rows, as many as fit `memory`). */
  tile?: [number, number];
  /** Bytes of fields (default as render's). */
  memory?: number;
  /** Worker threads (default 1: the calling thread). */
  workers?: number;
}

/** A scene that keeps state: frame N needs frames 0 to N - 1 computed first, in order, in one place. */
export class StatefulSceneError extends TileError {
  override name = 'StatefulSceneError';
}

/** The scene of a job's documents; its diagnostics, if any, are a TileError listing them. */
export function sceneOfDocuments(job: Pick<RegionJob, 'documents' | 'entry' | 'size'>): Scene {
  const scene = loadScene(job.entry, { read: (p) => job.documents[p], size: job.size });
  if (scene.diagnostics.length) throw new TileError(`the scene does not check:\n${scene.diagnostics.map((d) => formatDiagnostic(d)).join('\n')}`);
  return scene;
}

/** Nodes of the scene that keep state across frames. */
export function statefulNodes(scene: Scene): string[] {
  return scene.nodes.filter((n) => n.kernel.ports.some((p) => p.kind === 'state')).map((n) => n.name);
}

/**
 * Render `region` of one frame, handing its rows to `sink` in order (rows [y0, ...) of the whole
 * output); returns the region's size. A stateful scene renders only its frame 0 here: a later
 * frame is a StatefulSceneError (its state comes from every frame before it).
 */
export async function renderRegion(job: RegionJob, sink: RowsSink): Promise<{ width: number; height: number }> {
  const scene = sceneOfDocuments(job);
  const output = job.output ?? scene.outputs[0]?.name;
  if (!output) throw new TileError('the scene declares no output');
  const stateful = statefulNodes(scene);
  if (stateful.length && job.frame !== 0)
    throw new StatefulSceneError(`node \`${stateful[0]}\` keeps state across frames: frame ${job.frame} needs every frame before it, computed in order in one process; a stateful scene's frames cannot be split across jobs (render its tiles of each frame together, in order)`);
  await prepareModules(sceneGroups(scene, [], true).map((g) => g.ir));
  const memory = new FieldMemory(job.memory ?? defaultMemoryBudget());
  const workers = job.workers ?? 1;
  const pool = workers > 1 ? new EvalPool(memory.memory, { workers }) : undefined;
  let renderer: TiledRenderer | undefined;
  try {
    renderer = new TiledRenderer(scene, { output, memory, pool, prepared: true });
    for (const { name, value } of job.params ?? []) renderer.params.set(name, value);
    renderer.frame = job.frame;
    const region = job.region ?? { x0: 0, x1: renderer.width, y0: 0, y1: renderer.height };
    if (!(region.x0 >= 0 && region.y0 >= 0 && region.x1 <= renderer.width && region.y1 <= renderer.height && region.x0 < region.x1 && region.y0 < region.y1))
      throw new TileError(`region [${region.x0}, ${region.x1}) x [${region.y0}, ${region.y1}) is not inside the output's ${renderer.width} x ${renderer.height}`);
    const [tw, th] = renderer.tileSize(job.tile);
    await renderer.render(tw, th, { time: job.time }, sink, region);
    return { width: region.x1 - region.x0, height: region.y1 - region.y0 };
  } finally {
    renderer?.dispose();
    await pool?.destroy();
  }
}
