// Nesting limits (issue 14, item 10): 700 nested `if`s or a 700-deep `fn` chain overflowed the
// stack ("Maximum call stack size exceeded (this is a bug...)", no position). Every deep form is
// now a diagnostic at the place it goes past its limit, with what to do; code at the limit still
// checks, compiles and runs the same on both backends. Through the real doors too: `entelechy
// check` and `entelechy serve`.

import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, firstDifference, run, textScene } from './helpers.js';
import { copyExample, Lines } from './fixtures.js';
import { MAX_CALL_DEPTH, MAX_NESTING, nestingPastLimit } from '../src/ir/syntax/nesting.js';
import { MAX_LOWERED, MAX_LOWERING_DEPTH } from '../src/ir/lower/context.js';
import { scratchDir } from './scratch.js';

const KERNEL = (body: string, before = '') => `${before}
kernel demo.deep@1 {
  out result: field2<f32>;
  each (x, y) {
    ${body}
  }
}
node n: demo.deep@1 { size = 8 x 8; }
output result <- n.result;
`;

/** Deep forms, each nested `n` levels as docs/language.md counts them. */
const FORMS: Record<string, (n: number) => string> = {
  'nested ifs': (n) => `let r = 0.0; ${'if (x >= 0) { '.repeat(n)}r = r + 1.0;${' }'.repeat(n)} result = r;`,
  'nested blocks': (n) => `let r = 0.0; ${'{ '.repeat(n)}r = 2.0;${' }'.repeat(n)} result = r;`,
  'an else-if chain': (n) => `let r = 0.5; if (x == 0) { r = 0.0; }${Array.from({ length: n - 1 }, (_, i) => ` else if (x == ${i + 1}) { r = ${i + 1}.0; }`).join('')} result = r;`,
  // Unbraced, each link's `;` ended the count (acorn nests the chain all the same): 5000 links overflowed the stack, or ended the process.
  'an unbraced else-if chain': (n) => `let r = 0.5; if (x == 0) r = 0.0;${Array.from({ length: n - 1 }, (_, i) => ` else if (x == ${i + 1}) r = ${i + 1}.0;`).join('')} result = r;`,
  'nested parentheses': (n) => `result = ${'('.repeat(n - 1)}f32(x)${')'.repeat(n - 1)};`,
  'a long sum': (n) => `result = f32(x)${' + 1.0'.repeat(n)};`,
  'negations in parentheses': (n) => `result = ${'-('.repeat(n / 2)}f32(x)${')'.repeat(n / 2)};`,
  'a ternary chain': (n) => `result = ${Array.from({ length: n / 2 }, (_, i) => `x == ${i} ? ${i}.0 : `).join('')}0.5;`,
};

/** The first diagnostic of a scene, or undefined. */
function firstDiagnostic(text: string) {
  return textScene({ 'scene.esn': text }).diagnostics[0];
}

for (const [name, make] of Object.entries(FORMS)) {
  t.test(`${name}: at the limit it runs the same on both backends; past it, a diagnostic where it goes past`, async (t) => {
    // Find the deepest that checks: it must be near the limit (the count is the documented one).
    let deepest = 0;
    for (let n = 2; n <= MAX_NESTING + 4; n += 2) if (!firstDiagnostic(KERNEL(make(n)))) deepest = n;
    t.ok(deepest >= MAX_NESTING / 2 - 2, `nests ${deepest} deep before a diagnostic`);
    const scene = textScene({ 'scene.esn': KERNEL(make(deepest)) });
    const interp = await run(scene, { backend: 'interp' });
    const jit = await run(scene, { backend: 'jit' });
    t.equal(firstDifference(interp, jit), undefined, 'both backends agree at the deepest');
    // Past it, and 700 deep: a positioned diagnostic, not a crash.
    for (const n of [deepest + 2, 700]) {
      const text = KERNEL(make(n));
      const d = firstDiagnostic(text);
      t.ok(d, `${n} deep is a diagnostic`);
      t.match(d!.message, `more than ${MAX_NESTING} levels deep`, 'saying the limit');
      t.match(d!.message, /const part|fn|separate/, 'and what to do');
      t.equal(d!.line, 5, 'on the body line');
      const at = nestingPastLimit(text, text.indexOf('{', text.indexOf('each')) + 1, text.length);
      t.equal(d!.span.start, at, 'at the place the nesting goes past the limit');
    }
  });
}

t.test('fn chains: 16 inlined inside one another run; the 17th call is refused where it is made', async (t) => {
  const chain = (n: number) => {
    let fns = 'fn g0(a: f32): f32 { return a + 1.0; }\n';
    for (let i = 1; i < n; i++) fns += `fn g${i}(a: f32): f32 { return g${i - 1}(a) + 1.0; }\n`;
    return KERNEL(`result = g${n - 1}(f32(x));`, fns);
  };
  const ok = textScene({ 'scene.esn': chain(MAX_CALL_DEPTH) });
  t.same(ok.diagnostics, []);
  t.equal(firstDifference(await run(ok, { backend: 'interp' }), await run(ok, { backend: 'jit' })), undefined, 'both backends agree');
  for (const n of [MAX_CALL_DEPTH + 1, 700]) {
    const d = firstDiagnostic(chain(n));
    t.ok(d, `a chain of ${n}`);
    t.match(d!.message, `${MAX_CALL_DEPTH + 1} calls deep`);
    t.match(d!.message, 'call it from fewer fns');
    // The refused call is in the body of the fn 16 calls down: g(n-17), on line n - 16 + 1.
    t.equal(d!.line, n - MAX_CALL_DEPTH + 1, 'at the call that goes past');
  }
});

t.test('fns that each nest a little add up: past the lowering depth, a diagnostic, not a crash', async (t) => {
  let fns = 'fn g0(a: f32): f32 { return a + 1.0; }\n';
  for (let i = 1; i < MAX_CALL_DEPTH; i++) fns += `fn g${i}(a: f32): f32 { let r = 0.0; ${'if (a >= 0.0) { '.repeat(40)}r = g${i - 1}(a) + 1.0;${' }'.repeat(40)} return r; }\n`;
  const d = firstDiagnostic(KERNEL(`result = g${MAX_CALL_DEPTH - 1}(f32(x));`, fns));
  t.ok(d);
  t.match(d!.message, `more than ${MAX_LOWERING_DEPTH} levels deep here once the fns it calls are inlined`);
  t.ok(d!.line > 1 && d!.column > 1, 'positioned');
});

t.test('fns that call fns several times multiply: past the inlined size, a diagnostic at the kernel\'s call, at once', async (t) => {
  // Each fn calls the one below three times: 3^depth copies of g0, within the call depth.
  const tree = (depth: number) => {
    let fns = 'fn g0(a: f32): f32 { return sin(a) * 0.5; }\n';
    for (let i = 1; i <= depth; i++) fns += `fn g${i}(a: f32): f32 { return g${i - 1}(a) + g${i - 1}(a * 0.5) + g${i - 1}(a * 0.25); }\n`;
    return KERNEL(`result = g${depth}(f32(x));`, fns);
  };
  const under = textScene({ 'scene.esn': tree(7) });
  t.same(under.diagnostics, [], '3^7 copies check');
  t.equal(firstDifference(await run(under, { backend: 'interp' }), await run(under, { backend: 'jit' })), undefined, 'and run the same on both backends');
  // 3^15 copies took 5 GB and a minute, and ended the process; now refused as soon as it grows past.
  for (const depth of [10, 15]) {
    const d = firstDiagnostic(tree(depth));
    t.ok(d, `3^${depth} copies: a diagnostic`);
    t.match(d!.message, `grows past ${MAX_LOWERED} statements and expressions once the fns it calls are inlined`);
    t.match(d!.message, /`g0` \d+ times, `g1` \d+ times, `g2` \d+ times so far/, 'naming the fns copied most');
    t.match(d!.message, /make repeated calls a loop/, 'and what to do');
    t.equal(d!.line, depth + 6, 'at the kernel body\'s own call');
  }
});

t.test('the nesting count skips strings, comments and template text', async (t) => {
  const deep = '('.repeat(300);
  for (const body of [`// ${deep}`, `/* ${deep} */`, `"${deep}"`, `'${deep}'`, `\`${deep}\``]) t.equal(nestingPastLimit(body, 0, body.length), undefined, body.slice(0, 8));
  const template = '`${' + '('.repeat(300) + '}`';
  t.ok(nestingPastLimit(template, 0, template.length), "a template's ${} is code");
  t.equal(nestingPastLimit('if (a) {} if (b) {} '.repeat(200), 0, 4000), undefined, 'sibling ifs do not add up');
  t.ok(nestingPastLimit('if (a) {} else '.repeat(200), 0, 3000), 'an else chain does');
  t.equal(nestingPastLimit('a = 1e-3 + 1.5e+2;', 0, 18), undefined);
});

t.test('through the doors: entelechy check prints file:line:column, serve answers the diagnostic', async (t) => {
  const dir = scratchDir('entelechy-depth-');
  t.teardown(() => undefined);
  writeFileSync(join(dir, 'scene.esn'), KERNEL(FORMS['nested ifs'](700)));
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'check', join(dir, 'scene.esn')], { encoding: 'utf8' });
  t.equal(r.status, 1, 'exit status 1');
  t.match(r.stdout + r.stderr, /scene\.esn:5:\d+: error: the code nests more than 128 levels deep/);
  t.notMatch(r.stdout + r.stderr, /Maximum call stack|this is a bug|internal error|\n\s+at /);

  const copy = copyExample('rings', 'depth');
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(copy, 'scene.esn'), '--workers', '1'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill();
  });
  const out = new Lines(child.stdout);
  const ask = async (req: object) => {
    child.stdin.write(JSON.stringify(req) + '\n');
    return JSON.parse((await out.next())!);
  };
  let fns = 'fn g0(a: f32): f32 { return a; }\n';
  for (let i = 1; i < 700; i++) fns += `fn g${i}(a: f32): f32 { return g${i - 1}(a) + 1.0; }\n`;
  for (const [what, source] of [
    ['a 700-deep fn chain', `${fns}kernel demo.chain@1 {\n  out result: field2<f32>;\n  each (x, y) {\n    result = g699(1.0);\n  }\n}\n`],
    ['700 nested ifs', KERNEL(FORMS['nested ifs'](700)).split('node n:')[0]],
  ]) {
    for (const op of ['prepare', 'publish']) {
      const a = await ask({ id: 1, op, source });
      t.ok(a.error, `${op} of ${what} is refused`);
      t.notOk(a.error?.internal, 'not an internal error');
      t.ok(a.error?.diagnostics?.[0]?.line > 0 && a.error?.diagnostics?.[0]?.column > 0, 'positioned');
      t.notMatch(JSON.stringify(a), /Maximum call stack|this is a bug/);
    }
    const c = await ask({ id: 2, op: 'compose', path: 'kernels.esn', text: source.replace('demo.chain@1', 'demo.rings@1').replace('demo.deep@1', 'demo.rings@1') });
    t.ok(c.error, `compose of ${what} is refused`);
    t.notOk(c.error?.internal);
    t.notMatch(JSON.stringify(c), /Maximum call stack|this is a bug/);
  }
  const status = await ask({ id: 3, op: 'status' });
  t.equal(status.ok?.loaded, true, 'the session goes on');
});
