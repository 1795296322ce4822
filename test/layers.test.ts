// The import graph's layers: the front end (src/ir: syntax, check, lower, fusion, the IR and its
// interpreter) imports nothing from the layers built on it — codegen, the engine and session, the
// protocol, the workers; the session and engine (src/main) import nothing from the protocol, the
// command line, the Player or MCP: the protocol's dispatcher calls the session's own API, never the
// other way round. Read from the source files themselves, so a new import that crosses a layer
// fails here.

import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');

/** Every .ts file under `dir`, as paths relative to the repository's root. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [relative(ROOT, join(dir, d.name))] : [],
  );
}

/** The project files one source file imports (static, type-only, re-exports and dynamic), root-relative. */
function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)].map(
    (m) => m[1] ?? m[2] ?? m[3],
  );
  return specs.filter((s) => s.startsWith('.')).map((s) => relative(ROOT, resolve(dirname(join(ROOT, file)), s)).replace(/\.js$/, '.ts'));
}

/** The layers a directory of src must not import from. */
const FORBIDDEN: Record<string, string[]> = {
  'src/ir': ['src/codegen', 'src/main', 'src/protocol', 'src/workers', 'src/player', 'src/mcp', 'src/cli'],
  'src/main': ['src/protocol', 'src/cli', 'src/player', 'src/mcp'],
};

t.test('the scanner sees imports of every form', async (t) => {
  t.ok(imports('src/codegen/math.ts').includes('src/ir/mathref.ts'), 'codegen/math.ts imports ir/mathref.ts');
  t.ok(imports('src/ir/fuse.ts').includes('src/ir/ir.ts'), 'a type-only import counts');
  t.ok(sources(join(SRC, 'ir')).length > 20, 'the front end has its files');
  t.ok(imports('src/protocol/dispatcher.ts').includes('src/main/session.ts'), 'the dispatcher imports the session (type-only)');
  t.ok(sources(join(SRC, 'main')).includes('src/main/session.ts'), 'the session is under src/main');
});

for (const [layer, forbidden] of Object.entries(FORBIDDEN)) {
  t.test(`nothing in ${layer} imports ${forbidden.join(', ')}`, async (t) => {
    const crossings = sources(join(ROOT, layer)).flatMap((file) =>
      imports(file)
        .filter((target) => forbidden.some((f) => target.startsWith(f + '/')))
        .map((target) => `${file} imports ${target}`),
    );
    t.same(crossings, []);
  });
}

// The protocol reaches the engine only through the session and the world's own API
// (src/main/world-fields.ts for reading and writing fields): never through the engine's internals,
// the memory's layout, snapshots' or images' storage, or the compiler. The door (dispatcher.ts)
// imports three of those modules for their error classes alone, which it turns into protocol errors.
const ENGINE_INTERNALS = [
  'src/main/field.ts', 'src/main/memory.ts', 'src/main/engine.ts', 'src/main/frame.ts', 'src/main/group-runs.ts',
  'src/main/scene-groups.ts', 'src/main/field-needs.ts', 'src/main/run-once.ts', 'src/main/evaluation-error.ts', 'src/main/slots.ts', 'src/main/carry.ts',
  'src/main/snapshot.ts', 'src/main/image-input.ts', 'src/main/image.ts', 'src/main/uniforms.ts', 'src/main/work.ts',
  'src/main/modules.ts', 'src/main/compiler.ts', 'src/main/optimiser.ts', 'src/main/tiles/', 'src/workers/', 'src/codegen/',
];
const ERROR_CLASSES_AT_THE_DOOR: Record<string, string[]> = {
  'src/protocol/dispatcher.ts': ['src/main/evaluation-error.ts', 'src/main/memory.ts', 'src/main/image.ts'],
};

/** The engine internals `file` imports (beyond its allowed error classes). */
function internalsImported(file: string): string[] {
  const allowed = ERROR_CLASSES_AT_THE_DOOR[file] ?? [];
  return imports(file).filter((target) => !allowed.includes(target) && ENGINE_INTERNALS.some((i) => (i.endsWith('/') ? target.startsWith(i) : target === i)));
}

t.test('the protocol touches the engine only through the session and the world\'s field API', async (t) => {
  t.ok(imports('src/protocol/handlers/running.ts').includes('src/main/world-fields.ts'), '`read` reads fields through the world\'s field API');
  t.ok(imports('src/protocol/handlers/state.ts').includes('src/main/world-fields.ts'), '`write`, `snapshot` and `restore` through it too');
  t.ok(internalsImported('src/main/world-fields.ts').includes('src/main/field.ts'), 'the check sees an import of an internal (the API\'s own, of the memory\'s layout)');
  const crossings = sources(join(SRC, 'protocol')).flatMap((file) => internalsImported(file).map((target) => `${file} imports ${target}`));
  t.same(crossings, []);
});

// Nor through the engine object: a handler finds a field, sets a param, resets state and takes
// the engine's events through the world's API (world-fields.ts, world-state.ts), so nothing in
// src/protocol says `.engine` or dereferences an `engine` it was handed (an ApplyValues' argument
// is passed on to that API, never opened).
const ENGINE_TOUCH = [/\.engine\b/, /\bengine\.(?!js['"])[A-Za-z_$]/];

/** The lines of `file` that reach into the engine object, as `file:line: text`. */
function engineTouches(file: string): string[] {
  return readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .flatMap((line, i) => (ENGINE_TOUCH.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

t.test('nothing in src/protocol reaches into the engine object', async (t) => {
  t.ok(engineTouches('src/main/world-state.ts').length > 0, 'the check sees `.engine` (in the API itself, which may)');
  t.ok(ENGINE_TOUCH.some((re) => re.test('engine.params.set(name, value)')), 'and a handed engine opened');
  t.notOk(ENGINE_TOUCH.some((re) => re.test("import { EvaluationError } from '../main/engine.js';")), 'but not an import of engine.ts');
  t.same(sources(join(SRC, 'protocol')).flatMap(engineTouches), []);
});
