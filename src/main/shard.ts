// `render --shard I/N`: one of N processes of a cluster job renders its share of a frame range,
// and a frame already written whole is not rendered again, so a re-run resumes.
//
// Shares are contiguous runs of frames, not every Nth frame: a stateful scene's shard must run
// every frame from 0 up to its own last (the state is made frame by frame), and a contiguous
// share keeps that to the frames before its end.

import { fstatSync, readFileSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { readingFile } from './files.js';
import { UserError } from './user-error.js';

export class ShardError extends UserError {
  override name = 'ShardError';
}

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

/**
 * `I/N` (0 <= I < N), `auto/N` (I from the scheduler's environment) or `auto` (both from it).
 * Kubernetes' Indexed Job sets JOB_COMPLETION_INDEX (0-based; the count is the Job's
 * `completions`, not in the environment); a Slurm array sets SLURM_ARRAY_TASK_ID, counted from
 * SLURM_ARRAY_TASK_MIN, and SLURM_ARRAY_TASK_COUNT.
 */
export function parseShard(text: string, env: NodeJS.ProcessEnv = process.env): Shard {
  const m = /^\s*(auto|\d+)\s*(?:\/\s*(\d+))?\s*$/.exec(text);
  if (!m || (m[1] !== 'auto' && m[2] === undefined))
    throw new ShardError(`--shard takes INDEX/COUNT (from 0, e.g. 0/4), auto/COUNT (the index from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID) or auto (a Slurm array: both from its environment); got \`${text}\``);
  let count: number;
  if (m[2] !== undefined) count = Number(m[2]);
  else if (env.SLURM_ARRAY_TASK_COUNT !== undefined) count = whole(env.SLURM_ARRAY_TASK_COUNT, 'SLURM_ARRAY_TASK_COUNT');
  else if (env.JOB_COMPLETION_INDEX !== undefined) throw new ShardError('--shard auto: a Kubernetes Indexed Job does not put its count in the environment: give --shard auto/N, N the Job\'s `completions`');
  else throw new ShardError('--shard auto: SLURM_ARRAY_TASK_COUNT is not set (not in a Slurm array?): give --shard INDEX/COUNT');
  if (!(count >= 1)) throw new ShardError(`--shard ${text}: the count must be at least 1`);
  let index: number;
  if (m[1] !== 'auto') index = Number(m[1]);
  else if (env.JOB_COMPLETION_INDEX !== undefined) index = whole(env.JOB_COMPLETION_INDEX, 'JOB_COMPLETION_INDEX');
  else if (env.SLURM_ARRAY_TASK_ID !== undefined) index = whole(env.SLURM_ARRAY_TASK_ID, 'SLURM_ARRAY_TASK_ID') - (env.SLURM_ARRAY_TASK_MIN !== undefined ? whole(env.SLURM_ARRAY_TASK_MIN, 'SLURM_ARRAY_TASK_MIN') : 0);
  else throw new ShardError(`--shard ${text}: neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (a Slurm array) is set: give the index, e.g. --shard 0/${count}`);
  if (index >= count) throw new ShardError(`--shard: index ${index} is not below the count ${count} (indexes run from 0 to ${count - 1})`);
  return { index, count };
}

function whole(text: string, name: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new ShardError(`--shard auto: ${name} is \`${text}\`, not a whole number`);
  return Number(text);
}

/** Shard's frames of first..last (inclusive): the index-th of count nearly equal runs; empty when last < first. */
export function shardFrames(frames: { first: number; last: number }, shard: Shard): { first: number; last: number } {
  const n = frames.last - frames.first + 1;
  return { first: frames.first + Math.floor((shard.index * n) / shard.count), last: frames.first + Math.floor(((shard.index + 1) * n) / shard.count) - 1 };
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The IEND chunk, the last 12 bytes of every PNG: length 0, type, CRC. */
const IEND = Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);

/**
 * Whether `file` is a whole PNG of width x height: its signature, its header's size, every chunk
 * whole with its CRC right, and the end chunk last. Outputs are written through a temporary file
 * and a rename, so a frame cut short leaves no file; this also turns away a file of another size
 * (another --size), someone else's, and one damaged since (bytes changed in its image data, which
 * a resume had kept as done).
 */
export function isCompletePng(file: string, width: number, height: number): boolean {
  return (
    readingFile(file, (fd) => {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return false; // a folder there: reading it fails (EISDIR), writing it is refused later in words
      const size = stat.size;
      if (size < 8 + 25 + 12) return false;
      const head = Buffer.alloc(24);
      const tail = Buffer.alloc(12);
      readSync(fd, head, 0, 24, 0);
      readSync(fd, tail, 0, 12, size - 12);
      if (!(head.subarray(0, 8).equals(SIGNATURE) && head.toString('latin1', 12, 16) === 'IHDR' && head.readUInt32BE(16) === width && head.readUInt32BE(20) === height && tail.equals(IEND))) return false;
      return chunksWhole(readFileSync(fd));
    }) ?? false
  );
}

/** Every chunk of a PNG's bytes has the length it says and a right CRC, and IEND ends the bytes. */
function chunksWhole(png: Buffer): boolean {
  let at = 8;
  while (at + 12 <= png.length) {
    const length = png.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > png.length) return false;
    if (crc32(png.subarray(at + 4, at + 8 + length)) !== png.readUInt32BE(at + 8 + length)) return false;
    if (png.toString('latin1', at + 4, at + 8) === 'IEND') return end === png.length;
    at = end;
  }
  return false;
}
