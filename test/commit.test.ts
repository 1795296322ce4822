// The one commit path (src/main/commit.ts): a change is prepared, its documents written through
// the journal, and only then is the new world swapped in. A write the file system refuses after a
// successful compile leaves the world (status, revision, generations, graph) and the disk (every
// byte, no journal) as they were, for compose, saved edits (sync) and snapshots; the journal is
// never left poisoned; a snapshot never replaces a document; a read that arrived before a swap
// reads the world it arrived to; an entry document saved or composed empty is refused, the world
// keeping its state. Real sessions on real files; the faults are real (test/disk.ts).

import t, { type Test } from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { writeDocuments } from '../src/main/journal.js';
import { compileHere } from '../src/main/modules.js';
import { JOURNAL_NAME } from '../src/main/documents.js';
import { readField } from '../src/main/field.js';
import { copyExample } from './fixtures.js';
import { can, diskBytes, immutable } from './disk.js';
import { dispatch } from '../src/protocol/dispatcher.js';

type Answer = { ok?: any; error?: any };

async function ask(s: Session, req: object): Promise<Answer> {
  return JSON.parse(await dispatch(s, JSON.stringify(req)));
}

async function ok(t2: Test, s: Session, req: object): Promise<any> {
  const a = await ask(s, req);
  if (!('ok' in a)) t2.fail(`${JSON.stringify(req).slice(0, 120)} answered ${JSON.stringify(a.error).slice(0, 300)}`);
  return a.ok;
}

async function open(t2: Test, name = 'rings'): Promise<{ s: Session; dir: string }> {
  const dir = copyExample(name, 'commit');
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t2.teardown(() => s.close());
  return { s, dir };
}

/** What a client sees of the world: status (less memory), generations, graph. */
async function world(t2: Test, s: Session) {
  const { memory: _memory, ...status } = await ok(t2, s, { op: 'status' });
  return { status, kernels: await ok(t2, s, { op: 'kernels' }), graph: await ok(t2, s, { op: 'graph' }) };
}

/** An error the user can act on: it names the file, says what failed, and is not internal. */
function plainWriteError(t2: Test, error: any, file: string, what: RegExp): void {
  t2.ok(error, 'refused');
  t2.match(error?.message, what, 'says what failed');
  t2.match(error?.message, file, `names \`${file}\``);
  t2.notOk(error?.internal, 'not an internal error');
  t2.notMatch(error?.message, /\/tmp\/|internal error|this is a bug/, 'no machine path, no "internal"');
}

const WIDER = (text: string) => text.replace('size = 256 x 256;', 'size = 128 x 96;');
const BRIGHTER = (text: string) => text.replace('0.8 * v', '0.7 * v');

t.test('a compose whose second document cannot be renamed (immutable) changes neither the world nor the disk', { skip: can.immutable }, async (t) => {
  const { s, dir } = await open(t);
  await ok(t, s, { op: 'evaluate' });
  const scene = readFileSync(join(dir, 'scene.esn'), 'utf8');
  const kernels = readFileSync(join(dir, 'kernels.esn'), 'utf8');
  const before = await world(t, s);
  const disk = diskBytes(dir);
  const off = immutable(t, join(dir, 'kernels.esn'));
  const compose = { op: 'compose', documents: [{ path: 'scene.esn', text: WIDER(scene) }, { path: 'kernels.esn', text: BRIGHTER(kernels) }] };
  const a = await ask(s, compose);
  plainWriteError(t, a.error, 'kernels.esn', /not permitted|immutable/);
  t.equal(a.error?.written, false, 'written: false');
  t.same(await world(t, s), before, 'the world is as it was');
  t.same(diskBytes(dir), disk, 'every byte on disk is as it was (scene.esn put back, no journal, no temp)');
  // The output still reads, from the frame before: the old world was never freed.
  t.equal((await ok(t, s, { op: 'read' })).width, 256);
  // Once the file can be written, the same compose lands: nothing was left to poison the journal.
  off();
  const done = await ok(t, s, compose);
  t.equal(done.written, true);
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), WIDER(scene));
  t.equal(readFileSync(join(dir, 'kernels.esn'), 'utf8'), BRIGHTER(kernels));
  t.equal((await ok(t, s, { op: 'status' })).revision, before.status.revision + 1);
});

t.test('a compose into an immutable folder changes neither the world nor the disk', { skip: can.immutable }, async (t) => {
  const { s, dir } = await open(t);
  const scene = readFileSync(join(dir, 'scene.esn'), 'utf8');
  const before = await world(t, s);
  const disk = diskBytes(dir);
  const held = { allocations: s.memory.allocations, bytes: s.memory.allocatedBytes };
  const off = immutable(t, dir);
  const a = await ask(s, { op: 'compose', text: WIDER(scene) });
  plainWriteError(t, a.error, '.entelechy-journal.json', /not permitted|immutable/);
  t.same(await world(t, s), before, 'the world is as it was (it would be 128 x 96 had it swapped first)');
  // The new engine built for it is freed with it (commit.ts).
  t.same({ allocations: s.memory.allocations, bytes: s.memory.allocatedBytes }, held, 'the refused engine holds no memory');
  t.same(diskBytes(dir), disk, 'the disk is as it was');
  // A later sync sees nothing to do: the disk and the world agree.
  t.same((await ok(t, s, { op: 'sync' })).events.filter((e: any) => e.kind !== 'scene_rejected'), []);
  off();
  t.equal((await ok(t, s, { op: 'compose', text: WIDER(scene) })).written, true, 'then it lands');
});

t.test('a snapshot the file system refuses changes nothing, and is never written over a document', async (t) => {
  const { s, dir } = await open(t);
  await ok(t, s, { op: 'evaluate' });
  const before = await world(t, s);
  const disk = diskBytes(dir);
  for (const path of ['kernels.esn', 'scene.esn', './kernels.esn', 'sub/../scene.esn']) {
    const a = await ask(s, { op: 'snapshot', path });
    t.ok(a.error, `${path}: refused`);
    t.notOk(a.error?.internal, `${path}: not internal`);
  }
  const a = await ask(s, { op: 'snapshot', path: 'kernels.esn' });
  t.match(a.error.message, /`kernels.esn` is a document of the scene/);
  t.match(a.error.message, /kernels\.snapshot\.json/, 'names a path to use instead');
  t.same(diskBytes(dir), disk, 'no document was replaced');
  if (can.immutable) return;
  const off = immutable(t, dir);
  plainWriteError(t, (await ask(s, { op: 'snapshot', path: 'state.json' })).error, '.entelechy-journal.json', /not permitted|immutable/);
  t.same(await world(t, s), before, 'the world is as it was');
  t.same(diskBytes(dir), disk, 'the disk is as it was');
  off();
  t.ok((await ok(t, s, { op: 'snapshot', path: 'state.json' })).bytes > 0, 'then it lands');
});

t.test('a saved edit that fails after it compiled (no memory for it) leaves the world as it was', async (t) => {
  const { s, dir } = await open(t);
  await ok(t, s, { op: 'evaluate' });
  const before = await world(t, s);
  // Checks and compiles; only its fields (4 x 4 bytes x 40000^2) do not fit the memory.
  const saved = readFileSync(join(dir, 'scene.esn'), 'utf8').replace('size = 256 x 256;', 'size = 40000 x 40000;');
  writeFileSync(join(dir, 'scene.esn'), saved);
  const disk = diskBytes(dir);
  t.same((await ok(t, s, { op: 'sync' })).events.map((e: any) => e.kind), ['preparing']);
  await s.syncing;
  const events = (await ok(t, s, { op: 'sync' })).events;
  t.same(events.map((e: any) => e.kind), ['rejected']);
  t.match(events[0].message, /memory/);
  const after = await world(t, s);
  t.match(after.status.refused?.message, /memory/, 'status says why');
  t.same({ ...after, status: { ...after.status, refused: null } }, before, 'otherwise the world is as it was');
  t.same(diskBytes(dir), disk, 'the saved text stays as it was saved');
  t.equal((await ok(t, s, { op: 'read', format: 'f32' })).width, 256, 'the old world still reads');
});

t.test('compose with no documents is a clear error', async (t) => {
  const { s } = await open(t);
  const a = await ask(s, { op: 'compose', documents: [] });
  t.match(a.error?.message, /`documents` is empty: give at least one \{path, text\}/);
  t.notOk(a.error?.internal);
});

t.test('a snapshot to a long name never poisons later writes, also across a restart', async (t) => {
  const dir = copyExample('rings', 'commit');
  const scene = readFileSync(join(dir, 'scene.esn'), 'utf8');
  let s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  await ok(t, s, { op: 'evaluate' });
  for (const n of [240, 300]) {
    const long = await ask(s, { op: 'snapshot', path: 'A'.repeat(n) });
    t.match(long.error?.message, new RegExp(`a name of ${n} bytes .*(at most|limit is) 200 bytes.*shorter`));
    t.notOk(long.error?.internal, `${n}: not internal`);
  }
  t.ok((await ok(t, s, { op: 'snapshot', path: 'A'.repeat(196) })).bytes > 0, 'a 196-byte name is taken (its temp file is named shorter)');
  t.equal((await ok(t, s, { op: 'compose', text: WIDER(scene) })).written, true, 'a compose after it lands');
  await s.close();
  s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  t.equal((await ok(t, s, { op: 'status' })).loaded, true);
  t.ok((await ok(t, s, { op: 'snapshot', path: 'after.json' })).bytes > 0, 'and a snapshot after a restart');
  t.same(Object.keys(diskBytes(dir)).filter((f) => f.startsWith('.')), [], 'no journal, no temp file');
});

t.test('a session opens only after finishing a write a crash interrupted', async (t) => {
  const dir = copyExample('rings', 'commit');
  const scene = WIDER(readFileSync(join(dir, 'scene.esn'), 'utf8'));
  const kernels = readFileSync(join(dir, 'kernels.esn'), 'utf8').replaceAll('demo.rings@1', 'demo.rings@38');
  // A crash after the first of two renames: scene.esn names demo.rings@38, which kernels.esn does not declare yet.
  await t.rejects(writeDocuments(dir, [{ path: 'scene.esn', text: scene.replaceAll('demo.rings@1', 'demo.rings@38') }, { path: 'kernels.esn', text: kernels }], { crashAfter: 1 }));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  t.teardown(() => s.close());
  const status = await ok(t, s, { op: 'status' });
  t.equal(status.loaded, true, 'the world loads');
  t.equal(status.refused, null);
  t.equal(readFileSync(join(dir, 'kernels.esn'), 'utf8'), kernels, 'all new');
  const events = (await ok(t, s, { op: 'sync' })).events;
  t.same(events.find((e: any) => e.kind === 'recovered'), { kind: 'recovered', written: ['scene.esn', 'kernels.esn'], turnedBack: [] });
});

t.test('a read that arrived before a swap reads the world it arrived to', async (t) => {
  const { s, dir } = await open(t);
  await ok(t, s, { op: 'evaluate' });
  // Hold the frame slot (as a long frame would), queue reads behind it, then compose a new world.
  let release!: () => void;
  void s.frame(() => new Promise<void>((resolve) => (release = resolve)));
  const reads = Array.from({ length: 200 }, () => ask(s, { op: 'read', format: 'f32', region: { x: 0, y: 0, width: 4, height: 4 } }));
  const compiled = s.modules.compiled;
  // A shape no other test runs: a literal edit may run on a form compiled before (modules.ts).
  const kernels = readFileSync(join(dir, 'kernels.esn'), 'utf8').replace('0.8 * v', `${Math.random().toFixed(6)} * v * v * v * v * v * v * v`);
  const compose = ask(s, { op: 'compose', path: 'kernels.esn', text: kernels });
  // Let the compose compile its new module (it cannot be cached: a shape no run had before).
  while (s.modules.compiled === compiled) await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  release();
  const answers = await Promise.all(reads);
  t.equal(answers.filter((a) => a.error).length, 0, `every read is answered (the first error: ${JSON.stringify(answers.find((a) => a.error)?.error)?.slice(0, 200)})`);
  t.equal((await compose).ok?.written, true);
  t.equal((await ok(t, s, { op: 'status' })).revision, 2);
});

t.test('a value change (write, param, reset) that is refused leaves the running world untouched', async (t) => {
  const { s, dir } = await open(t, 'photo');
  await ok(t, s, { op: 'write', input: 'photo', value: [0.25, 0.5, 0.75, 1] });
  const photo = s.engine.fields.input('photo')!;
  const bytes = () => Buffer.concat(readField(s.memory, photo).map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
  const before = bytes();
  const engine = s.engine;
  const status = await world(t, s);
  // Every refusal below is found by a check after some values would already be known: data one
  // element short, a file that is no image, a region past the edge, a vector of the wrong length.
  // (NaN in data is no refusal: float components keep every bit.)
  const data = new Float32Array(240 * 160 * 4 - 1).fill(0.5);
  writeFileSync(join(dir, 'not-an-image.png'), 'this is text, not a PNG');
  const refused = [
    { op: 'write', input: 'photo', data: Buffer.from(data.buffer).toString('base64') },
    { op: 'write', input: 'photo', file: 'not-an-image.png' },
    { op: 'write', input: 'photo', value: [1, 1, 1, 1], region: { x: 200, y: 0, width: 41, height: 1 } },
    { op: 'write', input: 'photo', value: [1, 1, 1] },
    { op: 'param', name: 'exposure', value: [1, 2] },
    { op: 'param', name: 'no-such-param', value: 1 },
    { op: 'reset', node: 'no-such-node' },
  ];
  for (const req of refused) {
    const a = await ask(s, req);
    t.ok(a.error, `${JSON.stringify(req).slice(0, 80)} is refused`);
    t.notOk(a.error?.internal, 'as the user\'s mistake, not an internal error');
    t.ok(bytes().equals(before), 'the input field holds what it held');
  }
  t.equal(s.engine, engine, 'the same engine runs');
  t.same(await world(t, s), status, 'status, params, generations and graph are as they were');
});

t.test("a compose's write is prepared while its modules compile: the documents untouched until the change is made, and nothing left when it is not", async (t) => {
  const dir = copyExample('rings', 'commit');
  // A compiler that looks at the folder while it compiles, then compiles or fails as told.
  let fail = false;
  let seen: { journal?: string; kernels: string } | undefined;
  const compiler = {
    ready: Promise.resolve(true as const),
    compile: async (irs: Parameters<typeof compileHere>[0], tier: Parameters<typeof compileHere>[1]) => {
      // The write runs beside the compile on this thread: let it go on until its journal is there.
      for (let i = 0; i < 20000 && !existsSync(join(dir, JOURNAL_NAME)); i++) await new Promise((r) => setImmediate(r));
      let journal: string | undefined;
      try {
        journal = JSON.parse(readFileSync(join(dir, JOURNAL_NAME), 'utf8')).state;
      } catch {
        journal = undefined;
      }
      seen = { journal, kernels: readFileSync(join(dir, 'kernels.esn'), 'utf8') };
      if (fail) throw new Error('the compiler failed (as the test asked)');
      return compileHere(irs, tier);
    },
    close: async () => undefined,
  };
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null, compiler: compiler as never });
  t.teardown(() => s.close());
  const before = diskBytes(dir);
  const text = readFileSync(join(dir, 'kernels.esn'), 'utf8');
  const edited = text.replace('const v = 0.5 + 0.5', 'const v = 0.25 + 0.5');

  fail = true;
  const refused = await ask(s, { op: 'compose', path: 'kernels.esn', text: edited });
  t.ok(refused.error, 'a compile that fails refuses the compose');
  t.equal(seen?.journal, 'prepared', 'the journal was prepared while the modules compiled');
  t.equal(seen?.kernels, text, 'the document untouched meanwhile');
  t.same(diskBytes(dir), before, 'refused: every byte as it was, no journal, temp or backup left');

  fail = false;
  const made = await ok(t, s, { op: 'compose', path: 'kernels.esn', text: edited });
  t.equal(made.written, true);
  t.equal(seen?.journal, 'prepared', 'prepared during the compile again');
  t.equal(seen?.kernels, text, 'the old text until the change was made');
  t.equal(readFileSync(join(dir, 'kernels.esn'), 'utf8'), edited, 'made: the new text written');
  t.same(Object.keys(diskBytes(dir)).sort(), Object.keys(before).sort(), 'and no journal, temp or backup left');
});

t.test('an entry document saved or composed empty is refused: the running world keeps its state', async (t) => {
  const { s, dir } = await open(t, 'life');
  const scene = join(dir, 'scene.esn');
  const text = readFileSync(scene, 'utf8');
  await ok(t, s, { op: 'evaluate' });
  await ok(t, s, { op: 'evaluate' });
  const cells = async () => (await ok(t, s, { op: 'read', node: 'board', port: 'cells', format: 'f32' })).data;
  const before = { world: await world(t, s), cells: await cells() };
  /** The events of a saved edit: the sync that sees it, then the one after it is done. */
  const synced = async () => {
    const seen = (await ok(t, s, { op: 'sync' })).events;
    await s.syncing;
    return [...seen, ...(await ok(t, s, { op: 'sync' })).events];
  };

  // An editor that truncates before it writes: a sync between the two sees 0 bytes, or white space.
  for (const empty of ['', ' \n\n']) {
    writeFileSync(scene, empty);
    const events = (await synced()).filter((e: any) => e.kind !== 'preparing');
    t.same(events.map((e: any) => e.kind), ['rejected'], JSON.stringify(empty));
    t.match(events[0].message, /`scene\.esn`, the scene's entry document, is empty on disk .*the running version \(3 statements\) keeps running, with its state; save the document again to go on, or, to clear the scene for good, leave only a comment in it/);
    t.same([events[0].path, events[0].line, events[0].column], ['scene.esn', 1, 1]);
    const after = await world(t, s);
    t.same({ ...after, status: { ...after.status, refused: null } }, before.world, 'the world is as it was');
    t.equal(await cells(), before.cells, 'its state too');
  }
  writeFileSync(scene, text);
  t.same((await synced()).filter((e: any) => e.kind === 'state_reset'), [], 'the document saved again: nothing reset');
  t.equal(await cells(), before.cells, 'the state is the one before the empty save');
  t.equal((await ok(t, s, { op: 'evaluate' })).frame, 3, 'frames go on from where they were');

  // compose: the same rule, nothing written.
  const refused = (await ask(s, { op: 'compose', text: '' })).error;
  t.match(refused?.message, /compose would leave `scene\.esn`, the scene's entry document, empty: .*to clear the scene for good, compose a text that holds only a comment/);
  t.equal(refused?.written, false);
  t.equal(readFileSync(scene, 'utf8'), text, 'nothing written');
  t.equal((await ok(t, s, { op: 'status' })).nodes, 1);
  await ok(t, s, { op: 'compose', text: '// empty\n' });
  t.equal((await ok(t, s, { op: 'status' })).nodes, 0, 'a comment clears the scene on purpose');
});

t.test('a document the scene uses, saved or composed empty, is refused as the entry is, by its name', async (t) => {
  const { s, dir } = await open(t, 'rings');
  const kernels = join(dir, 'kernels.esn');
  const text = readFileSync(kernels, 'utf8');
  await ok(t, s, { op: 'evaluate' });
  writeFileSync(kernels, '');
  const seen = (await ok(t, s, { op: 'sync' })).events;
  await s.syncing;
  const events = [...seen, ...(await ok(t, s, { op: 'sync' })).events].filter((e: any) => e.kind !== 'preparing');
  t.same(events.map((e: any) => e.kind), ['rejected']);
  t.match(events[0].message, /`kernels\.esn`, a document of the scene, is empty on disk \(0 bytes\): the running version \(\d+ statements?\) keeps running/, 'not "no document declares" its kernels');
  writeFileSync(kernels, text);
  const refused = (await ask(s, { op: 'compose', path: 'kernels.esn', text: '\n' })).error;
  t.match(refused?.message, /compose would leave `kernels\.esn`, a document of the scene, empty/);
  t.equal(readFileSync(kernels, 'utf8'), text, 'nothing written');
});
