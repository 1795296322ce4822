// Printing what the compiler made after a pass: `ENTELECHY_DUMP=after:PASS` (several: after:fuse,after:emit)
// writes it to stderr wherever the pass runs (render, serve, the compile worker); `entelechy check
// --dump PASS` to stdout. The passes, in order, are the compiler's table of contents
// (src/codegen/compile.ts, docs/architecture.md).

/** The compiler's passes, in the order they run. */
export const PASSES = ['lower', 'fuse', 'unroll', 'interleave', 'interior', 'plan', 'lockstep', 'uses', 'emit', 'optimise'] as const;
export type PassName = (typeof PASSES)[number];

/** Where a pass's text goes; undefined: nowhere. */
export type DumpSink = (pass: PassName, text: string) => void;

/** Set by `entelechy check --dump`; else ENTELECHY_DUMP decides, and dumps go to stderr. */
let chosen: { passes: Set<PassName>; to: DumpSink } | undefined;
let warned = false;
/** What each pass printed last: an engine and the session ask for the same groups twice. */
const last = new Map<PassName, string>();

/** Send the dumps of `passes` to `to`, or (undefined) go back to ENTELECHY_DUMP's choice. */
export function dumpTo(passes: PassName[] | undefined, to?: DumpSink): void {
  chosen = passes && to ? { passes: new Set(passes), to } : undefined;
  last.clear();
}

let parsed: { value: string | undefined; asked: Set<PassName> } | undefined;

/** The passes ENTELECHY_DUMP asks for; an unknown one is named once on stderr and skipped. */
export function passesAsked(value = process.env.ENTELECHY_DUMP): Set<PassName> {
  if (parsed && parsed.value === value) return parsed.asked;
  const asked = new Set<PassName>();
  parsed = { value, asked };
  for (const item of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const name = item.replace(/^after:/, '');
    if ((PASSES as readonly string[]).includes(name) && item.startsWith('after:')) asked.add(name as PassName);
    else if (!warned) {
      warned = true;
      const what = item.startsWith('after:') ? `there is no pass \`${name}\`` : `\`${item}\` is not after:PASS`;
      process.stderr.write(`ENTELECHY_DUMP: ${what}; the passes: ${PASSES.join(', ')} (e.g. ENTELECHY_DUMP=after:fuse)\n`);
    }
  }
  return asked;
}

/** Print `text()` after `pass` if that pass is asked for (computed only then). */
export function dumpAfter(pass: PassName, text: () => string): void {
  if (!dumping(pass)) return;
  const to = chosen?.to ?? stderrSink;
  const t = text();
  if (last.get(pass) === t) return;
  last.set(pass, t);
  to(pass, t);
}

/** Whether a pass's dump is wanted (for passes whose text costs something to make). */
export function dumping(pass: PassName): boolean {
  return chosen ? chosen.passes.has(pass) : passesAsked().has(pass);
}

const stderrSink: DumpSink = (pass, text) => process.stderr.write(`;; after ${pass}\n${text}\n`);
