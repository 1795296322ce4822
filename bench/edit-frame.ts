// Edit to first frame (issue 17: <= 50 ms median for every corpus kernel): a compose of the
// scene's last kernel, then the evaluate that shows it, through `dispatch` on a session with a
// warm compile worker. Two kinds of edit: a literal nudged (the commonest live edit, which the
// fast tier takes as data and runs on the module already there: src/ir/literals.ts), and a change
// of the code's shape (a term added: its module is compiled). Each edit is split into its parts,
// so the report shows where the time goes:
//
//   compile   the change's modules on the compile worker (the `published` event's compile_ms)
//   commit    the rest of compose: parse, check, build the new engine, write the document, swap
//   frame     the frame itself on the fast tier (the evaluate answer's timings, every group)
//   around    the rest of evaluate: dispatch, the frame slot, the argument blocks, the answer
//
// and, for comparison, the same scene's frames after it: the next one still on the fast tier
// (V8 has optimised the module's code by then), and the first and a later frame once the
// optimised tier is swapped in. Each edit starts once the last one's optimised compile is done:
// a person's edits are seconds apart, so an edit does not wait behind the one before.
//
// The edits start once the session has warmed up (main/warm-up.ts: its compile worker and its
// coordinator, in the quiet after opening), as the issue's target reads ("warm compile worker"), and
// as a person finds it who looks at a scene for a second or two before the first keystroke.

import { loadavg } from 'node:os';
import { rmSync } from 'node:fs';
import type { Scene } from '../src/ir/check/scene.js';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { copyCorpusScene, type CorpusScene } from './corpus-scenes.js';
import { median } from './reference/measurement.js';
import { textTable } from './table.js';

/** One scene's edits: medians of each part (milliseconds). */
export interface EditToFrame {
  measurement: 'edit_to_frame';
  scene: string;
  /** What each edit changed: a literal's value, or the code's shape. */
  edit: EditKind;
  /** Compose to the frame's answer. */
  median_ms: number;
  max_ms: number;
  samples: number;
  /** The tiers the frame after the edit ran (a `fast` group was swapped in before `optimised` came). */
  tiers: string[];
  compile_ms: number;
  commit_ms: number;
  /** The frame after the edit (every group; the unchanged ones may run optimised modules already). */
  frame_ms: number;
  around_ms: number;
  /** The next frame, still on the fast tier (median of the edits where the swap had not come yet; NaN if it always had). */
  fast_next_ms: number;
  /** The first frame on the optimised tier, and the one after it. */
  optimised_first_ms: number;
  optimised_next_ms: number;
  /** CPU time of the whole process (every thread: the coordinator, the compile workers, the pool) from compose to the frame's answer. */
  cpu_ms: number;
  /** The 1-minute load average before and after. */
  load: [number, number];
  /** Milliseconds the session's warm-ups took to end after its first frame (NaN: not within WARM_WAIT_MS). */
  warm_wait_ms: number;
}

/** The longest the edits wait for the session to warm up. */
const WARM_WAIT_MS = 10_000;

/** Wait until the session's warm-ups have ended (or never started); milliseconds waited, NaN past `ms`. */
export async function warmedUp(session: Session, ms = WARM_WAIT_MS): Promise<number> {
  const start = performance.now();
  for (;;) {
    const { coordinator, compiler } = await session.warmth();
    if ((!coordinator || coordinator.done) && (!compiler || compiler.done)) return performance.now() - start;
    if (performance.now() - start > ms) return NaN;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A literal's value changed, or the code's shape. */
export type EditKind = 'literal' | 'shape';

/**
 * The scene's last kernel with its first decimal literal nudged by `i` (1.5 -> 1.5001, 1.5002,
 * ...: a real change of its IR), or (`shape`) that literal with `i + 1` terms added that change
 * nothing but the code (1.5 -> (1.5 + x * 0.0 + x * 0.0), x the first coordinate): each edit's
 * shape differs from every other's.
 */
export function editedKernel(scene: Scene, i: number, kind: EditKind = 'literal'): { id: string; text: string } | undefined {
  const kernels = [...scene.kernels.values()].filter((k) => !k.path.startsWith('('));
  for (const k of kernels.reverse()) {
    const doc = scene.documents.find((d) => d.path === k.path)!;
    const text = doc.text.slice(k.statement.span.start, k.statement.span.end);
    const each = text.indexOf('each');
    const m = /\b(\d+)\.(\d+)\b/.exec(text.slice(each));
    if (each < 0 || !m) continue;
    const at = each + m.index;
    const coord = /^each\s*\(\s*(\w+)/.exec(text.slice(each))?.[1];
    if (kind === 'shape' && !coord) continue;
    const nudged = kind === 'literal' ? `${m[1]}.${m[2]}${String(i + 1).padStart(3, '0')}` : `(${m[0]}${` + ${coord} * 0.0`.repeat(i + 1)})`;
    return { id: k.id, text: text.slice(0, at) + nudged + text.slice(at + m[0].length) };
  }
  return undefined;
}

type Answer = { [k: string]: any };

/** The milliseconds of a frame's groups, and whether any ran a fast module (a node reused ran nothing: reuse.ts). */
/** A frame's time on the modules it ran; `ran` false when every node was kept (a scene that reads no clock, frames after the edit's). */
function frameOf(answer: Answer): { ms: number; fast: boolean; ran: boolean } {
  const timings = answer.timings as { millis: number }[];
  return { ms: timings.reduce((n, t) => n + t.millis, 0), fast: (answer.placements as { tier?: string; reused?: boolean }[]).some((p) => p.tier === 'fast' && !p.reused), ran: timings.length > 0 };
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

export async function editToFrame(c: CorpusScene, edits: number, kind: EditKind = 'literal'): Promise<EditToFrame | undefined> {
  const { entry, dir, scene: source } = copyCorpusScene(c, 'entelechy-bench-edit-');
  const session = await Session.open(entry, { workers: 2, cacheDir: null });
  const load0 = loadavg()[0];
  try {
    await session.compiler?.ready;
    const ask = async (req: object): Promise<Answer> => {
      const answer = JSON.parse(await dispatch(session, JSON.stringify(req)));
      if (!answer.ok) throw new Error(`bench ${c.name}: ${JSON.stringify(req).slice(0, 60)}: ${answer.error?.message}`);
      return answer.ok;
    };
    let time = 0.5;
    await ask({ op: 'evaluate', time });
    await session.optimiser?.idle();
    const warmWait = await warmedUp(session);
    const parts = { total: [] as number[], compile: [] as number[], commit: [] as number[], frame: [] as number[], around: [] as number[], fastNext: [] as number[], optimisedFirst: [] as number[], optimisedNext: [] as number[], cpu: [] as number[] };
    const tiers = new Set<string>();
    for (let i = 0; i < edits; i++) {
      await session.optimiser?.idle();
      // From the scene as it was, so each edit's literal differs from every other's (nudging the
      // running text again gave 2.0001002003..., past f32's digits: the same IR, a cached module).
      const edit = editedKernel(source, i, kind);
      if (!edit) return undefined;
      const cpu = process.cpuUsage();
      const s = performance.now();
      const composed = await ask({ op: 'compose', edits: [{ kernel: edit.id, text: edit.text }] });
      const e = performance.now();
      const frame = await ask({ op: 'evaluate', time: (time += 1) });
      const total = performance.now() - s;
      parts.cpu.push(cpuMs(process.cpuUsage(cpu)));
      parts.total.push(total);
      const compile = (composed.events as Answer[]).find((ev) => ev.kind === 'published' && typeof ev.compile_ms === 'number')?.compile_ms ?? NaN;
      parts.compile.push(compile);
      parts.commit.push(e - s - compile);
      const { ms } = frameOf(frame);
      parts.frame.push(ms);
      parts.around.push(total - (e - s) - ms);
      for (const p of frame.placements ?? []) if (p.tier && !p.reused) tiers.add(p.tier);
      // The next frame: on the fast tier still, unless the optimised one came first.
      const next = frameOf(await ask({ op: 'evaluate', time: (time += 1) }));
      if (next.ran && next.fast) parts.fastNext.push(next.ms);
      await session.optimiser?.idle();
      const first = frameOf(await ask({ op: 'evaluate', time: (time += 1) }));
      const later = frameOf(await ask({ op: 'evaluate', time: (time += 1) }));
      if (first.ran && !first.fast) parts.optimisedFirst.push(first.ms);
      if (later.ran && !later.fast) parts.optimisedNext.push(later.ms);
    }
    const med = (xs: number[]) => (xs.length ? median(xs) : NaN);
    return {
      measurement: 'edit_to_frame', scene: c.name, edit: kind, median_ms: med(parts.total), max_ms: Math.max(...parts.total), samples: parts.total.length, tiers: [...tiers],
      compile_ms: med(parts.compile), commit_ms: med(parts.commit), frame_ms: med(parts.frame), around_ms: med(parts.around), fast_next_ms: med(parts.fastNext),
      optimised_first_ms: med(parts.optimisedFirst), optimised_next_ms: med(parts.optimisedNext), cpu_ms: med(parts.cpu), load: [load0, loadavg()[0]], warm_wait_ms: warmWait,
    };
  } finally {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The parts of edit to frame, a row per scene. */
export function editTable(ms: EditToFrame[]): string {
  const f = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));
  const rows = [['scene', 'edit', 'edit to frame ms (median / max)', 'compile', 'commit', 'frame (fast)', 'around', 'next frame (fast)', 'first frame (optimised)', 'next (optimised)', 'cpu ms', 'warm-up ms', 'load']];
  for (const m of ms)
    rows.push([m.scene, m.edit, `${f(m.median_ms)} / ${f(m.max_ms)} (${m.tiers.join(', ')})`, f(m.compile_ms), f(m.commit_ms), f(m.frame_ms), f(m.around_ms), f(m.fast_next_ms), f(m.optimised_first_ms), f(m.optimised_next_ms), f(m.cpu_ms), Number.isNaN(m.warm_wait_ms) ? 'not done' : f(m.warm_wait_ms), m.load.map((l) => l.toFixed(1)).join('-')]);
  return textTable(rows);
}
