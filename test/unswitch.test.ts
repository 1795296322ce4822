// Unswitching the interior loop (src/codegen/unswitch.ts): a top-level `if` on a row-invariant
// condition gets one interior loop per branch. Which `if` is chosen, that the module has the two
// loops, and that the results equal the interpreter's at every width: the branch changing from
// row to row, the x vector read by one branch only (the other's loop does not advance it),
// statements before the `if`, and a condition the pass must refuse (it reads x).

import t from 'tap';
import type { Expr, IrFunction, Stmt } from '../src/ir/ir.js';
import { compileFunction } from '../src/codegen/compile.js';
import { rowInvariant } from '../src/codegen/unswitch.js';
import { dumpTo, type PassName } from '../src/ir/dump.js';
import { agree, type Extents } from './compare.js';
import { X, Y, extent, f32, field, fn, gather, i32, iff, load, local, op, set, uniform } from './ir-gen.js';

const ext = (width: number, height: number): Extents => ({ width, height, depth: 1 });
const WIDTHS = [1, 3, 4, 5, 8, 9, 13, 16, 17, 33];
const OPTIMISED = { optimised: {} };

/** src.wrap(x - 1, y) + src.wrap(x + 1, y) + src.wrap(x, y + 1): life's kind of gathers. */
const neighbours: Expr = op('f32.add', op('f32.add',
  gather(0, 0, 'f32', 'wrap', op('i32.sub', X, i32(1)), Y),
  gather(0, 0, 'f32', 'wrap', op('i32.add', X, i32(1)), Y)),
  gather(0, 0, 'f32', 'wrap', X, op('i32.add', Y, i32(1))));
/** A value of x (the x vector): 0.5 * x. */
const xValue: Expr = op('f32.mul', op('i32.to_f32', X), f32(0.5));

const kernel = (c: Expr, then: Stmt[], otherwise: Stmt[], before: Stmt[] = []): IrFunction => fn({
  locals: ['f32', 'f32'],
  fields: [field('src', 'read', 2, ['f32']), field('out', 'write', 2, ['f32'])],
  uniforms: [{ name: 'u0', t: 'i32' }],
  body: [...before, iff(c, then, otherwise)],
  stores: [{ field: 1, comp: 0, local: 0 }],
});

/** What `passes` printed while compiling `f` on the optimised tier. */
function dumped(f: IrFunction, passes: PassName[]): Map<PassName, string> {
  const out = new Map<PassName, string>();
  dumpTo(passes, (pass, text) => out.set(pass, text));
  try {
    compileFunction(f);
  } finally {
    dumpTo(undefined);
  }
  return out;
}

const U0_IS_0 = op('i32.eq', uniform(0, 'i32'), i32(0));
const ODD_ROW = op('i32.eq', op('i32.rem', Y, i32(2)), i32(1));

t.test('row-invariant conditions: uniforms, y, extents; not x, locals or loads', (tt) => {
  tt.ok(rowInvariant(U0_IS_0));
  tt.ok(rowInvariant(ODD_ROW));
  tt.ok(rowInvariant(op('i32.lt', Y, extent(1))));
  tt.notOk(rowInvariant(op('i32.lt', X, i32(3))), 'x changes along the row');
  tt.notOk(rowInvariant(op('f32.lt', local(1, 'f32'), f32(3))), 'a local is set per vector');
  tt.notOk(rowInvariant(op('f32.lt', load(0, 0, 'f32'), f32(3))), 'a load reads per element');
  tt.end();
});

t.test('the plan unswitches the row-invariant if, and the module has a loop per branch', (tt) => {
  const f = kernel(U0_IS_0, [set(0, xValue)], [set(0, neighbours)]);
  const out = dumped(f, ['plan', 'uses', 'emit']);
  tt.match(out.get('plan'), /unswitch: on i32\.eq\(U0, 0i\) \(row-invariant\): one interior loop per branch/);
  tt.match(out.get('uses'), /interior version, then branch: x vector kept/);
  tt.match(out.get('uses'), /interior version, else branch: x vector not read/);
  tt.equal(out.get('emit')!.match(/loop \$interior\d+/g)?.length, 2, 'two interior loops');
  const refused = dumped(kernel(op('i32.lt', X, i32(3)), [set(0, xValue)], [set(0, neighbours)]), ['plan']);
  tt.match(refused.get('plan'), /unswitch: no/, 'a condition on x is not unswitched');
  tt.end();
});

t.test('results equal the interpreter\'s: both branches, every width', (tt) => {
  const cases: [string, IrFunction][] = [
    ['then reads x, else gathers', kernel(U0_IS_0, [set(0, xValue)], [set(0, neighbours)])],
    ['then gathers, else reads x', kernel(U0_IS_0, [set(0, neighbours)], [set(0, xValue)])],
    ['odd rows gather, even rows read x', kernel(ODD_ROW, [set(0, neighbours)], [set(0, op('f32.add', xValue, load(0, 0, 'f32')))])],
    ['statements before the if, an empty else', kernel(U0_IS_0, [set(0, op('f32.add', local(1, 'f32'), xValue))], [],
      [set(1, neighbours), set(0, op('f32.mul', local(1, 'f32'), f32(3)))])],
  ];
  for (const [name, f] of cases)
    for (const u of [0, 1])
      for (const w of WIDTHS) {
        agree(tt, `${name}, u0 = ${u}, width ${w}`, { fn: f, domain: ext(w, 3), extents: [ext(w, 3), ext(w, 3)], uniforms: [u] }, OPTIMISED);
      }
  tt.end();
});
