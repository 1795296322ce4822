// Frame number patterns in file names, printf's way (as ffmpeg reads them): `%d`, `%4d` (padded
// with spaces), `%04d` (with zeros), and `%%` for a `%` itself (`100%%_%04d.png` names
// `100%_0001.png`). Render outputs, input sequences and the sweep of left-behind files all read
// names through here.

/** A frame number or an escaped `%`, in order. */
const TOKENS = /%%|%(0?)(\d*)d/g;

/** How many frame number patterns `name` has (an escaped `%%` is none). */
export function framePatternCount(name: string): number {
  return [...name.matchAll(TOKENS)].filter((m) => m[0] !== '%%').length;
}

/** `name` with each frame number pattern replaced by `by(pattern)` and each `%%` by `%`. */
export function replaceFramePatterns(name: string, by: (zero: boolean, width: number) => string): string {
  return name.replace(TOKENS, (whole: string, zero: string, width: string) => (whole === '%%' ? '%' : by(zero === '0', Number(width || 0))));
}

/** Put a frame number into a pattern: `%d`, `%04d`; `%%` is `%`. */
export function frameFile(pattern: string, frame: number): string {
  return replaceFramePatterns(pattern, (zero, width) => String(frame).padStart(width, zero ? '0' : ' '));
}

/** A regular expression's source for the names `pattern` gives any frame (its frame numbers as digits). */
export function frameNameSource(pattern: string): string {
  const DIGITS = '\u0000';
  return replaceFramePatterns(pattern, () => DIGITS)
    .split(DIGITS)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('\\s*\\d+');
}
