// An image dropped on the Player's page fills a scene `input`, as `write` with `file` does (and
// `render --input`): decoded by sharp, its sRGB bytes turned to linear values, resized to the
// field. It needs the grant `write` needs (field.write).

import { needGrant } from '../main/grants.js';
import { ProtocolError } from '../protocol/envelope.js';
import { decodeImageFor, InputImageError, storePicture, type Picture } from '../main/image-input.js';
import type { Session } from '../main/session.js';

/** The largest image a page may send (its base64 must fit in one WebSocket message, 16 MiB). */
export const MAX_DROP_BYTES = 12 * 1024 * 1024;

export interface Dropped {
  /** The input named by the page (its "drop into" choice), if any. */
  input?: string;
  /** The file's name, as the person's system gave it. */
  name: string;
  bytes: Uint8Array;
}

/**
 * Which input takes a dropped image: the one named, or the scene's only input. With several and
 * none named the drop is refused, naming them (the page then asks the person to choose).
 */
export function dropTarget(s: Session, input: string | undefined): string {
  const inputs = [...s.scene.inputs.keys()];
  if (input !== undefined && input !== '') {
    if (!s.scene.inputs.has(input)) throw new ProtocolError(`no input \`${input}\` to drop an image into; the inputs: ${inputs.join(', ') || 'none'}`, { field: 'input' });
    return input;
  }
  if (inputs.length === 1) return inputs[0]!;
  if (!inputs.length) throw new ProtocolError('this scene has no input to drop an image into: declare one, like `input photo: field2<vec4>;`, and save', { field: 'input' });
  throw new ProtocolError(`this scene has ${inputs.length} inputs (${inputs.join(', ')}): choose the one that takes the image under "drop into", then drop it again`, { field: 'input', expected: inputs.join(' | ') });
}

/** Fill the input with the dropped image; returns the input's name and size. */
export async function dropImage(s: Session, d: Dropped): Promise<{ input: string; width: number; height: number }> {
  const name = dropTarget(s, d.input);
  needGrant(s, 'field.write', `dropping an image into input \`${name}\``, { input: name });
  if (d.bytes.length > MAX_DROP_BYTES) throw new ProtocolError(`\`${d.name}\` is ${(d.bytes.length / 2 ** 20).toFixed(1)} MiB; the Player takes images up to ${MAX_DROP_BYTES / 2 ** 20} MiB: make it smaller, or put it in the scene's folder and \`write\` it with \`file\``);
  // A value change (main/commit.ts): the image is decoded before anything is stored.
  let size = { width: 0, height: 0 };
  await s.commit({
    reason: 'write',
    prepare: async (w) => {
      const field = w.engine.fields.input(name)!;
      let picture: Picture;
      try {
        picture = await decodeImageFor(field, name, { bytes: d.bytes, name: d.name });
      } catch (e) {
        if (e instanceof InputImageError) throw new ProtocolError(e.message);
        throw e;
      }
      size = { width: field.width, height: field.height };
      return (engine) => {
        storePicture(s.memory, field, picture);
        engine.version++;
        return [];
      };
    },
  });
  // Agents are told on their next `sync`, as of any write.
  s.pending.push({ kind: 'wrote', field: `input:${name}`, dropped: d.name });
  return { input: name, ...size };
}
