// The uses pass: which per-vector values a vector's code reads, so that the code around it keeps
// only those. The x vector (x of the 4 lanes) costs a v128 add per vector and the top mask (the
// lanes with x < width) a compare, and many bodies need neither: a pointwise body with no `x`
// and no varying control flow reads neither; a gather at `x + constant` computes its address
// from the scalar x0.
//
// It runs between the two halves of emission (emit.ts): on the vectors' code, emitted first, and
// before the code that starts and advances each vector, which follows what it found. It reads
// the code itself (binaryen's expressions, by a walk whose switch names every kind emission
// makes), so what it finds is exact: a value is kept exactly when some instruction reads it.

import binaryen from 'binaryen';
import type { Gen, Ref } from './context.js';

/** What a vector's code reads of the per-vector values. */
export interface VectorUses {
  /** The x vector (g.xv): kept from the vector's start and advanced with x0. */
  xv: boolean;
  /** The top mask (g.top): computed at the vector's start, from the x vector. */
  top: boolean;
}

/**
 * The uses pass for the vector of `g` whose code (body, exit tests, stores: all that runs per
 * vector before its start is emitted) is `code` (or whose locals read `code` gives). A body with loops keeps the top mask whatever it
 * reads: the fuel count drops the lanes that ran out from it. The top mask is computed from the x
 * vector, so it keeps that too.
 */
export function vectorUses(g: Gen, code: Ref[] | (() => ReadonlySet<number>)): VectorUses {
  // With loops both are kept whatever the code reads: no walk (~4% of a loop kernel's codegen).
  if (g.analysis.hasLoops) return { top: true, xv: true };
  const read = typeof code === 'function' ? code() : localsRead(code);
  const top = read.has(g.top);
  return { top, xv: top || read.has(g.xv) };
}

/** The uses pass's result for people (after:uses). */
export function describeUses(name: string, uses: VectorUses): string {
  const what = (kept: boolean) => (kept ? 'kept' : 'not read');
  return `${name}: x vector ${what(uses.xv)}, top mask ${what(uses.top)}`;
}

/** binaryen.js's accessors of each expression kind (LocalGet.getIndex, ...), which its types leave out. */
const B = binaryen as unknown as Record<string, Record<string, (e: Ref, i?: number) => Ref>>;

/** Every local that `code` reads (local.get), at any depth. */
export function localsRead(code: Ref[]): Set<number> {
  const read = new Set<number>();
  const todo: Ref[] = [...code];
  const push = (...refs: Ref[]) => {
    for (const r of refs) if (r) todo.push(r); // 0: an absent child (an if without else)
  };
  while (todo.length) {
    const e = todo.pop()!;
    const id = binaryen.getExpressionId(e);
    switch (id) {
      case binaryen.LocalGetId:
        read.add(B.LocalGet.getIndex(e));
        break;
      case binaryen.ConstId:
      case binaryen.GlobalGetId:
      case binaryen.NopId:
      case binaryen.UnreachableId:
        break;
      case binaryen.BlockId: {
        const n = B.Block.getNumChildren(e);
        for (let i = 0; i < n; i++) push(B.Block.getChildAt(e, i));
        break;
      }
      case binaryen.IfId:
        push(B.If.getCondition(e), B.If.getIfTrue(e), B.If.getIfFalse(e));
        break;
      case binaryen.LoopId:
        push(B.Loop.getBody(e));
        break;
      case binaryen.BreakId:
        push(B.Break.getCondition(e), B.Break.getValue(e));
        break;
      case binaryen.LocalSetId:
        push(B.LocalSet.getValue(e));
        break;
      case binaryen.GlobalSetId:
        push(B.GlobalSet.getValue(e));
        break;
      case binaryen.LoadId:
        push(B.Load.getPtr(e));
        break;
      case binaryen.StoreId:
        push(B.Store.getPtr(e), B.Store.getValue(e));
        break;
      case binaryen.UnaryId:
        push(B.Unary.getValue(e));
        break;
      case binaryen.BinaryId:
        push(B.Binary.getLeft(e), B.Binary.getRight(e));
        break;
      case binaryen.SelectId:
        push(B.Select.getIfTrue(e), B.Select.getIfFalse(e), B.Select.getCondition(e));
        break;
      case binaryen.DropId:
        push(B.Drop.getValue(e));
        break;
      case binaryen.CallId: {
        const n = B.Call.getNumOperands(e);
        for (let i = 0; i < n; i++) push(B.Call.getOperandAt(e, i));
        break;
      }
      case binaryen.SIMDExtractId:
        push(B.SIMDExtract.getVec(e));
        break;
      case binaryen.SIMDReplaceId:
        push(B.SIMDReplace.getVec(e), B.SIMDReplace.getValue(e));
        break;
      case binaryen.SIMDShuffleId:
        push(B.SIMDShuffle.getLeft(e), B.SIMDShuffle.getRight(e));
        break;
      case binaryen.SIMDTernaryId:
        push(B.SIMDTernary.getA(e), B.SIMDTernary.getB(e), B.SIMDTernary.getC(e));
        break;
      case binaryen.SIMDShiftId:
        push(B.SIMDShift.getVec(e), B.SIMDShift.getShift(e));
        break;
      case binaryen.SIMDLoadId:
        push(B.SIMDLoad.getPtr(e));
        break;
      case binaryen.SIMDLoadStoreLaneId:
        push(B.SIMDLoadStoreLane.getPtr(e), B.SIMDLoadStoreLane.getVec(e));
        break;
      default:
        // A kind emission did not make before: name it here, or the pass would miss its reads.
        throw new Error(`internal: the uses pass does not know binaryen expression id ${id}`);
    }
  }
  return read;
}
