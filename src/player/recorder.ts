// Recording what the Player shows: the frames the window makes, piped to ffmpeg as they come
// (src/main/video.ts), into a video under the scene's folder (recordings/).
//
// The window makes frames at the display's rate, or slower when a frame takes longer; the world's
// clock follows the wall clock. The video follows the world's clock: a frame is written as many
// times as the video's frames its time covers (none, once, or several), so the recording plays at
// the speed the person saw. Paused time does not advance the clock: a pause is cut out.


import { dirname } from 'node:path';
import { requireFfmpeg, VideoFile } from '../main/video.js';
import { makeFolders, type SceneFolder } from '../main/files.js';
import type { FileKind } from '../main/documents.js';

const RECORDING: FileKind = { noun: 'recording', like: 'recordings/take.mp4' };

/** The video's frame rate. */
export const RECORDING_FPS = 30;

/** Frames waiting for ffmpeg past which a new one is dropped (ffmpeg is behind: the video stutters). */
const MAX_WAITING = 8;

export interface RecordingSummary {
  /** The video's path relative to the scene's folder, and in full. */
  file: string;
  path: string;
  source: string;
  frames: number;
  width: number;
  height: number;
}

export class Recorder {
  /** Frames written (each copy counts). */
  frames = 0;
  private readonly video: VideoFile;
  private startTime?: number;
  private waiting = 0;
  private chain: Promise<void> = Promise.resolve();
  private failure?: Error;

  private constructor(
    private readonly folder: SceneFolder,
    readonly path: string,
    /** What is recorded: an output's name, or `node.port`. */
    readonly source: string,
    readonly width: number,
    readonly height: number,
  ) {
    this.video = new VideoFile(path, { width, height, fps: RECORDING_FPS });
  }

  /**
   * Start a recording of `source` (width x height) into the folder's recordings/NAME-DATE.mp4:
   * refused (PathError) where `recordings` is a link that leads out of the folder, as every write.
   */
  static start(folder: SceneFolder, name: string, source: string, width: number, height: number): Recorder {
    requireFfmpeg();
    const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/-\d\dZ$/, 'Z');
    const safe = `${name}-${source}`.replace(/[^A-Za-z0-9_.-]+/g, '_');
    const path = folder.resolve(`recordings/${safe}-${stamp}.mp4`, RECORDING);
    makeFolders(dirname(path));
    return new Recorder(folder, path, source, width, height);
  }

  /** The file as the scene's folder names it. */
  get file(): string {
    return this.folder.relative(this.path);
  }

  /** Why the recording cannot go on (ffmpeg failed), if it cannot. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** One frame the window made, at world time `time`. */
  add(rgba: Uint8Array, time: number): void {
    if (this.failure) return;
    this.startTime ??= time;
    const due = Math.floor((time - this.startTime) * RECORDING_FPS) + 1;
    const copies = Math.min(due - this.frames, RECORDING_FPS); // a long stall is at most a second
    if (copies <= 0 || this.waiting >= MAX_WAITING) return;
    this.frames += copies;
    this.waiting++;
    // The window reuses nothing of `rgba`, but copy: the frames are written after this returns.
    const frame = rgba.slice();
    this.chain = this.chain.then(async () => {
      try {
        for (let i = 0; i < copies && !this.failure; i++) await this.video.write(frame);
      } catch (e) {
        this.failure = e as Error;
      } finally {
        this.waiting--;
      }
    });
  }

  /** Finish the video; it takes its name only now (no half-written file). */
  async stop(): Promise<RecordingSummary> {
    await this.chain;
    if (this.failure) {
      await this.video.abort();
      throw this.failure;
    }
    if (this.frames === 0) {
      await this.video.abort();
      throw new Error('nothing was recorded (no frame was made while recording: was the world paused?)');
    }
    await this.video.close();
    return { file: this.file, path: this.path, source: this.source, frames: this.frames, width: this.width, height: this.height };
  }

  /** Stop and keep nothing (the Player closes). */
  async abort(): Promise<void> {
    await this.chain;
    await this.video.abort();
  }
}
