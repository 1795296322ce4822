// The lossless parser of `.esn` documents: round trips, spans, acorn bodies, diagnostics, fixes,
// tables, and fuzzing (random documents, mutations, truncations, random bytes).

import t from 'tap';
import { parse as acornParse } from 'acorn';
import {
  FORMS,
  LineIndex,
  PART_KEYWORDS,
  RESERVED_WORDS,
  STATEMENT_KEYWORDS,
  parseDocument,
  positionAt,
  print,
} from '../src/ir/syntax/index.js';
import type { Body, Diagnostic, Document, FixEdit, NodeStatement, Statement, KernelStatement } from '../src/ir/syntax/index.js';

// --- the examples of DESIGN.md section 3 ---------------------------------------------------

const SCENE = `// examples/rings/scene.esn
use "kernels.esn";                     // documents this one uses (paths under the scene's folder)

param warmth: f32 = 0.5 range 0..1;    // a graph param; the \`param\` op sets it

node rings: demo.rings@1 {             // a node runs one kernel
  size = 256 x 256;                    // its domain
  count = 8.0;                         // the node's own value: the document's
}

node tint: demo.tint@1 {
  src <- rings.result;                 // an edge: port <- node.port
  warmth = warmth;                     // a member naming a graph param
}

output result <- tint.result;          // what \`read\` returns and the Player shows
`;

const KERNELS = `// examples/rings/kernels.esn
kernel demo.rings@1 {
  grants time.read;
  in count: f32 = 8.0;
  out result: field2<vec4>;
  each (x, y) {                        // the body is a JavaScript subset, parsed with acorn
    const p = vec2((x + 0.5) / width - 0.5, (y + 0.5) / height - 0.5);
    const v = 0.5 + 0.5 * sin((length(p) * count + time) * TAU);
    result = vec4(v, 0.8 * v, 0.6 * v, 1.0);
  }
}

kernel demo.tint@1 {
  in src: field2<vec4>;                // read at the own element: pointwise, fusable
  in warmth: f32 = 0.5;
  out result: field2<vec4>;
  each (x, y) {
    result = vec4(src.x * (0.5 + warmth), src.y, src.z * (1.5 - warmth), src.w);
  }
}
`;

const LIFE = `// examples/life — state, gathers, pointer input, migration
kernel life.step@2 {
  grants field.read, field.write, input.read;
  state cells: field2<f32> = 0.0;      // persists across frames, double-buffered
  out result: field2<vec4>;
  each (x, y) {
    let n = 0;
    for (let dy = -1; dy <= 1; dy++)
      for (let dx = -1; dx <= 1; dx++)
        if (dx != 0 || dy != 0) n += cells.wrap(x + dx, y + dy);   // gather: needs field.read
    let next = (n == 3 || (cells > 0.5 && n == 2)) ? 1.0 : 0.0;
    if (pointer.down && distance(pointer.xy, vec2(x, y)) < 4.0) next = 1.0;
    cells = next;                      // the next generation; committed only if the frame succeeds
    result = vec4(next, next, next, 1.0);
  }
  migrate from life.step@1 { cells = old.cells; }   // state carried across a layout change
}
`;

/** Every form of the language, each statement, part, member and field on a line of its own. */
const EVERY_FORM = `use "kernels.esn";
param warmth: f32 = 0.5 range 0..1;
param gain: f32;
param tint: vec4 = vec4(1, 0.5, -0.25, 1e0) range -1..1;
input paint: field2<vec4> = vec4(0, 0, 0, 1) size 64x32;
input mask: field3<bool> size 4 x 4 x 4;
struct Particle {
  pos: vec2;
  mass: f32;
};
type Color = vec4;
fn luma(c: vec4, k: f32): f32 { return dot(c.xyz, vec3(0.299, 0.587, 0.114)) * k; }
kernel demo.all@3 {
  grants field.read, time.read;
  in count: i32 = 0x10;
  in on: bool = true;
  out result: field2<vec4>;
  state cells: field2<f32> = -0.5;
  size 128 x 96;
  each (x, y) { result = vec4(1.0); }
  migrate from demo.all@2 { cells = old.cells; }
}
node rings: demo.rings@1 {
  size = 256 x 256;
  count = 8.0;
  warmth = warmth;
  src <- paint;
  other <- tint.result;
}
output result <- rings.result;
output plain <- rings;
`;

// --- helpers ------------------------------------------------------------------------------

function parse(text: string, path = 'scene.esn') {
  return parseDocument(path, text);
}

/** The items tile the text, statements are the non-trivia items in order, spans are sane. */
function checkInvariants(tt: { fail: (message: string) => unknown }, text: string, doc: Document, diagnostics: Diagnostic[]): boolean {
  let ok = true;
  const fail = (m: string) => {
    if (ok) tt.fail(`${m} in ${JSON.stringify(text.length > 3000 ? text.slice(0, 200) : text)}`);
    ok = false;
  };
  if (print(doc) !== text) fail('print does not round-trip');
  if (doc.text !== text) fail('doc.text is not the text');
  let at = 0;
  for (const item of doc.items) {
    if (item.span.start !== at) fail(`item at ${item.span.start} should start at ${at}`);
    if (item.span.end <= item.span.start) fail('empty item');
    at = item.span.end;
  }
  if (at !== text.length) fail('items do not reach the end');
  const stmts = doc.items.filter((i) => i.kind !== 'trivia');
  if (stmts.length !== doc.statements.length || stmts.some((s, i) => s !== doc.statements[i])) fail('statements != items');
  const lines = new LineIndex(text);
  for (const d of diagnostics) {
    const pos = lines.positionAt(d.span.start);
    if (pos.line !== d.line || pos.column !== d.column) fail(`diagnostic position ${d.line}:${d.column} of ${d.message}`);
    if (d.severity !== 'error' && d.severity !== 'warning') fail('severity');
    if (d.message.startsWith('internal parser error')) fail(d.message);
    if (d.span.start < 0 || d.span.end > text.length || d.span.end < d.span.start) fail('diagnostic span');
  }
  if (diagnostics.length === 0 && doc.items.some((i) => i.kind === 'trivia' && i.broken)) fail('broken item without a diagnostic');
  // Every error belongs to a broken item (it may point at the token after it: "found ..."), but
  // for an unclosed comment (which is trivia).
  for (const d of diagnostics) {
    const b = doc.items.filter((i) => i.kind === 'trivia' && i.broken && i.span.start <= d.span.start).pop();
    const between = b && doc.statements.some((s) => s.span.start >= b.span.end && s.span.end <= d.span.start);
    const ok = (b && !between) || d.message.startsWith('unterminated comment');
    if (!ok) fail(`error outside a broken item: ${d.message}`);
  }
  return ok;
}

/** A statement by kind and name, among the statements or the broken items (as compose finds it). */
function findStatement(doc: Document, kind: string, name: string): { span: { start: number; end: number }; statement?: Statement } | undefined {
  for (const item of doc.items) {
    if (item.kind !== 'trivia' && item.kind === kind && item.name.value === name) return { span: item.span, statement: item };
    if (item.kind === 'trivia' && item.broken?.kind === kind && item.broken.name?.value === name) {
      return { span: item.span, statement: item.broken.statement };
    }
  }
  return undefined;
}

/** Apply a fix as compose would: replace the statement, or the member of a node. */
function applyFix(doc: Document, fix: FixEdit): string {
  const text = fix.text ?? '';
  const kind = Object.keys(fix).find((k) => k !== 'text' && k !== 'member')!;
  const found = findStatement(doc, kind, String(fix[kind]));
  if (!found) throw new Error(`no ${kind} ${fix[kind]}`);
  let span = found.span;
  if (fix.member !== undefined) {
    const node = found.statement as NodeStatement;
    const member = node.members.find((m) => m.name.value === fix.member);
    if (!member) throw new Error(`no member ${fix.member}`);
    span = member.span;
  }
  return doc.text.slice(0, span.start) + text + doc.text.slice(span.end);
}

/** Every body of a document's statements. */
function bodies(doc: Document): Body[] {
  const out: Body[] = [];
  for (const s of doc.statements) {
    if (s.kind === 'fn') out.push(s.body);
    if (s.kind === 'kernel') for (const p of s.parts) if (p.part === 'each' || p.part === 'migrate') out.push(p.body);
  }
  return out;
}

/**
 * What acorn makes of a body when handed the document with everything but the body blanked out
 * (line breaks kept): the reference the parser's positions must equal.
 */
function maskedParse(text: string, body: Body): string {
  const start = body.span.start + 1;
  const masked = text.slice(0, start).replace(/[^\r\n\u2028\u2029]/g, ' ') + text.slice(start, body.span.end - 1);
  const program = acornParse(masked, { ecmaVersion: 2022, sourceType: 'script', locations: true, allowReturnOutsideFunction: true });
  return json(program.body);
}

/** JSON of acorn nodes (BigInt literals too). */
function json(value: unknown): string {
  return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
}

/** A seeded random source (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  return { next, int, pick };
}
type Rng = ReturnType<typeof rng>;

// --- the examples -------------------------------------------------------------------------

t.test('the DESIGN examples round-trip and parse without diagnostics', async (tt) => {
  for (const [path, text] of [
    ['scene.esn', SCENE],
    ['kernels.esn', KERNELS],
    ['life.esn', LIFE],
    ['every.esn', EVERY_FORM],
  ]) {
    const { doc, diagnostics } = parseDocument(path, text);
    tt.same(diagnostics, [], `${path}: no diagnostics`);
    tt.equal(print(doc), text, `${path}: print gives the text back`);
    tt.equal(doc.path, path);
    checkInvariants(tt, text, doc, diagnostics);
  }
  const scene = parse(SCENE).doc;
  tt.same(
    scene.statements.map((s) => `${s.kind} ${s.name.value}`),
    ['use kernels.esn', 'param warmth', 'node rings', 'node tint', 'output result'],
  );
  const kernels = parse(KERNELS).doc;
  tt.same(kernels.statements.map((s) => s.name.value), ['demo.rings@1', 'demo.tint@1']);
  const life = parse(LIFE).doc.statements[0] as KernelStatement;
  tt.same(life.parts.map((p) => p.part), ['grants', 'port', 'port', 'each', 'migrate']);
});

t.test('spans: each statement, member and part is exactly its text', async (tt) => {
  const { doc } = parse(SCENE);
  const texts = doc.statements.map((s) => SCENE.slice(s.span.start, s.span.end));
  tt.same(texts, [
    'use "kernels.esn";',
    'param warmth: f32 = 0.5 range 0..1;',
    'node rings: demo.rings@1 {             // a node runs one kernel\n  size = 256 x 256;                    // its domain\n  count = 8.0;                         // the node\'s own value: the document\'s\n}',
    "node tint: demo.tint@1 {\n  src <- rings.result;                 // an edge: port <- node.port\n  warmth = warmth;                     // a member naming a graph param\n}",
    'output result <- tint.result;',
  ]);
  const rings = doc.statements[2] as NodeStatement;
  const tint = doc.statements[3] as NodeStatement;
  tt.same(
    [...rings.members, ...tint.members].map((m) => [m.form, m.name.value, SCENE.slice(m.span.start, m.span.end)]),
    [
      ['size', 'size', 'size = 256 x 256;'],
      ['value', 'count', 'count = 8.0;'],
      ['edge', 'src', 'src <- rings.result;'],
      ['param', 'warmth', 'warmth = warmth;'],
    ],
  );
  tt.equal(SCENE.slice(rings.kernel.span.start, rings.kernel.span.end), 'demo.rings@1');
  tt.equal(rings.kernel.value, 'demo.rings@1');
  const edge = tint.members[0];
  tt.ok(edge.form === 'edge' && edge.from.node.value === 'rings' && edge.from.port?.value === 'result');
  const param = doc.statements[1];
  tt.ok(param.kind === 'param');
  if (param.kind === 'param') {
    tt.same(param.value?.values, [0.5]);
    tt.equal(param.value?.integral, false);
    tt.same([param.range?.lo, param.range?.hi], [0, 1]);
    tt.equal(SCENE.slice(param.range!.span.start, param.range!.span.end), 'range 0..1');
    tt.equal(param.type.name.value, 'f32');
  }
  const use = doc.statements[0];
  tt.equal(use.name.value, 'kernels.esn');
  tt.equal(SCENE.slice(use.name.span.start, use.name.span.end), '"kernels.esn"');

  // Kernel parts of every form.
  const every = parse(EVERY_FORM).doc;
  const kernel = every.statements.find((s) => s.kind === 'kernel') as KernelStatement;
  tt.same(
    kernel.parts.map((p) => EVERY_FORM.slice(p.span.start, p.span.end)),
    [
      'grants field.read, time.read;',
      'in count: i32 = 0x10;',
      'in on: bool = true;',
      'out result: field2<vec4>;',
      'state cells: field2<f32> = -0.5;',
      'size 128 x 96;',
      'each (x, y) { result = vec4(1.0); }',
      'migrate from demo.all@2 { cells = old.cells; }',
    ],
  );
  for (const s of every.statements) {
    const text = EVERY_FORM.slice(s.span.start, s.span.end);
    tt.ok(text.startsWith(s.kind + ' '), `${s.kind} starts with its keyword`);
    tt.ok(text.endsWith(';') || text.endsWith('}'), `${s.kind} ${s.name.value} ends at its ; or }`);
  }
  const struct = every.statements.find((s) => s.kind === 'struct')!;
  tt.equal(EVERY_FORM.slice(struct.span.start, struct.span.end), 'struct Particle {\n  pos: vec2;\n  mass: f32;\n};', 'the `;` after a struct belongs to it');
  if (struct.kind === 'struct') tt.same(struct.fields.map((f) => EVERY_FORM.slice(f.span.start, f.span.end)), ['pos: vec2;', 'mass: f32;']);
  const tintParam = every.statements.find((s) => s.name.value === 'tint');
  if (tintParam?.kind === 'param') {
    tt.same(tintParam.value, { values: [1, 0.5, -0.25, 1], form: 'vec4', integral: false, span: tintParam.value!.span });
    tt.equal(EVERY_FORM.slice(tintParam.value!.span.start, tintParam.value!.span.end), 'vec4(1, 0.5, -0.25, 1e0)');
    tt.same([tintParam.range?.lo, tintParam.range?.hi], [-1, 1]);
  } else tt.fail('param tint');
  const paint = every.statements.find((s) => s.name.value === 'paint');
  if (paint?.kind === 'input') {
    tt.same(paint.size?.dims, [64, 32]);
    tt.equal(paint.type.fieldDims, 2);
    tt.equal(paint.type.name.value, 'vec4');
    tt.equal(EVERY_FORM.slice(paint.type.span.start, paint.type.span.end), 'field2<vec4>');
  } else tt.fail('input paint');
  const mask = every.statements.find((s) => s.name.value === 'mask');
  if (mask?.kind === 'input') tt.same(mask.size?.dims, [4, 4, 4]);
  const count = kernel.parts[1];
  if (count.part === 'port') tt.same([count.value?.values, count.value?.integral], [[16], true]);
  const on = kernel.parts[2];
  if (on.part === 'port') tt.same([on.value?.values, on.value?.form], [[1], 'bool']);
  const fn = every.statements.find((s) => s.kind === 'fn');
  if (fn?.kind === 'fn') {
    tt.same(fn.params.map((p) => EVERY_FORM.slice(p.span.start, p.span.end)), ['c: vec4', 'k: f32']);
    tt.equal(fn.returns?.name.value, 'f32');
    tt.equal(fn.body.statements.length, 1);
    tt.equal((fn.body.statements[0] as { type: string }).type, 'ReturnStatement');
  } else tt.fail('fn');
  const plain = every.statements[every.statements.length - 1];
  if (plain.kind === 'output') tt.same([plain.from.node.value, plain.from.port], ['rings', undefined]);
});

t.test('bodies: acorn nodes carry the document offsets, lines and columns', async (tt) => {
  const { doc } = parse(KERNELS);
  const rings = doc.statements[0] as KernelStatement;
  const each = rings.parts.find((p) => p.part === 'each');
  if (each?.part !== 'each') return tt.fail('each');
  tt.same(each.coords.map((c) => c.value), ['x', 'y']);
  tt.equal(KERNELS[each.body.span.start], '{');
  tt.equal(KERNELS[each.body.span.end - 1], '}');
  tt.equal(each.body.statements.length, 3);
  const first = each.body.statements[0];
  tt.equal(KERNELS.slice(first.start, first.end), 'const p = vec2((x + 0.5) / width - 0.5, (y + 0.5) / height - 0.5);');
  const pos = positionAt(KERNELS, first.start);
  tt.same(pos, { line: 7, column: 5 });
  tt.same(first.loc?.start, { line: 7, column: 4 }, 'acorn columns are 0-based, lines are the document\'s');
  const last = each.body.statements[2];
  tt.equal(KERNELS.slice(last.start, last.end), 'result = vec4(v, 0.8 * v, 0.6 * v, 1.0);');
  tt.equal(last.loc?.start.line, 9);

  // The same nodes and positions as acorn gives for the document with all but the body blanked.
  for (const text of [KERNELS, LIFE, EVERY_FORM, 'fn f() {\r\n  return 1;\r}\u2028fn g() { let a =\u2029 `x${1}\ny`;\n\ta = {b: 2}.b; }']) {
    const { doc } = parse(text);
    const all = bodies(doc);
    tt.ok(all.length > 0);
    for (const b of all) tt.equal(json(b.statements), maskedParse(text, b), 'positions as in the masked document');
  }

  // Braces in comments, strings and template literals don't end a body.
  const tricky = 'fn f(a: f32): f32 {\n  // } not the end\n  /* { */ const s = "}"; const u = `${ {b: 1}.b }}`;\n  return a; }\nparam p: f32;\n';
  const r = parse(tricky);
  tt.same(r.diagnostics, []);
  tt.same(r.doc.statements.map((s) => s.kind), ['fn', 'param']);
  const f = r.doc.statements[0];
  if (f.kind === 'fn') {
    tt.equal(f.body.statements.length, 3);
    tt.equal(tricky.slice(f.span.start, f.span.end), tricky.slice(0, tricky.indexOf('\nparam')));
  }
});

// --- diagnostics and fixes ----------------------------------------------------------------

t.test('a missing `;` after a param: position, message and fix', async (tt) => {
  const text = 'use "kernels.esn";\nparam warmth: f32 = 0.5\nnode rings: demo.rings@1 {\n  count = 8.0;\n}\n';
  const { doc, diagnostics } = parse(text);
  tt.equal(diagnostics.length, 1);
  const d = diagnostics[0];
  tt.equal(d.message, 'expected `;` after the param declaration, found `node`');
  tt.same([d.line, d.column], [2, 24], 'where the `;` belongs');
  tt.equal(d.severity, 'error');
  tt.equal(d.path, 'scene.esn');
  tt.same(d.fix, { param: 'warmth', text: 'param warmth: f32 = 0.5;' });
  tt.same(doc.statements.map((s) => s.kind), ['use', 'node'], 'the later statements still parse');
  const broken = doc.items.find((i) => i.kind === 'trivia' && i.broken);
  tt.ok(broken && broken.kind === 'trivia' && broken.broken?.kind === 'param' && broken.broken.name?.value === 'warmth');
  const fixed = applyFix(doc, d.fix!);
  tt.equal(fixed, text.replace('0.5\n', '0.5;\n'));
  tt.same(parse(fixed).diagnostics, []);
  checkInvariants(tt, text, doc, diagnostics);
});

t.test('a missing `;` after a node member: member fix', async (tt) => {
  const text = 'node rings: demo.rings@1 {\n  size = 256 x 256;\n  count = 12.0\n}\noutput result <- rings.result;\n';
  const { doc, diagnostics } = parse(text);
  tt.equal(diagnostics.length, 1);
  tt.equal(diagnostics[0].message, 'expected `;` after the member `count`, found `}`');
  tt.same([diagnostics[0].line, diagnostics[0].column], [3, 15]);
  tt.same(diagnostics[0].fix, { node: 'rings', member: 'count', text: 'count = 12.0;' });
  tt.same(doc.statements.map((s) => s.kind), ['output']);
  tt.same(parse(applyFix(doc, diagnostics[0].fix!)).diagnostics, []);
});

t.test('the missing-`;` fix for every statement, part, field and member form', async (tt) => {
  // Every `;` that ends a line of EVERY_FORM ends a declaration.
  const ends = [...EVERY_FORM.matchAll(/;\n/g)].map((m) => m.index!);
  tt.equal(ends.length, 23);
  for (const at of ends) {
    if (EVERY_FORM[at - 1] === '}') continue; // the optional `;` after a struct
    const text = EVERY_FORM.slice(0, at) + EVERY_FORM.slice(at + 1);
    const { doc, diagnostics } = parse(text);
    const line = text.slice(text.lastIndexOf('\n', at - 1) + 1, text.indexOf('\n', at));
    if (!checkInvariants(tt, text, doc, diagnostics)) continue;
    tt.equal(diagnostics.length, 1, `one diagnostic for \`${line}\``);
    const d = diagnostics[0];
    tt.match(d.message, /^expected `;` after /, line);
    tt.same(positionAt(text, at), { line: d.line, column: d.column }, `${line}: at the end of the line`);
    if (!d.fix) {
      tt.fail(`no fix for \`${line}\``);
      continue;
    }
    tt.equal(applyFix(doc, d.fix), EVERY_FORM, `${line}: the fix mends it`);
  }
});

t.test('a bad type', async (tt) => {
  const text = 'param a: f32;\nparam warmth: = 0.5;\nkernel k@1 {\n  in src: field2<vec4;\n  out r: field4<f32>;\n}\nparam b: f32;\n';
  const { doc, diagnostics } = parse(text);
  checkInvariants(tt, text, doc, diagnostics);
  tt.same(
    diagnostics.map((d) => [d.line, d.column, d.message]),
    [
      [2, 15, 'expected a type (f32, i32, bool, vec2, vec3, vec4, field1<T>, field2<T>, field3<T> or a struct name) for the param `warmth`, found `=`'],
      [4, 22, 'expected `>` to close `field2<`, found `;`'],
    ],
  );
  tt.same(doc.statements.map((s) => s.name.value), ['a', 'b'], 'recovers at the next statement');
  const r = parse('kernel k@1 { out r: field4<f32>; }');
  tt.same(r.diagnostics.map((d) => [d.column, d.message]), [[21, 'unknown field type `field4`: fields are field1<T>, field2<T> and field3<T>']]);
  const nested = parse('input i: field2<field2<f32>>;');
  tt.match(nested.diagnostics[0].message, /can't be fields/);
  tt.equal(nested.diagnostics[0].column, 17);
});

t.test('an acorn syntax error in an each body is at the document line and column', async (tt) => {
  const text = [
    'param p: f32;',
    'kernel demo.bad@1 {',
    '  out result: f32;',
    '  each (x, y) {',
    '    let a = 1;',
    '    result = a +* 2;',
    '  }',
    '}',
    'output o <- n.result;',
  ].join('\n');
  const { doc, diagnostics } = parse(text);
  checkInvariants(tt, text, doc, diagnostics);
  tt.equal(diagnostics.length, 1);
  const d = diagnostics[0];
  tt.equal(d.message, 'unexpected `*` in the each body of kernel `demo.bad@1`: `+` needs an operand after it', 'the token and what is missing; no "(line:col)" suffix');
  tt.same([d.line, d.column], [6, 17]);
  tt.equal(text.slice(d.span.start, d.span.start + 1), '*');
  tt.same(doc.statements.map((s) => s.kind), ['param', 'output']);
  const broken = doc.items.find((i) => i.kind === 'trivia' && i.broken);
  if (broken?.kind !== 'trivia' || broken.broken?.statement?.kind !== 'kernel') return tt.fail('broken kernel kept');
  const each = broken.broken.statement.parts[1];
  tt.ok(each.part === 'each' && each.body.failed === true && each.body.statements.length === 0);

  // An error at the end of a body (an unfinished statement) points at the closing brace.
  const text2 = 'fn f(a: f32) {\n  return (a\n}\n';
  const r2 = parse(text2);
  tt.equal(r2.diagnostics.length, 1);
  tt.same([r2.diagnostics[0].line, r2.diagnostics[0].column], [3, 1]);

  // An unclosed body: reported at its `{`, and the next statement at column 1 still parses.
  const text3 = 'kernel k@1 {\n  out r: f32;\n  each (x) {\n    r = 1;\n\nparam q: f32;\n';
  const r3 = parse(text3);
  checkInvariants(tt, text3, r3.doc, r3.diagnostics);
  tt.same(r3.diagnostics.map((d) => [d.line, d.column]), [[3, 12]]);
  tt.match(r3.diagnostics[0].message, /never closed/);
  tt.same(r3.doc.statements.map((s) => s.name.value), ['q']);
});

t.test('an unexpected token in a body says what is likely missing before it', async (tt) => {
  const message = (line: string) => {
    const { diagnostics } = parse(`fn f(a: f32): f32 {\n  ${line}\n}\n`);
    tt.equal(diagnostics.length, 1, line);
    return diagnostics[0]?.message.replace(' in the body of fn `f`', '');
  };
  tt.equal(message('return vec4(a, a, a, 1.0;'), 'unexpected `;`: a `)` is missing before it');
  tt.equal(message('let b = [a, a; return a;'), 'unexpected `;`: a `]` is missing before it');
  tt.equal(message('return a *;'), 'unexpected `;`: `*` needs an operand after it');
  tt.equal(message('return (a) a;'), 'unexpected `a`: an operator or `,` is missing before it');
  tt.equal(message('return a);'), 'unexpected `)`', 'a stray closing bracket: nothing more to say');
  tt.equal(message('let r: int = 4; return a;'), 'unexpected `:`: a variable takes no type: it is the value\'s (`let r = 4;` is an i32, `= 4.0` an f32; docs/language.md, Types are inferred)', 'a TypeScript type annotation');
  tt.equal(message('const k : f32 = 1.0; return a;'), 'unexpected `:`: a variable takes no type: it is the value\'s (`const k = 4;` is an i32, `= 4.0` an f32; docs/language.md, Types are inferred)');
});

t.test('a letter outside ASCII in a name says names are ASCII (it read `wärme` as `w` and stopped at `ä`)', async (tt) => {
  const text = 'param wärme: f32 = 0.5;\n';
  const { doc, diagnostics } = parse(text);
  checkInvariants(tt, text, doc, diagnostics);
  tt.same(diagnostics.map((d) => [d.line, d.column, d.message]), [[1, 8, 'expected `:` after the param name `w` (`param NAME: TYPE = VALUE;`), found `ä` (a name is ASCII letters, digits and `_`)']]);
});

t.test('an unknown statement keyword gets the closest one', async (tt) => {
  const text = 'kernal demo.rings@1 {\n  out result: f32;\n  each (x) { result = 1.0; }\n}\nnod a: demo.rings@1 { count = 2; }\nfrobnicate x;\nparam p: f32;\n';
  const { doc, diagnostics } = parse(text);
  checkInvariants(tt, text, doc, diagnostics);
  tt.same(
    diagnostics.map((d) => [d.line, d.column, d.message]),
    [
      [1, 1, 'unknown statement `kernal`; did you mean `kernel`?'],
      [5, 1, 'unknown statement `nod`; did you mean `node`?'],
      [6, 1, 'unknown statement `frobnicate`; expected one of `use`, `param`, `input`, `struct`, `type`, `fn`, `kernel`, `node` or `output`'],
    ],
  );
  tt.same(diagnostics[0].fix, {
    kernel: 'demo.rings@1',
    text: 'kernel demo.rings@1 {\n  out result: f32;\n  each (x) { result = 1.0; }\n}',
  });
  tt.same(diagnostics[1].fix, { node: 'a', text: 'node a: demo.rings@1 { count = 2; }' });
  tt.equal(diagnostics[2].fix, undefined);
  tt.same(doc.statements.map((s) => s.name.value), ['p']);
  const fixed = applyFix(parse(applyFix(doc, diagnostics[0].fix!)).doc, diagnostics[1].fix!);
  tt.same(parse(fixed).diagnostics.map((d) => d.line), [6], 'both fixes apply; `frobnicate` is left');

  const part = parse('in count: f32;\n');
  tt.match(part.diagnostics[0].message, /^`in` is a kernel part/);
  const inKernel = parse('kernel k@1 { grant time.read; }');
  tt.equal(inKernel.diagnostics[0].message, 'unknown kernel part `grant`; did you mean `grants`?');
  tt.equal(inKernel.diagnostics[0].column, 14);
});

t.test('more diagnostics: missing `}`, reserved names, values, grants, sizes', async (tt) => {
  const cases: [string, string, number, number][] = [
    ['kernel k@1 {\n  out r: f32;\nnode n: k@1 { }\n', 'expected `}` to close kernel `k@1`, found `node`', 2, 14],
    ['node n: k@1 {\n  a = 1;\n', 'expected `}` to close node `n`, found the end of the document', 2, 9],
    ['param size: f32;', "`size` is a reserved word; it can't be a param name", 1, 7],
    ['node n: k@1 { c = vec3(1, 2); }', '`vec3(...)` takes 3 numbers, found 2', 1, 19],
    ['node n: k@1 { c = ; }', 'expected a value (a number, true, false or vec2/vec3/vec4(...)) after `c =`, found `;`', 1, 19],
    ['kernel k@1 { grants time.read time.write; }', 'expected `,` or `;` after the grants, found `time`', 1, 31],
    ['kernel k@1 { size = 8 x 8; }', "a kernel's size takes no `=`: it is written `size W x H;`", 1, 19],
    ['node n: k@1 { size = 8.5 x 8; }', 'expected a size `W x H [x D]` of integers after `size =`, found `8.5`', 1, 22],
    ['node n: k@1 { a -> b; }', 'expected `=` or `<-` after the member name `a`, found `-`', 1, 17],
    ['node n: k@1 { src = g.result; }', "`src = g.result` reads another node's port: an edge is written with `<-`, `src <- g.result;` (`=` gives a member a value or a param)", 1, 19],
    ['node n: k @1 { }', 'expected `@VERSION` right after `k` (a kernel id is written `package.name@1`), found `@`', 1, 11],
    ['kernel k@1 { out r: f32 = 1; }', 'an `out` port takes no value: the body assigns it', 1, 25],
    ['kernel k@1 { each (a, b, c, d) { } }', '`each` takes 1 to 3 coordinate names (x, y, z), found 4', 1, 29],
    ['use "a.esn', 'unterminated string: the path has no closing `"`', 1, 5],
    ['param p: f32; /* never closed', 'unterminated comment: `/*` has no closing `*/`', 1, 15],
    ['# what\nparam p: f32;', 'unexpected character `#`; expected a statement (`use`, `param`, `input`, `struct`, `type`, `fn`, `kernel`, `node` or `output`)', 1, 1],
    ['kernel k@1 { migrate life@1 { } }', 'expected `from` after `migrate` (`migrate from package.name@1 { ... }`), found `life`', 1, 22],
  ];
  for (const [text, message, line, column] of cases) {
    const { doc, diagnostics } = parse(text);
    checkInvariants(tt, text, doc, diagnostics);
    tt.same(diagnostics.slice(0, 1).map((d) => [d.message, d.line, d.column]), [[message, line, column]], text);
  }
  const k = parse('kernel k@1 {\n  out r: f32;\nnode n: k@1 { }\n');
  tt.same(k.diagnostics[0].fix, { kernel: 'k@1', text: 'kernel k@1 {\n  out r: f32;\n}' });
  tt.same(k.doc.statements.map((s) => s.kind), ['node']);
  // The `}` of an if block missing before its `else`: said so (it read only "unexpected `else`").
  const noBrace = parse('kernel k@1 {\n  out r: f32;\n  each (x) {\n    if (x > 1) {\n      r = 1.0;\n    else { r = 0.0; }\n  }\n}\n');
  tt.match(noBrace.diagnostics[0].message, /^unexpected `else`.*is the `}` that closes the `if` block missing before it/);
  tt.same([noBrace.diagnostics[0].line, noBrace.diagnostics[0].column], [6, 5]);
  const edge = parse('node n: k@1 { src = g.result; }');
  tt.same(edge.diagnostics[0].fix, { node: 'n', text: 'node n: k@1 { src <- g.result; }' }, 'the fix writes the edge');
  const size = parse('kernel k@1 { size = 8 x 8; }');
  tt.same(size.diagnostics[0].fix, { kernel: 'k@1', text: 'kernel k@1 { size 8 x 8; }' });
  const out = parse('kernel k@1 { out r: f32 = 1; }');
  tt.same(out.diagnostics[0].fix, { kernel: 'k@1', text: 'kernel k@1 { out r: f32; }' });
  // A fn inside a kernel was taken for a missing `}`: its fix closed the kernel before the fn, and
  // a kernel replaced by it lost its `each` body. It is told as what it is, with no fix.
  const inside = 'kernel k@1 {\n  out r: f32;\n  fn tone(t: f32): f32 { return t; }\n  each (x) { r = tone(1.0); }\n}\n';
  const fn = parse(inside);
  checkInvariants(tt, inside, fn.doc, fn.diagnostics);
  tt.same([fn.diagnostics[0].message, fn.diagnostics[0].line, fn.diagnostics[0].column], ['`fn tone` is inside kernel `k@1`: a fn is declared at the top level of a document, outside every kernel; move `fn tone` above `kernel k@1` (the kernel calls it from there)', 3, 3]);
  tt.equal(fn.diagnostics[0].fix, undefined, 'no fix that cuts the kernel short');
});

t.test('numbers, sizes and literals', async (tt) => {
  const members = (text: string) => {
    const r = parse(`node n: k@1 { ${text} }`);
    tt.same(r.diagnostics, [], text);
    return (r.doc.statements[0] as NodeStatement).members;
  };
  for (const [size, dims] of [
    ['256 x 256', [256, 256]],
    ['256x256', [256, 256]],
    ['256x 256', [256, 256]],
    ['256 x256', [256, 256]],
    ['4x4x4', [4, 4, 4]],
    ['4 /* w */ x 4', [4, 4]],
    ['1024', [1024]],
  ] as const) {
    const m = members(`size = ${size};`)[0];
    tt.ok(m.form === 'size' && m.name.value === 'size');
    if (m.form === 'size') tt.same(m.size.dims, dims, size);
  }
  for (const [lit, values, integral, form] of [
    ['1', [1], true, 'number'],
    ['8.0', [8], false, 'number'],
    ['.5', [0.5], false, 'number'],
    ['1e-3', [0.001], false, 'number'],
    ['0x10', [16], true, 'number'],
    ['-2', [-2], true, 'number'],
    ['- 2.5', [-2.5], false, 'number'],
    ['false', [0], true, 'bool'],
    ['vec2(1, -2)', [1, -2], true, 'vec2'],
    ['vec3(1, 2.0, 3)', [1, 2, 3], false, 'vec3'],
  ] as const) {
    const m = members(`v = ${lit};`)[0];
    if (m.form !== 'value') {
      tt.fail(lit);
      continue;
    }
    tt.same([m.value.values, m.value.integral, m.value.form], [values, integral, form], lit);
  }
  const p = members('a = warmth;')[0];
  tt.ok(p.form === 'param' && p.param.value === 'warmth');
  const e = members('a <- src;')[0];
  tt.ok(e.form === 'edge' && e.from.node.value === 'src' && e.from.port === undefined);
});

t.test('comments anywhere trivia may be, CRLF line ends', async (tt) => {
  const text =
    '/* head */ param /* a */ warmth /* b */ : // c\r\n f32 /* d */ = /* e */ 0.5 /* f */ range /* g */ 0 /* h */ .. /* i */ 1 /* j */ ; // k\r\n' +
    'node /**/ n /**/ : /**/ k.a@1 /**/ { /**/ size /**/ = /**/ 2 /**/ x /**/ 3 /**/ ; // m\r\n src <- /**/ a.b /**/ ; }\r\n';
  const { doc, diagnostics } = parse(text);
  tt.same(diagnostics, []);
  checkInvariants(tt, text, doc, diagnostics);
  tt.equal(text.slice(doc.statements[0].span.start, doc.statements[0].span.end).slice(-3), '/ ;');
  tt.ok(text.slice(doc.statements[0].span.start).startsWith('param'), 'leading comments are trivia');
  const node = doc.statements[1] as NodeStatement;
  tt.equal(text.slice(node.members[1].span.start, node.members[1].span.end), 'src <- /**/ a.b /**/ ;');
  const crlf = 'param a: f32\r\nparam b: f32;';
  const r = parse(crlf);
  tt.same([r.diagnostics[0].line, r.diagnostics[0].column], [1, 13]);
});

// --- tables -------------------------------------------------------------------------------

t.test('FORMS and RESERVED_WORDS', async (tt) => {
  const key = (f: { kind: string; name: string }) => `${f.kind} ${f.name}`;
  tt.equal(new Set(FORMS.map(key)).size, FORMS.length, 'no form listed twice');
  tt.same(FORMS.filter((f) => f.kind === 'statement').map((f) => f.name), ['use', 'param', 'input', 'struct', 'type', 'fn', 'kernel', 'node', 'output']);
  tt.same(FORMS.filter((f) => f.kind === 'part').map((f) => f.name), ['grants', 'in', 'out', 'state', 'size', 'each', 'migrate']);
  tt.same(FORMS.filter((f) => f.kind === 'member').map((f) => f.name), ['value', 'param', 'edge', 'size']);
  tt.same(STATEMENT_KEYWORDS, FORMS.filter((f) => f.kind === 'statement').map((f) => f.name));
  tt.same(PART_KEYWORDS, FORMS.filter((f) => f.kind === 'part').map((f) => f.name));
  const words = RESERVED_WORDS.map((w) => w.word);
  tt.equal(new Set(words).size, words.length, 'no reserved word listed twice');
  for (const w of ['use', 'kernel', 'each', 'migrate', 'from', 'range', 'size', 'true', 'false', 'f32', 'vec4', 'field2']) {
    tt.ok(words.includes(w), `${w} is reserved`);
  }
  tt.notOk(words.includes('x'), '`x` of sizes is not reserved');
  for (const w of RESERVED_WORDS) tt.ok(w.role && w.summary, `${w.word} has a role and a summary`);
  // Every form's example parses as what it says it is.
  for (const f of FORMS) {
    const text =
      f.kind === 'statement' ? f.example : f.kind === 'part' ? `kernel k@1 {\n${f.example}\n}` : `node n: k@1 {\n${f.example}\n}`;
    const { doc, diagnostics } = parse(text);
    tt.same(diagnostics, [], `${key(f)}: its example parses`);
    const s = doc.statements[0];
    if (f.kind === 'statement') tt.equal(s?.kind, f.name);
    else if (f.kind === 'part') {
      const part = (s as KernelStatement).parts[0];
      tt.equal(part.part === 'port' ? part.kind : part.part, f.name);
    } else tt.equal((s as NodeStatement).members[0].form, f.name);
  }
});

// --- fuzzing ------------------------------------------------------------------------------

// PARSE_FUZZ_SEED and PARSE_FUZZ_SCALE run other and longer fuzzing sessions.
const SEED = Number(process.env.PARSE_FUZZ_SEED ?? 1234);
const SCALE = Number(process.env.PARSE_FUZZ_SCALE ?? 1);

const NAMES = ['a', 'rings', 'tint', 'x1', 'count', 'warmth', 'src', '_t', 'result'];
const NUMBERS = ['0', '1', '8.0', '0.5', '.5', '1e-3', '2E+2', '0x10', '12', '3.25'];
const TYPES = ['f32', 'i32', 'bool', 'vec2', 'vec3', 'vec4', 'Particle', 'field1<f32>', 'field2<vec4>', 'field3<bool>'];
const TRIVIA = [' ', '  ', '\n', '\n  ', '\t', '/* c */', '/* { } ; */', '// line { ;\n', '\r\n', ' /*\n*/ ', '\u2028'];
const BODIES = [
  'result = vec4(1.0);',
  '\n    const p = vec2(x, y); // }\n    result = p.x + 1;\n  ',
  ' let n = 0; for (let i = 0; i < 3; i++) { n += i; } /* } */ r = n; ',
  ' if (x > 1) { a = 1; } else { a = 2; } ',
  '',
];

/** Random tokens of one statement: pieces to be joined with trivia; kept glued where needed. */
function genStatement(r: Rng): { kind: string; pieces: string[]; members?: string[][] } {
  const name = () => r.pick(NAMES);
  const num = () => (r.int(4) === 0 ? ['-', r.pick(NUMBERS)] : [r.pick(NUMBERS)]);
  const id = () => `${r.pick(['demo', 'life', 'a'])}.${r.pick(['rings', 'step'])}@${r.int(10)}`;
  const type = (): string[] => {
    const ty = r.pick(TYPES);
    const m = /^(field\d)<(\w+)>$/.exec(ty);
    return m ? [m[1], '<', m[2], '>'] : [ty];
  };
  const literal = (): string[] => {
    const k = r.int(4);
    if (k === 0) return num();
    if (k === 1) return [r.pick(['true', 'false'])];
    const n = r.pick([2, 3, 4]);
    const out = [`vec${n}`, '('];
    for (let i = 0; i < n; i++) out.push(...(i ? [','] : []), ...num());
    return [...out, ')'];
  };
  const size = (): string[] => {
    const dims = Array.from({ length: 1 + r.int(3) }, () => String(1 + r.int(300)));
    return r.int(2) ? [dims.join('x')] : dims.flatMap((d, i) => (i ? ['x', d] : [d]));
  };
  const body = () => ['{' + r.pick(BODIES) + '}'];
  switch (r.int(9)) {
    case 0:
      return { kind: 'use', pieces: ['use', `"${name()}.esn"`, ';'] };
    case 1: {
      const p = ['param', name(), ':', ...type()];
      if (r.int(2)) p.push('=', ...literal());
      if (r.int(2)) p.push('range', ...num(), '..', ...num());
      return { kind: 'param', pieces: [...p, ';'] };
    }
    case 2: {
      const p = ['input', name(), ':', ...type()];
      if (r.int(2)) p.push('=', ...literal());
      if (r.int(2)) p.push('size', ...size());
      return { kind: 'input', pieces: [...p, ';'] };
    }
    case 3: {
      const p = ['struct', 'S' + name(), '{'];
      for (let i = r.int(3); i > 0; i--) p.push(name(), ':', ...type(), ';');
      p.push('}');
      if (r.int(2)) p.push(';');
      return { kind: 'struct', pieces: p };
    }
    case 4:
      return { kind: 'type', pieces: ['type', 'T' + name(), '=', ...type(), ';'] };
    case 5: {
      const p = ['fn', name(), '('];
      for (let i = r.int(3); i > 0; i--) p.push(name(), ':', ...type(), ...(i > 1 ? [','] : []));
      p.push(')');
      if (r.int(2)) p.push(':', ...type());
      return { kind: 'fn', pieces: [...p, ...body()] };
    }
    case 6: {
      const p = ['kernel', id(), '{'];
      for (let i = r.int(6); i > 0; i--) {
        switch (r.int(6)) {
          case 0:
            p.push('grants', 'field.read', ...(r.int(2) ? [',', 'time.read'] : []), ';');
            break;
          case 1:
            p.push(r.pick(['in', 'state']), name(), ':', ...type(), ...(r.int(2) ? ['=', ...literal()] : []), ';');
            break;
          case 2:
            p.push('out', name(), ':', ...type(), ';');
            break;
          case 3:
            p.push('size', ...size(), ';');
            break;
          case 4:
            p.push('each', '(', 'x', ...(r.int(2) ? [',', 'y'] : []), ')', ...body());
            break;
          default:
            p.push('migrate', 'from', id(), ...body());
        }
      }
      return { kind: 'kernel', pieces: [...p, '}'] };
    }
    case 7: {
      const p = ['node', name(), ':', id(), '{'];
      const members: string[][] = [];
      for (let i = r.int(5); i > 0; i--) {
        const k = r.int(4);
        const m =
          k === 0
            ? ['size', '=', ...size(), ';']
            : k === 1
              ? [name(), '=', ...literal(), ';']
              : k === 2
                ? [name(), '=', name(), ';']
                : [name(), '<-', r.int(2) ? `${name()}.${name()}` : name(), ';'];
        members.push(m);
        p.push(...m);
      }
      return { kind: 'node', pieces: [...p, '}'], members };
    }
    default:
      return { kind: 'output', pieces: ['output', name(), '<-', r.int(2) ? `${name()}.${name()}` : name(), ';'] };
  }
}

/** Join pieces with random trivia (never gluing two words together). */
function join(r: Rng, pieces: string[]): string {
  let out = '';
  for (const piece of pieces) {
    const glue = /[\w.]$/.test(out) && /^[\w.]/.test(piece);
    if (out !== '') out += r.int(3) === 0 && !glue ? '' : r.pick(TRIVIA);
    out += piece;
  }
  return out;
}

function genDocument(r: Rng) {
  let text = '';
  const stmts: { kind: string; text: string; members: string[] }[] = [];
  for (let i = r.int(8); i >= 0; i--) {
    text += r.pick(['\n', '\n\n', ' ', '// comment }\n', '/* { */\n']);
    const g = genStatement(r);
    const pieces = g.pieces;
    // Members are joined on their own so their text is known.
    let s: string;
    let members: string[] = [];
    if (g.members) {
      members = g.members.map((m) => join(r, m));
      const head = pieces.slice(0, 5);
      s = join(r, head) + members.map((m) => r.pick(TRIVIA) + m).join('') + r.pick(TRIVIA) + '}';
    } else s = join(r, pieces);
    stmts.push({ kind: g.kind, text: s, members });
    text += s;
  }
  return { text: text + r.pick(['', '\n', ' // end']), stmts };
}

t.test('random valid documents parse, round-trip and have exact spans', async (tt) => {
  const r = rng(SEED);
  let checked = 0;
  for (let n = 0; n < 400 * SCALE; n++) {
    const { text, stmts } = genDocument(r);
    const { doc, diagnostics } = parse(text);
    if (diagnostics.length) {
      tt.fail(`diagnostics for a valid document: ${diagnostics[0].message} at ${diagnostics[0].line}:${diagnostics[0].column}\n${text}`);
      break;
    }
    if (!checkInvariants(tt, text, doc, diagnostics)) break;
    const got = doc.statements.map((s) => [s.kind, text.slice(s.span.start, s.span.end)]);
    const want = stmts.map((s) => [s.kind, s.text]);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      tt.fail('statement spans ' + JSON.stringify({ got, want }));
      break;
    }
    for (const b of bodies(doc)) {
      if (json(b.statements) !== maskedParse(text, b)) tt.fail(`body positions differ from acorn's in ${JSON.stringify(text)}`);
    }
    for (let i = 0; i < stmts.length; i++) {
      const s = doc.statements[i];
      if (s.kind !== 'node') continue;
      const spans = s.members.map((m) => text.slice(m.span.start, m.span.end));
      if (JSON.stringify(spans) !== JSON.stringify(stmts[i].members)) tt.fail('member spans ' + JSON.stringify({ spans, want: stmts[i].members }));
    }
    checked++;
  }
  tt.equal(checked, 400 * SCALE);
});

function mutate(r: Rng, text: string): string {
  const alphabet = ['{', '}', ';', '(', ')', '"', '`', "'", '/*', '*/', '//', '\n', ' ', 'x', '.', '@', '<-', '..', '-', '0', 'kernel', 'node ', '\u2028', '\r', '\ud800', '#'];
  let s = text;
  for (let k = 1 + r.int(4); k > 0; k--) {
    const at = r.int(s.length + 1);
    switch (r.int(4)) {
      case 0:
        s = s.slice(0, at) + s.slice(at + 1 + r.int(8));
        break;
      case 1:
        s = s.slice(0, at) + r.pick(alphabet) + s.slice(at);
        break;
      case 2:
        s = s.slice(0, at);
        break;
      default:
        s = s.slice(0, at) + r.pick(alphabet) + s.slice(at + 1);
    }
  }
  return s;
}

t.test('mutations, truncations and random bytes never throw and still round-trip', async (tt) => {
  let n = 0;
  const ok = (text: string) => {
    let result;
    try {
      result = parse(text);
    } catch (e) {
      tt.fail(`threw ${String(e)} on ${JSON.stringify(text)}`);
      return false;
    }
    n++;
    for (const b of bodies(result.doc)) {
      if (json(b.statements) !== maskedParse(text, b)) {
        tt.fail(`body positions differ from acorn's in ${JSON.stringify(text)}`);
        return false;
      }
    }
    return checkInvariants(tt, text, result.doc, result.diagnostics);
  };
  // Every prefix of every example.
  outer: for (const example of [SCENE, KERNELS, LIFE, EVERY_FORM]) {
    for (let i = 0; i <= example.length; i++) if (!ok(example.slice(0, i))) break outer;
  }
  // Random mutations of the examples and of random documents.
  const r = rng(SEED + 1);
  for (let i = 0; i < 1500 * SCALE; i++) {
    const base = i % 2 ? r.pick([SCENE, KERNELS, LIFE, EVERY_FORM]) : genDocument(r).text;
    if (!ok(mutate(r, base))) break;
  }
  // Random bytes (as latin-1 text) and random UTF-16 code units.
  for (let i = 0; i < 300 * SCALE; i++) {
    const len = r.int(200);
    let s = '';
    for (let j = 0; j < len; j++) s += String.fromCharCode(i % 2 ? r.int(256) : r.int(0x10000));
    if (!ok(s)) break;
  }
  tt.ok(n > 4000, `${n} inputs`);
});

t.test('parseDocument never throws on non-string garbage either', async (tt) => {
  const r = parseDocument('x.esn', undefined as unknown as string);
  tt.equal(r.doc.text, '');
  tt.same(r.diagnostics, []);
});

t.test('a document parsed again (same path and text) is the Document parsed before; its diagnostics a fresh list each time', async (tt) => {
  const text = 'param gain f32 = 1.0;\nparam speed: f32 = 2.0;\n';
  const a = parseDocument('a.esn', text);
  const b = parseDocument('a.esn', text);
  tt.equal(b.doc, a.doc, 'the same Document: a compose parses what it changed once');
  tt.ok(a.diagnostics.length > 0, 'the missing `:` is reported');
  tt.not(b.diagnostics, a.diagnostics, 'a list of its own');
  a.diagnostics.length = 0;
  tt.ok(parseDocument('a.esn', text).diagnostics.length > 0, 'emptying one list leaves the next whole');
  tt.not(parseDocument('b.esn', text).doc, a.doc, 'another path: another Document');
  tt.not(parseDocument('a.esn', text + ' ').doc, a.doc, 'another text: another Document');
});
