// The graph checker (src/ir/check/graph.ts) and the session's grants (src/ir/grants.ts, the grant
// check of src/ir/check/scene.ts): for each wiring mistake, the one diagnostic a user reads (line,
// column, message, fix); for clean scenes, the edges, values, domains, order and outputs the
// engine is built from. Scenes are checked in memory: no compiler, no engine.

import t, { type Test } from 'tap';
import { loadScene, type Scene, type SceneOptions } from '../src/ir/check/scene.js';
import { ALL_GRANTS, GRANTS, isGrant } from '../src/ir/grants.js';

// Kernels of each shape the graph can wire: 1-, 2- and 3-D fields, scalar and vector ports,
// a state port, a pointwise reader and a gatherer.
const KERNELS = `
kernel k.src2@1 {
  in gain: f32 = 1.0;
  out r: field2<f32>;
  each (x, y) { r = gain; }
}
kernel k.src3@1 {
  out v: field3<f32>;
  size 4 x 4 x 4;
  each (x, y, z) { v = 1.0; }
}
kernel k.line@1 {
  out r: field1<f32>;
  each (x) { r = 1.0; }
}
kernel k.color@1 {
  in tint: vec3 = 1.0;
  in bias: f32;
  out c: field2<vec4>;
  each (x, y) { c = vec4(tint, bias); }
}
kernel k.read@1 {
  in s: field2<f32>;
  in k: f32 = 1.0;
  out r: field2<f32>;
  each (x, y) { r = s * k; }
}
kernel k.gather@1 {
  grants field.read;
  in s: field2<f32>;
  out r: field2<f32>;
  each (x, y) { r = s.at(x + 1, y); }
}
kernel k.life@1 {
  grants field.write, time.read;
  state cells: field2<f32> = 0.0;
  out shown: field2<f32>;
  each (x, y) { cells = cells + 1.0; shown = cells + f32(frame); }
}
kernel k.only@1 {
  grants field.write;
  state s: field2<f32> = 0.0;
  each (x, y) { s = s + 1.0; }
}
kernel k.pair@1 {
  in a: field2<f32>;
  in b: field2<f32>;
  out r: field2<f32>;
  each (x, y) { r = a + b; }
}
kernel k.mixed@1 {
  in a: field2<f32>;
  in c: field2<vec4>;
  out r: field2<vec4>;
  each (x, y) { r = c * a; }
}
`;

const LINES = KERNELS.split('\n').length - 1; // the scene's own statements start after the kernels

function check(scene: string, options: Partial<SceneOptions> = {}): Scene {
  const docs: Record<string, string> = { 'scene.esn': KERNELS + scene };
  return loadScene('scene.esn', { read: (p) => docs[p], ...options });
}

/** The diagnostics as [line in the scene's part, column, message, fix]. */
function diags(scene: string, options: Partial<SceneOptions> = {}): [number, number, string, unknown?][] {
  return check(scene, options).diagnostics.map((d) => [d.line - LINES, d.column, d.message, ...(d.fix ? [d.fix] : [])] as [number, number, string, unknown?]);
}

function clean(t: Test, scene: string, options: Partial<SceneOptions> = {}): Scene {
  const s = check(scene, options);
  t.same(s.diagnostics.map((d) => d.message), [], 'the scene checks');
  return s;
}

t.test('the kernels the tests wire check clean', async (t) => {
  const s = clean(t, '');
  t.equal(s.kernels.size, 10);
});

t.test('a node running an unknown kernel: the nearest id as the fix, else none', async (t) => {
  t.same(diags('node a: k.src@1 {}\n'), [[1, 9, 'node `a` runs `k.src@1`, which no document of the scene declares; did you mean `k.src2@1`?', { node: 'a', text: 'node a: k.src2@1 {}' }]]);
  t.same(diags('node a: zz.qqqq@9 { }\n'), [[1, 9, 'node `a` runs `zz.qqqq@9`, which no document of the scene declares']]);
});

t.test('node members: only in ports, by name (nearest as the fix, else the list)', async (t) => {
  t.same(diags('node a: k.src2@1 { r = 1.0; }\n'), [[1, 20, '`r` is an out port of k.src2@1; a node sets only in ports (its in ports: gain)']]);
  t.same(diags('node a: k.src2@1 { gian = 2.0; }\n'), [[1, 20, 'k.src2@1 has no in port `gian`; did you mean `gain`?', { node: 'a', member: 'gian', text: 'gain = 2.0;' }]]);
  t.same(diags('node a: k.read@1 { s <- b; zzzz = 2.0; }\nnode b: k.src2@1 {}\n'), [[1, 28, 'k.read@1 has no in port `zzzz` (its in ports: s, k)']]);
  t.same(diags('node a: k.line@1 { q = 1.0; }\n'), [[1, 20, 'k.line@1 has no in port `q` (it has no in ports)']]);
});

t.test('a node member given twice is an error (the last one was taken silently); the fix removes the first', async (t) => {
  t.same(diags('node a: k.src2@1 {\n  gain = 2.0;\n  gain = 3.0;\n}\n'), [[3, 3, 'node `a` sets `gain` twice (first at line ' + (LINES + 2) + '); keep one', { node: 'a', member: 'gain', text: null }]]);
  t.same(diags('node a: k.src2@1 { size = 8 x 8; size = 4 x 4; }\n'), [[1, 34, 'node `a` sets `size` twice (first at line ' + (LINES + 1) + '); keep one', { node: 'a', member: 'size', text: null }]]);
  t.same(diags('node a: k.read@1 { s <- b; s <- b; }\nnode b: k.src2@1 {}\n').map((d) => d[2]), ['node `a` sets `s` twice (first at line ' + (LINES + 1) + '); keep one']);
});

t.test('in ports left without a source or value', async (t) => {
  t.same(diags('node a: k.read@1 {}\n'), [[1, 6, 'node `a` leaves the in port `s` (field2<f32>) unconnected: add `s <- NODE.PORT;`']]);
  t.same(diags('node a: k.color@1 {}\n'), [[1, 6, 'node `a` gives no value to the in port `bias`, which has no default: add `bias = ...;`']]);
  // Defaults fill the rest; a value given replaces the default.
  const s = clean(t, 'node a: k.color@1 { bias = 0.5; }\nnode b: k.src2@1 { gain = 3.0; }\n');
  t.same(Object.fromEntries(s.nodes[0].values), { bias: { value: [0.5] }, tint: { value: [1, 1, 1] } });
  t.same(Object.fromEntries(s.nodes[1].values), { gain: { value: [3] } });
});

t.test('values: components counted, a single number repeated over a vector', async (t) => {
  t.same(diags('node a: k.color@1 { bias = 0.5; tint = vec2(1.0, 2.0); }\n'), [[1, 40, '`tint` takes a vec3 (3 components); this value has 2']]);
  t.same(diags('node a: k.color@1 { bias = vec2(1.0, 2.0); }\n'), [[1, 28, '`bias` takes an f32 (1 component); this value has 2']]);
  const s = clean(t, 'node a: k.color@1 { bias = 0.5; tint = 0.25; }\n');
  t.same(s.nodes[0].values.get('tint'), { value: [0.25, 0.25, 0.25] });
  t.same(clean(t, 'node a: k.color@1 { bias = 0.5; tint = vec3(1.0, 2.0, 3.0); }\n').nodes[0].values.get('tint'), { value: [1, 2, 3] });
});

t.test('values: true and false only for bools, whole numbers for i32s (nodes, port defaults, params and inputs alike)', async (t) => {
  // `count = true` for an f32 was taken as 1, `n = 2.5` for an i32 as 2.5, `on = 1` for a bool as true.
  const kinds = 'kernel k.kinds@1 {\n  in n: i32 = 1;\n  in on: bool = false;\n  out r: field2<f32>;\n  each (x, y) { r = on ? f32(n) : 0.0; }\n}\n';
  const member = (text: string) => diags(`${kinds}node a: k.kinds@1 { ${text} }\n`).map((d) => d[2]);
  t.same(member('n = 3; on = true;'), []);
  t.same(member('n = 2.5;'), ['`n` takes an i32, which holds whole numbers: write an integer, e.g. 3']);
  t.same(member('on = 1;'), ['`on` takes a bool: write true or false']);
  t.same(diags('node a: k.color@1 { bias = true; }\n'), [[1, 28, '`bias` takes an f32, not true or false: write a number, e.g. 1.0']]);
  t.same(diags('node a: k.color@1 { bias = 0.5; tint = false; }\n').map((d) => d[2]), ['`tint` takes a vec3, not true or false: write a number, e.g. 1.0']);
  // The same rule for what a kernel, a param and an input declare (a param's numbers keep to its own rule: test/params).
  t.same(diags(kinds.replace('in on: bool = false;', 'in on: bool = 0;')).map((d) => d[2]), ['in port `on` takes a bool: write true or false']);
  t.same(diags(kinds.replace('in n: i32 = 1;', 'in n: i32 = 0.5;')).map((d) => d[2]), ['in port `n` takes an i32, which holds whole numbers: write an integer, e.g. 1']);
  t.same(diags('param p: f32 = true;\n').map((d) => d[2]), ['param `p` takes an f32, not true or false: write a number, e.g. 1.0']);
  t.same(diags('input i: field2<f32> = false size 4 x 4;\nnode a: k.read@1 { s <- i; }\n').map((d) => d[2]), ['input `i` takes an f32, not true or false: write a number, e.g. 1.0'], 'and not again where a node reads it');
  t.same(diags('param v: vec3 = vec2(1.0, 2.0);\n').map((d) => d[2]), ['param `v` takes a vec3 (3 components); this value has 2']);
  // A struct of mixed components starts at one number throughout, as before.
  const mixed = 'struct S { on: bool; n: i32; v: f32; }\nkernel k.s@1 {\n  grants field.write;\n  state s: field2<S> = 0.0;\n  each (x, y) { s = s; }\n}\n';
  t.same(diags(mixed).map((d) => d[2]), [], 'a struct state of bool, i32 and f32 components = 0.0');
});

t.test('values past f32\'s range are refused where written: node members, port defaults, params and their ranges, inputs', async (t) => {
  // `count = 1e39;` composed fine and ran as infinity while `graph` showed 1e39.
  const past = (n: string) => new RegExp(`is ${n.replace(/[.+]/g, '\\$&')}, past f32's range: kernels compute in f32, whose largest number is 3\\.4028234663852886e\\+38`);
  const one = (text: string) => diags(text).map((d) => [d[0], d[1], d[2]]);
  const [member] = one('node a: k.color@1 { bias = 1e39; }\n');
  t.same(member.slice(0, 2), [1, 28], 'at the value');
  t.match(member[2], past('1e+39'));
  t.match(member[2], /^`bias` is 1e\+39.*write a number from -3\.4028234663852886e\+38 to 3\.4028234663852886e\+38$/);
  t.match(one('node a: k.color@1 { bias = 0.5; tint = vec3(1.0, -1e39, 0.0); }\n')[0][2], past('-1e+39'), 'a component of a vector');
  t.match(one('node a: k.color@1 { bias = 1e400; }\n')[0][2], /^`bias` is above 1\.8e308, past f32's range/, 'past even a double');
  t.same(one('node a: k.color@1 { bias = 3.4028234663852886e38; }\n'), [], 'the largest f32 itself is a value');
  t.match(one('kernel k.big@1 {\n  in g: f32 = 1e39;\n  out r: field2<f32>;\n  each (x, y) { r = g; }\n}\n')[0], [2, 15, /^in port `g` is 1e\+39, past f32's range/]);
  t.match(one('param p: f32 = 1e39;\n')[0], [1, 16, /^param `p` is 1e\+39, past f32's range/]);
  t.match(one('param p: f32 = 0.5 range 0..1e40;\n'), [[1, 29, /^the high end of the range of param `p` is 1e\+40, past f32's range/]], 'said once: the param is still known');
  t.match(one('param p: f32 = 0.5 range -1e39..1;\n'), [[1, 26, /^the low end of the range of param `p` is -1e\+39/]]);
  t.match(one('input i: field2<f32> = 1e39 size 4 x 4;\n')[0], [1, 24, /^input `i` is 1e\+39, past f32's range/]);
});

t.test('a field port set to a value, and a plain port given an edge', async (t) => {
  t.same(diags('node a: k.read@1 { s = 1.0; }\n'), [[1, 20, '`s` is a field2<f32> in port: connect it with `s <- NODE.PORT;`']], 'said once: not again as unconnected');
  t.same(diags('node a: k.read@1 { s <- b.r; k <- b.r; }\nnode b: k.src2@1 {}\n'), [[1, 30, '`k` is a plain f32 value, not a field: set it with `k = ...;`']]);
});

t.test('params: unknown (nearest as the fix, else how to declare it), of another type', async (t) => {
  t.same(diags('param gain: f32 = 1.0;\nnode a: k.src2@1 { gain = gian; }\n'), [[2, 27, '`gian` is not a param of the scene; did you mean `gain`?', { node: 'a', member: 'gain', text: 'gain = gain;' }]]);
  t.same(diags('node a: k.src2@1 { gain = level; }\n'), [[1, 27, '`level` is not a param of the scene: declare `param level: f32 = ...;`']]);
  t.same(diags('param c: vec3 = 1.0;\nnode a: k.src2@1 { gain = c; }\n'), [[2, 27, 'param `c` is a vec3, but `gain` takes an f32']]);
  t.same(diags('param g: f32 = 1.0;\nnode a: k.color@1 { bias = 0.5; tint = g; }\n'), [[2, 40, 'param `g` is an f32, but `tint` takes a vec3']]);
  // A number of another scalar type is taken (an i32 param into an f32 port); a vec3 into a vec3 too.
  const s = clean(t, 'param n: i32 = 2;\nparam c: vec3 = 0.5;\nnode a: k.color@1 { bias = n; tint = c; }\n');
  t.same(Object.fromEntries(s.nodes[0].values), { bias: { param: 'n' }, tint: { param: 'c' } });
});

t.test('edges: the node and its port must exist (nearest as the fix), of the same field type and dimensions', async (t) => {
  t.same(diags('node a: k.src2@1 {}\nnode b: k.read@1 { s <- aa.r; }\n'), [[2, 20, 'node `b` reads `aa`, which is neither a node nor an input of the scene; did you mean `a`?', { node: 'b', member: 's', text: 's <- a.r;' }]]);
  t.same(diags('node a: k.src2@1 {}\nnode b: k.read@1 { s <- aa; }\n')[0][3], { node: 'b', member: 's', text: 's <- a;' });
  t.same(diags('node a: k.src2@1 {}\nnode b: k.read@1 { s <- zzzzz.r; }\n'), [[2, 20, 'node `b` reads `zzzzz`, which is neither a node nor an input of the scene']]);
  t.same(diags('node a: k.src2@1 {}\nnode b: k.read@1 { s <- a.q; }\n'), [[2, 20, 'node `a` (k.src2@1) has no out or state port `q`; its ports: r', { node: 'b', member: 's', text: 's <- a.r;' }]]);
  t.same(diags('node a: k.life@1 {}\nnode b: k.read@1 { s <- a.shwn; }\n'), [[2, 20, 'node `a` (k.life@1) has no out or state port `shwn`; its ports: cells, shown', { node: 'b', member: 's', text: 's <- a.shown;' }]]);
  t.same(diags('node a: k.life@1 {}\nnode b: k.read@1 { s <- a.zzzzz; }\n'), [[2, 20, 'node `a` (k.life@1) has no out or state port `zzzzz`; its ports: cells, shown']]);
  // Dimensions (the planted bug: a field3 feeding a field2 port checked clean) and element types.
  // Said once: not again as a pointwise read of other extents.
  t.same(diags('node a: k.src3@1 {}\nnode b: k.read@1 { s <- a.v; }\n'), [[2, 20, '`s` of node `b` is a field2<f32>, but `a.v` is a field3<f32>']]);
  t.same(diags('node a: k.line@1 {}\nnode b: k.read@1 { s <- a.r; }\n'), [[2, 20, '`s` of node `b` is a field2<f32>, but `a.r` is a field1<f32>']]);
  t.same(diags('node a: k.color@1 { bias = 0.0; }\nnode b: k.read@1 { s <- a.c; }\n'), [[2, 20, '`s` of node `b` is a field2<f32>, but `a.c` is a field2<vec4>']]);
  // Each edge is checked against its own port: the second of two field ports of other types.
  const two = 'node a: k.src2@1 {}\nnode col: k.color@1 { bias = 0.0; }\n';
  clean(t, `${two}node m: k.mixed@1 { a <- a.r; c <- col.c; }\n`);
  t.same(diags(`${two}node m: k.mixed@1 { a <- a.r; c <- a.r; }\n`), [[3, 31, '`c` of node `m` is a field2<vec4>, but `a.r` is a field2<f32>']]);
});

t.test('an edge naming only a node reads its out port (a state port when it has none)', async (t) => {
  const s = clean(t, 'node a: k.life@1 {}\nnode b: k.read@1 { s <- a; }\nnode c: k.only@1 {}\nnode d: k.read@1 { s <- c; }\n');
  const edge = (n: string) => s.nodes.find((x) => x.name === n)!.edges.get('s');
  t.same(edge('b'), { node: 'a', port: 'shown' }, 'the out port, not the state port declared first');
  t.same(edge('d'), { node: 'c', port: 's' }, 'the only port, a state port');
});

t.test('scene inputs: read by name, of the same field type and dimensions', async (t) => {
  const s = clean(t, 'input canvas: field2<f32> = 0.0 size 8 x 4;\nnode b: k.read@1 { s <- canvas; }\n');
  t.same(s.nodes[0].edges.get('s'), { input: 'canvas' });
  t.same(s.nodes[0].domain, [8, 4], 'the domain of the input it reads');
  t.same(diags('input v: field2<vec4> = 0.0 size 8 x 8;\nnode b: k.read@1 { s <- v; }\n'), [[2, 20, '`s` is a field2<f32>, but input `v` is a field2<vec4>']]);
  t.same(diags('input v: field3<f32> = 0.0 size 8 x 8 x 8;\nnode b: k.read@1 { s <- v; }\n'), [[2, 20, '`s` is a field2<f32>, but input `v` is a field3<f32>']]);
  // A misspelt input is suggested like a node.
  t.same(diags('input canvas: field2<f32> = 0.0 size 8 x 8;\nnode b: k.read@1 { s <- canvs; }\n')[0].slice(2), ['node `b` reads `canvs`, which is neither a node nor an input of the scene; did you mean `canvas`?', { node: 'b', member: 's', text: 's <- canvas;' }]);
});

t.test('cycles are named in order, and the order puts every source before its readers', async (t) => {
  t.same(diags('node a: k.read@1 { s <- b.r; }\nnode b: k.read@1 { s <- a.r; }\n'), [[1, 6, 'the nodes a -> b -> a form a cycle: a node cannot read its own result in the same frame; keep it in a `state` port instead']]);
  t.same(diags('node x: k.read@1 { s <- a.r; }\nnode a: k.read@1 { s <- b.r; }\nnode b: k.read@1 { s <- a.r; }\n')[0][2], 'the nodes a -> b -> a form a cycle: a node cannot read its own result in the same frame; keep it in a `state` port instead', 'the cycle alone, not the path into it');
  t.same(diags('node a: k.read@1 { s <- a.r; }\n'), [[1, 6, 'the nodes a -> a form a cycle: a node cannot read its own result in the same frame; keep it in a `state` port instead']]);
  const s = clean(t, 'node d: k.pair@1 { a <- c.r; b <- b.r; }\nnode c: k.read@1 { s <- b.r; }\nnode b: k.read@1 { s <- a.r; }\nnode a: k.src2@1 {}\nnode e: k.src2@1 {}\n');
  t.same(s.nodes.map((n) => n.name), ['a', 'b', 'c', 'd', 'e']);
});

t.test('domains: the size member, else the first field input, else the kernel, else the default; --size', async (t) => {
  const s = clean(t, [
    'node a: k.src2@1 { size = 8 x 4; }', // its own size
    'node b: k.read@1 { s <- a.r; }', // its input's
    'node c: k.src3@1 {}', // the kernel's size
    'node d: k.src2@1 {}', // the default for 2-D
    'node e: k.line@1 {}', // the default for 1-D
    'node f: k.gather@1 { size = 16 x 2; s <- a.r; }', // a gatherer of another size
    '',
  ].join('\n'));
  const domain = (n: string) => s.nodes.find((x) => x.name === n)!.domain;
  t.same([domain('a'), domain('b'), domain('c'), domain('d'), domain('e'), domain('f')], [[8, 4], [8, 4], [4, 4, 4], [256, 256], [256], [16, 2]]);
  // --size replaces the size of nodes with as many axes that have a size or read no field.
  const sized = clean(t, 'node a: k.src2@1 { size = 8 x 4; }\nnode b: k.read@1 { s <- a.r; }\nnode d: k.src2@1 {}\nnode e: k.line@1 {}\n', { size: [32, 16] });
  t.same(sized.nodes.map((n) => n.domain), [[32, 16], [32, 16], [32, 16], [256]]);
  // A node that reads a field keeps that field's extents unless it has a size of its own.
  const reading = clean(t, 'input i: field2<f32> = 0.0 size 8 x 8;\nnode g: k.gather@1 { s <- i; }\nnode h: k.gather@1 { size = 2 x 2; s <- i; }\n', { size: [32, 16] });
  t.same(reading.nodes.map((n) => [n.name, n.domain]), [['g', [8, 8]], ['h', [32, 16]]]);
  t.same(diags('node a: k.src2@1 { size = 8; }\n'), [[1, 20, 'node `a` runs a 2-D kernel; its size needs 2 extents']]);
  t.same(diags('node a: k.src2@1 { gain = 2.0; size = 8; }\n'), [[1, 32, 'node `a` runs a 2-D kernel; its size needs 2 extents']], 'at the size member');
  t.same(diags('node a: k.line@1 { size = 8 x 8; }\n'), [[1, 20, 'node `a` runs a 1-D kernel; its size needs 1 extent']]);
});

t.test('a pointwise read must match the node\'s domain; a gather need not', async (t) => {
  t.same(diags('node a: k.src2@1 { size = 8 x 8; }\nnode b: k.read@1 { size = 8 x 4; s <- a.r; }\n'), [[2, 34, 'node `b` reads `s` at its own element, but `s` is 8 x 8 while the node\'s domain is 8 x 4: give the node `size = 8 x 8;`, or read with s.sample(u, v)']]);
  t.same(diags('input i: field2<f32> = 0.0 size 2 x 2;\nnode b: k.read@1 { size = 8 x 4; s <- i; }\n')[0][2], 'node `b` reads `s` at its own element, but `s` is 2 x 2 while the node\'s domain is 8 x 4: give the node `size = 2 x 2;`, or read with s.sample(u, v)');
  clean(t, 'node a: k.src2@1 { size = 8 x 8; }\nnode b: k.gather@1 { size = 8 x 4; s <- a.r; }\n');
  // A 3-D field into a 2-D kernel: no size of the node mends it (it advised `size = 4 x 4 x 2;`, which the checker refused).
  const flat = 'kernel k.flat@1 {\n  in vox: field3<f32>;\n  out r: field2<f32>;\n  each (x, y) { r = vox; }\n}\ninput v: field3<f32> = 0.0 size 4 x 4 x 2;\nnode b: k.flat@1 { size = 4 x 4; vox <- v; }\n';
  t.same(diags(flat).map((d) => d[2]), ['node `b` reads `vox` at its own element, but `vox` is 4 x 4 x 2 while the node\'s domain is 4 x 4: a 2-D kernel\'s element is not one of a 3-D field: read it with vox.sample(u, v, w), or make the kernel 3-D']);
});

t.test('outputs: a node of the scene (nearest as the fix), and its out or state port', async (t) => {
  const base = 'node a: k.life@1 {}\nnode l: k.line@1 {}\nnode o: k.only@1 {}\n';
  const s = clean(t, `${base}output x <- a;\noutput y <- a.cells;\noutput z <- l;\noutput w <- o;\n`);
  t.same(s.outputs.map((o) => [o.name, o.node, o.port, o.path]), [['x', 'a', 'shown', 'scene.esn'], ['y', 'a', 'cells', 'scene.esn'], ['z', 'l', 'r', 'scene.esn'], ['w', 'o', 's', 'scene.esn']]);
  t.same(diags(`${base}output x <- aa.shown;\n`), [[4, 13, 'output `x` reads `aa`, which is not a node of the scene; did you mean `a`?', { output: 'x', text: 'output x <- a.shown;' }]]);
  t.same(diags(`${base}output x <- aa;\n`)[0][3], { output: 'x', text: 'output x <- a;' });
  t.same(diags(`${base}output x <- qqqq;\n`), [[4, 13, 'output `x` reads `qqqq`, which is not a node of the scene']]);
  t.same(diags(`${base}output x <- a.nope;\n`), [[4, 15, 'node `a` has no out or state port `nope`; its ports: cells, shown']]);
  t.same(diags('node b: k.read@1 { s <- c; }\nnode c: k.src2@1 {}\noutput x <- b.s;\n'), [[3, 15, 'node `b` has no out or state port `s`; its ports: r']], 'in ports are not outputs');
  // The second field port of a kernel, mistyped: reported at its own member.
  t.same(diags('node a: k.src2@1 {}\nnode v: k.src3@1 {}\nnode d: k.pair@1 { a <- a.r; b <- v.v; }\n'), [[3, 30, '`b` of node `d` is a field2<f32>, but `v.v` is a field3<f32>']]);
});

t.test('one mistake, one diagnostic: what reads a node that did not check says nothing more', async (t) => {
  // A node whose kernel did not check: neither the node, nor an edge or output reading it, adds one.
  const broken = 'kernel k.bad@1 {\n  out r: field2<f32>;\n  each (x, y) { r = nope; }\n}\nnode a: k.bad@1 {}\nnode b: k.read@1 { s <- a.r; }\noutput o <- a.r;\noutput p <- b.r;\n';
  const ds = diags(broken);
  t.same(ds.map((d) => d[2]), ['unknown name `nope`']);
  t.same(check(broken).nodes.map((n) => n.name), ['b']);
});

t.test('grants: a kernel needing one the session lacks is refused where it is declared', async (t) => {
  const scene = 'node a: k.gather@1 { s <- b.r; }\nnode b: k.src2@1 {}\n';
  const lacking = check(scene, { grants: ['time.read'] }).diagnostics;
  t.same(lacking.map((d) => [d.line, d.column, d.message]), [
    [28, 8, 'kernel k.gather@1 needs field.read, which this session does not grant (its grants: time.read); start the session with --grant time.read field.read (what it holds and what the kernel needs), or change the kernel not to need it'],
    [34, 8, 'kernel k.life@1 needs field.write, which this session does not grant (its grants: time.read); start the session with --grant time.read field.write (what it holds and what the kernel needs), or change the kernel not to need it'],
    [40, 8, 'kernel k.only@1 needs field.write, which this session does not grant (its grants: time.read); start the session with --grant time.read field.write (what it holds and what the kernel needs), or change the kernel not to need it'],
  ], 'each kernel needing another grant, once; the node running it says nothing more');
  t.notOk(check(scene, { grants: ['time.read'] }).kernels.has('k.gather@1'), 'the refused kernel is not in the scene');
  const none = check('', { grants: [] }).diagnostics.map((d) => d.message);
  t.same(none, [
    'kernel k.gather@1 needs field.read, which this session does not grant (its grants: none); start the session with --grant field.read (what it holds and what the kernel needs), or change the kernel not to need it',
    'kernel k.life@1 needs field.write, time.read, which this session does not grant (its grants: none); start the session with --grant field.write time.read (what it holds and what the kernel needs), or change the kernel not to need it',
    'kernel k.only@1 needs field.write, which this session does not grant (its grants: none); start the session with --grant field.write (what it holds and what the kernel needs), or change the kernel not to need it',
  ]);
  // Granted, or no grants given (a session's default: all), they run.
  t.match(check(scene, { grants: ['time.read', 'input.read'] }).diagnostics[0].message, /\(its grants: time\.read, input\.read\)/);
  t.equal(check(scene, { grants: ['field.read', 'field.write', 'time.read'] }).diagnostics.length, 0);
  t.equal(check(scene, { grants: ALL_GRANTS }).kernels.size, 10);
  t.equal(check(scene).kernels.size, 10);
});

t.test('the grants table: four names, each known to isGrant, nothing else', async (t) => {
  t.same(ALL_GRANTS, ['field.read', 'field.write', 'time.read', 'input.read']);
  t.same(GRANTS.map((g) => g.name), ALL_GRANTS);
  for (const g of ALL_GRANTS) t.ok(isGrant(g), g);
  for (const g of ['field.raed', '', 'field', 'FIELD.READ', 'time.write']) t.notOk(isGrant(g), `${g} is not a grant`);
});

t.test('a size past 65536 on a side is refused at its place, as --size refuses it (check passed it; render failed inside)', async (t) => {
  t.same(diags('node a: k.src2@1 { size = 2147483648 x 1; }\n').map((d) => d.slice(0, 3)), [[1, 27, 'an extent of a size is at most 65536, as --size takes; got 2147483648 x 1: write a smaller size (a render larger than memory is made in tiles, up to 65536 on a side)']]);
  clean(t, 'node a: k.src2@1 { size = 65536 x 1; }\n');
});
