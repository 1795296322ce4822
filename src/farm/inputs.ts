// `render --input NAME=FILE --farm`: the images travel with the render, so workers need no shared
// filesystem. The submitter puts each file's bytes in Redis once, under a key of the render's own
// named by the bytes' digest (a still image once for every frame, a sequence a file per frame);
// each job names, per input, its frame's file and digest. A worker takes the bytes (kept by
// digest for the next jobs), decodes them as the local render does (image-input.ts) and fills the
// input before the frame evaluates.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { decodeImage, imageFieldProblem, InputImageError, storePicture, type Picture } from '../main/image-input.js';
import type { InputOption } from '../main/input-feed.js';
import type { Engine } from '../main/engine.js';
import { frameFile } from '../main/frame-pattern.js';
import { RESULT_SECONDS } from './jobs.js';

/** One input of one job: the file (as the user named it, for messages) and its bytes' digest. */
export interface JobInput {
  name: string;
  file: string;
  digest: string;
}

export const inputKey = (render: string, digest: string) => `entelechy:input:${render}:${digest}`;

/** The submitter's side: reads each frame's files and puts their bytes in Redis, each once. */
export class InputUploads {
  /** Files read, by path: their digest. */
  private readonly read = new Map<string, string>();

  constructor(
    private readonly connection: Redis,
    private readonly render: string,
    private readonly inputs: InputOption[],
  ) {}

  /** A frame's inputs, their files read and in Redis. A file that cannot be read is an InputImageError. */
  async forFrame(frame: number): Promise<JobInput[]> {
    const out: JobInput[] = [];
    for (const i of this.inputs) {
      const file = i.sequence ? frameFile(i.file, frame) : i.file;
      let digest = this.read.get(file);
      if (!digest) {
        digest = await this.put(file);
        this.read.set(file, digest);
      }
      out.push({ name: i.name, file, digest });
    }
    return out;
  }

  /** Put every file again (a Redis that restarted empty lost them). */
  async again(): Promise<void> {
    for (const file of this.read.keys()) await this.put(file);
  }

  async remove(): Promise<void> {
    const keys = [...new Set(this.read.values())].map((d) => inputKey(this.render, d));
    if (keys.length) await this.connection.del(...keys);
  }

  private async put(file: string): Promise<string> {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new InputImageError(`cannot read \`${file}\`: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder; name an image file (PNG or JPEG)' : (e as Error).message}`);
    }
    const digest = createHash('sha256').update(bytes).digest('hex');
    await this.connection.set(inputKey(this.render, digest), bytes, 'EX', RESULT_SECONDS);
    return digest;
  }
}

/** Pictures a worker decoded lately, by digest and size: a still input is decoded once per render. */
const KEPT = 4;

/** The worker's side: fills a job's inputs into an engine or a tiled renderer. */
export class InputFill {
  private readonly pictures = new Map<string, Promise<Picture>>();

  constructor(private readonly connection: Redis) {}

  async fill(target: Pick<Engine, 'fields' | 'memory' | 'version'>, render: string, inputs: JobInput[]): Promise<void> {
    for (const i of inputs) {
      const field = target.fields.input(i.name);
      if (!field) throw new InputImageError(`--input ${i.name}: the scene declares no input \`${i.name}\``);
      const problem = imageFieldProblem(i.name, field);
      if (problem) throw new InputImageError(`--input ${i.name}: ${problem}`);
      const key = `${i.digest}:${field.width}x${field.height}`;
      let picture = this.pictures.get(key);
      if (!picture) {
        picture = this.decode(render, i, field);
        this.pictures.set(key, picture);
        picture.catch(() => this.pictures.delete(key));
        while (this.pictures.size > KEPT) this.pictures.delete(this.pictures.keys().next().value!);
      }
      storePicture(target.memory, field, await picture);
      target.version++;
    }
  }

  private async decode(render: string, i: JobInput, size: { width: number; height: number }): Promise<Picture> {
    const bytes = await this.connection.getBuffer(inputKey(render, i.digest));
    // Gone with a Redis that restarted: an error that is retried (the submitter puts it back).
    if (!bytes) throw new Error(`input ${i.name}'s image ${i.file} is not in Redis (yet)`);
    return decodeImage({ bytes, name: i.file }, { width: size.width, height: size.height });
  }
}
