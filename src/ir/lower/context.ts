// The state of lowering one body (an `each`, with the `fn`s it calls inlined) to IR.

import type { Node as AcornNode } from 'acorn';
import type { Grant } from '../grants.js';
import { uniformName, type UniformSource } from '../bindings.js';
import type { Expr, IrField, IrUniform, Scalar, Stmt } from '../ir.js';
import type { FnStatement, FixEdit } from '../syntax/tree.js';
import type { ElemType } from '../types.js';
import { components } from '../types.js';
import type { Value } from './build.js';

/**
 * The deepest lowering goes in statements and expressions, counting those of inlined fns. A
 * body's own nesting is bounded by the parser (MAX_NESTING); this bounds the sum along a chain of
 * calls, and so the depth of the IR every later pass walks.
 */
export const MAX_LOWERING_DEPTH = 512;

/**
 * The most statements and expressions one body lowers to, each inlined copy of a fn counted again.
 * Calls inside calls multiply: a fn calling another three times, 14 deep, is 3^14 copies (a 1 KB
 * document that took 5 GB and a minute before the process died); the largest body of the corpus
 * and examples (corpus.inline) lowers 3,212; one of 75,000 (that fn 8 deep) compiles in under a second.
 */
export const MAX_LOWERED = 100_000;

/** A mistake in a body, at an acorn node; the checker turns it into a Diagnostic. */
export class LowerError extends Error {
  constructor(
    message: string,
    readonly at: { start: number; end: number },
    readonly fix?: FixEdit,
  ) {
    super(message);
  }
}

/**
 * A use of a name whose declaration failed (`const v = lenght(p);`): the declaration's error
 * already says what is wrong, so this one is not reported (lowerStatements drops it).
 */
export class FollowOnError extends LowerError {}

/** A kernel port as a body sees it. */
export interface PortView {
  name: string;
  kind: 'in' | 'out' | 'state';
  type: ElemType;
  /** The field's number of axes, for field-typed ports; absent for a plain value. */
  dims?: 1 | 2 | 3;
  /** IR field read (in-fields, the current state) and written (out, the next state). */
  readField?: number;
  writeField?: number;
  /** The locals holding an out or state port's value at the element (stored at the end). */
  locals?: number[];
}

export type Binding =
  | { kind: 'var'; type: ElemType; locals: number[]; mutable: boolean; decl: AcornNode }
  | { kind: 'port'; port: PortView }
  | { kind: 'coord'; axis: 0 | 1 | 2 };

/** What a body may call and name beyond builtins: the scene's structs and fns. */
export interface Env {
  structs: Map<string, ElemType>;
  fns: Map<string, FnStatement>;
  resolveType: (ref: FnStatement['params'][number]['type']) => ElemType;
  /** The fns some body inlined (callFn adds them): the scene's check lowers the others alone. */
  inlined?: Set<string>;
  /** Fns whose statement did not parse: a call of one is not an unknown function (its parse error is told). */
  brokenFns?: Set<string>;
}

export type ConstructRole = 'break' | 'continue' | 'return' | 'plain';

export class BodyContext {
  locals: Scalar[] = [];
  uniforms: IrUniform[] = [];
  /** What each of `uniforms` holds (the engine's binding; the IR's names are for people). */
  uniformSources: UniformSource[] = [];
  private uniformSlots = new Map<string, number>();
  /** Each grant the body needs, and where it first needs it (what a missing grant's error points at). */
  grantsUsed = new Map<Grant, { start: number; end: number }>();
  /** Field ports read at the own element, and field ports gathered. */
  pointwise = new Set<string>();
  gathered = new Set<string>();
  scopes: Map<string, Binding>[] = [new Map()];
  /** The enclosing IR blocks and loops, innermost last, with what a JS statement breaks to. */
  constructs: ConstructRole[] = [];
  /** The statement lists being filled, innermost last. */
  private lists: Stmt[][] = [[]];
  /** The fns being inlined (no recursion), and where each `return` writes its value. */
  fnStack: { name: string; call: AcornNode; result?: { type: ElemType; locals: number[] }; declared?: ElemType }[] = [];
  /** How many times each fn was inlined into this body (a body too large names the most copied). */
  copies = new Map<string, number>();
  /** How deep lowering is in statements and expressions, the inlined fns' included (see enter). */
  depth = 0;
  /** Statements and expressions lowered so far, each inlined copy of a fn's counted again (see enter). */
  lowered = 0;
  /** Declarations an assignment showed must hold f32 rather than i32: lowering runs again. */
  widen: Set<AcornNode>;
  widened = false;

  constructor(
    readonly env: Env,
    readonly fields: IrField[],
    readonly ports: Map<string, PortView>,
    readonly coordNames: string[],
    readonly nodeIndex: number,
    readonly fuel: number,
    widen: Set<AcornNode>,
  ) {
    this.widen = widen;
    coordNames.forEach((name, axis) => this.scopes[0].set(name, { kind: 'coord', axis: axis as 0 | 1 | 2 }));
    for (const port of ports.values()) this.scopes[0].set(port.name, { kind: 'port', port });
  }

  newLocal(t: Scalar): number {
    this.locals.push(t);
    return this.locals.length - 1;
  }

  newLocals(type: ElemType): number[] {
    return components(type).map((t) => this.newLocal(t));
  }

  /** The uniform slot holding `source` (one per source: every read shares it). */
  uniform(source: UniformSource, t: Scalar): Expr {
    const name = uniformName(source);
    let slot = this.uniformSlots.get(name);
    if (slot === undefined) {
      slot = this.uniforms.length;
      this.uniforms.push({ name, t });
      this.uniformSources.push(source);
      this.uniformSlots.set(name, slot);
    }
    return { k: 'uniform', t, slot };
  }

  emit(s: Stmt): void {
    this.lists[this.lists.length - 1].push(s);
  }

  /** Lower into a fresh statement list and return it. */
  collect(f: () => void): Stmt[] {
    this.lists.push([]);
    try {
      f();
      return this.lists[this.lists.length - 1];
    } finally {
      this.lists.pop();
    }
  }

  /** Inside an IR block or loop (or an if): assignments there are conditional per lane. */
  get topLevel(): Stmt[] {
    return this.lists[0];
  }

  lookup(name: string): Binding | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const b = this.scopes[i].get(name);
      if (b) return b;
    }
    return undefined;
  }

  /** Names visible here, for "did you mean". */
  visibleNames(): string[] {
    return this.scopes.flatMap((s) => [...s.keys()]);
  }

  withScope<T>(f: () => T, fresh = false): T {
    const saved = this.scopes;
    this.scopes = fresh ? [this.scopes[0], new Map()] : [...this.scopes, new Map()];
    try {
      return f();
    } finally {
      this.scopes = saved;
    }
  }

  declare(name: string, b: Binding): void {
    this.scopes[this.scopes.length - 1].set(name, b);
  }

  /** Names whose declarations failed to lower: a later use of one is a FollowOnError. */
  readonly failedNames = new Set<string>();

  /** Lower `f` inside an IR block or loop with the given role; returns its statements. */
  inConstruct(role: ConstructRole, f: () => void): Stmt[] {
    this.constructs.push(role);
    try {
      return this.collect(f);
    } finally {
      this.constructs.pop();
    }
  }

  /** The break depth to the innermost construct with a role, or -1. */
  depthTo(role: ConstructRole): number {
    for (let i = this.constructs.length - 1; i >= 0; i--) if (this.constructs[i] === role) return this.constructs.length - 1 - i;
    return -1;
  }

  /**
   * Lower one statement or expression a level deeper. Lowering is recursive, and a body's own
   * nesting is bounded by the parser, but fns inlined inside one another add up: past
   * MAX_LOWERING_DEPTH the node is refused with a diagnostic rather than overflowing the stack.
   */
  enter<T>(node: AcornNode, f: () => T): T {
    if (++this.lowered > MAX_LOWERED) throw this.tooLarge(node);
    if (this.depth >= MAX_LOWERING_DEPTH)
      throw new LowerError(`the code nests more than ${MAX_LOWERING_DEPTH} levels deep here once the fns it calls are inlined into it; call fewer fns inside one another, or give a part a variable of its own (docs/language.md, Limits)`, node);
    this.depth++;
    try {
      return f();
    } finally {
      this.depth--;
    }
  }

  /** A body that grew past MAX_LOWERED, said at the kernel's own call that grew it, naming the fns copied most. */
  private tooLarge(node: AcornNode): LowerError {
    const copies = [...this.copies].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([name, n]) => `\`${name}\` ${n} times`);
    const outer = this.fnStack[0];
    return new LowerError(
      `this body grows past ${MAX_LOWERED} statements and expressions once the fns it calls are inlined (every call is a copy of its fn${copies.length ? `: ${copies.join(', ')} so far` : ''}): call fns fewer times inside one another: keep a value used twice in a const (\`const v = f(a);\`), or make repeated calls a loop, whose body is compiled once (docs/language.md, Limits)`,
      outer?.call ?? node,
    );
  }

  /** Store a value in fresh locals (so a value used several times is computed once). */
  materialize(v: Value): Value {
    const comps = v.comps.map((e) => {
      if (e.k === 'const' || e.k === 'local' || e.k === 'coord' || e.k === 'uniform') return e;
      const i = this.newLocal(e.t);
      this.emit({ k: 'set', local: i, e });
      return { k: 'local', t: e.t, i } as Expr;
    });
    return { type: v.type, comps };
  }
}
