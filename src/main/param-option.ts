// `--param NAME=VALUE` on the command lines of render, serve, mcp and entelechy-player: read here,
// then checked by the rule the `param` operation uses (src/ir/check/params.ts), with its errors.

import { paramSetting } from '../ir/check/params.js';
import type { Scene } from '../ir/check/scene.js';
import { UserError } from './user-error.js';

/** A mistake in a --param: the commands show a UserError as its message, not a stack trace. */
export class ParamOptionError extends UserError {
  override name = 'UserError';
}

export interface ParamOption {
  text: string;
  name: string;
  /** A number (filling every component, as the `param` operation takes one), or the components. */
  value: unknown;
}

/** `NAME=VALUE`: a number, `true`/`false`, or components separated by commas (`1,0.5,0`). */
export function parseParamOptions(texts: readonly (string | number)[] | undefined): ParamOption[] {
  // `--param` alone was taken as no param at all.
  if (texts?.length === 0) throw new ParamOptionError('--param names no param: give NAME=VALUE, e.g. --param warmth=0.8, or leave --param out');
  return (texts ?? []).map((item) => {
    const text = String(item);
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/s.exec(text);
    if (!m || m[2].trim() === '') throw new ParamOptionError(`--param takes NAME=VALUE, e.g. --param warmth=0.8 or --param tint=1,0.5,0; got \`${text}\``);
    const parts = m[2].split(',').map((p) => {
      const s = p.trim();
      if (s === 'true' || s === 'false') return s === 'true' ? 1 : 0;
      // A piece that is not a decimal number is kept as written: the rule's error shows it (Number() took 0x1 and 0b1).
      return DECIMAL.test(s) ? Number(s) : s;
    });
    return { text, name: m[1], value: parts.length === 1 ? parts[0] : parts };
  });
}

/** A decimal number as JSON and the `param` operation write it (1, -0.5, 2e3, .5). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Each --param checked against the scene: its name and components, or the `param` operation's error. */
export function checkParamOptions(scene: Pick<Scene, 'params' | 'nodes'>, options: ParamOption[]): { name: string; value: number[] }[] {
  return options.map((o) => {
    const setting = paramSetting(scene, o.name, o.value);
    if (!setting.ok) throw new ParamOptionError(`--param ${o.text}: ${setting.message}`);
    return setting;
  });
}
