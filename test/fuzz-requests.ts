// The protocol fuzzer's generator: request lines for every operation of the operations table, each
// field given a plausible value or a wrong, missing, huge, nested, non-finite, negative or hostile
// one, and garbage lines. It is seeded (the same seed, the same lines, given the same answers) and
// learns names, versions and snapshots from the answers, so that requests reach past validation.
//
// Sizes are capped where a request would legitimately take long (scene sizes, loop counts): a run
// measures robustness, not the engine's speed. The hostile values the issue lists are sent as
// they are (fuzz.test.ts sends each of the issue's requests once, too).

import { OPERATIONS, OPERATION_NAMES, type FieldSpec, type OperationSpec } from '../src/protocol/operations.js';
import { Rng } from './reliability.js';
import { mutateScene } from './scene-mutants.js';

/** How big "huge" is: strings, arrays, object keys, nesting depth. */
export const HUGE_STRING = 100_000;
export const HUGE_ARRAY = 100_000;
export const HUGE_KEYS = 10_000;
export const DEEP = 10_000;
/** The largest scene domain a composed text may ask for (elements per node). */
export const MAX_ELEMENTS = 64 * 64;

export const VALUE_KINDS = ['good', 'wrong', 'missing', 'huge', 'nested', 'nonfinite', 'negative', 'hostile'] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];

/** A JSON value written as text: what JSON.stringify cannot write (1e999, -0, 10,000-deep nesting). */
export class Raw {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold Raw parts (values are shallow: Raw carries the deep ones). */
export function encode(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(encode).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${encode(x)}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** What the generator knows of the session: names to aim at, learnt from its answers. */
export interface World {
  nodes: string[];
  statePorts: string[];
  ports: string[];
  outputs: string[];
  params: string[];
  inputs: string[];
  kernels: string[];
  documents: string[];
  /** The documents' texts as loaded (compose texts are mutations of them). */
  texts: Record<string, string>;
  versions: string[];
  /** The last snapshot's data (for restore). */
  snapshot?: string;
  /** The scene's folder (a hostile path names it absolutely). */
  folder: string;
}

/** One generated line, and what it aimed at (for coverage counts). */
export interface Generated {
  line: string;
  op?: string;
  /** The field given a value of `kind` on purpose (undefined: garbage or all plausible). */
  field?: string;
  kind?: ValueKind;
}

const KERNEL_SOURCES = [
  'kernel fuzz.flat@1 {\n  out result: field2<vec4>;\n  each (x, y) {\n    result = vec4(0.5, 0.25, 0.125, 1.0);\n  }\n}',
  'kernel demo.tint@1 {\n  in src: field2<vec4>;\n  in warmth: f32 = 0.5;\n  out result: field2<vec4>;\n  each (x, y) {\n    result = vec4(src.y, src.x * warmth, src.z, 1.0);\n  }\n}',
  'kernel fuzz.loop@1 {\n  out result: field2<f32>;\n  each (x, y) {\n    let s = 0.0;\n    for (let i = 0; i < 50; i++) s += sin(f32(i) * 0.1);\n    result = s;\n  }\n}',
  'kernel fuzz.broken@1 {\n  out result: field2<f32>;\n  each (x, y) {\n    result = nope(x);\n  }\n}',
  'kernel fuzz.int@1 {\n  out result: field2<f32>;\n  each (x, y) {\n    result = f32(i32(3e9)) + f32(i32(-1e30)) + f32(x / 0);\n  }\n}',
  'kernel demo.rings@1 {\n  grants time.read;\n  in count: f32 = 8.0;\n  out result: field2<vec4>;\n  each (x, y) {\n    result = vec4(count / 16.0, fract(time), 0.0, 1.0);\n  }\n}',
];

/** Kernel sources the issue names as hostile: nesting and call chains 700 deep. */
export function nestedIfs(depth: number): string {
  return `kernel fuzz.deep@1 {\n  out result: field2<f32>;\n  each (x, y) {\n    let s = 0.0;\n    ${'if (x > 0) { '.repeat(depth)}s = 1.0;${' }'.repeat(depth)}\n    result = s;\n  }\n}`;
}
export function fnChain(depth: number): string {
  const fns = ['fn f0(a: f32): f32 { return a; }'];
  for (let i = 1; i < depth; i++) fns.push(`fn f${i}(a: f32): f32 { return f${i - 1}(a) + 1.0; }`);
  return `${fns.join('\n')}\nkernel fuzz.chain@1 {\n  out result: field2<f32>;\n  each (x, y) {\n    result = f${depth - 1}(f32(x));\n  }\n}`;
}

const HOSTILE_STRINGS = [
  '../../etc/passwd', '/etc/passwd', 'scene.esn', 'kernels.esn', 'a\u0000b', '.entelechy-journal.json', 'x.entelechy-tmp', '__proto__',
  'constructor', 'toString', 'hasOwnProperty', '\ud800', '%s%n%x', '<script>alert(1)</script>', '${process.exit()}', '`', '\n\r\t', ' ', '',
  'A'.repeat(240), 'sub/'.repeat(60) + 'x.esn', 'C:\\x.esn', '\\\\server\\share', '.', '..', 'scene.esn/', '~/x', 'RINGS', 'demo.tint@99999999999',
  'demo.tint@-1', 'demo.@1', 'snaps', 'x.replay', 'é☃🎉', '\u202e', 'null', 'true', '0', '{}',
];

/** Rewrite every `size = A x B` past MAX_ELEMENTS (a run fuzzes the protocol, not the memory budget). */
export function capSizes(text: string): string {
  return text.replace(/size\s*=\s*([^;]*?);/g, (m, dims: string) => {
    const ns = dims.split(/\s*x\s*/).map(Number);
    return ns.every((n) => Number.isFinite(n)) && ns.reduce((a, b) => a * Math.abs(b), 1) <= MAX_ELEMENTS ? m : 'size = 32 x 32;';
  });
}

export class RequestFuzzer {
  readonly rng: Rng;
  private n = 0;
  /** Lines for a process door: no blank lines (stdin skips them) and no line breaks in a line. */
  constructor(
    seed: number,
    readonly world: World,
    readonly options: {
      door?: boolean;
      ops?: string[];
      /** Aims not taken (fuzz.test.ts: requests too slow to send at volume until capped); given a plausible value instead. */
      avoid?: (op: string, field: string, kind: ValueKind) => boolean;
    } = {},
  ) {
    this.rng = new Rng(seed);
  }

  /** The next line: mostly one operation with one field aimed at, sometimes garbage. */
  next(): Generated {
    const r = this.rng;
    this.n++;
    if (r.chance(0.04)) return { line: this.garbage() };
    const spec = r.pick(OPERATIONS.filter((o) => !this.options.ops || this.options.ops.includes(o.name)));
    const aim = spec.fields.length && r.chance(0.85) ? r.pick(spec.fields) : undefined;
    let kind: ValueKind = aim ? r.pick(VALUE_KINDS.slice(1)) : 'good';
    if (aim && this.options.avoid?.(spec.name, aim.name, kind)) kind = 'good';
    return { line: this.request(spec, aim, kind), op: spec.name, field: aim?.name, kind: aim ? kind : undefined };
  }

  /** A request for `spec` with `aim` given a value of `kind`, other fields plausible or left out. */
  request(spec: OperationSpec, aim: FieldSpec | undefined, kind: ValueKind): string {
    const r = this.rng;
    const parts: [string, unknown][] = [];
    const id = this.id();
    if (id !== undefined) parts.push(['id', id]);
    parts.push(['op', spec.name]);
    for (const f of spec.fields) {
      if (f === aim) {
        if (kind !== 'missing') parts.push([f.name, this.value(spec.name, f, kind)]);
      } else if (f.required || r.chance(0.35)) parts.push([f.name, this.good(spec.name, f)]);
    }
    if (r.chance(0.03)) parts.push([r.pick(['bogus', 'Op', 'ID', '__proto__', 'constructor', 'timeout']), r.pick([1, 'x', null, new Raw('{"polluted":1}')])]);
    // A duplicate key (the last one counts), of the operations this run may send (a door's run sends no quit).
    if (r.chance(0.02)) parts.push(['op', r.pick(this.options.ops ?? OPERATION_NAMES)]);
    r.chance(0.5) || parts.reverse();
    return `{${parts.map(([k, v]) => `${JSON.stringify(k)}:${encode(v)}`).join(',')}}`;
  }

  private id(): unknown {
    const r = this.rng;
    const roll = r.next();
    if (roll < 0.8) return this.n;
    if (roll < 0.9) return `s${this.n}`;
    if (roll < 0.93) return undefined;
    return r.pick<unknown>([null, [], {}, true, new Raw('1e999'), new Raw('-0'), 'x'.repeat(HUGE_STRING), -1, 1.5, 2 ** 53 + 2, '', new Raw('[' + '['.repeat(DEEP) + ']'.repeat(DEEP) + ']')]);
  }

  /** A value of `kind` for field `f` of operation `op`. */
  value(op: string, f: FieldSpec, kind: ValueKind): unknown {
    const r = this.rng;
    switch (kind) {
      case 'good':
      case 'missing':
        return this.good(op, f);
      case 'wrong': {
        const others: unknown[] = [1, 'x', true, null, [], {}, [1, 2], { a: 1 }, 0.5, ['result']];
        return r.pick(others.filter((v) => !fits(f.type, v)));
      }
      case 'huge':
        return this.huge(f);
      case 'nested': {
        const d = r.pick([DEEP, 1000, 100]);
        return r.chance(0.5)
          ? new Raw('['.repeat(d) + '"result"' + ']'.repeat(d))
          : new Raw('{"x":'.repeat(d) + '1' + '}'.repeat(d));
      }
      case 'nonfinite':
        return r.pick([
          new Raw('1e999'), new Raw('-1e999'), new Raw('[1e999, 0]'), new Raw('{"x":1e999,"y":-1e999,"width":1e999,"height":1,"down":true}'),
          new Raw('[-1e999]'), new Raw('1e-999'), new Raw('{"x":0,"y":0,"width":1e999,"height":1e999}'),
        ]);
      case 'negative':
        return r.pick<unknown>([
          -1, new Raw('-0'), -2147483649, -1e308, -0.5, '-1', [-1], [-1, -2, -3, -4], { x: -1, y: -5, width: -3, height: 4 }, { x: 0, y: 0, width: 0, height: 0 },
          { x: -1e308, y: -1e308, down: true }, { x: 2147483647, y: 0, width: 2, height: 1 },
        ]);
      case 'hostile':
        return this.hostile(op, f);
    }
  }

  private huge(f: FieldSpec): unknown {
    const r = this.rng;
    switch (f.type) {
      case 'string':
      case 'string|null':
        return r.pick(['A'.repeat(HUGE_STRING), 'rings'.repeat(HUGE_STRING / 5), 'é'.repeat(HUGE_STRING / 2), 'a/'.repeat(HUGE_STRING / 2)]);
      case 'number':
      case 'integer':
        return r.pick([1e308, 2 ** 53 + 1, 2147483648, 4294967296, Number.MAX_SAFE_INTEGER, 1e21]);
      case 'array':
      case 'number|array':
        return r.pick([
          new Raw(`[${new Array(HUGE_ARRAY).fill('1').join(',')}]`),
          new Raw(`[${new Array(HUGE_ARRAY / 10).fill('"result"').join(',')}]`),
          new Raw(`[${new Array(HUGE_ARRAY / 10).fill('{"node":"rings","member":"count","text":"count = 2.0;"}').join(',')}]`),
        ]);
      case 'object':
        return r.chance(0.5)
          ? new Raw(`{${Array.from({ length: HUGE_KEYS }, (_, i) => `"k${i}":${i}`).join(',')}}`)
          : { x: 0, y: 0, width: 2147483647, height: 2147483647, down: true };
      default:
        return 'A'.repeat(HUGE_STRING);
    }
  }

  private hostile(op: string, f: FieldSpec): unknown {
    const r = this.rng;
    const w = this.world;
    if (f.name === 'source' || (f.name === 'text' && r.chance(0.3)))
      return r.pick([nestedIfs(r.pick([50, 700])), fnChain(r.pick([20, 700])), KERNEL_SOURCES[4], 'kernel', '}'.repeat(1000), '{'.repeat(1000), '/*', '"', 'kernel a.b@1 { each (x) { for (;;) {} } }']);
    if (f.name === 'text') return capSizes(mutateScene(r, w.texts['scene.esn'] ?? '', r.int(1, 6)));
    if (f.name === 'edits')
      return r.pick<unknown>([
        [{ node: 'rings', member: 'count', text: 'count = 1.0; } node evil: demo.rings@1 { size = 8 x 8;' }],
        [{ node: 'rings', text: null }],
        [{ kernel: 'demo.rings@1', text: null }],
        [{ output: 'x', text: 'output x <- nowhere.result;' }],
        [{ use: '../../etc/passwd', text: 'use "../../etc/passwd";' }],
        [{ node: 'rings', member: 'count', text: null }, { node: 'rings', member: 'count', text: 'count = 2.0;' }],
        [{ node: '__proto__', text: 'x' }],
        [{ param: 'warmth', text: 'param warmth: f32 = 1e999 range 0..1;' }],
        [{ node: 'rings', member: 'size', text: 'size = 0 x 0;' }],
        [{ node: 'rings', member: 'size', text: 'size = -4 x 8;' }],
        [{ node: 'rings', member: 'count', text: 'count = ' + '('.repeat(700) + '1' + ')'.repeat(700) + ';' }],
        [{}], [null], [1], ['x'],
      ]);
    if (f.name === 'documents')
      return r.pick<unknown>([
        [], [{}], [null], [{ path: '../escape.esn', text: 'x' }], [{ path: 'scene.esn' }], [{ path: 'scene.esn', text: 1 }],
        [{ path: 'scene.esn', text: w.texts['scene.esn'] }, { path: 'scene.esn', text: w.texts['scene.esn'] }],
        [{ path: '.entelechy-journal.json', text: '{}' }], [{ path: 'a.replay', text: 'garbage' }], [{ path: 'A'.repeat(240), text: 'x' }],
        [{ path: 'kernels.esn', text: capSizes(mutateScene(r, w.texts['kernels.esn'] ?? '', 2)) }, { path: 'scene.esn', text: w.texts['scene.esn'] }],
      ]);
    if (f.name === 'data' && op === 'restore')
      return r.pick([
        '{"format":"entelechy-snapshot","version":1,"state":[],"clock":{"time":1e999,"frame":-1}}',
        '{"format":"entelechy-snapshot","version":1,"state":[{"key":"board.cells","comps":["f32"],"size":[32,32,1],"packed":true,"data":"AAAA"}]}',
        '{"format":"entelechy-snapshot","version":1,"state":[],"params":{"warmth":[1e308]}}',
        '{"format":"entelechy-snapshot","version":1,"state":[],"published":{"fuzz.deep@1":' + JSON.stringify(nestedIfs(700)) + '}}',
        '{"format":"entelechy-snapshot","version":1,"state":[],"published":{"__proto__":"x"}}',
        '{"format":"entelechy-snapshot","version":2}', '{"__proto__":{"format":"entelechy-snapshot"}}', '[]', 'null', '"x"', '{',
      ]);
    if (f.type === 'object')
      return r.pick<unknown>([new Raw('{"__proto__":{"x":1,"polluted":true}}'), { constructor: { prototype: { x: 1 } } }, { x: '1', y: '2' }, { x: [1], y: {} }, { x: 0, y: 0, width: 1.5, height: 1 }, { down: 'yes' }]);
    if (f.type === 'array' || f.type === 'number|array') return r.pick<unknown>([['__proto__'], [null], [[]], [{}], ['result', 'result'], [1, 'a'], [0.5, 0.5, 0.5, 0.5, 0.5], [new Raw('1e999')]]);
    if (f.type === 'number' || f.type === 'integer') return r.pick<unknown>([0, 1e-320, 2 ** 31, 2 ** 32 - 1, 0.1 + 0.2, 7, new Raw('1E400'), new Raw('0e0')]);
    if (f.type === 'boolean') return r.pick<unknown>([1, 0, 'true', null]);
    return r.pick([...HOSTILE_STRINGS, w.folder + '/scene.esn', w.folder]);
  }

  /** A plausible value: the names and shapes the session takes. */
  good(op: string, f: FieldSpec): unknown {
    const r = this.rng;
    const w = this.world;
    switch (f.name) {
      case 'kernel':
        return r.pick([...w.kernels, 'fuzz.flat@1', 'fuzz.loop@1']);
      case 'path':
        if (op === 'snapshot' || op === 'restore') return r.pick(['snaps/a.json', 'snaps/b.json', 'snap.json']);
        if (op === 'compose') return r.pick(['scene.esn', 'kernels.esn', 'notes.replay']);
        return r.pick([...w.documents, 'snap.json']);
      case 'version':
        return r.pick(w.versions.length ? w.versions : ['0000000000000000']);
      case 'expect':
        return op === 'compose' ? r.pick([...w.versions, '0000000000000000']) : r.int(0, 4);
      case 'text':
        return this.sceneText();
      case 'edits':
        return r.pick<unknown>([
          [{ node: 'rings', member: 'count', text: `count = ${r.pick(['2.0', '4.0', '8.0'])};` }],
          [{ param: 'warmth', text: `param warmth: f32 = ${r.pick(['0.25', '0.5'])} range 0..1;` }],
          [{ node: 'tint', member: 'warmth', text: 'warmth = 0.75;' }, { node: 'rings', member: 'count', text: 'count = 8.0;' }],
          [{ kernel: 'demo.tint@1', text: KERNEL_SOURCES[1] }],
        ]);
      case 'documents':
        return [{ path: 'scene.esn', text: this.sceneText() }, ...(r.chance(0.5) ? [{ path: 'kernels.esn', text: w.texts['kernels.esn'] }] : [])];
      case 'source':
        return r.pick(KERNEL_SOURCES);
      case 'name':
        return op === 'param' ? r.pick(w.params) : r.pick([...OPERATION_NAMES, 'field2', 'sin', 'field.write', 'published', 'tcp', 'region', 'demo.tint@1', 'kernel']);
      case 'value':
        if (op === 'param') return r.chance(0.8) ? r.next() : [r.next()];
        return r.chance(0.5) ? r.next() : [r.next()];
      case 'time':
        return r.int(0, 1000) / 8;
      case 'outputs':
        return w.outputs.filter(() => r.chance(0.5));
      case 'pointer':
        return { x: r.int(0, 31), y: r.int(0, 31), down: r.chance(0.5) };
      case 'keys':
        return r.pick([[], ['a'], ['shift', 'ArrowLeft']]);
      case 'output':
        return r.pick(w.outputs);
      case 'node':
        return r.pick(op === 'write' ? [...w.inputs, 'board'] : [...w.nodes, ...w.inputs]);
      case 'port':
        return r.pick(op === 'write' ? w.statePorts : w.ports);
      case 'format':
        return r.pick(['png', 'f32']);
      case 'region': {
        const x = r.int(0, 16), y = r.int(0, 16);
        return { x, y, width: r.int(1, 16), height: r.int(1, 16) };
      }
      case 'data':
        if (op === 'restore') return w.snapshot ?? '{}';
        return Buffer.from(new Float32Array(r.pick([32 * 32, 16, 1])).fill(1)).toString('base64');
      case 'paused':
        return r.chance(0.3);
      case 'x': case 'y': case 'z':
        return r.int(0, 40);
      default:
        return this.value(op, f, 'wrong');
    }
  }

  /** A scene text: as loaded, a small valid change, or a mutant (mostly refused by check). */
  private sceneText(): string {
    const r = this.rng;
    const text = this.world.texts['scene.esn'] ?? '';
    const roll = r.next();
    if (roll < 0.3) return text.replace(/count = [\d.]+;/, `count = ${r.pick(['2.0', '4.0', '8.0'])};`);
    if (roll < 0.4) return text;
    return capSizes(mutateScene(r, text, r.int(1, 3)));
  }

  /** A line that is not a request: broken JSON, other JSON values, bytes, nothing. */
  private garbage(): string {
    const r = this.rng;
    const good = `{"id":${this.n},"op":"status"}`;
    const cut = r.int(1, good.length - 1);
    const lines = [
      good.slice(0, cut), good.slice(cut), good + '}', good.replace(':', ''), `[${good}]`, `${good} ${good}`, `${good}x`,
      Array.from({ length: r.int(1, 60) }, () => String.fromCharCode(r.int(1, 255))).join(''),
      Array.from({ length: r.int(1, 20) }, () => String.fromCodePoint(r.int(0x80, 0x2ffff))).join(''),
      'null', '1', '"status"', 'true', '[]', '{}', '{"op":null}', '{"op":1e999}', '{"op":"status","id":1e999}', '{"op":"' + 'x'.repeat(HUGE_STRING) + '"}',
      '{"op":"sta\\u0000tus"}', "{'op':'status'}", '{"op":"status",}', 'NaN', '{"op":"status","id":NaN}', '\u0000'.repeat(10), '\ufeff' + good,
      '['.repeat(DEEP), '{"a":'.repeat(DEEP), 'x'.repeat(HUGE_STRING),
      ...(this.options.door ? [] : ['', '   ', '\t']),
    ];
    const line = r.pick(lines);
    return this.options.door ? line.replace(/[\r\n]/g, ' ') : line;
  }
}

/** Whether a (plain) value has a field type: the 'wrong' values are the ones that do not. */
function fits(type: FieldSpec['type'], v: unknown): boolean {
  switch (type) {
    case 'string': return typeof v === 'string';
    case 'number': return typeof v === 'number';
    case 'integer': return Number.isInteger(v);
    case 'boolean': return typeof v === 'boolean';
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array': return Array.isArray(v);
    case 'string|null': return typeof v === 'string' || v === null;
    case 'number|array': return typeof v === 'number' || Array.isArray(v);
    case 'any': return true;
  }
}
