// Field dimensions and element types on every edge form: `port <- node.out`, `port <- node.state`,
// `port <- node` (its out port) and `port <- input`. A source of other dimensions or another
// element type is refused at the member, naming both types; the same forms with matching types
// check clean (the precondition: a refusal is the types', not something else's).

import t from 'tap';
import { textScene } from './helpers.js';

type Form = 'out' | 'state' | 'node' | 'input';

/** A scene where node `sink` reads a field `src: fieldD<T>` from a source of `fieldSD<ST>` by `form`. */
function scene(form: Form, sink: [number, string], source: [number, string]): string {
  const axes = (d: number) => ['x', 'x, y', 'x, y, z'][d - 1];
  const size = (d: number) => ['8', '8 x 4', '8 x 4 x 2'][d - 1];
  const [sd, st] = source;
  const [kd, kt] = sink;
  const producer = `kernel t.make@1 {
  grants field.write;
  state s: field${sd}<${st}>;
  out o: field${sd}<${st}>;
  each (${axes(sd)}) { }
}
node make: t.make@1 { size = ${size(sd)}; }
`;
  const input = `input feed: field${sd}<${st}> = ${st === 'bool' ? 'false' : '0.0'} size ${size(sd)};\n`;
  const from = { out: 'make.o', state: 'make.s', node: 'make', input: 'feed' }[form];
  return `struct P { a: f32; b: vec2; }
${form === 'input' ? input : producer}kernel t.take@1 {
  in src: field${kd}<${kt}>;
  out r: field${kd}<f32>;
  each (${axes(kd)}) { }
}
node take: t.take@1 {
  src <- ${from};
}
output r <- take.r;
`;
}

const FORMS: Form[] = ['out', 'state', 'node', 'input'];

t.test('matching dimensions and types check clean on every form', async (t) => {
  for (const form of FORMS)
    for (const [d, ty] of [[1, 'f32'], [2, 'f32'], [2, 'vec4'], [3, 'vec3'], [2, 'i32'], [2, 'P']] as [number, string][]) {
      if (form === 'input' && ty === 'P') continue; // an input's value is numbers: no struct inputs here
      const sc = textScene({ 'scene.esn': scene(form, [d, ty], [d, ty]) });
      t.same(sc.diagnostics.map((x) => x.message), [], `${form}: field${d}<${ty}> <- field${d}<${ty}>`);
    }
});

t.test('other dimensions or element types are refused at the member, naming both', async (t) => {
  const mismatches: [[number, string], [number, string]][] = [
    [[2, 'f32'], [3, 'f32']], // a field3 feeding a field2 port
    [[2, 'f32'], [1, 'f32']],
    [[3, 'vec2'], [2, 'vec2']],
    [[1, 'f32'], [2, 'f32']],
    [[2, 'vec4'], [2, 'vec3']],
    [[2, 'f32'], [2, 'vec2']],
    [[2, 'f32'], [2, 'i32']],
    [[2, 'i32'], [2, 'bool']],
    [[2, 'vec3'], [3, 'vec4']],
    [[2, 'P'], [2, 'vec3']],
  ];
  for (const form of FORMS)
    for (const [sink, source] of mismatches) {
      const text = scene(form, sink, source);
      const sc = textScene({ 'scene.esn': text });
      const what = `${form}: field${sink[0]}<${sink[1]}> <- field${source[0]}<${source[1]}>`;
      const d = sc.diagnostics.find((x) => /is a field/.test(x.message));
      if (!d) {
        t.fail(`${what} checks clean: ${JSON.stringify(sc.diagnostics.map((x) => x.message))}`);
        continue;
      }
      t.match(d.message, `is a field${sink[0]}<${sink[1]}>, but`, `${what}: refused`);
      t.match(d.message, `field${source[0]}<${source[1]}>`, `${what}: names the source's type`);
      const line = text.split('\n').findIndex((l) => l.includes('src <-')) + 1;
      t.same([d.line, d.column], [line, 3], `${what}: at the member`);
    }
});
