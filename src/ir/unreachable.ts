// The `never` default of an exhaustive switch: the type system proves it unreachable, so a new
// kind of IR node or binding is a compile error at every switch that must handle it. Reached at
// run time only by data from elsewhere (a value no type described): an internal error naming it.

export function unreachable(x: never, what = 'an IR node'): never {
  const { k, kind } = x as { k?: unknown; kind?: unknown };
  throw new Error(`internal: ${what} of unknown kind ${JSON.stringify(k ?? kind)}`);
}
