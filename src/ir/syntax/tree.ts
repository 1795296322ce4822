// The lossless syntax tree of one `.esn` document.
//
// Every statement and every member of a node's block carries its byte span (offsets into the
// document's text, UTF-16 code units as JavaScript strings index them), so compose can replace
// exactly those bytes. The document keeps its whole text: `print(doc)` is `doc.text`, and the
// statements plus the trivia between them tile the text with no gap and no overlap.

import type { Node as AcornNode } from 'acorn';

/** A half-open range [start, end) of offsets into the document's text. */
export interface Span {
  start: number;
  end: number;
}

/** A position for people: 1-based line, 1-based column (as editors count). */
export interface Position {
  line: number;
  column: number;
}

/** A piece of source with its span: names, ids, literals. */
export interface Token<T = string> {
  value: T;
  span: Span;
}

/** A type as written: `f32`, `vec4`, `Particle`, `field2<vec4>`. */
export interface TypeRef {
  /** `f32`, `i32`, `bool`, `vec2`, `vec3`, `vec4`, or a struct / type alias name. */
  name: Token;
  /** 1, 2 or 3 for `field1<T>`, `field2<T>`, `field3<T>`; absent for a plain element type. */
  fieldDims?: 1 | 2 | 3;
  span: Span;
}

/** A value written in a declaration: a number, `true`/`false`, or `vecN(...)` of numbers. */
export interface Literal {
  /** The components as numbers (booleans as 0/1): `vec4(1, 0, 0, 1)` -> [1, 0, 0, 1]. */
  values: number[];
  /** `number`, `bool`, or the constructor's name (`vec2`, ...). */
  form: string;
  /** True when every number was written without a `.` or exponent (an integer literal). */
  integral: boolean;
  span: Span;
}

/** `W x H [x D]`. */
export interface SizeLiteral {
  dims: number[];
  span: Span;
}

/** Trivia between statements (white space and comments) kept as text. */
export interface Trivia {
  kind: 'trivia';
  span: Span;
  /**
   * Set when this text is a statement that failed to parse (the diagnostics say why; it is not in
   * `statements`): the kind and name it was meant to have, as far as they were read, and when the
   * parser could read it whole (e.g. only a `;` was missing), the statement as read, so compose can
   * still address it (and its members) by kind and name and replace it with a diagnostic's fix.
   */
  broken?: { kind?: StatementKind; name?: Token; statement?: Statement };
}

export interface StatementBase {
  /** The whole statement: from its first keyword to its closing `;` or `}`. */
  span: Span;
  /** The statement's name: the path of a `use`, the id of a kernel, ... */
  name: Token;
}

export interface UseStatement extends StatementBase {
  kind: 'use';
}

export interface ParamStatement extends StatementBase {
  kind: 'param';
  type: TypeRef;
  value?: Literal;
  /** `range LO..HI`; `ends` are the spans of LO and HI. */
  range?: { lo: number; hi: number; span: Span; ends: [Span, Span] };
}

/** `input NAME: field2<T> [= literal] [size W x H];` — a field the host writes (`write` op). */
export interface InputStatement extends StatementBase {
  kind: 'input';
  type: TypeRef;
  value?: Literal;
  size?: SizeLiteral;
}

export interface StructStatement extends StatementBase {
  kind: 'struct';
  fields: { name: Token; type: TypeRef; span: Span }[];
}

/** `type NAME = TYPE;` */
export interface TypeStatement extends StatementBase {
  kind: 'type';
  type: TypeRef;
}

/** A JavaScript-subset body: the text between `{` and `}` parsed by acorn. */
export interface Body {
  /** The span of the braces and what they hold. */
  span: Span;
  /** The statements inside, as acorn parsed them; their start/end/loc are the document's own. */
  statements: AcornNode[];
  /** True when acorn found a syntax error in the body (reported; `statements` is then empty). */
  failed?: boolean;
}

/** `fn NAME(a: f32, b: vec2)[: TYPE] { ... }` */
export interface FnStatement extends StatementBase {
  kind: 'fn';
  params: { name: Token; type: TypeRef; span: Span }[];
  returns?: TypeRef;
  body: Body;
}

export type PortKind = 'in' | 'out' | 'state';

export interface PortDecl {
  part: 'port';
  kind: PortKind;
  name: Token;
  type: TypeRef;
  value?: Literal;
  /** `resample nearest|bilinear` (a state's size change resamples it): the filter as written, and the clause's span. */
  resample?: { filter: Token; span: Span };
  /** `narrow` (a state whose element type narrows keeps its first components): the clause's span. */
  narrow?: Span;
  span: Span;
}

export interface GrantsDecl {
  part: 'grants';
  grants: Token[];
  span: Span;
}

export interface SizeDecl {
  part: 'size';
  size: SizeLiteral;
  span: Span;
}

export interface EachDecl {
  part: 'each';
  /** The coordinate names, 1 to 3 of them: `each (x, y)`. */
  coords: Token[];
  body: Body;
  span: Span;
}

export interface MigrateDecl {
  part: 'migrate';
  /** The kernel id migrated from: `migrate from life.step@1 { ... }`. */
  from: Token;
  body: Body;
  span: Span;
}

export type KernelPart = PortDecl | GrantsDecl | SizeDecl | EachDecl | MigrateDecl;

export interface KernelStatement extends StatementBase {
  kind: 'kernel';
  parts: KernelPart[];
}

/** A member of a node's block; `name` is what compose's `member` addresses. */
export type NodeMember =
  | { form: 'value'; name: Token; value: Literal; span: Span }
  | { form: 'param'; name: Token; param: Token; span: Span }
  | { form: 'edge'; name: Token; from: { node: Token; port?: Token }; span: Span }
  | { form: 'size'; name: Token; size: SizeLiteral; span: Span };

export interface NodeStatement extends StatementBase {
  kind: 'node';
  kernel: Token;
  members: NodeMember[];
}

/** `output NAME <- node.port;` */
export interface OutputStatement extends StatementBase {
  kind: 'output';
  from: { node: Token; port?: Token };
}

export type Statement =
  | UseStatement
  | ParamStatement
  | InputStatement
  | StructStatement
  | TypeStatement
  | FnStatement
  | KernelStatement
  | NodeStatement
  | OutputStatement;

export type StatementKind = Statement['kind'];

export interface Document {
  /** The document's path as the session names it (relative to the scene's folder). */
  path: string;
  text: string;
  /** Statements and trivia in order; their spans tile `text` exactly. */
  items: (Statement | Trivia)[];
  statements: Statement[];
}

/** A diagnostic: what is wrong, where, and where one mends it, the corrected text. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  message: string;
  path: string;
  span: Span;
  line: number;
  column: number;
  /**
   * A fix: the corrected text of one statement (or one member of a node), as an edit item for
   * compose: `{ node: "rings", member: "count", text: "count = 12.0;" }`.
   */
  fix?: FixEdit;
}

/** An edit item as compose takes it (see the protocol): one statement, or one member of a node. */
export interface FixEdit {
  [kind: string]: string | null | undefined;
  member?: string;
  text: string | null;
}
