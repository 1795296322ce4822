// A render in tiles: one output of a scene, computed a rectangle at a time, its rows handed on in
// order (to a PNG file, or to whoever asked for a region), so neither the fields nor the picture
// are ever held whole.
//
// Per frame, the groups computed whole (state, 3-D domains, unbounded reads: plan.ts) run once
// over their whole domain into whole fields. Then each tile: every tiled group the tile needs
// runs over its rectangle (the run function's rows and columns) into fields that hold only that
// rectangle — a window whose base word is where element (0, 0) would be, so kernels address it
// with the same absolute x and y, and see the whole domain's width and height: a tiled render is
// the untiled one's bytes. The windows are freed after the tile.

import { instantiate } from '../../codegen/instantiate.js';
import { argsBytes, writeArgs, type FieldPlacement } from '../../codegen/layout.js';
import type { FieldBinding } from '../../ir/bindings.js';
import type { Scene } from '../../ir/check/scene.js';
import type { Group } from '../../ir/fuse.js';
import { components } from '../../ir/types.js';
import { unreachable } from '../../ir/unreachable.js';
import { bandRowsFor, DEFAULT_BAND_ROWS, type EvalPool } from '../../workers/pool.js';
import { MAX_MEMORY, mib, moreMemoryHint } from '../budget.js';
import { interpret } from '../../ir/interp.js';
import type { Backend } from '../engine.js';
import { groupFailure } from '../evaluation-error.js';
import { POOL_THRESHOLD } from '../group-runs.js';
import { sceneGroups } from '../scene-groups.js';
import { allocField, fieldBytes, placement, type Field } from '../field.js';
import { fieldRgbaRows } from '../image.js';
import { MemoryLimitError, type FieldMemory } from '../memory.js';
import { compileModule } from '../modules.js';
import { FieldSlots, ownedFields } from '../slots.js';
import { uniformValues, type FrameInput } from '../uniforms.js';
import { Cancelled, throwIfCancelled } from '../cancel.js';
import { tilesOf, TilePlan, type Need, type Rect } from './plan.js';
import { UserError } from '../user-error.js';

type Runner = (args: number, r0: number, r1: number) => void;

export class TileError extends UserError {
  override name = 'TileError';
}

export interface TiledOptions {
  /** The scene's output to render. */
  output: string;
  memory: FieldMemory;
  pool?: EvalPool;
  /** Every module was prepared beforehand (prepareModules). */
  prepared?: boolean;
  fuse?: boolean;
  /** The reference interpreter instead of compiled code (no pool). */
  backend?: Backend;
}

/** Where the rows go: rows [y0, y0 + rgba.length / (width * 4)) of the output, in order; the buffer is reused after. */
export type RowsSink = (rgba: Uint8Array, y0: number) => Promise<void> | void;

export class TiledRenderer {
  readonly groups: Group[];
  readonly plan: TilePlan;
  /** The inputs and the whole groups' fields (state ports' two buffers). */
  readonly fields = new FieldSlots();
  readonly params = new Map<string, number[]>();
  readonly width: number;
  readonly height: number;
  /** Frames evaluated: the `frame` the next one sees. */
  frame = 0;
  time = 0;
  /** Bumped by writes into inputs (InputFeed). */
  version = 0;
  readonly memory: FieldMemory;
  private readonly runners: Runner[];
  private readonly modules: { module: WebAssembly.Module; key: string }[];
  private readonly args: number[] = [];
  private readonly pool?: EvalPool;
  /** The signal of the frame being rendered (render's), for the pool's runs. */
  private signal?: AbortSignal;
  private readonly outputPort: { node: string; port: string };

  constructor(
    readonly scene: Scene,
    options: TiledOptions,
  ) {
    const out = scene.outputs.find((o) => o.name === options.output);
    if (!out) throw new TileError(`the scene has no output \`${options.output}\``);
    this.outputPort = { node: out.node, port: out.port };
    this.memory = options.memory;
    const interp = options.backend === 'interp';
    this.pool = interp ? undefined : options.pool;
    for (const [name, p] of scene.params) this.params.set(name, [...p.value]);
    this.groups = sceneGroups(scene, [], options.fuse ?? true);
    this.plan = new TilePlan(this.groups, out.node, (gi) => this.uniformsOf(gi, {}));
    const domain = this.groups[this.plan.outputGroup].domain;
    if (domain.length !== 2) throw new TileError(`output \`${options.output}\` is a ${domain.length}-D field: tiles cover 2-D pictures`);
    [this.width, this.height] = domain;
    const compiled = (gi: number) => this.plan.needed[gi] && !interp;
    this.modules = this.groups.map((g, gi) => (compiled(gi) ? compileModule(g.ir, { prepared: options.prepared ?? false }) : { module: undefined!, key: '' }));
    this.runners = this.groups.map((g, gi) =>
      compiled(gi) ? instantiate(this.modules[gi].module, this.memory.memory) : (args: number, r0: number, r1: number) => interpret(g.ir, this.memory.memory, args, r0, r1),
    );
    try {
      this.allocateWhole();
      for (const g of this.groups) this.args.push(this.memory.alloc(argsBytes(g.ir), 'an argument block'));
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  /** Bytes of the whole fields (inputs, state, groups computed whole). */
  get wholeBytes(): number {
    return [...new Set(this.fields.all())].reduce((n, f) => n + f.planeBytes * f.comps.length, 0);
  }

  /** Bytes the windows of one tile take (its largest, a tile away from the edges where it can be). */
  tileBytes(tw: number, th: number): number {
    const tx = Math.min(this.width - Math.min(tw, this.width), tw);
    const ty = Math.min(this.height - Math.min(th, this.height), th);
    const needs = this.plan.needs({ x0: tx, x1: Math.min(this.width, tx + tw), y0: ty, y1: Math.min(this.height, ty + th) });
    let bytes = 0;
    for (const [gi, need] of needs.entries()) {
      if (!need) continue;
      for (const { comps } of this.written(gi)) bytes += fieldBytes([need.lanes - need.x0, need.y1 - need.y0], comps.length);
    }
    return bytes;
  }

  /**
   * The tile size to use: `asked` (--tile) as it is, else full rows, as many as fit the memory
   * budget left after the whole fields (a quarter of it, for the allocator's sake, and at most
   * 128 MiB of picture rows at once).
   */
  tileSize(asked?: [number, number]): [number, number] {
    const free = this.memory.limitBytes - this.memory.allocatedBytes;
    if (asked) {
      const [tw, th] = [Math.min(asked[0], this.width), Math.min(asked[1], this.height)];
      const bytes = this.tileBytes(tw, th);
      if (bytes > free) throw new MemoryLimitError(`a ${tw} x ${th} tile of \`${this.scene.outputs.find((o) => o.node === this.outputPort.node)?.name}\` needs ${mib(bytes)} of fields, more than the ${mib(free)} the memory budget leaves: use smaller tiles (--tile)${moreMemoryHint(bytes + this.memory.allocatedBytes, 'render')}`);
      return [tw, th];
    }
    const rowsOfPicture = Math.max(1, Math.floor((128 << 20) / (this.width * 4)));
    let th = Math.min(this.height, rowsOfPicture);
    while (th > 1 && this.tileBytes(this.width, th) > free / 4) th = Math.floor(th / 2);
    if (this.tileBytes(this.width, th) > free) {
      let tw = this.width;
      while (tw > 4 && this.tileBytes(tw, th) > free / 4) tw = Math.ceil(tw / 8) * 4;
      if (this.tileBytes(tw, th) > free) throw new MemoryLimitError(`even a ${tw} x ${th} tile needs ${mib(this.tileBytes(tw, th))} of fields, more than the ${mib(free)} the memory budget leaves after the fields computed whole (${mib(this.wholeBytes)}): ${this.tileBytes(tw, th) + this.wholeBytes <= MAX_MEMORY ? 'give the render more memory (--memory)' : `use a smaller size (more memory cannot help: --memory gives at most ${mib(MAX_MEMORY)}, WebAssembly's limit)`}`);
      return [tw, th];
    }
    return [this.width, th];
  }

  /**
   * Evaluate one frame in tiles of tw x th and hand its rows to `sink` in order (each run of rows
   * a whole row of tiles). The clock and frame counter advance as the engine's do. `signal` stops
   * it between tiles (and a pool's run at once), rejecting with its Cancelled; the frame's state
   * is then partly made, so a stopped render is not resumed.
   */
  async render(tw: number, th: number, input: FrameInput, sink: RowsSink, region: Rect = { x0: 0, x1: this.width, y0: 0, y1: this.height }, signal?: AbortSignal): Promise<void> {
    this.signal = signal;
    if (input.time !== undefined) this.time = input.time;
    const uniforms = this.groups.map((_, gi) => this.uniformsOf(gi, input));
    // The groups computed whole, once, over their whole fields.
    for (const [gi, g] of this.groups.entries()) {
      if (!this.plan.needed[gi] || !this.plan.whole[gi]) continue;
      const [w, h = 1, d = 1] = g.domain;
      writeArgs(this.memory.memory, this.args[gi], g.ir, { width: w, height: h, depth: d }, g.fields.map((b) => placement(this.wholeField(b))), uniforms[gi]);
      await this.run(gi, 0, h * d, w);
    }
    const width = region.x1 - region.x0;
    let picture = new Uint8Array(0);
    for (const row of tilesOf(width, region.y1 - region.y0, tw, th)) {
      const rows = row[0].y1 - row[0].y0;
      if (picture.length !== width * rows * 4) picture = new Uint8Array(width * rows * 4);
      for (const t of row) {
        const tile = { x0: region.x0 + t.x0, x1: region.x0 + t.x1, y0: region.y0 + t.y0, y1: region.y0 + t.y1 };
        throwIfCancelled(signal);
        await this.renderTile(tile, uniforms, (rgba, x0) => {
          for (let y = 0; y < rows; y++) picture.set(rgba.subarray(y * (tile.x1 - tile.x0) * 4, (y + 1) * (tile.x1 - tile.x0) * 4), (y * width + x0 - region.x0) * 4);
        });
      }
      await sink(picture, region.y0 + row[0].y0);
      // A signal (SIGINT) is seen only when the event loop turns: once per row of tiles, it does.
      if (signal) await new Promise((resolve) => setImmediate(resolve));
    }
    throwIfCancelled(signal);
    this.fields.swapStates();
    this.frame++;
  }

  /** One tile: run what it needs into windows, hand on its output's rows, free the windows. */
  private async renderTile(tile: Rect, uniforms: number[][], take: (rgba: Uint8Array, x0: number) => void): Promise<void> {
    const needs = this.plan.needs(tile);
    const windows = new Map<string, Window>();
    try {
      for (const [gi, need] of needs.entries()) {
        if (!need) continue;
        for (const { node, port, comps } of this.written(gi)) windows.set(`${node}.${port}`, window(this.memory, need, comps, `\`${node}.${port}\` (a tile)`, this.groups[gi].domain));
      }
      for (const [gi, need] of needs.entries()) {
        if (!need) continue;
        const g = this.groups[gi];
        const places = g.fields.map((b) => this.placementFor(b, windows));
        writeArgs(this.memory.memory, this.args[gi], g.ir, { width: g.domain[0], height: g.domain[1], depth: 1 }, places, uniforms[gi], [need.x0, need.x1]);
        await this.run(gi, need.y0, need.y1, need.x1 - need.x0);
      }
      const { node, port } = this.outputPort;
      const shown = windows.get(`${node}.${port}`);
      // A state port shown is the state this frame computed (current once the frame ends).
      const whole = this.fields.state(node, port)?.next ?? this.fields.out(node, port)!;
      const field = shown ? viewOf(shown, tile) : wholeView(whole, tile);
      take(fieldRgbaRows(this.memory, field, port)(0, tile.y1 - tile.y0), tile.x0);
    } finally {
      for (const w of windows.values()) this.memory.release(w.field.ptr);
    }
  }

  /** Rows [r0, r1) of group gi, `columns` wide: on the pool when large, else here in bands. */
  private async run(gi: number, r0: number, r1: number, columns: number): Promise<void> {
    try {
      if (this.pool && (r1 - r0) * columns >= POOL_THRESHOLD) {
        // The pool keeps instances by the module's key: its IR's digest and its tier (modules.ts).
        const { module, key } = this.modules[gi];
        await this.pool.run(module, key, this.args[gi], r1 - r0, bandRowsFor(r1 - r0), this.signal, r0);
        return;
      }
      // In bands, as the engine runs a large domain: V8 moves to optimised code only at a call.
      for (let r = r0; r < r1; r += DEFAULT_BAND_ROWS) this.runners[gi](this.args[gi], r, Math.min(r1, r + DEFAULT_BAND_ROWS));
    } catch (e) {
      if (e instanceof Cancelled) throw e;
      throw groupFailure(this.groups[gi], this.modules[gi].module, e);
    }
  }

  private uniformsOf(gi: number, input: FrameInput): number[] {
    return uniformValues(this.groups[gi], { time: input.time ?? this.time, frame: this.frame, params: this.params, input });
  }

  /** The fields group gi writes (its out ports, and the next state of its state ports). */
  private written(gi: number): { node: string; port: string; comps: ReturnType<typeof components> }[] {
    const g = this.groups[gi];
    return g.fields
      .filter((b): b is Extract<FieldBinding, { kind: 'write' }> => b.kind === 'write')
      .map((b) => ({ node: b.node, port: b.port, comps: components(g.nodes.find((n) => n.name === b.node)!.kernel.ports.find((p) => p.name === b.port)!.type) }));
  }

  private placementFor(b: FieldBinding, windows: Map<string, Window>): FieldPlacement {
    const key = b.kind === 'read' ? ('node' in b.from ? `${b.from.node}.${b.from.port}` : '') : `${b.node}.${b.port}`;
    const w = b.kind !== 'state' && key ? windows.get(key) : undefined;
    return w ? w.placement : placement(this.wholeField(b));
  }

  /** The whole field a binding reads or writes (inputs, state, groups computed whole). */
  private wholeField(b: FieldBinding): Field {
    const f = this.fields.bound(b);
    if (!f) throw new Error(`internal: no whole field for ${b.kind} binding of \`${b.node}.${b.port}\``);
    return f;
  }

  private allocateWhole(): void {
    const m = this.memory;
    const whole = this.groups.filter((_, gi) => this.plan.needed[gi] && this.plan.whole[gi]);
    const needs: { what: string; bytes: number; size: number[] }[] = [];
    for (const input of this.scene.inputs.values()) needs.push({ what: `input \`${input.name}\``, size: input.size, bytes: fieldBytes(input.size, components(input.type).length) });
    for (const g of whole) {
      const why = wholeWhy(this.plan.whole[this.groups.indexOf(g)]!);
      for (const o of ownedFields(g)) {
        const bytes = fieldBytes(o.domain, o.comps.length);
        needs.push({ what: `\`${o.node}.${o.port}\` of node \`${o.node}\` (${why})`, size: o.domain, bytes: o.state ? 2 * bytes : bytes });
      }
    }
    const total = needs.reduce((n, x) => n + x.bytes, 0);
    const free = m.limitBytes - m.allocatedBytes;
    if (total > free) {
      const largest = needs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
      throw new MemoryLimitError(`in tiles, the fields computed whole need ${mib(total)}, more than the memory budget of ${mib(m.limitBytes)}: ${largest.what}, ${largest.size.join(' x ')}, alone needs ${mib(largest.bytes)}. Use a smaller size${moreMemoryHint(total, 'render')}`);
    }
    this.fields.allocate(m, this.scene.inputs.values(), whole, (size, comps, what) => allocField(m, size, comps, what));
  }

  dispose(): void {
    for (const f of new Set(this.fields.all())) this.memory.release(f.ptr);
    for (const a of this.args) this.memory.release(a);
    this.fields.clear();
    this.args.length = 0;
  }
}

/** Why a group is computed whole, in words. */
export function wholeWhy(r: NonNullable<TilePlan['whole'][number]>): string {
  switch (r.kind) {
    case 'state':
      return 'it keeps state across frames, so every element is computed each frame';
    case 'dims':
      return 'its domain is not 2-D';
    case 'unbounded':
      return `\`${r.consumer}.${r.port}\` reads it where no bound is known (coordinates from data)`;
    case 'producer':
      return `\`${r.consumer}\`, computed whole, reads it`;
    default:
      return unreachable(r, 'a reason');
  }
}

/** A field holding a window of a tiled group's field: its own memory, and the placement kernels address it through. */
interface Window {
  field: Field;
  need: Need;
  placement: FieldPlacement;
}

function window(memory: FieldMemory, need: Need, comps: ReturnType<typeof components>, what: string, domain: number[]): Window {
  const field = allocField(memory, [need.lanes - need.x0, need.y1 - need.y0], comps, what);
  // The base is where element (0, 0) of the whole field would be: below the window by its offset
  // (modulo 2^32, as the kernels' i32 address sums wrap), so absolute x and y address the window.
  const base = (field.ptr - (need.y0 * field.stride + need.x0) * 4) | 0;
  return { field, need, placement: { base, width: domain[0], height: domain[1], depth: 1, stride: field.stride, planeBytes: field.planeBytes, window: true } };
}

/** The tile's rectangle of a window, as a field of its own (for reading its rows out). */
function viewOf(w: Window, tile: Rect): Field {
  return { ...w.field, ptr: w.field.ptr + ((tile.y0 - w.need.y0) * w.field.stride + (tile.x0 - w.need.x0)) * 4, width: tile.x1 - tile.x0, height: tile.y1 - tile.y0 };
}

function wholeView(f: Field, tile: Rect): Field {
  return { ...f, ptr: f.ptr + (tile.y0 * f.stride + tile.x0) * 4, width: tile.x1 - tile.x0, height: tile.y1 - tile.y0 };
}
