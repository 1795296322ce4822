// The capabilities a kernel may hold. A session grants a set of them; a kernel that needs one the
// session lacks is refused at prepare. `help` reads this table.

export const GRANTS = [
  { name: 'field.read', summary: 'gather: read a field at other elements (`f.at`, `f.wrap`, `f.sample`)' },
  { name: 'field.write', summary: 'hold `state` that persists across frames; the `write` op into state or input fields' },
  { name: 'time.read', summary: 'read `time` and `frame`' },
  { name: 'input.read', summary: 'read the pointer (`pointer.xy`, `pointer.down`) and keys (`keys.NAME`)' },
] as const;

export type Grant = (typeof GRANTS)[number]['name'];

export const ALL_GRANTS: Grant[] = GRANTS.map((g) => g.name);

export function isGrant(name: string): name is Grant {
  return (ALL_GRANTS as string[]).includes(name);
}

/**
 * The `--grant` option that starts a session with what it holds and what it lacks: `--grant`
 * grants only what it names, so advice naming the lacking grant alone dropped the others.
 */
export function grantOption(held: readonly string[], lacking: readonly string[]): string {
  return `--grant ${[...new Set([...held, ...lacking])].join(' ')}`;
}
