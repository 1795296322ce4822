// Where the loops a node may run are written: its kernel's `each` body and the fns it calls (and
// theirs). A fuel trap knows only its node; the loop that ran away is one of these, and a person
// mends the loop, not the node statement.

import type { Scene } from '../ir/check/scene.js';
import type { Node as AcornNode } from 'acorn';
import type { Body } from '../ir/syntax/tree.js';
import { LineIndex } from '../ir/syntax/position.js';

export interface LoopPlace {
  path: string;
  line: number;
  column: number;
  /** `while`, `do`, or `for`. */
  keyword: string;
  /** A `for` counting to a number written in it (`k < 3; k++`): it cannot be the one that ran away, unless its body moves the count. */
  counted: boolean;
}

/** `for (...; i < 3; i++)`: a test against a number written there, and a step of the count. */
function counted(a: Record<string, any>): boolean {
  return a.type === 'ForStatement' && a.test?.type === 'BinaryExpression' && a.test.right?.type === 'Literal' && a.update?.type === 'UpdateExpression' && a.update.argument?.name === a.test.left?.name;
}

const KEYWORDS: Record<string, string> = { WhileStatement: 'while', DoWhileStatement: 'do', ForStatement: 'for' };

/** The loops node `name` may run, in the order they are written (each once); those that may run away, when any may. */
export function runawayLoopsOf(scene: Scene, name: string | undefined): LoopPlace[] {
  const loops = loopsOf(scene, name);
  const open = loops.filter((l) => !l.counted);
  return open.length ? open : loops;
}

/** The loops node `name` may run, in the order they are written (each once). */
export function loopsOf(scene: Scene, name: string | undefined): LoopPlace[] {
  const node = scene.nodes.find((n) => n.name === name);
  if (!node) return [];
  const places: LoopPlace[] = [];
  const seenFns = new Set<string>();
  const visit = (body: Body, path: string) => {
    const doc = scene.documents.find((d) => d.path === path);
    if (!doc) return;
    const lines = new LineIndex(doc.text);
    const walk = (n: unknown): void => {
      if (Array.isArray(n)) return n.forEach(walk);
      if (!n || typeof n !== 'object') return;
      const a = n as AcornNode & Record<string, unknown>;
      if (typeof a.type !== 'string') return;
      if (KEYWORDS[a.type]) places.push({ path, ...lines.positionAt(a.start), keyword: KEYWORDS[a.type], counted: counted(a) });
      if (a.type === 'CallExpression') {
        const callee = (a.callee as { type?: string; name?: string } | undefined);
        const fn = callee?.type === 'Identifier' ? scene.env.fns.get(callee.name!) : undefined;
        if (fn && !seenFns.has(callee!.name!)) {
          seenFns.add(callee!.name!);
          const fnDoc = scene.documents.find((d) => d.statements.includes(fn));
          if (fnDoc) visit(fn.body, fnDoc.path);
        }
      }
      for (const [key, value] of Object.entries(a)) if (key !== 'loc' && typeof value === 'object') walk(value);
    };
    walk(body.statements);
  };
  for (const part of node.kernel.statement.parts) if (part.part === 'each') visit(part.body, node.kernel.path);
  return places;
}
