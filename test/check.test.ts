// The checker: each mistake is reported at the document's own line and column, says what is
// wrong, and where one mends it carries a fix (the corrected statement or member text).

import t from 'tap';
import { textScene } from './helpers.js';

const KERNELS = `kernel demo.rings@1 {
  grants time.read;
  in count: f32 = 8.0;
  out result: field2<vec4>;
  each (x, y) {
    const v = 0.5 + 0.5 * sin(x * count + time);
    result = vec4(v, v, v, 1.0);
  }
}

kernel demo.tint@1 {
  in src: field2<vec4>;
  in warmth: f32 = 0.5;
  out result: field2<vec4>;
  each (x, y) {
    result = vec4(src.x * warmth, src.y, src.z, src.w);
  }
}
`;

function only(scene: ReturnType<typeof textScene>) {
  return scene.diagnostics.map((d) => ({ line: d.line, column: d.column, message: d.message, fix: d.fix }));
}

t.test('a clean scene has no diagnostics', async (t) => {
  const scene = textScene({ 'scene.esn': `use "k.esn";\nnode a: demo.rings@1 { size = 8 x 8; }\nnode b: demo.tint@1 { src <- a.result; }\noutput o <- b.result;\n`, 'k.esn': KERNELS });
  t.same(only(scene), []);
  t.same(scene.nodes.map((n) => n.name), ['a', 'b']);
});

t.test('one mistake is reported once: what names the broken kernel, node or variable says nothing more', async (t) => {
  const SCENE = `use "k.esn";\nnode a: demo.rings@1 { size = 8 x 8; }\nnode b: demo.tint@1 { src <- a.result; }\noutput o <- b.result;\noutput p <- a.result;\n`;
  // A typo in a kernel: not its later uses of the variable, nor the node that runs it, nor what reads that node.
  const typo = textScene({ 'scene.esn': SCENE, 'k.esn': KERNELS.replace('sin(x * count', 'sinn(x * count') });
  t.same(only(typo).map((d) => [d.line, d.message]), [[6, 'unknown function `sinn`; did you mean `sin`?']]);
  // A node statement that does not parse: not the node and output reading it.
  const broken = textScene({ 'scene.esn': SCENE.replace('size = 8 x 8; }', 'size = 8 x 8 }'), 'k.esn': KERNELS });
  t.equal(only(broken).length, 1, JSON.stringify(only(broken)));
  t.match(only(broken)[0].message, /expected `;`/);
  // A kernel whose text does not parse: not the node that runs it.
  const unparsed = textScene({ 'scene.esn': SCENE, 'k.esn': KERNELS.replace('out result: field2<vec4>;\n  each (x, y) {\n    const v', 'out result field2<vec4>;\n  each (x, y) {\n    const v') });
  t.equal(only(unparsed).length, 1, JSON.stringify(only(unparsed)));
  // A name that is unknown for its own sake is still reported.
  const unknown = textScene({ 'scene.esn': SCENE, 'k.esn': KERNELS.replace('result = vec4(v, v, v, 1.0);', 'result = vec4(w, v, v, 1.0);') });
  t.same(only(unknown).map((d) => d.message), ['unknown name `w`']);
  // A node running a kernel no document declares: not again at the output reading the node.
  const version = textScene({ 'scene.esn': SCENE.replace('demo.rings@1', 'demo.rings@2'), 'k.esn': KERNELS });
  t.same(only(version).map((d) => d.message), ['node `a` runs `demo.rings@2`, which no document of the scene declares; did you mean `demo.rings@1`?']);
});

t.test('an assignment to a misspelt name suggests the port or variable meant', async (t) => {
  const SCENE = `use "k.esn";\nnode a: demo.rings@1 { size = 8 x 8; }\noutput o <- a.result;\n`;
  // It said only "declare it first", as if a new variable were meant.
  const typo = textScene({ 'scene.esn': SCENE, 'k.esn': KERNELS.replace('result = vec4(v, v, v, 1.0);', 'reslt = vec4(v, v, v, 1.0);') });
  t.same(only(typo).map((d) => d.message), ['unknown name `reslt`; did you mean `result`? (a new variable is declared first: `let reslt = ...;`)']);
  const fresh = textScene({ 'scene.esn': SCENE, 'k.esn': KERNELS.replace('result = vec4(v, v, v, 1.0);', 'zzzq = 1.0;\n    result = vec4(v, v, v, 1.0);') });
  t.same(only(fresh).map((d) => d.message), ['unknown name `zzzq`: declare it first with `let zzzq = ...;`']);
});

t.test('a variable declared without a value is told once, not again at each use', async (t) => {
  const SCENE = `use "k.esn";\nnode a: demo.rings@1 { size = 8 x 8; }\noutput o <- a.result;\n`;
  // Each later use said "unknown name `s`" too.
  const k = KERNELS.replace('const v = 0.5', 'let s;\n    s = x * 2.0;\n    const v = s + 0.5');
  t.same(only(textScene({ 'scene.esn': SCENE, 'k.esn': k })).map((d) => d.message), ['give `s` a value where it is declared: `let s = 0.0;`']);
});

t.test('an assignment to a swizzle says which component is wrong: repeated or missing', async (t) => {
  const SCENE = `use "k.esn";\nnode a: demo.rings@1 { size = 8 x 8; }\noutput o <- a.result;\n`;
  const body = (line: string) => KERNELS.replace('result = vec4(v, v, v, 1.0);', `let c = vec4(v);\n    ${line}\n    result = c;`);
  t.same(only(textScene({ 'scene.esn': SCENE, 'k.esn': body('c.xx = vec2(1.0, 2.0);') })).map((d) => d.message), [
    'cannot assign to `.xx`: it names a component twice (`x`), so the value would have two places; assign each component once',
  ]);
  const vec2 = KERNELS.replace('result = vec4(v, v, v, 1.0);', 'let c = vec2(v);\n    c.xz = vec2(1.0, 2.0);\n    result = vec4(c, 0.0, 1.0);');
  t.same(only(textScene({ 'scene.esn': SCENE, 'k.esn': vec2 })).map((d) => d.message), ['cannot assign to `.xz`: a vec2 has no `z` component']);
});

t.test('a misspelt kernel id: the closest id, and the node with it as the fix', async (t) => {
  const scene = textScene({ 'scene.esn': `use "k.esn";\n\nnode a: demo.ring@1 { size = 8 x 8; }\noutput o <- a.result;\n`, 'k.esn': KERNELS });
  const [d] = only(scene);
  t.equal(d.line, 3);
  t.equal(d.column, 9);
  t.match(d.message, /did you mean `demo.rings@1`/);
  t.same(d.fix, { node: 'a', text: 'node a: demo.rings@1 { size = 8 x 8; }' });
});

t.test('a missing grant names it where the body first needs it, and gives the kernel with the grant added', async (t) => {
  const src = `kernel k.t@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    r = time;\n  }\n}\nnode n: k.t@1 {}\noutput o <- n.r;\n`;
  const [d] = only(textScene({ 'scene.esn': src }));
  t.match(d.message, /time.read/);
  t.equal(d.line, 4, 'at `time` (it was at the kernel\'s name)');
  t.equal(d.column, 9);
  t.equal(d.fix?.kernel, 'k.t@1');
  t.match(String(d.fix?.text), /^kernel k.t@1 \{\n  grants time.read;\n  out r/);
});

t.test('several missing grants: each where first needed, and every fix adds them all (one fix dropped the others)', async (t) => {
  const src = `kernel k.m@1 {\n  in s: field2<f32>;\n  state c: field2<f32>;\n  out r: field2<f32>;\n  each (x, y) {\n    c = s.at(x + 1, y) + pointer.xy.x;\n    r = c + f32(frame);\n  }\n}\n`;
  const ds = textScene({ 'scene.esn': src }).diagnostics;
  t.same(ds.map((d) => [d.line, d.column, /grant (\S+):/.exec(d.message)?.[1]]), [[6, 9, 'field.read'], [6, 26, 'input.read'], [7, 17, 'time.read'], [3, 3, 'field.write']]);
  for (const d of ds) {
    t.match(d.message, /the fix adds all 4 it lacks: field\.read, input\.read, time\.read, field\.write\)$/);
    t.match(String(d.fix?.text), /^kernel k\.m@1 \{\n  grants field\.read, input\.read, time\.read, field\.write;\n  in s/);
  }
  const fixed = src.replace(/^kernel k\.m@1 \{[^]*?\n\}\n/, String(ds[0].fix!.text) + '\n');
  t.same(textScene({ 'scene.esn': fixed }).diagnostics.map((d) => d.message), [], 'the fix checks clean');
});

t.test('a gather without field.read is refused', async (t) => {
  const src = `kernel k.g@1 {\n  in s: field2<f32>;\n  out r: field2<f32>;\n  each (x, y) { r = s.at(x + 1, y); }\n}\n`;
  const [d] = only(textScene({ 'scene.esn': src }));
  t.match(d.message, /field\.read/);
  t.match(String(d.fix?.text), /grants field\.read;/);
});

t.test('a misspelt builtin inside a body: line and column in the document', async (t) => {
  const src = `kernel k.s@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    r = sine(x);\n  }\n}\n`;
  const [d] = only(textScene({ 'scene.esn': src }));
  t.equal(d.line, 4);
  t.equal(d.column, 9);
  t.match(d.message, /unknown function `sine`; did you mean `sin`/);
});

t.test('Math.random and a function nothing is near say what to call instead', async (t) => {
  const kernel = (body: string) => `kernel k.r@1 {\n  grants time.read;\n  out r: field2<f32>;\n  each (x, y) { r = ${body}; }\n}\nnode n: k.r@1 { size = 4 x 4; }\noutput o <- n.r;\n`;
  t.match(only(textScene({ 'scene.esn': kernel('Math.random()') }))[0]?.message, /^`Math\.random` is not available: .*use `hash\(x, y\)`/);
  t.match(only(textScene({ 'scene.esn': kernel('zzqx(1.0)') }))[0]?.message, /^unknown function `zzqx`: call a builtin \(`help builtins` lists them\)/);
});

t.test('an unknown variable suggests the closest name', async (t) => {
  const src = `kernel k.s@1 {\n  in count: f32 = 1.0;\n  out r: field2<f32>;\n  each (x, y) {\n    r = cuont;\n  }\n}\n`;
  const [d] = only(textScene({ 'scene.esn': src }));
  t.equal(d.line, 5);
  t.equal(d.column, 9);
  t.match(d.message, /did you mean `count`/);
});

t.test('types: a vec3 assigned to a vec4 port', async (t) => {
  const src = `kernel k.s@1 {\n  out r: field2<vec4>;\n  each (x, y) {\n    r = vec3(1.0, 2.0, 3.0);\n  }\n}\n`;
  const [d] = only(textScene({ 'scene.esn': src }));
  t.equal(d.line, 4);
  t.equal(d.message, "the target is a vec4, and this is a vec3");
});

t.test('wiring: edge types, unknown ports with fixes, unconnected ports, cycles', async (t) => {
  const k = `kernel k.a@1 {\n  out r: field2<f32>;\n  each (x, y) { r = 1.0; }\n}\nkernel k.b@1 {\n  in s: field2<vec4>;\n  out r: field2<vec4>;\n  each (x, y) { r = s; }\n}\n`;
  const typeMismatch = only(textScene({ 'scene.esn': k + `node a: k.a@1 {}\nnode b: k.b@1 { s <- a.r; }\noutput o <- b.r;\n` }));
  t.equal(typeMismatch.length, 1);
  t.match(typeMismatch[0].message, /field2<vec4>, but `a.r` is a field2<f32>/);
  t.equal(typeMismatch[0].line, 11);

  const badPort = only(textScene({ 'scene.esn': k + `node a: k.b@1 { s <- b.r; }\nnode b: k.b@1 { ss <- a.r; }\noutput o <- b.r;\n` }));
  const typo = badPort.find((d) => /did you mean `s`/.test(d.message));
  t.ok(typo, 'suggests the port');
  t.same(typo?.fix, { node: 'b', member: 'ss', text: 's <- a.r;' });
  t.ok(badPort.some((d) => /unconnected/.test(d.message)), 'the unconnected port is named');

  const cycle = only(textScene({ 'scene.esn': k + `node a: k.b@1 { s <- b.r; }\nnode b: k.b@1 { s <- a.r; }\noutput o <- b.r;\n` }));
  t.ok(cycle.some((d) => /form a cycle/.test(d.message)), 'cycles are refused');
});

t.test('a pointwise read of a field of another size is refused with what to do', async (t) => {
  const src = KERNELS + `node a: demo.rings@1 { size = 8 x 8; }\nnode b: demo.tint@1 { size = 16 x 16; src <- a.result; }\noutput o <- b.result;\n`;
  const [d] = only(textScene({ 'scene.esn': src }));
  t.match(d.message, /at its own element, but `src` is 8 x 8 while the node's domain is 16 x 16/);
});

t.test('params: an unknown param named by a node suggests the close one', async (t) => {
  const src = KERNELS + `param warmth: f32 = 0.5 range 0..1;\nnode a: demo.rings@1 { size = 8 x 8; }\nnode b: demo.tint@1 { src <- a.result; warmth = wamth; }\noutput o <- b.result;\n`;
  const [d] = only(textScene({ 'scene.esn': src }));
  t.match(d.message, /did you mean `warmth`/);
  t.same(d.fix, { node: 'b', member: 'warmth', text: 'warmth = warmth;' });
});

t.test('a use outside the scene folder is refused', async (t) => {
  const [d] = only(textScene({ 'scene.esn': `use "../secret.esn";\n` }));
  t.match(d.message, /leaves the scene's folder/);
});

t.test('recursion and unsupported forms are refused with reasons', async (t) => {
  const src = `fn f(a: f32): f32 { return f(a); }\nkernel k.s@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    r = f(1.0);\n    const s = "text";\n  }\n}\n`;
  const ds = only(textScene({ 'scene.esn': src }));
  t.ok(ds.some((d) => /recursion/.test(d.message)));
  t.ok(ds.some((d) => /strings are not values/.test(d.message) && d.line === 6));
  const mutual = `fn f(a: f32): f32 { return g(a); }\nfn g(a: f32): f32 { return f(a) + 1.0; }\nkernel k.s@1 {\n  out r: field2<f32>;\n  each (x, y) { r = f(1.0); }\n}\nnode n: k.s@1 { size = 4 x 4; }\noutput o <- n.r;\n`;
  const [d, ...more] = only(textScene({ 'scene.esn': mutual }));
  t.same(more, []);
  t.same([d?.line, d?.column, d?.message], [2, 28, 'fn `f` calls itself through `g` (f -> g -> f): recursion is not supported (kernels have no call stack)'], 'through another fn: the chain is named');
});

t.test('a fn no kernel calls is checked all the same, at its own place; one it calls that fails is told once', async (t) => {
  const scene = (fns: string) => `${fns}\nkernel k.u@1 {\n  out r: field2<f32>;\n  each (x, y) { r = 1.0; }\n}\nnode n: k.u@1 { size = 4 x 4; }\noutput o <- n.r;\n`;
  const ds = only(textScene({ 'scene.esn': scene('fn g(a: f32): f32 { return lenght(a); }\nfn f(a: f32): f32 { return g(a) + time; }\nfn rec(a: f32): f32 { return rec(a); }') }));
  t.same(ds.map((d) => [d.line, d.column, d.message]), [
    [1, 28, 'unknown function `lenght`; did you mean `length`?'],
    [3, 30, 'fn `rec` calls itself: recursion is not supported (kernels have no call stack)'],
  ], 'each at its place, once (it was accepted until a kernel called it)');
  t.same(only(textScene({ 'scene.esn': scene('fn g(p: vec3, n: i32): f32 { let v = 0; v = 0.5 * p.x; return v + f32(n) + time + f32(frame) + pointer.xy.x + width; }') })), [], 'a fn that checks is fine uncalled, grants and widening as in a kernel');
});

t.test('an f32 for an i32 parameter, and an f32 given to hash, are refused at the argument (each was cut to an integer without a word)', async (t) => {
  const kernel = (fns: string, body: string) => `${fns}\nkernel k.a@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    r = ${body};\n  }\n}\nnode n: k.a@1 { size = 16 x 4; }\noutput o <- n.r;\n`;
  const band = 'fn band(i: i32): f32 { return f32(i % 4) / 4.0; }';
  const [arg, ...more] = only(textScene({ 'scene.esn': kernel(band, 'band(x / width)') }));
  t.same(more, []);
  t.same([arg?.line, arg?.column], [5, 14], 'at the argument');
  t.equal(arg?.message, 'argument 1 of `band` is an f32, but its parameter `i` is an i32, and the f32 would be cut to an integer: convert it where you mean to, i32(...) (toward zero) or i32(floor(...)), or declare `i: f32`');
  t.same(only(textScene({ 'scene.esn': kernel(band, 'band(x) + band(i32(x / 4))') })), [], 'an i32, or an f32 cut on purpose');
  const [h] = only(textScene({ 'scene.esn': kernel('', 'hash(x / width, y)') }));
  t.match(h?.message, /^hash takes integers, and argument 1 is an f32, which would be cut to an integer \(hash\(x \/ width\) is one value for a whole row\): hash the element's integer coordinates, e\.g\. hash\(x, y\), or cut on purpose with i32\(\.\.\.\), e\.g\. hash\(i32\(x \/ 8\)\)/);
  t.same(only(textScene({ 'scene.esn': kernel('', 'hash(x, y) + hash(i32(x / 8), 7)') })), [], 'integers hash as before');
});

t.test('a builtin value is never assigned nor hidden; types told as declared and given; a call of a fn that did not parse is not an unknown function', async (t) => {
  const kernel = (fns: string, body: string) => `${fns}\nkernel k.b@1 {\n  grants time.read;\n  out r: field2<vec4>;\n  each (x, y) {\n    ${body}\n  }\n}\nnode n: k.b@1 { size = 4 x 4; }\noutput o <- n.r;\n`;
  const first = (fns: string, body: string) => only(textScene({ 'scene.esn': kernel(fns, body) })).map((d) => [d.line, d.column, d.message]);
  // "unknown name `time`: declare it first with `let time = ...;`", and that `let` then froze the clock.
  t.same(first('', 'time = 0.0; r = vec4(time);'), [[6, 5, '`time` is a builtin value (seconds of the world clock) and cannot be assigned; give a variable of another name the value: `let t = ...;`']]);
  t.same(first('', 'let time = 0.0; r = vec4(time);'), [[6, 9, '`time` is a builtin value (seconds of the world clock): a variable of that name would hide it; name the variable otherwise']]);
  t.same(first('', 'const width = 3.0; r = vec4(width);'), [[6, 11, "`width` is a builtin value (the domain's extent along x): a variable of that name would hide it; name the variable otherwise"]]);
  // "fn `palette` holds a vec3, not an f32" read backwards.
  t.same(first('fn palette(t: f32): vec3 { return t * 2.0; }', 'r = vec4(palette(time), 1.0);'), [[1, 35, 'the return type of fn `palette` is a vec3, and this is an f32; make one of it, e.g. vec3(...)']]);
  t.same(first('', 'let c = vec3(1.0); c = 0.5; r = vec4(c, 1.0);'), [[6, 24, 'the target is a vec3, and this is an f32; make one of it, e.g. vec3(...)']]);
  // The fn's own parse error alone: a call of it was told "unknown function `tone`; did you mean `tan`?".
  for (const fn of ['fn tone(t) { return t; }', 'fn tone(float t): float { return t; }', 'function tone(t) { return t; }']) {
    const ds = first(fn, 'r = vec4(tone(time));');
    t.equal(ds.length, 1, `${fn}: one error, ${JSON.stringify(ds)}`);
    t.equal(ds[0]?.[0], 1, `${fn}: at the fn`);
  }
});

t.test('a loop that can never end is refused at the loop (it ran out of fuel at every element, every frame, with no line)', async (t) => {
  const kernel = (loop: string) => `kernel k.l@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    let v = 0.0;\n    ${loop}\n    r = v;\n  }\n}\nnode n: k.l@1 { size = 4 x 4; }\noutput o <- n.r;\n`;
  for (const loop of ['while (true) { v += 1.0; }', 'for (;;) { v += 1.0; }', 'do { v += 1.0; } while (true);', 'while (true) { for (let i = 0; i < 3; i++) { if (i == 2) break; } }']) {
    const [d, ...more] = only(textScene({ 'scene.esn': kernel(loop) }));
    t.same(more, [], loop);
    t.same([d?.line, d?.column], [5, 5], `${loop}: at the loop`);
    t.match(d?.message, /^this loop never ends: its condition is always true and nothing in its body leaves it \(no `break` or `return`\)/);
  }
  for (const loop of ['while (true) { v += 1.0; if (v > 3.0) break; }', 'for (;;) { if (v > 2.0) return; v += 1.0; }', 'while (v < 3.0) { v += 1.0; }', 'for (let i = 0; i < 4; i++) { v += 1.0; }'])
    t.same(only(textScene({ 'scene.esn': kernel(loop) })), [], `it can end: ${loop}`);
});

t.test('a fn that may end without a return is refused at the statement where it may (it gave 0)', async (t) => {
  const kernel = (fns: string) => `${fns}\nkernel k.h@1 {\n  out r: field2<f32>;\n  each (x, y) {\n    r = f(x - 2.0);\n  }\n}\nnode n: k.h@1 { size = 4 x 4; }\noutput o <- n.r;\n`;
  const [d, ...more] = only(textScene({ 'scene.esn': kernel('fn f(a: f32): f32 {\n  if (a > 0.0) { return a; }\n}') }));
  t.same(more, []);
  t.same([d.line, d.column], [2, 3], 'at the `if`');
  t.match(d.message, /not every path of fn `f` returns a value .*: end it with a `return`, or give the `if` an `else` that returns/);
  for (const body of ['if (a > 0.0) { return a; } else { return 1.0; }', 'if (a > 0.0) { return a; } else if (a < -1.0) { return 2.0; } else { return 1.0; }', 'if (a > 0.0) { return a; }\n  return 1.0;', '{ return a; }'])
    t.same(only(textScene({ 'scene.esn': kernel(`fn f(a: f32): f32 {\n  ${body}\n}`) })), [], `every path returns: ${body.replace(/\s+/g, ' ')}`);
  t.match(only(textScene({ 'scene.esn': kernel('fn f(a: f32): f32 {\n  for (let i = 0; i < 2; i++) { return a; }\n}') }))[0]?.message, /not every path.*: end it with a `return` after the loop \(the loop may end, or never run, without returning\)$/, 'a loop may run no time: the fix names the loop, not an `if`');
  t.match(only(textScene({ 'scene.esn': kernel('fn f(a: f32): f32 {\n  while (a > 0.0) { return 1.0; }\n}') }))[0]?.message, /: end it with a `return` after the loop/);
});

t.test('a variable in an each body named as a coordinate or a port is refused at its name; in a fn it is its own', async (t) => {
  const src = (body: string) => `fn rot(p: vec2): f32 {\n  let x = p.x;\n  return x;\n}\nkernel t.c@1 {\n  in gain: f32 = 1.0;\n  out result: field2<vec4>;\n  each (x, y) {\n    ${body}\n  }\n}\nnode c: t.c@1 { size = 8 x 8; gain = 0.7; }\noutput o <- c.result;\n`;
  const [coord, ...more] = only(textScene({ 'scene.esn': src('let a = x; let x = 3.0; result = vec4(a + x + rot(vec2(x, y)));') }));
  t.same(more, []);
  t.same([coord.line, coord.column], [9, 20]);
  t.equal(coord.message, "`x` is the element's coordinate: a variable of that name would hide it; name the variable otherwise");
  const [port] = only(textScene({ 'scene.esn': src('let gain = 0.1; result = vec4(gain);') }));
  t.same([port.line, port.column], [9, 9]);
  t.match(port.message, /`gain` is a port of the kernel: a variable of that name would hide it \(and the value the node gives it\)/);
  t.same(only(textScene({ 'scene.esn': src('if (gain > 0.0) { let a = 2.0; result = vec4(a); } else { let a = 3.0; result = vec4(a + rot(vec2(x, y))); }') })), [], 'a name in two blocks, and a fn\'s own `x`');
});

t.test('a type of GLSL or TypeScript is told its name here', async (t) => {
  for (const [written, meant] of [['float', 'f32'], ['int', 'i32'], ['number', 'f32'], ['boolean', 'bool']]) {
    const [d] = only(textScene({ 'scene.esn': `kernel t.c@1 {\n  in k: ${written} = 1;\n  out r: field2<f32>;\n  each (x, y) {\n    r = 0.0;\n  }\n}\n` }));
    t.equal(d?.message, `unknown type \`${written}\`; did you mean \`${meant}\`?`);
    t.same([d?.line, d?.column], [2, 9]);
  }
});

t.test('GLSL habits: `float v = 1.0;`, `vec2 p = ...;`, `int i = 0;` are told to declare with let or const, each at its place, with the kernel mended as the fix', async (t) => {
  const body = [
    '    float v = 1.0;',
    '    vec2 p = vec2(x, y) * 0.5;',
    '    const float k = 2.0; // stays const',
    '    for (int i = 0; i < 3; i++) { v += k; }',
    '    r = v + p.x;',
  ];
  const src = `kernel k.g@1 {\n  out r: field2<f32>;\n  each (x, y) {\n${body.join('\n')}\n  }\n}\nnode n: k.g@1 { size = 4 x 4; }\noutput o <- n.r;\n`;
  const ds = only(textScene({ 'scene.esn': src }));
  t.same(ds.map((d) => [d.line, d.column]), [[4, 5], [5, 5], [6, 11], [7, 10]], 'one diagnostic per declaration, at its type');
  t.equal(ds[0].message, '`float v` in the each body of kernel `k.g@1` is a GLSL declaration: declare with `let` or `const`: `let v = 1.0;` (the type follows from the value)');
  t.match(ds[1].message, /`vec2 p` .*: `let p = vec2\(x, y\) \* 0\.5;`/);
  t.match(ds[2].message, /`float k` .*: `const k = 2\.0;`/);
  t.match(ds[3].message, /`int i` .*: `let i = 0;`/);
  const mended = src.replace('float v', 'let v').replace('vec2 p', 'let p').replace('const float k', 'const k').replace('int i', 'let i');
  for (const d of ds) t.same(d.fix, { kernel: 'k.g@1', text: mended.slice(0, mended.indexOf('\nnode')) }, 'the fix is the kernel with every one mended');
  t.same(only(textScene({ 'scene.esn': mended })), [], 'and the mended scene checks');
  // A name after a type that is not a GLSL type is still the usual syntax error.
  const other = only(textScene({ 'scene.esn': src.replace('float v = 1.0;', 'number v = 1.0;').replace(/(vec2 p|const float k|int i)/g, (m) => ({ 'vec2 p': 'let p', 'const float k': 'const k', 'int i': 'let i' })[m]!) }));
  t.equal(other.length, 1);
  t.match(other[0].message, /unexpected `v`/);
});

t.test('a struct constructor as a declared value says how a struct starts', async (t) => {
  // It said only "expected a value (a number, true, false or vec2/vec3/vec4(...))".
  const src = 'struct P { pos: vec2; mass: f32; }\nkernel k.s@1 {\n  grants field.write;\n  state parts: field2<P> = P(vec2(0.0, 0.0), 0.0);\n  each (x, y) { parts = parts; }\n}\n';
  t.same(only(textScene({ 'scene.esn': src })).map((d) => [d.line, d.column, d.message]), [[4, 28, "`P(...)` is no value a declaration takes: write a number, true, false or vec2/vec3/vec4(...); a struct's components all start at one number, e.g. `= 0.0` (or leave the value out for zeros)"]]);
  t.same(only(textScene({ 'scene.esn': src.replace(' = P(vec2(0.0, 0.0), 0.0)', ' = 0.0') })), [], '= 0.0 checks');
});

t.test("a kernel's size of another count of extents than its each's coordinates is refused (it was ignored: its nodes ran the default)", async (t) => {
  const scene = textScene({ 'scene.esn': 'kernel vox.bad@1 { out o: field3<f32>; size 8 x 8; each (x, y, z) { o = 1.0; } }\nnode b: vox.bad@1 { }\noutput o <- b.o;\n' });
  t.match(only(scene), [{ line: 1, column: 40, message: 'kernel vox.bad@1 has 3 coordinates (each (x, y, z)), so its size needs 3 extents, e.g. `size 64 x 64 x 64;`' }]);
});

t.test('`z` in a 2-D kernel says the each names its coordinates, and how a 3-D kernel is written', async (t) => {
  const scene = textScene({ 'scene.esn': 'kernel v.z@1 { out o: field2<f32>; each (x, y) { o = f32(z) + 1.0; } }\nnode n: v.z@1 { size = 4 x 4; }\noutput o <- n.o;\n' });
  t.match(only(scene), [{ line: 1, column: 58, message: "unknown name `z`: the kernel's each names 2 coordinates (x, y); a 3-D kernel names x, y, z: `each (x, y, z)`, its out ports field3" }]);
});
