// compose, the text side: edits that change only their bytes (src/protocol/edits.ts), and the
// versions and all-or-none writes of documents (src/main/documents.ts).

import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from '../src/ir/syntax/index.js';
import type { NodeStatement, StatementKind } from '../src/ir/syntax/index.js';
import { applyEdits, validateEditItem, EditError, EDIT_KINDS, type EditItem } from '../src/protocol/compose.js';
import { versionOf, writeDocuments, recoverJournal, resolveUnder, PathError, JOURNAL_NAME } from '../src/protocol/compose.js';
import { SimulatedCrash } from '../src/main/journal.js';
import { scratchDir } from './scratch.js';

// examples/rings/scene.esn, verbatim.
const SCENE=`// examples/rings: concentric rings, warmed by a tint node.
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

/** Apply and check that the result parses without a diagnostic. */
function apply(text: string, edits: EditItem[], path = 'scene.esn'): string {
  return applyEdits(path, text, edits);
}

function clean(t2: Test, text: string, what: string): void {
  const { diagnostics } = parseDocument('scene.esn', text);
  t2.same(diagnostics.map((d) => d.message), [], `${what}: parses without a diagnostic`);
}

const ringsFile = new URL('../../examples/rings/scene.esn', import.meta.url);
t.test('the test scene is examples/rings/scene.esn', { skip: existsSync(ringsFile) ? false : 'examples/rings/scene.esn is not beside dist/' }, async (t) => {
  const file = ringsFile;
  t.equal(readFileSync(file, 'utf8'), SCENE);
  clean(t, SCENE, 'the scene');
});

t.test('replacing a member changes exactly its bytes', async (t) => {
  const out = apply(SCENE, [{ node: 'rings', member: 'count', text: 'count = 12.0;' }]);
  const COUNT12=`// examples/rings: concentric rings, warmed by a tint node.
use "kernels.esn";                     // documents this one uses (paths under the scene's folder)

param warmth: f32 = 0.5 range 0..1;    // a graph param; the \`param\` op sets it

node rings: demo.rings@1 {             // a node runs one kernel
  size = 256 x 256;                    // its domain
  count = 12.0;                         // the node's own value: the document's
}

node tint: demo.tint@1 {
  src <- rings.result;                 // an edge: port <- node.port
  warmth = warmth;                     // a member naming a graph param
}

output result <- tint.result;          // what \`read\` returns and the Player shows
`;
  t.equal(out, COUNT12);
  // Exactly those bytes: the prefix before `count = ` and everything after `8.0;` are the same.
  const at = SCENE.indexOf('count = 8.0;');
  t.equal(out.slice(0, at), SCENE.slice(0, at));
  t.equal(out.slice(at + 'count = 12.0;'.length), SCENE.slice(at + 'count = 8.0;'.length));
  t.equal(out.length, SCENE.length + 1);
  clean(t, out, 'count = 12.0');
  // The size member is named `size`.
  const sized = apply(SCENE, [{ node: 'rings', member: 'size', text: 'size = 512 x 128;' }]);
  t.equal(sized, SCENE.replace('size = 256 x 256;', 'size = 512 x 128;'));
  // An edge member, replaced by a value.
  t.equal(apply(SCENE, [{ node: 'tint', member: 'src', text: 'src <- other.result;' }]), SCENE.replace('src <- rings.result;', 'src <- other.result;'));
});

t.test('adding a member: after the last one, on its own line, same indentation', async (t) => {
  const ADDGAIN=`// examples/rings: concentric rings, warmed by a tint node.
use "kernels.esn";                     // documents this one uses (paths under the scene's folder)

param warmth: f32 = 0.5 range 0..1;    // a graph param; the \`param\` op sets it

node rings: demo.rings@1 {             // a node runs one kernel
  size = 256 x 256;                    // its domain
  count = 8.0;                         // the node's own value: the document's
}

node tint: demo.tint@1 {
  src <- rings.result;                 // an edge: port <- node.port
  warmth = warmth;                     // a member naming a graph param
  gain = 2.0;
}

output result <- tint.result;          // what \`read\` returns and the Player shows
`;
  const out = apply(SCENE, [{ node: 'tint', member: 'gain', text: 'gain = 2.0;' }]);
  t.equal(out, ADDGAIN);
  clean(t, out, 'gain added');
  // Tabs are kept as the indentation.
  const tabbed = 'node a: k.k@1 {\n\tx = 1.0;\n}\n';
  t.equal(apply(tabbed, [{ node: 'a', member: 'y', text: 'y = 2.0;' }]), 'node a: k.k@1 {\n\tx = 1.0;\n\ty = 2.0;\n}\n');
  // A node on one line gets it on the same line.
  t.equal(apply('node a: k.k@1 { x = 1.0; }\n', [{ node: 'a', member: 'y', text: 'y = 2.0;' }]), 'node a: k.k@1 { x = 1.0; y = 2.0; }\n');
  // A node with no member: before the closing `}`.
  t.equal(apply('node a: k.k@1 {\n}\n', [{ node: 'a', member: 'y', text: 'y = 2.0;' }]), 'node a: k.k@1 {\n  y = 2.0;\n}\n');
  t.equal(apply('node a: k.k@1 {}\n', [{ node: 'a', member: 'y', text: 'y = 2.0;' }]), 'node a: k.k@1 { y = 2.0; }\n');
  t.equal(apply('node a: k.k@1 { }\n', [{ node: 'a', member: 'y', text: 'y = 2.0;' }]), 'node a: k.k@1 { y = 2.0; }\n');
  t.equal(apply('  node a: k.k@1 {\n  }\n', [{ node: 'a', member: 'y', text: 'y = 2.0;' }]), '  node a: k.k@1 {\n    y = 2.0;\n  }\n');
  // `\r\n` documents get `\r\n`.
  t.equal(apply('node a: k.k@1 {\r\n  x = 1.0;\r\n}\r\n', [{ node: 'a', member: 'y', text: 'y = 2.0;' }]), 'node a: k.k@1 {\r\n  x = 1.0;\r\n  y = 2.0;\r\n}\r\n');
});

t.test('removing a member: its bytes, and its line when that is left empty', async (t) => {
  const RMSIZE=`// examples/rings: concentric rings, warmed by a tint node.
use "kernels.esn";                     // documents this one uses (paths under the scene's folder)

param warmth: f32 = 0.5 range 0..1;    // a graph param; the \`param\` op sets it

node rings: demo.rings@1 {             // a node runs one kernel
  count = 8.0;                         // the node's own value: the document's
}

node tint: demo.tint@1 {
  src <- rings.result;                 // an edge: port <- node.port
  warmth = warmth;                     // a member naming a graph param
}

output result <- tint.result;          // what \`read\` returns and the Player shows
`;
  // The member's line goes, its trailing comment with it (the comment was left alone on its line).
  t.equal(apply(SCENE, [{ node: 'rings', member: 'size', text: null }]), RMSIZE);
  // A member alone on its line takes the line (and its line break) with it.
  const doc = 'node a: k.k@1 {\n  x = 1.0;\n  y = 2.0;\n}\n';
  t.equal(apply(doc, [{ node: 'a', member: 'x', text: null }]), 'node a: k.k@1 {\n  y = 2.0;\n}\n');
  t.equal(apply(doc, [{ node: 'a', member: 'y', text: null }]), 'node a: k.k@1 {\n  x = 1.0;\n}\n');
  t.equal(apply('node a: k.k@1 { x = 1.0; y = 2.0; }\n', [{ node: 'a', member: 'y', text: null }]), 'node a: k.k@1 { x = 1.0;  }\n');
  t.throws(() => apply(doc, [{ node: 'a', member: 'z', text: null }]), { name: 'EditError', field: 'member' });
});

// A document with every kind of statement.
const ALL = `// every kind
use "kernels.esn";

struct Particle {
  pos: vec2;
  vel: vec2;
}

type Cells = field2<f32>;

fn fade(a: f32): f32 {
  return a * 0.5;
}

kernel demo.k@1 {
  in a: f32 = 1.0;
  out result: field2<vec4>;
  each (x, y) {
    result = vec4(a, a, a, 1.0);
  }
}

param gain: f32 = 1.0; // the gain
input paint: field2<vec4> size 64 x 64;

node n: demo.k@1 {
  a = gain;
}

output result <- n.result;
`;

/** For each kind: the statement as written in ALL, a replacement, and a new one of that kind. */
const KINDS: Record<StatementKind, { name: string; old: string; replacement: string; added: [string, string] }> = {
  use: { name: 'kernels.esn', old: 'use "kernels.esn";', replacement: 'use "kernels.esn"; ', added: ['lib/more.esn', 'use "lib/more.esn";'] },
  struct: {
    name: 'Particle',
    old: 'struct Particle {\n  pos: vec2;\n  vel: vec2;\n}',
    replacement: 'struct Particle {\n  pos: vec3;\n}',
    added: ['Spark', 'struct Spark { heat: f32; }'],
  },
  type: { name: 'Cells', old: 'type Cells = field2<f32>;', replacement: 'type Cells = field2<vec2>;', added: ['Grid', 'type Grid = field3<f32>;'] },
  fn: {
    name: 'fade',
    old: 'fn fade(a: f32): f32 {\n  return a * 0.5;\n}',
    replacement: 'fn fade(a: f32): f32 { return a * 0.25; }',
    added: ['twice', 'fn twice(a: f32): f32 {\n  return a * 2.0;\n}'],
  },
  kernel: {
    name: 'demo.k@1',
    old: 'kernel demo.k@1 {\n  in a: f32 = 1.0;\n  out result: field2<vec4>;\n  each (x, y) {\n    result = vec4(a, a, a, 1.0);\n  }\n}',
    replacement: 'kernel demo.k@1 {\n  out result: field2<vec4>;\n  each (x, y) { result = vec4(1.0, 0.0, 0.0, 1.0); }\n}',
    added: ['demo.j@1', 'kernel demo.j@1 {\n  out result: field2<vec4>;\n  each (x, y) { result = vec4(0.0, 0.0, 0.0, 1.0); }\n}'],
  },
  param: { name: 'gain', old: 'param gain: f32 = 1.0;', replacement: 'param gain: f32 = 2.0 range 0..4;', added: ['bias', 'param bias: f32 = 0.0;'] },
  input: {
    name: 'paint',
    old: 'input paint: field2<vec4> size 64 x 64;',
    replacement: 'input paint: field2<vec4> size 128 x 128;',
    added: ['mask', 'input mask: field2<f32> size 64 x 64;'],
  },
  node: {
    name: 'n',
    old: 'node n: demo.k@1 {\n  a = gain;\n}',
    replacement: 'node n: demo.k@1 { a = 0.5; }',
    added: ['m', 'node m: demo.k@1 {\n  a = 2.0;\n}'],
  },
  output: { name: 'result', old: 'output result <- n.result;', replacement: 'output result <- m.result;', added: ['second', 'output second <- n.result;'] },
};

t.test('whole statements of every kind: replaced, added after the last of their kind, removed', async (t) => {
  clean(t, ALL, 'ALL');
  t.same([...EDIT_KINDS].sort(), Object.keys(KINDS).sort());
  for (const kind of EDIT_KINDS) {
    const k = KINDS[kind];
    t.ok(ALL.includes(k.old), `${kind}: the statement is in ALL`);
    // Replaced: exactly its bytes.
    const replaced = apply(ALL, [{ [kind]: k.name, text: k.replacement } as EditItem]);
    t.equal(replaced, ALL.replace(k.old, k.replacement), `${kind} replaced`);
    // Added: on a new line after the (last) statement of its kind, after its line's comment.
    const added = apply(ALL, [{ [kind]: k.added[0], text: k.added[1] } as EditItem]);
    const lineEnd = ALL.indexOf('\n', ALL.indexOf(k.old) + k.old.length);
    t.equal(added, ALL.slice(0, lineEnd) + '\n' + k.added[1] + ALL.slice(lineEnd), `${kind} added`);
    clean(t, added, `${kind} added`);
    // Removed: the lines it stood on, and one blank line where it sat between two.
    const removed = apply(ALL, [{ [kind]: k.name, text: null } as EditItem]);
    t.notOk(removed.includes(k.old), `${kind} removed`);
  }
  // Removals, by hand.
  t.equal(
    apply(ALL, [{ type: 'Cells', text: null }]),
    ALL.replace('type Cells = field2<f32>;\n\n', ''),
    'a statement between blank lines takes one of them',
  );
  t.equal(apply(ALL, [{ param: 'gain', text: null }]), ALL.replace('param gain: f32 = 1.0; // the gain\n', ''), 'a trailing comment goes with its line (it was left alone on it)');
  t.equal(apply('param p: f32; /* p */ // the p\nparam q: f32;\n', [{ param: 'p', text: null }]), 'param q: f32;\n', 'block and line comments after it');
  t.equal(apply('param p: f32; param q: f32; // both\n', [{ param: 'p', text: null }]), ' param q: f32; // both\n', 'a line that keeps a statement keeps its comment');
  t.equal(apply(ALL, [{ input: 'paint', text: null }]), ALL.replace('input paint: field2<vec4> size 64 x 64;\n', ''), 'a line of its own goes');
  t.equal(apply(ALL, [{ output: 'result', text: null }]), ALL.replace('\n\noutput result <- n.result;\n', '\n'), 'the last statement takes the blank line before it');
  t.equal(apply(ALL, [{ use: 'kernels.esn', text: null }]), ALL.replace('use "kernels.esn";\n', ''), 'after a comment line: only its line');
  t.equal(apply('use "a.esn";\n\nparam p: f32;\n', [{ use: 'a.esn', text: null }]), 'param p: f32;\n', 'the first statement takes the blank line after it');
  t.equal(apply('param p: f32;', [{ param: 'p', text: null }]), '');
  t.equal(apply('param p: f32;\r\n\r\nparam q: f32;\r\n\r\nparam r: f32;\r\n', [{ param: 'q', text: null }]), 'param p: f32;\r\n\r\nparam r: f32;\r\n');
  t.throws(() => apply(ALL, [{ node: 'nn', text: null }]), { name: 'EditError', field: 'node', message: /no node `nn` in scene\.esn to remove; did you mean `n`\?/ });
});

t.test('adding where none of the kind exists', async (t) => {
  // A use: before the first statement, after the header comment.
  const noUse = SCENE.replace('use "kernels.esn";                     // documents this one uses (paths under the scene\'s folder)\n', '');
  t.equal(
    apply(noUse, [{ use: 'kernels.esn', text: 'use "kernels.esn";' }]),
    noUse.replace('\nparam warmth', '\nuse "kernels.esn";\nparam warmth'),
  );
  // ... and before the comment lines right above the first statement when they are not a header.
  const commented = '// header\n\n// the gain\nparam gain: f32;\n';
  t.equal(apply(commented, [{ use: 'k.esn', text: 'use "k.esn";' }]), '// header\n\nuse "k.esn";\n// the gain\nparam gain: f32;\n');
  t.equal(apply('param gain: f32;\n', [{ use: 'k.esn', text: 'use "k.esn";' }]), 'use "k.esn";\nparam gain: f32;\n');
  t.equal(apply('', [{ use: 'k.esn', text: 'use "k.esn";' }]), 'use "k.esn";\n');
  // Anything else: at the end, on a line of its own.
  t.equal(apply(SCENE, [{ input: 'paint', text: 'input paint: field2<vec4> size 64 x 64;' }]), SCENE + 'input paint: field2<vec4> size 64 x 64;\n');
  t.equal(apply('param p: f32;', [{ type: 'T', text: 'type T = f32;' }]), 'param p: f32;\ntype T = f32;');
  t.equal(apply('', [{ param: 'p', text: 'param p: f32;' }]), 'param p: f32;\n');
});

t.test('a broken statement is addressed by kind and name: applying fixes', async (t) => {
  const missing = SCENE.replace('param warmth: f32 = 0.5 range 0..1;', 'param warmth: f32 = 0.5 range 0..1');
  const { diagnostics } = parseDocument('scene.esn', missing);
  const fix = diagnostics.find((d) => d.fix)?.fix;
  t.same(fix, { param: 'warmth', text: 'param warmth: f32 = 0.5 range 0..1;' });
  t.equal(apply(missing, [fix as EditItem]), SCENE, 'the fix restores the `;` and nothing else');
  // A member's missing `;`: a member edit of a node that is broken but read whole.
  const member = SCENE.replace('count = 8.0;', 'count = 8.0');
  const mfix = parseDocument('scene.esn', member).diagnostics.find((d) => d.fix)?.fix;
  t.same(mfix, { node: 'rings', member: 'count', text: 'count = 8.0;' });
  t.equal(apply(member, [mfix as EditItem]), SCENE);
  // A statement that could not be read whole: replaced by name.
  const garbled = SCENE.replace('src <- rings.result;', 'src <- ;');
  t.ok(parseDocument('scene.esn', garbled).diagnostics.length > 0);
  const whole = 'node tint: demo.tint@1 {\n  src <- rings.result;\n  warmth = warmth;\n}';
  const mended = apply(garbled, [{ node: 'tint', text: whole }]);
  clean(t, mended, 'mended');
  t.ok(mended.endsWith('\n\noutput result <- tint.result;          // what `read` returns and the Player shows\n'));
  // ...but its members can't be told apart: the error says to replace it whole.
  t.throws(() => apply(garbled, [{ node: 'tint', member: 'src', text: 'src <- rings.result;' }]), {
    name: 'EditError',
    field: 'member',
    message: /failed to parse.*replace the whole node/,
  });
  // Misspelt keyword: addressed by the kind the parser guessed.
  const misspelt = SCENE.replace('output result', 'outptu result');
  const kfix = parseDocument('scene.esn', misspelt).diagnostics.find((d) => d.fix)?.fix;
  t.same(kfix, { output: 'result', text: 'output result <- tint.result;' });
  t.equal(apply(misspelt, [kfix as EditItem]), SCENE);
});

t.test('several edits apply in order, each to the result of the previous', async (t) => {
  const out = apply(SCENE, [
    { node: 'glow', text: 'node glow: demo.glow@1 {\n  src <- tint.result;\n}' },
    { node: 'glow', member: 'radius', text: 'radius = 3.0;' },
    { output: 'result', text: 'output result <- glow.result;' },
    { node: 'rings', member: 'count', text: 'count = 12.0;' },
    { param: 'warmth', text: null },
    { node: 'tint', member: 'warmth', text: 'warmth = 0.5;' },
  ]);
  const expected = `// examples/rings: concentric rings, warmed by a tint node.
use "kernels.esn";                     // documents this one uses (paths under the scene's folder)

node rings: demo.rings@1 {             // a node runs one kernel
  size = 256 x 256;                    // its domain
  count = 12.0;                         // the node's own value: the document's
}

node tint: demo.tint@1 {
  src <- rings.result;                 // an edge: port <- node.port
  warmth = 0.5;                     // a member naming a graph param
}
node glow: demo.glow@1 {
  src <- tint.result;
  radius = 3.0;
}

output result <- glow.result;          // what \`read\` returns and the Player shows
`;
  t.equal(out, expected);
  clean(t, out, 'in order');
  // An error names the edit that failed, counted from 0.
  t.throws(() => apply(SCENE, [{ node: 'rings', member: 'count', text: 'count = 1.0;' }, { node: 'nope', member: 'x', text: 'x = 1;' }]), { name: 'EditError', edit: 1 });
});

t.test('malformed edit items: an EditError naming the field and what was expected', async (t) => {
  const cases: [unknown, string | undefined, RegExp][] = [
    [null, undefined, /must be an object/],
    [[1], undefined, /must be an object/],
    ['node rings', undefined, /must be an object/],
    [{ text: 'x' }, undefined, /exactly one of node, output, param, input, kernel, struct, type, fn, use/],
    [{ node: 'a', param: 'b', text: 'x' }, 'param', /exactly one of/],
    [{ node: 'a' }, 'text', /no `text`/],
    [{ node: 'a', text: 3 }, 'text', /`text` must be a string or null/],
    [{ node: 'a', text: '  ' }, 'text', /empty/],
    [{ node: '', text: 'x' }, 'node', /non-empty string/],
    [{ node: 7, text: 'x' }, 'node', /non-empty string/],
    [{ output: 'a', member: 'b', text: 'x' }, 'member', /member/],
    [{ node: 'a', member: 5, text: 'x' }, 'member', /non-empty string/],
    [{ node: 'a', membr: 'b', text: 'x' }, 'membr', /did you mean `member`/],
    [{ nodes: 'a', text: 'x' }, 'nodes', /not a field of an edit/],
  ];
  for (const [item, field, message] of cases) {
    t.throws(() => validateEditItem(item, 3), { name: 'EditError', edit: 3, field, message }, JSON.stringify(item));
    try {
      applyEdits('scene.esn', SCENE, [item as EditItem]);
      t.fail('applyEdits takes no malformed item');
    } catch (e) {
      t.ok(e instanceof EditError && e.edit === 0 && e.expected, `applyEdits: ${JSON.stringify(item)}`);
    }
  }
  t.same(validateEditItem({ node: 'a', member: null, text: null }, 0), { node: 'a', text: null });
  t.same(validateEditItem({ use: 'k.esn', text: 'use "k.esn";' }, 0), { use: 'k.esn', text: 'use "k.esn";' });
});

t.test('a member edit for a node that does not exist says to add the node first', async (t) => {
  t.throws(() => apply(SCENE, [{ node: 'x', member: 'count', text: 'count = 1.0;' }]), {
    name: 'EditError',
    edit: 0,
    field: 'node',
    message: "no node `x` in scene.esn; add the node first: {node: 'x', text: 'node x: package.kernel@1 { ... }'}; its nodes are `rings`, `tint`",
  });
  t.throws(() => apply(SCENE, [{ node: 'ring', member: 'count', text: 'count = 1.0;' }]), { message: /did you mean `rings`\?/ });
});

t.test("an edit's text holds only what it names: more, or another, is refused", async (t) => {
  // Each of these was applied: the member edit closed the node and declared another, replaced
  // `count` by a second `size`, set `count` twice; the kernel edit published a second kernel.
  const refused = (e: EditItem, holds: RegExp) =>
    t.throws(() => apply(SCENE, [e]), { name: 'EditError', edit: 0, field: 'text', message: holds }, JSON.stringify(e));
  refused({ node: 'rings', member: 'count', text: 'count = 9.0; } node evil: demo.rings@1 { size = 4 x 4;' }, /edit 0 names the member `count` of node `rings`, but its text holds more than a member/);
  refused({ node: 'rings', member: 'count', text: 'size = 8 x 8;' }, /but its text holds the member `size`: an edit changes only what it names/);
  refused({ node: 'rings', member: 'count', text: 'count = 8.0;\n  count = 3.0;' }, /holds 2 members \(`count`, `count`\)/);
  refused({ node: 'tint', text: 'node tint: demo.tint@1 { src <- rings.result; }\nnode more: demo.tint@1 { src <- rings.result; }' }, /names node `tint`, but its text holds 2 statements \(node `tint`, node `more`\)/);
  refused({ node: 'tint', text: 'output tint <- rings.result;' }, /names node `tint`, but its text holds output `tint`/);
  refused({ param: 'warmth', text: 'param heat: f32 = 0.5;' }, /names param `warmth`, but its text holds param `heat`/);
  // A value alone, without the member's name: the whole member is asked for, as it is written.
  refused({ node: 'rings', member: 'size', text: '64 x 64' }, /^edit 0: `text` of a member edit is the whole member, its name first: `size = 64 x 64;`, not `64 x 64` alone$/);
  refused({ node: 'tint', member: 'src', text: 'rings.result;' }, /the whole member, its name first: `src <- rings\.result;`/);
  refused({ node: 'rings', member: 'count', text: '4.0' }, /`count = 4\.0;`/);
  // What it names, however broken, goes on to the check (which says where).
  t.match(apply(SCENE, [{ node: 'rings', member: 'count', text: 'count = 12.0' }]), /count = 12\.0 +\/\/ the node's own value/);
  t.match(apply(SCENE, [{ node: 'rings', member: 'count', text: 'count = 12.0; // twelve' }]), /count = 12\.0; \/\/ twelve/);
  t.match(apply(SCENE, [{ node: 'tint', text: 'node tint: demo.tint@1 { src <- ; }' }]), /src <- ; \}/);
});

// --- round trips: random edits keep every untouched statement's bytes ------------------------

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('random sequences of add/replace/remove keep untouched bytes and parse', async (t) => {
  const COMMENTS = ['// a comment', '/* block */', '', '   // indented'];
  let checks = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const r = rng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
    const statementText = (kind: StatementKind, name: string): string => {
      const v = (Math.floor(r() * 90) + 10) / 10;
      switch (kind) {
        case 'use':
          return `use "${name}";`;
        case 'param':
          return `param ${name}: f32 = ${v.toFixed(1)};`;
        case 'input':
          return `input ${name}: field2<f32> size ${Math.floor(v) + 1} x 4;`;
        case 'type':
          return `type ${name} = field2<vec${pick([2, 3, 4])}>;`;
        case 'struct':
          return `struct ${name} {\n  a: f32;\n  b: vec${pick([2, 3])};\n}`;
        case 'fn':
          return `fn ${name}(a: f32): f32 {\n  return a * ${v.toFixed(1)};\n}`;
        case 'kernel':
          return `kernel ${name} {\n  out result: field2<vec4>;\n  each (x, y) { result = vec4(${v.toFixed(1)}, 0.0, 0.0, 1.0); }\n}`;
        case 'output':
          return `output ${name} <- n0.result;`;
        case 'node':
          return pick([
            `node ${name}: demo.k@1 {\n  a = ${v.toFixed(1)};\n  size = 8 x 8;\n}`,
            `node ${name}: demo.k@1 { a = ${v.toFixed(1)}; }`,
            `node ${name}: demo.k@1 {\n}`,
          ]);
      }
    };
    const nameFor = (kind: StatementKind, i: number): string =>
      kind === 'use' ? `lib/d${i}.esn` : kind === 'kernel' ? `demo.k${i}@1` : `${kind[0]}${i}`;
    // The model: statement key -> its text.
    const model = new Map<string, string>();
    const key = (kind: StatementKind, name: string): string => `${kind} ${name}`;
    let text = '// generated\n';
    for (let i = 0; i < 8; i++) {
      const kind = pick([...EDIT_KINDS]);
      const name = nameFor(kind, i);
      const s = statementText(kind, name);
      model.set(key(kind, name), s);
      text += `${pick(COMMENTS)}\n${s}${r() < 0.3 ? ' // trailing' : ''}\n`;
      if (r() < 0.5) text += '\n';
    }
    const commentsBefore = (text.match(/\/\/ a comment|\/\* block \*\/|\/\/ indented/g) ?? []).length;
    let next = 100;
    for (let step = 0; step < 12; step++) {
      const keys = [...model.keys()];
      const roll = r();
      let edit: EditItem;
      let touched: string | undefined;
      if (roll < 0.3 || keys.length === 0) {
        const kind = pick([...EDIT_KINDS]);
        const name = nameFor(kind, next++);
        const s = statementText(kind, name);
        edit = { [kind]: name, text: s } as EditItem;
        model.set(key(kind, name), s);
        touched = key(kind, name);
      } else {
        const k = pick(keys);
        const [kind, name] = k.split(' ') as [StatementKind, string];
        touched = k;
        const nodeText = model.get(k) as string;
        if (kind === 'node' && r() < 0.5) {
          // A member edit: replace, add or remove one member.
          const members = [...nodeText.matchAll(/(\w+) = [^;]*;/g)].map((m) => m[1]);
          const member = r() < 0.5 && members.length ? pick(members) : `m${next++}`;
          const remove = members.includes(member) && r() < 0.4;
          edit = { node: name, member, text: remove ? null : member === 'size' ? 'size = 16 x 16;' : `${member} = ${(next % 9) + 0.5};` };
          const { doc } = parseDocument('scene.esn', applyEdits('scene.esn', text, [edit]));
          const node = doc.statements.find((s) => s.kind === 'node' && s.name.value === name) as NodeStatement;
          t.ok(node, 'the node is still there');
          model.set(k, doc.text.slice(node.span.start, node.span.end));
          t.equal(node.members.some((m) => m.name.value === member), !remove, 'the member is there, or gone');
        } else if (r() < 0.5) {
          edit = { [kind]: name, text: null } as EditItem;
          model.delete(k);
        } else {
          const s = statementText(kind, name);
          edit = { [kind]: name, text: s } as EditItem;
          model.set(k, s);
        }
      }
      text = applyEdits('scene.esn', text, [edit]);
      const { doc, diagnostics } = parseDocument('scene.esn', text);
      if (diagnostics.length) {
        t.fail(`seed ${seed} step ${step}: ${diagnostics[0].message}\n${text}`);
        return;
      }
      const got = new Map(doc.statements.map((s) => [key(s.kind, s.name.value), text.slice(s.span.start, s.span.end)]));
      t.same([...got.keys()].sort(), [...model.keys()].sort(), `seed ${seed} step ${step}: the statements`);
      for (const [k, s] of model) {
        if (k !== touched && got.get(k) !== s) t.fail(`seed ${seed} step ${step}: \`${k}\` changed`);
        checks++;
      }
    }
    // Comments are never removed by statement edits (only lines left empty go).
    const commentsAfter = (text.match(/\/\/ a comment|\/\* block \*\/|\/\/ indented/g) ?? []).length;
    t.equal(commentsAfter, commentsBefore, `seed ${seed}: every comment kept`);
  }
  t.ok(checks > 1000, `${checks} untouched statements checked`);
});

// --- versions and all-or-none writes ---------------------------------------------------------

function folder(): string {
  return realpathSync(scratchDir('entelechy-compose-'));
}

function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, prefix: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), `${prefix}${e.name}/`);
      else out.push(`${prefix}${e.name}`);
    }
  };
  walk(dir, '');
  return out.sort();
}

t.test('versionOf: 16 hex chars of the SHA-256 of the UTF-8 bytes', async (t) => {
  t.equal(versionOf(''), 'e3b0c44298fc1c14');
  t.equal(versionOf('abc'), 'ba7816bf8f01cfea');
  t.match(versionOf(SCENE), /^[0-9a-f]{16}$/);
  t.not(versionOf('é'), versionOf('e'));
});

t.test('writeDocuments writes all of a set, in subfolders too', async (t) => {
  const root = folder();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'scene.esn'), SCENE);
  await writeDocuments(root, [
    { path: 'scene.esn', text: 'param a: f32;\n' },
    { path: 'lib/kernels.esn', text: 'kernel k.k@1 {}\n' },
    { path: './other.esn', text: 'x' },
  ]);
  t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'param a: f32;\n');
  t.equal(readFileSync(join(root, 'lib/kernels.esn'), 'utf8'), 'kernel k.k@1 {}\n');
  t.same(listing(root), ['lib/kernels.esn', 'other.esn', 'scene.esn'], 'no temp file and no journal left');
  t.same(await recoverJournal(root), { recovered: [], rolledBack: [] });
  await writeDocuments(root, []);
  await t.rejects(writeDocuments(root, [{ path: 'a.esn', text: 'x' }, { path: './a.esn', text: 'y' }]), /name the same document/);
});

t.test('writeDocuments: none written when one path is bad', async (t) => {
  const root = folder();
  const outside = folder();
  t.teardown(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  writeFileSync(join(root, 'scene.esn'), SCENE);
  symlinkSync(outside, join(root, 'out'));
  const bad: [string, RegExp][] = [
    ['../escape.esn', /uses `\.\.`/],
    ['lib/../../escape.esn', /uses `\.\.`/],
    [join(outside, 'abs.esn'), /absolute path/],
    ['out/x.esn', /symbolic link `out` that leads out/],
    ['', /non-empty/],
    ['.', /folder itself/],
    ['lib', /is a folder/],
    [JOURNAL_NAME, /reserved/],
    ['scene.esn/x.esn', /is a file, not a folder/],
  ];
  mkdirSync(join(root, 'lib'));
  for (const [path, message] of bad) {
    await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'changed' }, { path: 'new.esn', text: 'new' }, { path, text: 'bad' }]), { name: 'PathError', message }, path);
    t.throws(() => resolveUnder(root, path), PathError);
  }
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'changed' }, { path: 'x.esn', text: 3 as unknown as string }]), /must be a string/);
  t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), SCENE, 'the scene is as it was');
  t.same(listing(root), ['out', 'scene.esn'], 'nothing new in the root');
  t.same(readdirSync(outside), [], 'nothing written outside');
});

t.test('resolveUnder: paths under the root, symlinks inside followed', async (t) => {
  const root = folder();
  const outside = folder();
  t.teardown(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  mkdirSync(join(root, 'real'));
  writeFileSync(join(root, 'real/doc.esn'), 'old');
  symlinkSync(join(root, 'real'), join(root, 'alias'));
  symlinkSync(join(outside, 'secret.esn'), join(root, 'leak.esn'));
  symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
  t.equal(resolveUnder(root, 'a/b.esn'), join(root, 'a/b.esn'));
  t.equal(resolveUnder(root, 'a\\b.esn'), join(root, 'a/b.esn'));
  t.equal(resolveUnder(root, 'alias/doc.esn'), join(root, 'real/doc.esn'));
  writeFileSync(join(outside, 'secret.esn'), 'secret');
  t.throws(() => resolveUnder(root, 'leak.esn'), { name: 'PathError', message: /leads out of the scene's folder/ });
  t.throws(() => resolveUnder(root, 'dangling/x.esn'), { name: 'PathError', message: /leads nowhere/ });
  await t.rejects(writeDocuments(root, [{ path: 'leak.esn', text: 'pwned' }]), PathError);
  t.equal(readFileSync(join(outside, 'secret.esn'), 'utf8'), 'secret');
  // A write through a link inside replaces the linked document (the link stays a link).
  await writeDocuments(root, [{ path: 'alias/doc.esn', text: 'new' }]);
  t.equal(readFileSync(join(root, 'real/doc.esn'), 'utf8'), 'new');
  t.throws(() => resolveUnder(join(root, 'missing'), 'a.esn'), /does not exist/);
});

t.test('a crash after the commit is completed by recoverJournal', async (t) => {
  for (const crashAfter of ['committed', 1, 2] as const) {
    const root = folder();
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    writeFileSync(join(root, 'scene.esn'), 'old scene');
    writeFileSync(join(root, 'kernels.esn'), 'old kernels');
    const files = [
      { path: 'scene.esn', text: 'new scene' },
      { path: 'kernels.esn', text: 'new kernels' },
      { path: 'lib/added.esn', text: 'added' },
    ];
    await t.rejects(writeDocuments(root, files, { crashAfter }), SimulatedCrash);
    t.ok(existsSync(join(root, JOURNAL_NAME)), `${crashAfter}: the journal is on disk`);
    t.ok(listing(root).some((f) => f.endsWith('.entelechy-tmp')), `${crashAfter}: temp files are on disk`);
    if (crashAfter === 'committed') t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'old scene', 'not yet renamed');
    const r = await recoverJournal(root);
    t.same(r, { recovered: ['scene.esn', 'kernels.esn', 'lib/added.esn'], rolledBack: [] });
    for (const f of files) t.equal(readFileSync(join(root, f.path), 'utf8'), f.text, `${crashAfter}: ${f.path} written`);
    t.same(listing(root), ['kernels.esn', 'lib/added.esn', 'scene.esn'], `${crashAfter}: no journal, no temp file`);
    t.same(await recoverJournal(root), { recovered: [], rolledBack: [] }, 'a second recovery has nothing to do');
  }
});

t.test('a crash before the commit is rolled back by recoverJournal', async (t) => {
  for (const crashAfter of ['prepared', 'temps'] as const) {
    const root = folder();
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    writeFileSync(join(root, 'scene.esn'), 'old scene');
    await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new scene' }, { path: 'b.esn', text: 'b' }], { crashAfter }), SimulatedCrash);
    t.same(await recoverJournal(root), { recovered: [], rolledBack: ['scene.esn', 'b.esn'] });
    t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'old scene');
    t.same(listing(root), ['scene.esn'], `${crashAfter}: as before the write`);
  }
});

t.test('writeDocuments recovers a journal left behind before writing', async (t) => {
  const root = folder();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  await t.rejects(writeDocuments(root, [{ path: 'a.esn', text: 'a1' }], { crashAfter: 1 }), SimulatedCrash);
  await writeDocuments(root, [{ path: 'b.esn', text: 'b1' }]);
  t.equal(readFileSync(join(root, 'a.esn'), 'utf8'), 'a1');
  t.equal(readFileSync(join(root, 'b.esn'), 'utf8'), 'b1');
  t.same(listing(root), ['a.esn', 'b.esn']);
  // A journal that leads outside is refused, not followed.
  writeFileSync(join(root, JOURNAL_NAME), JSON.stringify({ entelechy: 'journal', state: 'committed', renames: [{ path: '../x.esn', temp: '.x.esn.1.entelechy-tmp' }] }));
  await t.rejects(recoverJournal(root), PathError);
  writeFileSync(join(root, `${JOURNAL_NAME}.abc.entelechy-tmp`), '{"half": ');
  writeFileSync(join(root, JOURNAL_NAME), '{"not": "a journal"}');
  await t.rejects(recoverJournal(root), /not a journal Entelechy wrote/);
  t.notOk(existsSync(join(root, `${JOURNAL_NAME}.abc.entelechy-tmp`)), 'a half-written journal is removed');
});
