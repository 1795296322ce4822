// Disk faults, on real file systems (test/disk.ts): a full one (a small tmpfs, filled) and a
// read-only one (the tmpfs remounted read-only). A compose or a snapshot the file system refuses
// answers a clear error (what failed, which file, what to do), and leaves the world and every byte
// on disk as they were; once the fault is gone the same request lands (nothing poisoned). A
// session opening on a folder whose interrupted write cannot be finished refuses to open, and
// opens (recovered) once it can. Also: journals a hostile or corrupted disk holds, at open.

import t, { type Test } from 'tap';
import { chmodSync, cpSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { JOURNAL_NAME } from '../src/main/documents.js';
import { writeDocuments } from '../src/main/journal.js';
import { can, diskBytes, fill, tmpfs } from './disk.js';
import { copyExample } from './fixtures.js';
import { ROOT } from './helpers.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { scratchDir } from './scratch.js';

const CACHE = scratchDir('entelechy-faults-cache-');
t.teardown(() => rmSync(CACHE, { recursive: true, force: true }));

async function ask(s: Session, req: object): Promise<{ ok?: any; error?: any }> {
  return JSON.parse(await dispatch(s, JSON.stringify(req)));
}

async function world(s: Session) {
  const { memory: _m, ...status } = (await ask(s, { op: 'status' })).ok;
  return { status, kernels: (await ask(s, { op: 'kernels' })).ok, graph: (await ask(s, { op: 'graph' })).ok };
}

/** The rings example on a fresh tmpfs; a session on it. */
async function onTmpfs(t2: Test, size: string) {
  const fs = tmpfs(t2, size);
  cpSync(join(ROOT, 'examples/rings'), fs.dir, { recursive: true });
  const s = await Session.open(join(fs.dir, 'scene.esn'), { workers: 1, cacheDir: CACHE });
  t2.teardown(() => s.close());
  t2.ok((await ask(s, { op: 'evaluate' })).ok, 'evaluates');
  return { ...fs, s };
}

const scene = readFileSync(join(ROOT, 'examples/rings/scene.esn'), 'utf8');
const kernels = readFileSync(join(ROOT, 'examples/rings/kernels.esn'), 'utf8');
const COMPOSE = {
  op: 'compose',
  documents: [
    { path: 'scene.esn', text: scene.replaceAll('demo.rings@1', 'demo.rings@38').replace('size = 256 x 256;', 'size = 96 x 64;') },
    { path: 'kernels.esn', text: kernels.replaceAll('demo.rings@1', 'demo.rings@38') + '\n// ' + 'padding '.repeat(600) + '\n' },
  ],
};

/** A refused request changed nothing and said plainly what, where and what to do. */
async function refusedPlainly(t2: Test, s: Session, dir: string, req: object, code: string, fix: RegExp) {
  const before = await world(s);
  const disk = diskBytes(dir);
  const a = await ask(s, req);
  t2.match(a.error?.message, new RegExp(`failed: .*\\(${code}\\)`), `${code}: says what failed`);
  t2.match(a.error?.message, fix, `${code}: says what to do`);
  t2.equal(a.error?.code, code);
  t2.notOk(a.error?.internal, 'not internal');
  t2.notMatch(a.error?.message, /\/tmp\/|internal error/, 'no machine path');
  t2.same(await world(s), before, 'the world is as it was');
  t2.same(diskBytes(dir), disk, 'every byte on disk is as it was');
  return a.error;
}

t.test('a full file system: compose and snapshot refused, nothing changed, then they land', { skip: can.tmpfs }, async (t) => {
  const { s, dir } = await onTmpfs(t, '256k');
  fill(dir);
  const e = await refusedPlainly(t, s, dir, COMPOSE, 'ENOSPC', /free some space/);
  t.match(e.path, /^(\.entelechy-journal\.json|scene\.esn|kernels\.esn)$/, 'names the file');
  await refusedPlainly(t, s, dir, { op: 'snapshot', path: 'state.json' }, 'ENOSPC', /free some space/);
  unlinkSync(join(dir, 'filler.bin'));
  t.equal((await ask(s, COMPOSE)).ok?.written, true, 'the compose lands once there is space');
  t.equal((await ask(s, { op: 'status' })).ok.revision, 2);
  t.ok((await ask(s, { op: 'snapshot', path: 'state.json' })).ok, 'and the snapshot');
});

t.test('a read-only file system: compose and snapshot refused, nothing changed, then they land', { skip: can.tmpfs }, async (t) => {
  const { s, dir, readOnly, readWrite } = await onTmpfs(t, '1m');
  readOnly();
  const e = await refusedPlainly(t, s, dir, COMPOSE, 'EROFS', /read-write/);
  t.equal(e.path, '.entelechy-journal.json', 'names the journal, the first file a write makes');
  await refusedPlainly(t, s, dir, { op: 'snapshot', path: 'state.json' }, 'EROFS', /read-write/);
  // A saved edit cannot happen on a read-only disk; sync sees nothing to do.
  t.same((await ask(s, { op: 'sync' })).ok.events, []);
  readWrite();
  t.equal((await ask(s, COMPOSE)).ok?.written, true, 'the compose lands once it is writable');
});

t.test('a session does not open on a write it cannot finish, and opens once it can', { skip: can.tmpfs }, async (t) => {
  const fs = tmpfs(t, '1m');
  cpSync(join(ROOT, 'examples/rings'), fs.dir, { recursive: true });
  const files = COMPOSE.documents.map((d) => ({ path: d.path, text: d.text }));
  await t.rejects(writeDocuments(fs.dir, files, { crashAfter: 1 }), { name: 'SimulatedCrash' });
  fs.readOnly();
  await t.rejects(Session.open(join(fs.dir, 'scene.esn'), { workers: 1, cacheDir: CACHE }), { message: /recovering an interrupted write in `\.entelechy-journal\.json` failed: the file system is read-only \(EROFS\); the documents are as the interrupted write left them/ });
  fs.readWrite();
  const s = await Session.open(join(fs.dir, 'scene.esn'), { workers: 1, cacheDir: CACHE });
  t.teardown(() => s.close());
  t.equal((await ask(s, { op: 'status' })).ok.loaded, true, 'the world loads');
  t.equal(readFileSync(join(fs.dir, 'kernels.esn'), 'utf8'), files[1].text, 'all new');
});

t.test('an interrupted write that cannot be finished is turned back at open', async (t) => {
  const dir = copyExample('rings', 'faults');
  const files = COMPOSE.documents.map((d) => ({ path: d.path, text: d.text }));
  await t.rejects(writeDocuments(dir, files, { crashAfter: 1 }), { name: 'SimulatedCrash' });
  // scene.esn is new already; kernels.esn's temp file is torn (not the text the journal names):
  // all old is the only whole set.
  const temp = Object.keys(diskBytes(dir)).find((f) => f.startsWith('.kernels.esn.') && f.endsWith('.new.entelechy-tmp'))!;
  writeFileSync(join(dir, temp), 'torn');
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: CACHE });
  t.teardown(() => s.close());
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), scene, 'scene.esn put back');
  t.equal(readFileSync(join(dir, 'kernels.esn'), 'utf8'), kernels);
  t.equal((await ask(s, { op: 'status' })).ok.loaded, true, 'the world loads');
  t.same((await ask(s, { op: 'sync' })).ok.events.find((e: any) => e.kind === 'recovered'), { kind: 'recovered', written: [], turnedBack: ['scene.esn', 'kernels.esn'] });
  t.same(Object.keys(diskBytes(dir)).filter((f) => f.includes('.entelechy')), [], 'no journal, temp or backup left');
});

t.test('journals from a hostile or corrupted disk are never followed, also at open', async (t) => {
  const journal = (state: string, renames: unknown) => JSON.stringify({ entelechy: 'journal', state, renames });
  const hostile: [string, string][] = [
    // Would rename kernels.esn over scene.esn.
    [journal('committed', [{ path: 'scene.esn', temp: 'kernels.esn' }]), 'a temp that is not a temp file'],
    [journal('committed', [{ path: 'scene.esn', temp: '.kernels.esn.x.entelechy-tmp', backup: 'kernels.esn' }]), 'a backup that is not a temp file'],
    [journal('rollback', [{ path: 'scene.esn', version: 'x', temp: 'lib/.s.entelechy-tmp' }]), 'a temp in another folder'],
    [journal('committed', [{ path: '/etc/passwd', temp: '.p.entelechy-tmp' }]), 'an absolute path'],
    [journal('done', []), 'an unknown state'],
    [JSON.stringify({ entelechy: 'journal', state: 'committed', renames: [{ kind: 'delete', path: 'scene.esn' }] }), 'an unknown kind of entry'],
    ['{"entelechy": "journal", "state": "comm', 'a journal cut short'],
    ['\u0000\u0000\u0000', 'zeroes (a torn sector)'],
  ];
  for (const [text, what] of hostile) {
    const dir = copyExample('rings', 'faults');
    writeFileSync(join(dir, '.kernels.esn.x.entelechy-tmp'), 'a planted temp');
    writeFileSync(join(dir, JOURNAL_NAME), text);
    const disk = diskBytes(dir);
    await t.rejects(Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: CACHE }), { message: /look at it, then move it away|uses `\.\.`|absolute path|leads out/ }, `${what}: the session refuses to open`);
    t.same(diskBytes(dir), disk, `${what}: nothing on disk moved`);
  }
});

t.test('an editor that saves while a compose is made: the compose is refused and the save kept; an empty file mid-save is not edited', async (t) => {
  const dir = copyExample('rings', 'saved-meanwhile');
  chmodSync(join(dir, 'scene.esn'), 0o664);
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: CACHE });
  t.teardown(() => s.close());
  t.ok((await ask(s, { op: 'evaluate' })).ok, 'evaluates');
  const saved = scene.replace('warmth = 0.6;', 'warmth = 0.7;') + '// the editor saved this\n';
  // The editor's save lands after the compose read the document, before its write commits (the
  // compose checked and compiled meanwhile): it was written over, unseen, also with `expect`.
  const prepare = s.prepareWrite.bind(s);
  s.prepareWrite = async (files) => {
    const prepared = await prepare(files);
    writeFileSync(join(dir, 'scene.esn'), saved);
    return prepared;
  };
  const before = await world(s);
  const version = (await ask(s, { op: 'history', path: 'scene.esn' })).ok.disk;
  const a = await ask(s, { op: 'compose', expect: version, edits: [{ node: 'tint', member: 'warmth', text: 'warmth = 0.2;' }] });
  t.match(a.error, { code: 'saved_meanwhile', written: false, path: 'scene.esn', message: /`scene\.esn` was saved on disk while this change was made .*: nothing was written, and the running version keeps running; send `sync` to take the saved text, then make the change again/ });
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), saved, 'the save is kept');
  t.same(readdirSync(dir).filter((n) => n.startsWith('.')), [], 'no temp file or journal left');
  t.same(await world(s), before, 'the world is as it was');
  s.prepareWrite = prepare;
  const synced = await ask(s, { op: 'sync' });
  t.ok(synced.ok, 'sync takes the save');
  await s.syncing;
  t.match((await ask(s, { op: 'document', path: 'scene.esn' })).ok.text, /the editor saved this/);
  // The compose made again lands, over the save, which it keeps.
  const again = await ask(s, { op: 'compose', edits: [{ node: 'tint', member: 'warmth', text: 'warmth = 0.2;' }] });
  t.equal(again.ok?.written, true, JSON.stringify(again.error));
  t.match(readFileSync(join(dir, 'scene.esn'), 'utf8'), /warmth = 0\.2;[^]*the editor saved this/);
  t.equal(statSync(join(dir, 'scene.esn')).mode & 0o777, 0o664, "the document's mode is kept (the umask had taken group write)");
  // An editor that truncates before it writes: edits applied to the empty file made a scene of the edits alone.
  writeFileSync(join(dir, 'scene.esn'), '');
  const empty = await ask(s, { op: 'compose', edits: [{ param: 'gain', text: 'param gain: f32 = 1.0;' }] });
  t.match(empty.error, { written: false, path: 'scene.esn', message: /`scene\.esn` is empty on disk \(0 bytes\), while the running version has \d+ statements: an editor may be saving it; nothing was written: compose again in a moment, or send `text` to replace the document whole/ });
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), '', 'nothing written');
  t.same((await ask(s, { op: 'graph' })).ok.nodes.map((n: { name: string }) => n.name), ['rings', 'tint'], 'the running scene keeps its nodes');
});

t.test('a document replaced by a link that leads out of the folder is told as that by sync and compose, not as gone', async (t) => {
  const dir = copyExample('rings', 'link-out');
  const outside = scratchDir('entelechy-link-target-');
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: CACHE });
  t.teardown(() => s.close());
  t.ok((await ask(s, { op: 'evaluate' })).ok, 'evaluates');
  writeFileSync(join(outside, 'kernels.esn'), kernels + '// edited outside\n');
  unlinkSync(join(dir, 'kernels.esn'));
  symlinkSync(join(outside, 'kernels.esn'), join(dir, 'kernels.esn'));
  const synced = await ask(s, { op: 'sync' });
  t.match(synced.ok?.events, [{ kind: 'removed', path: 'kernels.esn', message: /^`kernels\.esn` goes through a symbolic link .* that leads out of the scene's folder.*; the running world keeps its last version of `kernels\.esn`$/ }]);
  const composed = await ask(s, { op: 'compose', path: 'kernels.esn', edits: [{ kernel: 'demo.rings@1', text: null }] });
  t.match(composed.error?.message, /^`kernels\.esn` goes through a symbolic link .* that leads out of the scene's folder/, 'not "does not exist: compose it with text first"');
  t.match(readFileSync(join(outside, 'kernels.esn'), 'utf8'), /edited outside/, 'the file outside is untouched');
});

t.test("a compose keeps a document's CRLF line ends, and does not write U+FFFD over bytes that are not UTF-8", async (t) => {
  const dir = copyExample('rings', 'crlf');
  const path = join(dir, 'scene.esn');
  writeFileSync(path, scene.replace(/\n/g, '\r\n'));
  const s = await Session.open(path, { workers: 1, cacheDir: CACHE });
  t.teardown(() => s.close());
  const added = await ask(s, { op: 'compose', edits: [{ node: 'extra', text: 'node extra: demo.tint@1 {\n  src <- rings.result;\n  warmth = 0.2;\n}' }] });
  t.equal(added.ok?.written, true, JSON.stringify(added.error));
  const text = readFileSync(path, 'utf8');
  t.match(text, /node extra: demo\.tint@1 \{\r\n  src <- rings\.result;\r\n  warmth = 0\.2;\r\n\}/);
  t.notMatch(text, /[^\r]\n/, 'every line ends in CRLF (a statement of two lines added had LF ends)');
  // A comment saved in Latin-1: its é (0xe9) read as U+FFFD, and an edit elsewhere wrote that back.
  const latin = Buffer.concat([Buffer.from(scene.replace(/\n/g, '\r\n')), Buffer.from([0x2f, 0x2f, 0x20, 0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a])]);
  writeFileSync(path, latin);
  const refused = await ask(s, { op: 'compose', edits: [{ node: 'tint', member: 'warmth', text: 'warmth = 0.3;' }] });
  t.match(refused.error, { written: false, path: 'scene.esn', message: /^`scene\.esn` holds bytes that are not UTF-8: edits would write it back with each replaced by U\+FFFD .*; nothing was written: save `scene\.esn` as UTF-8 first, or send `text` to replace it whole$/ });
  t.ok(readFileSync(path).equals(latin), 'the bytes are as they were');
});
