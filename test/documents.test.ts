// Documents and their journal (src/main/documents.ts), on real files in temporary folders: which
// paths a document may have, writes of several documents that land all or none (file modes
// kept, nothing left behind when a write fails), and recovery from journals a crash, a hostile
// user or a corrupted disk left. test/compose.test.ts covers the crash points through compose.

import t from 'tap';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { JOURNAL_NAME, PathError, resolveUnder, versionOf } from '../src/main/documents.js';
import { SimulatedCrash, writeDocuments } from '../src/main/journal.js';
import { recoverJournal } from '../src/main/journal-recovery.js';
import { can, diskBytes, fill, tmpfs } from './disk.js';
import { scratchDir } from './scratch.js';
import { SceneFolder } from '../src/main/files.js';
import { loadScene } from '../src/ir/check/scene.js';

function folder(): string {
  const dir = scratchDir('entelechy-documents-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file under dir (relative, `/` between folders), sorted. */
function listing(dir: string, under = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listing(join(dir, e.name), under) : [relative(under, join(dir, e.name)).split('\\').join('/')]))
    .sort();
}

const journal = (state: string, renames: unknown) => JSON.stringify({ entelechy: 'journal', state, renames });

t.test('versionOf: 16 hex chars of the SHA-256 of the UTF-8 text', async (t) => {
  t.equal(versionOf(''), 'e3b0c44298fc1c14');
  t.equal(versionOf('abc'), 'ba7816bf8f01cfea');
  t.not(versionOf('é'), versionOf('e\u0301'), 'bytes, not what they look like');
});

t.test('resolveUnder: what a document path may be, and what each refusal says', async (t) => {
  const root = folder();
  mkdirSync(join(root, 'lib'));
  writeFileSync(join(root, 'scene.esn'), 'x');
  writeFileSync(join(root, 'lib', 'k.esn'), 'k');
  const hint = "name a document relative to the scene's folder, like `kernels.esn` or `lib/kernels.esn`";
  const refused: [unknown, string][] = [
    ['', `a document path must be a non-empty string; ${hint}`],
    [3, `a document path must be a non-empty string; ${hint}`],
    ['a\0b.esn', `\`"a\\u0000b.esn"\` holds a NUL character; ${hint}`],
    ['/etc/passwd', `\`/etc/passwd\` is an absolute path; documents are read and written only under the scene's folder: ${hint}`],
    ['\\share\\x.esn', `\`\\share\\x.esn\` is an absolute path; documents are read and written only under the scene's folder: ${hint}`],
    ['C:x.esn', `\`C:x.esn\` is an absolute path; documents are read and written only under the scene's folder: ${hint}`],
    ['lib/../../x.esn', `\`lib/../../x.esn\` uses \`..\`; documents are read and written only under the scene's folder: ${hint}`],
    ['lib\\..\\x.esn', `\`lib\\..\\x.esn\` uses \`..\`; documents are read and written only under the scene's folder: ${hint}`],
    ['./.', `\`./.\` names the scene's folder itself, not a document; ${hint}`],
    [JOURNAL_NAME, `\`${JOURNAL_NAME}\` is reserved for Entelechy's own bookkeeping; ${hint}`],
    [`lib/${JOURNAL_NAME}`, `\`lib/${JOURNAL_NAME}\` is reserved for Entelechy's own bookkeeping; ${hint}`],
    ['lib/.k.esn.1a2b.entelechy-tmp', `\`lib/.k.esn.1a2b.entelechy-tmp\` is reserved for Entelechy's own bookkeeping; ${hint}`],
    ['scene.esn/k.esn', '`scene.esn/k.esn`: `scene.esn` is a file, not a folder; name another path'],
    ['lib/k.esn/deeper/x.esn', '`lib/k.esn/deeper/x.esn`: `lib/k.esn` is a file, not a folder; name another path'],
    ['lib', '`lib` is a folder, not a document; name a file in it, like `lib/kernels.esn`'],
    ['lib//', '`lib//` ends with a slash, so it names a folder, not a document: name a file in it, like `lib/kernels.esn`'],
    ['new/', '`new/` ends with a slash, so it names a folder, not a document: name a file in it, like `new/kernels.esn`'],
  ];
  for (const [path, message] of refused) {
    t.throws(() => resolveUnder(root, path as string), { name: 'PathError', message, path: String(path) }, JSON.stringify(path));
  }
  // Taken: relative paths with either separator, `.` and repeated separators dropped, new folders.
  t.equal(resolveUnder(root, 'scene.esn'), join(root, 'scene.esn'));
  t.equal(resolveUnder(root, './lib//k.esn'), join(root, 'lib', 'k.esn'));
  t.equal(resolveUnder(root, 'lib\\k.esn'), join(root, 'lib', 'k.esn'));
  t.equal(resolveUnder(root, 'new/deeper/x.esn'), join(root, 'new', 'deeper', 'x.esn'));
  t.equal(resolveUnder(root, 'lib/new.esn'), join(root, 'lib', 'new.esn'));
  t.equal(resolveUnder(root, 'a..b.esn'), join(root, 'a..b.esn'), '`..` inside a name is a name');
  // The scene's folder itself must be a folder that exists.
  t.throws(() => resolveUnder(join(root, 'scene.esn'), 'a.esn'), { message: new RegExp(`^the scene's folder \`${join(root, 'scene.esn')}\` is not a folder$`) });
  t.equal(resolveUnder(root, 'notes:1.esn'), join(root, 'notes:1.esn'), 'a colon inside a name is a name');
  mkdirSync(join(root, 'lib', 'sub'));
  t.throws(() => resolveUnder(root, 'lib/sub/'), { message: /^`lib\/sub\/` ends with a slash, so it names a folder, not a document: name a file in it, like `lib\/sub\/kernels.esn`$/ });
  t.throws(() => resolveUnder(join(root, 'gone'), 'a.esn'), { message: new RegExp(`^the scene's folder \`${join(root, 'gone')}\` does not exist \\(ENOENT`) });
});

t.test('resolveUnder: symbolic links are followed inside the folder, refused out of it or nowhere', async (t) => {
  const root = folder();
  const outside = folder();
  mkdirSync(join(root, 'real'));
  writeFileSync(join(root, 'real', 'doc.esn'), 'doc');
  writeFileSync(join(outside, 'secret.esn'), 'secret');
  symlinkSync(join(root, 'real'), join(root, 'alias'));
  symlinkSync(join(root, 'real', 'doc.esn'), join(root, 'doc-link.esn'));
  symlinkSync(outside, join(root, 'out'));
  symlinkSync(join(outside, 'secret.esn'), join(root, 'leak.esn'));
  symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
  symlinkSync(join(root, 'real'), join(root, 'real', 'loop'));
  t.equal(resolveUnder(root, 'alias/doc.esn'), join(root, 'real', 'doc.esn'));
  t.equal(resolveUnder(root, 'doc-link.esn'), join(root, 'real', 'doc.esn'), 'a link to a document: the document');
  t.equal(resolveUnder(root, 'alias/new.esn'), join(root, 'real', 'new.esn'), 'a new document through a link: where the link leads');
  t.equal(resolveUnder(root, 'real/loop/loop/doc.esn'), join(root, 'real', 'doc.esn'));
  // A `use` of such a link says why it is not read (it said there was no such document).
  writeFileSync(join(root, 'scene.esn'), 'use "leak.esn";\nuse "gone.esn";\n');
  const scene = new SceneFolder(join(root, 'scene.esn'));
  t.same(loadScene('scene.esn', { read: (p) => scene.readDocument(p) }).diagnostics.map((d) => d.message), [
    "cannot read `leak.esn`: `leak.esn` goes through a symbolic link `leak.esn` that leads out of the scene's folder; documents are read and written only under it: name a path that stays inside",
    "cannot read `gone.esn`: no such document under the scene's folder",
  ]);
  t.throws(() => resolveUnder(root, 'out/x.esn'), { message: "`out/x.esn` goes through a symbolic link `out` that leads out of the scene's folder; documents are read and written only under it: name a path that stays inside" });
  t.throws(() => resolveUnder(root, 'leak.esn'), { message: /^`leak.esn` goes through a symbolic link `leak.esn` that leads out/ });
  t.throws(() => resolveUnder(root, 'dangling/x.esn'), { message: '`dangling/x.esn` goes through a symbolic link `dangling` that leads nowhere; remove the link or name another path' });
  t.throws(() => resolveUnder(root, 'alias'), { message: /is a folder, not a document/ });
  // Deeper links are named by their whole path.
  mkdirSync(join(root, 'lib'));
  symlinkSync(outside, join(root, 'lib', 'out'));
  symlinkSync(join(root, 'nowhere'), join(root, 'lib', 'dangling'));
  t.throws(() => resolveUnder(root, 'lib/out/x.esn'), { message: /^`lib\/out\/x.esn` goes through a symbolic link `lib\/out` that leads out/ });
  t.throws(() => resolveUnder(root, 'lib/dangling/x.esn'), { message: /^`lib\/dangling\/x.esn` goes through a symbolic link `lib\/dangling` that leads nowhere/ });
  // A link to the folder itself stays inside; one to a sibling whose name starts like it does not.
  symlinkSync(root, join(root, 'self'));
  t.equal(resolveUnder(root, 'self/real/doc.esn'), join(root, 'real', 'doc.esn'));
  mkdirSync(`${root}-evil`);
  t.teardown(() => rmSync(`${root}-evil`, { recursive: true, force: true }));
  symlinkSync(`${root}-evil`, join(root, 'evil'));
  t.throws(() => resolveUnder(root, 'evil/x.esn'), { message: /leads out of the scene's folder/ }, `${root}-evil is not under ${root}`);
  // A root reached through a link is the same root.
  const linkedRoot = join(outside, 'root-link');
  symlinkSync(root, linkedRoot);
  t.equal(resolveUnder(linkedRoot, 'real/doc.esn'), join(linkedRoot, 'real', 'doc.esn'));
  t.equal(resolveUnder(linkedRoot, 'alias/doc.esn'), join(root, 'real', 'doc.esn'));
  await writeDocuments(linkedRoot, [{ path: 'new/folder/x.esn', text: 'x' }]);
  t.equal(readFileSync(join(root, 'new/folder/x.esn'), 'utf8'), 'x', 'a write into new folders under a root reached through a link');
});

t.test('paths of other files are refused in their own words: a snapshot, a recording', async (t) => {
  const root = folder();
  const outside = folder();
  symlinkSync(outside, join(root, 'recordings'));
  const scene = new SceneFolder(join(root, 'scene.esn'));
  t.throws(() => scene.resolve('../x.json', { noun: 'snapshot', like: 'state.snapshot.json' }), { message: "`../x.json` uses `..`; snapshots are read and written only under the scene's folder: name a snapshot relative to the scene's folder, like `state.snapshot.json` or `lib/state.snapshot.json`" });
  t.throws(() => scene.resolve('sub/', { noun: 'snapshot', like: 'state.snapshot.json' }), { message: '`sub/` ends with a slash, so it names a folder, not a snapshot: name a file in it, like `sub/state.snapshot.json`' });
  // The Player's recordings folder, a link out of the scene's folder: the video went there.
  const { Recorder } = await import('../src/player/recorder.js');
  t.throws(() => Recorder.start(scene, 'scene', 'result', 8, 8), { name: 'PathError', message: /^`recordings\/scene-result-.*\.mp4` goes through a symbolic link `recordings` that leads out of the scene's folder; recordings are read and written only under it/ });
  t.same(readdirSync(outside), [], 'nothing made out there');
  rmSync(join(root, 'recordings'));
  const recorder = Recorder.start(scene, 'scene', 'result', 8, 8);
  t.match(recorder.file, /^recordings\/scene-result-.*\.mp4$/, 'inside, as before');
  await recorder.abort();
});

t.test('writeDocuments: a set lands whole, keeps each file\'s mode, and leaves nothing behind', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  chmodSync(join(root, 'scene.esn'), 0o640);
  mkdirSync(join(root, 'real'));
  symlinkSync(join(root, 'real'), join(root, 'alias'));
  await writeDocuments(root, [
    { path: 'scene.esn', text: 'new scene' },
    { path: 'deep/er/k.esn', text: 'kernels' },
    { path: 'alias/doc.esn', text: 'through the link' },
  ]);
  t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'new scene');
  t.equal(statSync(join(root, 'scene.esn')).mode & 0o777, 0o640, 'the mode of the document it replaced');
  t.equal(readFileSync(join(root, 'deep/er/k.esn'), 'utf8'), 'kernels');
  t.equal(readFileSync(join(root, 'real/doc.esn'), 'utf8'), 'through the link');
  t.same(listing(root), ['alias', 'deep/er/k.esn', 'real/doc.esn', 'scene.esn'], 'no journal, no temp file');
  await writeDocuments(root, []);
  t.same(listing(root), ['alias', 'deep/er/k.esn', 'real/doc.esn', 'scene.esn'], 'an empty set writes nothing, not even a journal');
});

t.test('writeDocuments: a set it cannot take is refused before anything is written', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  mkdirSync(join(root, 'real'));
  symlinkSync(join(root, 'real'), join(root, 'alias'));
  const refusals: [unknown, RegExp | string][] = [
    ['scene.esn', 'writeDocuments takes an array of {path, text}'],
    [[null], 'each document to write is {path, text}'],
    [['scene.esn'], 'each document to write is {path, text}'],
    [[{ path: 'scene.esn', text: 'new' }, { path: 'b.esn', text: null }], 'the text of `b.esn` must be a string'],
    [[{ path: 'scene.esn', text: 'a' }, { path: 'real/x.esn', text: 'b' }, { path: 'alias/x.esn', text: 'c' }], '`alias/x.esn` and `real/x.esn` name the same document; send one text per document'],
    [[{ path: 'scene.esn', text: 'a' }, { path: '../x.esn', text: 'b' }], /uses `\.\.`/],
  ];
  for (const [files, message] of refusals) {
    await t.rejects(writeDocuments(root, files as { path: string; text: string }[]), { message }, JSON.stringify(files));
    t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'old');
    t.same(listing(root), ['alias', 'scene.esn'], 'nothing written');
  }
});

t.test('a disk that fills up mid-write: the temps and the journal already written are removed', { skip: can.tmpfs }, async (t) => {
  const { dir } = tmpfs(t, '256k');
  writeFileSync(join(dir, 'scene.esn'), 'old');
  fill(dir);
  // Room for the journal and a small temp file (a page each), not for a 64 KiB one.
  const filler = join(dir, 'filler.bin');
  truncateSync(filler, statSync(filler).size - 4 * 4096);
  const before = diskBytes(dir);
  const write = writeDocuments(dir, [{ path: 'scene.esn', text: 'new' }, { path: 'big.esn', text: 'x'.repeat(65536) }]);
  await t.rejects(write, { name: 'WriteError', code: 'ENOSPC', path: 'big.esn' }, 'the second temp file does not fit');
  t.same(diskBytes(dir), before, 'no temp file, no journal: every byte as it was');
  // Full to the last page: the journal itself cannot be written, and its temp file is removed.
  fill(dir);
  const full = diskBytes(dir);
  await t.rejects(writeDocuments(dir, [{ path: 'scene.esn', text: 'new' }]), { name: 'WriteError', code: 'ENOSPC', path: JOURNAL_NAME });
  t.same(diskBytes(dir), full, 'no journal temp file left');
});

t.test('names too long for a temp file beside them are refused before anything is written', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  const long = `${'n'.repeat(240)}.esn`;
  const message = `\`lib/${long}\` has a name of 244 bytes (\`nnnnnnnnnnnnnnnn...\`); names of documents and folders are at most 200 bytes: name it shorter`;
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new' }, { path: `lib/${long}`, text: 'x' }]), { name: 'PathError', message });
  t.throws(() => resolveUnder(root, `${'d'.repeat(300)}/x.esn`), { message: /has a name of 300 bytes/ }, 'a folder too');
  t.throws(() => resolveUnder(root, `${'é'.repeat(101)}.esn`), { message: /has a name of 206 bytes/ }, 'bytes, not characters');
  t.equal(resolveUnder(root, `${'n'.repeat(196)}.esn`), join(root, `${'n'.repeat(196)}.esn`), '200 bytes is taken');
  t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'old');
  t.same(listing(root), ['scene.esn'], 'no journal: a later write is not held up');
});

t.test('recovery: a crash after any step ends with all of the set or none of it', async (t) => {
  const points = ['prepared', 'temps', 'committed', 0, 1, 2] as const;
  for (const crashAfter of points) {
    const root = folder();
    writeFileSync(join(root, 'scene.esn'), 'old scene');
    mkdirSync(join(root, 'lib'));
    writeFileSync(join(root, 'lib/k.esn'), 'old k');
    const set = [{ path: 'scene.esn', text: 'new scene' }, { path: 'lib/k.esn', text: 'new k' }];
    await t.rejects(writeDocuments(root, set, { crashAfter }), { name: 'SimulatedCrash', point: crashAfter });
    t.ok(existsSync(join(root, JOURNAL_NAME)), `${crashAfter}: the journal is on disk`);
    const committed = crashAfter !== 'prepared' && crashAfter !== 'temps';
    const r = await recoverJournal(root);
    t.same(r, committed ? { recovered: ['scene.esn', 'lib/k.esn'], rolledBack: [] } : { recovered: [], rolledBack: ['scene.esn', 'lib/k.esn'] }, `${crashAfter}`);
    t.same(
      [readFileSync(join(root, 'scene.esn'), 'utf8'), readFileSync(join(root, 'lib/k.esn'), 'utf8')],
      committed ? ['new scene', 'new k'] : ['old scene', 'old k'],
      `${crashAfter}: ${committed ? 'all' : 'none'} of the set`,
    );
    t.same(listing(root), ['lib/k.esn', 'scene.esn'], `${crashAfter}: no journal or temp file left`);
  }
  t.equal(new SimulatedCrash(2).message, 'simulated crash after 2 rename(s)');
  t.equal(new SimulatedCrash('temps').message, 'simulated crash after step "temps"');
});

t.test('a write after a crash finishes the interrupted set first', async (t) => {
  const root = folder();
  await t.rejects(writeDocuments(root, [{ path: 'a.esn', text: 'a' }], { crashAfter: 1 }), SimulatedCrash);
  await writeDocuments(root, [{ path: 'b.esn', text: 'b' }]);
  t.same(listing(root), ['a.esn', 'b.esn']);
  t.equal(readFileSync(join(root, 'a.esn'), 'utf8'), 'a');
});

t.test('recovery refuses journals it did not write, and journals that lead elsewhere', async (t) => {
  const root = folder();
  const outside = folder();
  writeFileSync(join(root, 'scene.esn'), 'the scene');
  writeFileSync(join(root, 'kernels.esn'), 'the kernels');
  // A document may start with a dot, as Entelechy's temp files do: only the suffix tells them apart.
  writeFileSync(join(root, '.hidden.esn'), 'the hidden kernels');
  symlinkSync(outside, join(root, 'out'));
  const notOurs = `${join(root, JOURNAL_NAME)} is not a journal Entelechy wrote; look at it, then move it away and start again`;
  const hostile: [string, string | RegExp][] = [
    ['{"entelechy": "journ', notOurs],
    ['[]', notOurs],
    ['null', notOurs],
    [JSON.stringify({ state: 'committed', renames: [] }), notOurs],
    [journal('done', []), notOurs],
    [journal('committed', { path: 'scene.esn', temp: '.s.entelechy-tmp' }), notOurs],
    [journal('committed', [null]), notOurs],
    [journal('committed', [{ path: 'scene.esn' }]), notOurs],
    [journal('committed', [{ path: 3, temp: '.s.entelechy-tmp' }]), notOurs],
    // The planted bug: a temp that is not a temp file would rename kernels.esn over the scene.
    [journal('committed', [{ path: 'scene.esn', temp: 'kernels.esn' }]), notOurs],
    [journal('committed', [{ path: 'scene.esn', temp: 'kernels.esn.entelechy-tmp.bak' }]), notOurs],
    [journal('committed', [{ path: 'scene.esn', temp: '.hidden.esn' }]), notOurs],
    [journal('committed', [{ path: 'a.esn', temp: '.a.entelechy-tmp' }, { path: 'scene.esn', temp: 'kernels.esn' }]), notOurs],
    [journal('committed', [{ path: '../escape.esn', temp: '.e.entelechy-tmp' }]), /uses `\.\.`/],
    [journal('committed', [{ path: 'out/x.esn', temp: '.x.entelechy-tmp' }]), /leads out of the scene's folder/],
    [journal('committed', [{ path: 'scene.esn', temp: '../.s.entelechy-tmp' }]), /uses `\.\.`/],
    [journal('committed', [{ path: 'scene.esn', temp: 'out/.s.entelechy-tmp' }]), /leads out of the scene's folder/],
    [journal('prepared', [{ path: JOURNAL_NAME, temp: '.j.entelechy-tmp' }]), /reserved for Entelechy's own bookkeeping/],
  ];
  for (const [text, message] of hostile) {
    writeFileSync(join(outside, '.x.entelechy-tmp'), 'from outside');
    writeFileSync(join(root, JOURNAL_NAME), text);
    await t.rejects(recoverJournal(root), { message }, text);
    await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new' }]), { message }, `a write refuses it too: ${text}`);
    t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'the scene');
    t.equal(readFileSync(join(root, 'kernels.esn'), 'utf8'), 'the kernels');
    t.equal(readFileSync(join(root, '.hidden.esn'), 'utf8'), 'the hidden kernels');
    t.equal(readFileSync(join(outside, '.x.entelechy-tmp'), 'utf8'), 'from outside', 'nothing outside is moved');
    t.ok(existsSync(join(root, JOURNAL_NAME)), 'the journal is left for the user to look at');
  }
});

t.test('recovery of journals Entelechy wrote, from the disk as a crash left it', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  mkdirSync(join(root, 'lib'));
  // Committed: one temp file renamed already, one still there; a half-written journal beside it.
  writeFileSync(join(root, 'lib', '.k.esn.ab.entelechy-tmp'), 'new k');
  writeFileSync(join(root, 'a.esn'), 'new a');
  writeFileSync(join(root, `${JOURNAL_NAME}.0f0f.entelechy-tmp`), '{"entel');
  writeFileSync(join(root, JOURNAL_NAME), journal('committed', [{ path: 'a.esn', temp: '.a.esn.cd.entelechy-tmp' }, { path: 'lib/k.esn', temp: 'lib/.k.esn.ab.entelechy-tmp' }]));
  t.same(await recoverJournal(root), { recovered: ['a.esn', 'lib/k.esn'], rolledBack: [] });
  t.same(listing(root), ['a.esn', 'lib/k.esn', 'scene.esn']);
  t.equal(readFileSync(join(root, 'lib/k.esn'), 'utf8'), 'new k');
  // Prepared: the temp files go, the documents stay; one temp never written is no matter.
  writeFileSync(join(root, '.scene.esn.ef.entelechy-tmp'), 'half');
  writeFileSync(join(root, JOURNAL_NAME), journal('prepared', [{ path: 'scene.esn', temp: '.scene.esn.ef.entelechy-tmp' }, { path: 'b.esn', temp: '.b.esn.01.entelechy-tmp' }]));
  t.same(await recoverJournal(root), { recovered: [], rolledBack: ['scene.esn', 'b.esn'] });
  t.same(listing(root), ['a.esn', 'lib/k.esn', 'scene.esn']);
  t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'old');
  // No journal: nothing to do, and a half-written journal alone is removed.
  writeFileSync(join(root, `${JOURNAL_NAME}.99.entelechy-tmp`), '{');
  writeFileSync(join(root, 'other.entelechy-tmp'), 'not a journal temp');
  t.same(await recoverJournal(root), { recovered: [], rolledBack: [] });
  t.same(listing(root), ['a.esn', 'lib/k.esn', 'other.entelechy-tmp', 'scene.esn'], 'only the journal\'s own temp files are removed');
  await t.rejects(recoverJournal(join(root, 'missing')), { message: /does not exist/ });
});

t.test('recovery that cannot move or remove a temp file stops and keeps the journal', async (t) => {
  for (const state of ['prepared', 'committed']) {
    const root = folder();
    writeFileSync(join(root, 'scene.esn'), 'old');
    // A folder where a temp file should be: it can be neither renamed over a document nor unlinked.
    mkdirSync(join(root, '.scene.esn.aa.entelechy-tmp'));
    writeFileSync(join(root, JOURNAL_NAME), journal(state, [{ path: 'scene.esn', temp: '.scene.esn.aa.entelechy-tmp' }]));
    await t.rejects(recoverJournal(root), { code: /^E/ }, state);
    t.ok(existsSync(join(root, JOURNAL_NAME)), `${state}: the journal is kept`);
    t.equal(readFileSync(join(root, 'scene.esn'), 'utf8'), 'old');
  }
  // A folder where the journal should be is not taken for no journal.
  const root = folder();
  mkdirSync(join(root, JOURNAL_NAME));
  await t.rejects(recoverJournal(root), { code: 'EISDIR' });
});

t.test('PathError names the path it refused', async (t) => {
  const e = new PathError('why', 'p.esn');
  t.equal(e.name, 'PathError');
  t.equal(e.path, 'p.esn');
  t.ok(e instanceof Error);
});
