// The language's forms and reserved words, as data: the parser dispatches on them and builds its
// "did you mean" from them, and the protocol's `help` reads them. Element and field type names
// come from the checker's TYPES table (../types.ts), so nothing is listed twice.

import { TYPES } from '../types.js';

export type FormKind = 'statement' | 'part' | 'member';

export interface Form {
  /** The keyword (statements, parts) or the member form's name (`value`, `param`, `edge`, `size`). */
  name: string;
  kind: FormKind;
  /** A template: upper case words are placeholders, `[...]` is optional, `...` repeats. */
  syntax: string;
  summary: string;
  example: string;
}

export const FORMS: readonly Form[] = [
  {
    name: 'use',
    kind: 'statement',
    syntax: 'use "PATH";',
    summary:
      "Uses another document (a path under the scene's folder): its kernels, structs, types and fns become visible here.",
    example: 'use "kernels.esn";',
  },
  {
    name: 'param',
    kind: 'statement',
    syntax: 'param NAME: TYPE [= VALUE] [range LO..HI];',
    summary: 'Declares a graph param: a scene-level value nodes name as a member and the `param` op sets at run time.',
    example: 'param warmth: f32 = 0.5 range 0..1;',
  },
  {
    name: 'input',
    kind: 'statement',
    syntax: 'input NAME: TYPE [= VALUE] [size W x H [x D]];',
    summary: 'Declares a field the host writes (the `write` op); a node reads it through an edge `port <- NAME;`.',
    example: 'input paint: field2<vec4> = vec4(0, 0, 0, 1) size 256 x 256;',
  },
  {
    name: 'struct',
    kind: 'statement',
    syntax: 'struct NAME { FIELD: TYPE; ... }',
    summary: 'Declares a record element type of named fields of element types.',
    example: 'struct Particle { pos: vec2; vel: vec2; mass: f32; }',
  },
  {
    name: 'type',
    kind: 'statement',
    syntax: 'type NAME = TYPE;',
    summary: 'Declares another name for a type.',
    example: 'type Color = vec4;',
  },
  {
    name: 'fn',
    kind: 'statement',
    syntax: 'fn NAME(ARG: TYPE, ...)[: TYPE] { BODY }',
    summary: 'Declares a function kernel bodies can call; its body is the same JavaScript subset as `each`.',
    example: 'fn luma(c: vec4): f32 { return dot(c.xyz, vec3(0.299, 0.587, 0.114)); }',
  },
  {
    name: 'kernel',
    kind: 'statement',
    syntax: 'kernel PACKAGE.NAME@VERSION { PART ... }',
    summary: 'Declares a kernel: its grants, ports (`in`, `out`, `state`), an optional size, a per-element body and migrations.',
    example: 'kernel demo.fill@1 {\n  in color: vec4 = vec4(1, 0, 0, 1);\n  out result: field2<vec4>;\n  each (x, y) { result = color; }\n}',
  },
  {
    name: 'node',
    kind: 'statement',
    syntax: 'node NAME: PACKAGE.NAME@VERSION { MEMBER ... }',
    summary: 'Declares a node of the scene: an instance of a kernel with its own values, edges and size.',
    example: 'node rings: demo.rings@1 {\n  size = 256 x 256;\n  count = 8.0;\n}',
  },
  {
    name: 'output',
    kind: 'statement',
    syntax: 'output NAME <- NODE[.PORT];',
    summary: 'Declares an output of the scene: what `read` returns and the Player shows.',
    example: 'output result <- tint.result;',
  },
  {
    name: 'grants',
    kind: 'part',
    syntax: 'grants CAPABILITY, ...;',
    summary: 'Lists the capabilities the kernel needs (`field.read`, `field.write`, `time.read`, `input.read`).',
    example: 'grants field.read, time.read;',
  },
  {
    name: 'in',
    kind: 'part',
    syntax: 'in NAME: TYPE [= VALUE];',
    summary: 'Declares an input port: a value or field a node sets as a member or feeds through an edge.',
    example: 'in count: f32 = 8.0;',
  },
  {
    name: 'out',
    kind: 'part',
    syntax: 'out NAME: TYPE;',
    summary: 'Declares an output port the body assigns at its own element.',
    example: 'out result: field2<vec4>;',
  },
  {
    name: 'state',
    kind: 'part',
    syntax: 'state NAME: TYPE [= VALUE] [resample nearest|bilinear] [narrow];',
    summary: 'Declares state that persists across frames (double-buffered; needs `field.write`). A change of its size or element type carries it automatically (docs/language.md); `resample` and `narrow` choose how.',
    example: 'state cells: field2<f32> = 0.0;',
  },
  {
    name: 'size',
    kind: 'part',
    syntax: 'size W x H [x D];',
    summary: "Gives the kernel's default domain, used when a node has no size and no field input.",
    example: 'size 128 x 128;',
  },
  {
    name: 'each',
    kind: 'part',
    syntax: 'each (X[, Y[, Z]]) { BODY }',
    summary: 'The body run at every element of the domain, with 1 to 3 coordinate names.',
    example: 'each (x, y) { result = vec4(x / width, y / height, 0.0, 1.0); }',
  },
  {
    name: 'migrate',
    kind: 'part',
    syntax: 'migrate from PACKAGE.NAME@VERSION { BODY }',
    summary: "Carries state across a change of layout: the body sets the new state from the old kernel's (`old.NAME`).",
    example: 'migrate from life.step@1 { cells = old.cells; }',
  },
  {
    name: 'value',
    kind: 'member',
    syntax: 'NAME = VALUE;',
    summary: "Sets a node's `in` port to a value of its own (the document's).",
    example: 'count = 8.0;',
  },
  {
    name: 'param',
    kind: 'member',
    syntax: 'NAME = PARAM;',
    summary: "Sets a node's `in` port to a graph param the scene declares, so the `param` op changes it.",
    example: 'warmth = warmth;',
  },
  {
    name: 'edge',
    kind: 'member',
    syntax: 'NAME <- NODE[.PORT];',
    summary: "Feeds a node's `in` port from another node's port (its first `out` when none is named) or from an `input`.",
    example: 'src <- rings.result;',
  },
  {
    name: 'size',
    kind: 'member',
    syntax: 'size = W x H [x D];',
    summary: "Sets the node's domain.",
    example: 'size = 256 x 256;',
  },
];

export const STATEMENT_KEYWORDS: readonly string[] = FORMS.filter((f) => f.kind === 'statement').map((f) => f.name);
export const PART_KEYWORDS: readonly string[] = FORMS.filter((f) => f.kind === 'part').map((f) => f.name);

export function form(kind: FormKind, name: string): Form | undefined {
  return FORMS.find((f) => f.kind === kind && f.name === name);
}

/** The element type names the parser knows (`f32` ... `vec4`), from the checker's table. */
export const ELEMENT_TYPES: readonly string[] = TYPES.filter((t) => t.components > 0).map((t) => t.name);

/** `field1`, `field2`, `field3` and their dimensions, from the checker's table. */
export const FIELD_TYPES: ReadonlyMap<string, 1 | 2 | 3> = new Map(
  TYPES.flatMap((t) => {
    const m = /^field([123])<T>$/.exec(t.name);
    return m ? [[`field${m[1]}`, Number(m[1]) as 1 | 2 | 3] as const] : [];
  }),
);

/** The literal constructors: `vec2(a, b)` ... and how many components each takes. */
export const CONSTRUCTORS: ReadonlyMap<string, number> = new Map(
  TYPES.filter((t) => /^vec\d$/.test(t.name)).map((t) => [t.name, t.components] as const),
);

export type ReservedRole = 'statement' | 'part' | 'clause' | 'literal' | 'type';

export interface ReservedWord {
  word: string;
  role: ReservedRole;
  summary: string;
}

const CLAUSES: ReservedWord[] = [
  { word: 'from', role: 'clause', summary: 'in `migrate from ID { ... }`: the kernel id whose state is migrated' },
  { word: 'range', role: 'clause', summary: 'in `param`: the range `range LO..HI` the value keeps to' },
  { word: 'resample', role: 'clause', summary: 'in a `state` port: `resample nearest` or `resample bilinear`, how the state is carried when its size changes (else the overlap is kept)' },
  { word: 'narrow', role: 'clause', summary: 'in a `state` port: a narrower element type keeps the old value\'s first components (else the state is reset)' },
  { word: 'true', role: 'literal', summary: 'the bool literal true (1)' },
  { word: 'false', role: 'literal', summary: 'the bool literal false (0)' },
];

const ALSO: Record<string, string> = {
  size: ' Also the node member `size = W x H;` and the clause `size W x H` of `input`.',
  param: ' Also a node member form: `NAME = PARAM;`.',
};

/**
 * The words no declaration may take as its name. `x` in sizes (`256 x 256`) is not reserved: it
 * is read as a separator only between the numbers of a size.
 */
export const RESERVED_WORDS: readonly ReservedWord[] = [
  ...FORMS.filter((f) => f.kind !== 'member').map((f) => ({
    word: f.name,
    role: f.kind as ReservedRole,
    summary: f.summary + (ALSO[f.name] ?? ''),
  })),
  ...CLAUSES,
  ...TYPES.flatMap((t): ReservedWord[] => {
    const word = t.name.replace(/<T>$/, '');
    if (STATEMENT_KEYWORDS.includes(word)) return [];
    const ctor = CONSTRUCTORS.has(word) ? ` Also the literal constructor \`${word}(...)\`.` : '';
    return [{ word, role: 'type', summary: t.summary + ctor }];
  }),
];

const RESERVED = new Set(RESERVED_WORDS.map((r) => r.word));

export function isReserved(word: string): boolean {
  return RESERVED.has(word);
}
