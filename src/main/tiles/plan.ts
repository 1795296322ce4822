// Which part of each group a tile needs (bounds inference over the groups' footprints).
//
// A tile is a rectangle of the output. Going back from the output's group, each group computes
// the rectangle its consumers read (src/ir/footprint.ts), its columns widened to whole vectors of
// 4 (kernels run 4 elements along x at once, aligned). Some groups are computed whole, once per
// frame, before any tile: those that keep state (the next state needs every element), those of
// a domain that is not 2-D, those a consumer reads where no footprint can be bounded (coordinates
// from data: a load, sample's f32 arithmetic), and every producer of a group computed whole.

import { footprint, type Box } from '../../ir/footprint.js';
import type { Group } from '../../ir/fuse.js';

/** Half-open rectangle: columns [x0, x1), rows [y0, y1). */
export interface Rect {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** What a group computes for one tile: its columns to run (x0 a multiple of 4; x1 one too, or the width) and rows. */
export interface Need extends Rect {
  /** Columns of the window its fields hold: [x0, lanes), a multiple of 4 wide (lanes past the width land in its padding). */
  lanes: number;
}

/** Why a group is computed whole, for people (docs, --json, errors). */
export type WholeReason = { kind: 'state' } | { kind: 'dims' } | { kind: 'unbounded'; consumer: string; port: string } | { kind: 'producer'; consumer: string };

const floor4 = (x: number) => x - (x % 4);
const ceil4 = (x: number) => Math.ceil(x / 4) * 4;

export class TilePlan {
  /** Per group: why it is computed whole, or undefined when it is tiled. */
  readonly whole: (WholeReason | undefined)[];
  /** Per group: whether the output needs it at all. */
  readonly needed: boolean[];
  readonly outputGroup: number;
  private readonly groupOf = new Map<string, number>();

  constructor(
    readonly groups: Group[],
    readonly outputNode: string,
    /** Each group's uniform values this frame (footprints depend on `in` values such as a radius). */
    private readonly uniforms: (gi: number) => number[],
  ) {
    groups.forEach((g, gi) => g.nodes.forEach((n) => this.groupOf.set(n.name, gi)));
    this.outputGroup = this.groupOf.get(outputNode)!;
    this.needed = groups.map(() => false);
    this.needed[this.outputGroup] = true;
    for (let gi = groups.length - 1; gi >= 0; gi--) if (this.needed[gi]) for (const p of this.producers(gi)) this.needed[p.group] = true;

    this.whole = groups.map((g) => {
      if (g.fields.some((b) => b.kind === 'state' || (b.kind === 'write' && b.state))) return { kind: 'state' } as const;
      if (g.domain.length !== 2) return { kind: 'dims' } as const;
      return undefined;
    });
    // Consumers come after their producers: one pass from the last group back settles it.
    for (let gi = groups.length - 1; gi >= 0; gi--) {
      if (!this.needed[gi]) continue;
      const g = groups[gi];
      const reads = this.whole[gi] ? undefined : footprint(g.ir, this.footprintInput(gi, { x0: 0, x1: g.domain[0], y0: 0, y1: g.domain[1] }));
      for (const p of this.producers(gi)) {
        if (this.whole[p.group]) continue;
        if (this.whole[gi]) this.whole[p.group] = { kind: 'producer', consumer: g.nodes[g.nodes.length - 1].name };
        else if (reads![p.field] === null) this.whole[p.group] = { kind: 'unbounded', consumer: g.nodes.find((n) => n.name === p.node)?.name ?? p.node, port: p.port };
      }
    }
  }

  /** Whether any group is tiled (otherwise tiles only split the output's rows as written). */
  get tiled(): boolean {
    return this.needed.some((n, gi) => n && !this.whole[gi]);
  }

  /** What each group computes for a tile of the output: undefined where nothing (computed whole, or not needed). */
  needs(tile: Rect): (Need | undefined)[] {
    const rects: (Rect | undefined)[] = this.groups.map(() => undefined);
    const out: (Need | undefined)[] = this.groups.map(() => undefined);
    if (!this.whole[this.outputGroup]) rects[this.outputGroup] = tile;
    for (let gi = this.groups.length - 1; gi >= 0; gi--) {
      const r = rects[gi];
      if (!r || this.whole[gi]) continue;
      const width = this.groups[gi].domain[0];
      const x0 = floor4(r.x0);
      const x1 = r.x1 >= width ? width : Math.min(width, ceil4(r.x1));
      const need: Need = { x0, x1, y0: r.y0, y1: r.y1, lanes: ceil4(x1) };
      out[gi] = need;
      const reads = footprint(this.groups[gi].ir, this.footprintInput(gi, { ...need, x1: need.lanes }));
      for (const p of this.producers(gi)) {
        if (this.whole[p.group]) continue;
        const box = reads[p.field];
        if (box === undefined) continue;
        if (box === null) throw new Error(`internal: an unbounded read of a tiled group (${p.node}.${p.port})`);
        rects[p.group] = union(rects[p.group], boxRect(box));
      }
    }
    return out;
  }

  /** The groups whose fields group gi reads: by field index, with the reading node's port. */
  private producers(gi: number): { group: number; field: number; node: string; port: string }[] {
    const out: { group: number; field: number; node: string; port: string }[] = [];
    this.groups[gi].fields.forEach((b, field) => {
      if (b.kind !== 'read' || !('node' in b.from)) return;
      const group = this.groupOf.get(b.from.node);
      if (group !== undefined && group !== gi) out.push({ group, field, node: b.node, port: b.port });
    });
    return out;
  }

  private footprintInput(gi: number, r: Rect) {
    const g = this.groups[gi];
    const extents = g.fields.map((b) => {
      if (b.kind === 'read' && 'node' in b.from) {
        const p = this.groupOf.get(b.from.node);
        if (p !== undefined) return this.groups[p].domain;
      }
      return g.domain;
    });
    return { region: [[r.x0, r.x1 - 1], [r.y0, r.y1 - 1]] as Box, domain: g.domain, fieldExtents: extents, uniforms: this.uniforms(gi) };
  }
}

function boxRect(b: Box): Rect {
  return { x0: b[0][0], x1: b[0][1] + 1, y0: b[1]?.[0] ?? 0, y1: (b[1]?.[1] ?? 0) + 1 };
}

function union(a: Rect | undefined, b: Rect): Rect {
  if (!a) return b;
  return { x0: Math.min(a.x0, b.x0), x1: Math.max(a.x1, b.x1), y0: Math.min(a.y0, b.y0), y1: Math.max(a.y1, b.y1) };
}

/** The tiles of a width x height output, row by row, each tw x th or smaller at the right and bottom edges. */
export function tilesOf(width: number, height: number, tw: number, th: number): Rect[][] {
  const rows: Rect[][] = [];
  for (let y0 = 0; y0 < height; y0 += th) {
    const row: Rect[] = [];
    for (let x0 = 0; x0 < width; x0 += tw) row.push({ x0, x1: Math.min(width, x0 + tw), y0, y1: Math.min(height, y0 + th) });
    rows.push(row);
  }
  return rows;
}
