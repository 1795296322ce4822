// `render --input NAME=FILE`: images read into the scene's input fields before the frames that
// need them — one image once, or an image sequence (`in/%04d.png`) a file per frame, the next
// frame's file decoding while this frame evaluates.

import { existsSync } from 'node:fs';
import { closest } from '../ir/suggest.js';
import type { Scene } from '../ir/check/scene.js';
import type { Engine } from './engine.js';
import { decodeImage, imageFieldProblem, imageSize, InputImageError, storePicture, type Picture } from './image-input.js';
import { frameFile, framePatternCount } from './frame-pattern.js';
import { UserError } from './user-error.js';

/** A mistake in an --input: shown as its message. */
export class InputOptionError extends UserError {
  override name = 'UserError';
}

export interface InputOption {
  name: string;
  /** A file, or with a frame number pattern (%04d) one file per frame. */
  file: string;
  sequence: boolean;
}

export function parseInputOptions(texts: readonly (string | number)[] | undefined): InputOption[] {
  if (texts?.length === 0) throw new InputOptionError('--input names no input: give NAME=FILE, e.g. --input photo=photo.jpg, or leave --input out');
  return (texts ?? []).map((item) => {
    const text = String(item);
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.+)$/s.exec(text);
    if (!m) throw new InputOptionError(`--input takes NAME=FILE, e.g. --input photo=photo.jpg or --input photo=in/%04d.png; got \`${text}\``);
    return { name: m[1], file: m[2], sequence: framePatternCount(m[2]) > 0 };
  });
}

/** The size of each input's first image, for the inputs whose size follows their image. */
export async function inputImageSizes(inputs: InputOption[], firstFrame: number): Promise<Record<string, number[]>> {
  const sizes: Record<string, number[]> = {};
  for (const i of inputs) sizes[i.name] = await imageSize(i.sequence ? frameFile(i.file, firstFrame) : i.file);
  return sizes;
}

/**
 * Every file an image sequence needs for frames `first` to `last` is there: a missing one was
 * found only when its frame came, after the frames before it had been rendered and written.
 */
export function checkSequenceFiles(inputs: InputOption[], first: number, last: number): void {
  for (const i of inputs.filter((x) => x.sequence)) {
    for (let frame = first; frame <= last; frame++) {
      const file = frameFile(i.file, frame);
      if (!existsSync(file)) throw new InputOptionError(`--input ${i.name}=${i.file}: frame ${frame}'s image \`${file}\` is not there (the render's frames are ${first} to ${last}): add it, or render the frames the sequence has (--frames)`);
    }
  }
}

/** Each --input names an input the scene declares. */
export function checkInputOptions(scene: Pick<Scene, 'inputs'>, inputs: InputOption[], scenePath: string): void {
  const names = [...scene.inputs.keys()];
  for (const i of inputs) {
    if (scene.inputs.has(i.name)) continue;
    const near = closest(i.name, names);
    throw new InputOptionError(`--input ${i.name}=${i.file}: ${scenePath} declares no input \`${i.name}\`${near ? `; did you mean \`${near}\`?` : ''}; its inputs: ${names.join(', ') || 'none (declare one: `input photo: field2<vec4>;`)'}`);
  }
}

/** Fills the inputs before each frame; a sequence's next file is decoded while a frame evaluates. */
export class InputFeed {
  private readonly filled = new Set<string>();
  /** Decodes begun ahead, by input name: the frame and its picture (or its failure). */
  private readonly ahead = new Map<string, { frame: number; picture: Promise<Picture> }>();

  constructor(
    /** The engine, or a tiled render (tiles/renderer.ts): whatever holds the inputs' fields. */
    private readonly engine: Pick<Engine, 'fields' | 'memory' | 'version'>,
    private readonly inputs: InputOption[],
    /** The last frame: no file past it is read ahead. */
    private readonly last: number,
  ) {}

  /** Fill every input for `frame` (a still image only the first time). */
  async fill(frame: number): Promise<void> {
    for (const i of this.inputs) {
      if (!i.sequence && this.filled.has(i.name)) continue;
      const field = this.engine.fields.input(i.name)!;
      const problem = imageFieldProblem(i.name, field);
      if (problem) throw new InputImageError(`--input ${i.name}: ${problem}`);
      const early = this.ahead.get(i.name);
      this.ahead.delete(i.name);
      const picture = early?.frame === frame ? early.picture : this.decode(i, frame);
      if (i.sequence && frame < this.last) this.ahead.set(i.name, { frame: frame + 1, picture: this.decode(i, frame + 1) });
      storePicture(this.engine.memory, field, await picture);
      this.filled.add(i.name);
      this.engine.version++;
    }
  }

  private decode(i: InputOption, frame: number): Promise<Picture> {
    const field = this.engine.fields.input(i.name)!;
    const picture = decodeImage(i.sequence ? frameFile(i.file, frame) : i.file, { width: field.width, height: field.height });
    picture.catch(() => {}); // awaited when its frame comes; a render that stops first never asks
    return picture;
  }
}
