// The journal (src/main/journal.ts) where a set is turned back, and what it names on disk: a rename
// the file system refuses in the middle of a set (an immutable document), journals in the
// "rollback" state and committed ones holding a torn temp file, the backups and temp files a
// write leaves at each crash point, the crash seam of test/crash.test.ts, and the words each
// refusal says. test/documents.test.ts covers paths, whole writes and the other crash points.
// Real files in temporary folders, and `chattr +i` where the machine allows it (test/disk.ts).

import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { JOURNAL_NAME, PathError, resolveUnder, versionOf } from '../src/main/documents.js';
import { prepareWrite, SimulatedCrash, writeDocuments } from '../src/main/journal.js';
import { linkRefused } from '../src/main/journal-disk.js';
import { JournalError, recoverJournal } from '../src/main/journal-recovery.js';
import { can, immutable } from './disk.js';
import { scratchDir } from './scratch.js';

function folder(): string {
  const dir = scratchDir('entelechy-journal-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file under dir (relative, `/` between folders) with its text, sorted by name. */
function disk(dir: string, under = dir): Record<string, string> {
  const out: [string, string][] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push([relative(under, join(d, e.name)).split('\\').join('/'), readFileSync(join(d, e.name), 'utf8')]);
    }
  };
  walk(dir);
  return Object.fromEntries(out.sort(([a], [b]) => (a < b ? -1 : 1)));
}

const journal = (state: string, renames: unknown) => JSON.stringify({ entelechy: 'journal', state, renames });

/**
 * A child process that writes `files` under `root`, killed by the crash seam after file operation
 * `step`. A seam that no longer kills leaves it waiting for ever: it is ended after two minutes
 * (a bound, not a measurement), and its signal is then not SIGKILL.
 */
function writeKilledAt(root: string, files: { path: string; text: string }[], step: number) {
  const journalJs = pathToFileURL(join(import.meta.dirname, '..', 'src', 'main', 'journal.js')).href;
  const script = `const j = await import(${JSON.stringify(journalJs)}); await j.writeDocuments(${JSON.stringify(root)}, ${JSON.stringify(files)});`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ENTELECHY_TEST_KILL_AT_STEP: String(step) }, encoding: 'utf8', timeout: 120_000 });
}
const TAG = '[0-9a-f]{12}';

t.test('a write abandoned (a compose refused) leaves no folder it made; one there before stays', async (t) => {
  // A refused compose of `newdir/more.esn` left an empty `newdir/`.
  const dir = folder();
  mkdirSync(join(dir, 'old'));
  writeFileSync(join(dir, 'scene.esn'), 'A');
  const write = await prepareWrite(dir, [
    { path: 'new/deeper/more.esn', text: 'B' },
    { path: 'old/inside/more.esn', text: 'C' },
    { path: 'scene.esn', text: 'D' },
  ]);
  t.ok(existsSync(join(dir, 'new', 'deeper')), 'precondition: steps 1-2 made the folders');
  await write.abandon();
  t.same(readdirSync(dir).sort(), ['old', 'scene.esn'], 'new/ is gone, and the journal');
  t.same(readdirSync(join(dir, 'old')), [], 'old/ stays, without the inside/ the write made');
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), 'A');
});

t.test('the files a write makes beside each document, named so that only Entelechy names them', async (t) => {
  const root = folder();
  const long = `${'l'.repeat(60)}.esn`;
  writeFileSync(join(root, 'scene.esn'), 'old scene');
  writeFileSync(join(root, long), 'old long');
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new scene' }, { path: long, text: 'new long' }, { path: 'made.esn', text: 'made' }], { crashAfter: 'temps' }), SimulatedCrash);
  const files = disk(root);
  const named = (re: string) => Object.keys(files).filter((f) => new RegExp(`^${re}$`).test(f));
  // A temp of the new text and a backup of the old (the same file, linked) for each document
  // that exists; a temp only for a new one. A long name is cut to its first 32 characters.
  t.same(named(`\\.scene\\.esn\\.${TAG}\\.new\\.entelechy-tmp`).map((f) => files[f]), ['new scene']);
  t.same(named(`\\.scene\\.esn\\.${TAG}\\.old\\.entelechy-tmp`).map((f) => files[f]), ['old scene']);
  t.same(named(`\\.${'l'.repeat(32)}\\.${TAG}\\.new\\.entelechy-tmp`).map((f) => files[f]), ['new long']);
  t.same(named(`\\.${'l'.repeat(32)}\\.${TAG}\\.old\\.entelechy-tmp`).map((f) => files[f]), ['old long']);
  t.same(named(`\\.made\\.esn\\.${TAG}\\.new\\.entelechy-tmp`).map((f) => files[f]), ['made']);
  t.same(named(`\\.made\\.esn\\.${TAG}\\.old\\.entelechy-tmp`), [], 'no backup of a document the write creates');
  const j = JSON.parse(files[JOURNAL_NAME]);
  t.same(j.renames.map((r: any) => [r.path, r.version, r.backup !== undefined]), [['scene.esn', versionOf('new scene'), true], [long, versionOf('new long'), true], ['made.esn', versionOf('made'), false]]);
  t.equal(Object.keys(files).length, 8, 'the journal, three temps, two backups and the two documents');
  t.same(await recoverJournal(root), { recovered: [], rolledBack: ['scene.esn', long, 'made.esn'] });
  t.same(disk(root), { [long]: 'old long', 'scene.esn': 'old scene' });
});

t.test('a committed set with a torn temp file is turned back, the documents renamed already included', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old scene');
  writeFileSync(join(root, 'kernels.esn'), 'old kernels');
  const set = [{ path: 'scene.esn', text: 'new scene' }, { path: 'made.esn', text: 'made' }, { path: 'kernels.esn', text: 'new kernels' }];
  await t.rejects(writeDocuments(root, set, { crashAfter: 2 }), SimulatedCrash);
  t.equal(readFileSync(join(root, 'made.esn'), 'utf8'), 'made', 'precondition: two documents renamed');
  const temp = Object.keys(disk(root)).find((f) => f.startsWith('.kernels.esn.') && f.endsWith('.new.entelechy-tmp'))!;
  writeFileSync(join(root, temp), 'new kern'); // torn: not the text the journal names
  t.same(await recoverJournal(root), { recovered: [], rolledBack: ['scene.esn', 'made.esn', 'kernels.esn'] });
  t.same(disk(root), { 'kernels.esn': 'old kernels', 'scene.esn': 'old scene' }, 'its backup back, the new document gone, no journal, temp or backup');
});

t.test('a rollback journal puts back only the documents that hold its text', async (t) => {
  const root = folder();
  const files: Record<string, string> = {
    // Renamed: the new text stands; its backup goes back.
    'renamed.esn': 'new renamed',
    '.renamed.esn.01.old.entelechy-tmp': 'old renamed',
    // Created by the write: it goes.
    'created.esn': 'new created',
    // Never renamed: its temp goes, the document and its backup stay as they were.
    'waiting.esn': 'old waiting',
    '.waiting.esn.02.new.entelechy-tmp': 'new waiting',
    '.waiting.esn.02.old.entelechy-tmp': 'old waiting',
    // Changed since by someone else (not the journal's text): left, its backup dropped.
    'edited.esn': 'edited by hand',
    '.edited.esn.03.old.entelechy-tmp': 'old edited',
    // Removed since: not brought back.
    '.removed.esn.04.old.entelechy-tmp': 'old removed',
    // A journal from before versions: nothing is known to be its text, so nothing is undone.
    'unversioned.esn': 'new unversioned',
    '.unversioned.esn.05.old.entelechy-tmp': 'old unversioned',
  };
  for (const [f, text] of Object.entries(files)) writeFileSync(join(root, f), text);
  const entry = (name: string, n: string, backup: boolean, version?: string) => ({
    path: `${name}.esn`, ...(version ? { version: versionOf(version) } : {}), temp: `.${name}.esn.${n}.new.entelechy-tmp`, ...(backup ? { backup: `.${name}.esn.${n}.old.entelechy-tmp` } : {}),
  });
  writeFileSync(join(root, JOURNAL_NAME), journal('rollback', [
    entry('renamed', '01', true, 'new renamed'),
    entry('created', '06', false, 'new created'),
    entry('waiting', '02', true, 'new waiting'),
    entry('edited', '03', true, 'new edited'),
    entry('removed', '04', true, 'new removed'),
    entry('unversioned', '05', true),
  ]));
  const r = await recoverJournal(root);
  t.same(r, { recovered: [], rolledBack: ['renamed.esn', 'created.esn', 'waiting.esn', 'edited.esn', 'removed.esn', 'unversioned.esn'] });
  t.same(disk(root), { 'edited.esn': 'edited by hand', 'renamed.esn': 'old renamed', 'unversioned.esn': 'new unversioned', 'waiting.esn': 'old waiting' });
});

t.test('a crash before any temp is written, of a text equal to the old one, leaves the document', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'same');
  writeFileSync(join(root, 'b.esn'), 'old b');
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'same' }, { path: 'b.esn', text: 'new b' }], { crashAfter: 'prepared' }), SimulatedCrash);
  // The document already holds the journal's version, but the set was never decided: nothing to undo.
  t.same(await recoverJournal(root), { recovered: [], rolledBack: ['scene.esn', 'b.esn'] });
  t.same(disk(root), { 'b.esn': 'old b', 'scene.esn': 'same' });
  // A set of one document is decided by its rename, which a document already holding the text cannot show: told written.
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'same' }], { crashAfter: 'prepared' }), SimulatedCrash);
  t.same(await recoverJournal(root), { recovered: ['scene.esn'], rolledBack: [] });
  t.same(disk(root), { 'b.esn': 'old b', 'scene.esn': 'same' });
});

t.test('a set of one document is decided by its rename: a crash before it turns the set back, after it the set was written', async (t) => {
  for (const old of ['old scene', undefined]) {
    for (const crashAfter of ['prepared', 'temps', 0, 1] as const) {
      const root = folder();
      if (old !== undefined) writeFileSync(join(root, 'scene.esn'), old);
      const what = `${old === undefined ? 'a new document' : 'a document'}, ${crashAfter}`;
      await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new scene' }], { crashAfter }), SimulatedCrash);
      t.equal(JSON.parse(readFileSync(join(root, JOURNAL_NAME), 'utf8')).state, 'prepared', `${what}: no commit record`);
      const renamed = crashAfter === 1;
      t.same(await recoverJournal(root), renamed ? { recovered: ['scene.esn'], rolledBack: [] } : { recovered: [], rolledBack: ['scene.esn'] }, what);
      t.same(disk(root), renamed ? { 'scene.esn': 'new scene' } : old === undefined ? {} : { 'scene.esn': old }, `${what}: the document, and nothing beside it`);
    }
  }
});

t.test('a process killed at any step of a one-document write leaves the old or the new text, and recovery says which', async (t) => {
  const states = new Set<string>();
  let step = 1;
  for (; step < 60; step++) {
    const root = folder();
    writeFileSync(join(root, 'scene.esn'), 'old');
    const child = writeKilledAt(root, [{ path: 'scene.esn', text: 'new' }], step);
    if (child.signal !== 'SIGKILL') break; // past the write's last step
    if (existsSync(join(root, JOURNAL_NAME))) states.add(JSON.parse(readFileSync(join(root, JOURNAL_NAME), 'utf8')).state);
    const r = await recoverJournal(root);
    const text = readFileSync(join(root, 'scene.esn'), 'utf8');
    t.ok(text === 'old' || text === 'new', `step ${step}: whole`);
    if (r.recovered.length) t.equal(text, 'new', `step ${step}: told written, and it is`);
    if (r.rolledBack.length) t.equal(text, 'old', `step ${step}: told turned back, and it is`);
    t.same(Object.keys(disk(root)), ['scene.esn'], `step ${step}: nothing beside it`);
  }
  t.ok(step > 10 && step < 60, `the write ended after ${step - 1} steps`);
  t.same([...states], ['prepared'], 'the journal is never rewritten');
});

t.test('a rename the file system refuses mid-set turns the whole set back', { skip: can.immutable }, async (t) => {
  const root = folder();
  writeFileSync(join(root, 'a.esn'), 'old a');
  writeFileSync(join(root, 'b.esn'), 'old b');
  chmodSync(join(root, 'a.esn'), 0o640);
  immutable(t, join(root, 'b.esn'));
  // b.esn cannot be linked to its backup (immutable), so it is copied; its rename then fails.
  const write = writeDocuments(root, [{ path: 'a.esn', text: 'new a' }, { path: 'new.esn', text: 'new' }, { path: 'b.esn', text: 'new b' }]);
  await t.rejects(write, {
    name: 'WriteError', code: 'EPERM', path: 'b.esn',
    message: 'writing `b.esn` failed: the operation is not permitted (the file or its folder is immutable or protected) (EPERM); every document of the write is as it was: lift the protection (for example `chattr -i`), then send the request again',
  });
  t.same(disk(root), { 'a.esn': 'old a', 'b.esn': 'old b' }, 'a.esn put back, new.esn gone, no journal, temp or backup');
  t.equal(statSync(join(root, 'a.esn')).mode & 0o777, 0o640, 'a.esn is its old file again');
});

t.test('a turn-back leaves a document whose new text was its old one, and no backup of it', { skip: can.immutable }, async (t) => {
  const root = folder();
  writeFileSync(join(root, 'a.esn'), 'old a');
  writeFileSync(join(root, 'b.esn'), 'old b');
  writeFileSync(join(root, 'same.esn'), 'same');
  immutable(t, join(root, 'b.esn'));
  // same.esn is never renamed (b.esn's rename fails first); its backup is a link to it.
  await t.rejects(writeDocuments(root, [{ path: 'a.esn', text: 'new a' }, { path: 'b.esn', text: 'new b' }, { path: 'same.esn', text: 'same' }]), { code: 'EPERM', path: 'b.esn' });
  t.same(disk(root), { 'a.esn': 'old a', 'b.esn': 'old b', 'same.esn': 'same' });
});

t.test('a document that cannot be linked is copied to its backup, and turned back from the copy', { skip: can.immutable }, async (t) => {
  const root = folder();
  writeFileSync(join(root, 'b.esn'), 'old b');
  writeFileSync(join(root, 'a.esn'), 'old a');
  const off = immutable(t, join(root, 'b.esn'));
  await t.rejects(writeDocuments(root, [{ path: 'b.esn', text: 'new b' }, { path: 'a.esn', text: 'new a' }], { crashAfter: 'committed' }), SimulatedCrash);
  off();
  // Recovery renames b.esn, then meets a.esn's torn temp: b.esn must come back from its copy.
  const temp = Object.keys(disk(root)).find((f) => f.startsWith('.a.esn.') && f.endsWith('.new.entelechy-tmp'))!;
  writeFileSync(join(root, temp), 'torn');
  t.same(await recoverJournal(root), { recovered: [], rolledBack: ['b.esn', 'a.esn'] });
  t.same(disk(root), { 'a.esn': 'old a', 'b.esn': 'old b' });
});

t.test('a process killed while it turns a set back leaves a rollback journal, which recovery finishes', { skip: can.immutable }, async (t) => {
  // The step after which the rollback journal stands (counted by hand: 26 steps to the committed
  // journal, one rename, then the rollback journal's open, write, sync and rename); searched
  // upward from there, so that a change of the step count shows as more tries, not a failure.
  let found: { state?: string; step: number } | undefined;
  for (let step = 31; step < 41 && !found; step++) {
    const root = folder();
    writeFileSync(join(root, 'a.esn'), 'old a');
    writeFileSync(join(root, 'b.esn'), 'old b');
    const off = immutable(t, join(root, 'b.esn'));
    const child = writeKilledAt(root, [{ path: 'a.esn', text: 'new a' }, { path: 'b.esn', text: 'new b' }], step);
    off();
    if (child.signal !== 'SIGKILL') break; // past the write's last step (or a seam that no longer kills)
    if (!existsSync(join(root, JOURNAL_NAME))) continue;
    const state = JSON.parse(readFileSync(join(root, JOURNAL_NAME), 'utf8')).state;
    if (state === 'committed') continue;
    found = { state, step };
    t.equal(readFileSync(join(root, 'a.esn'), 'utf8'), 'new a', `precondition (step ${step}): a.esn was renamed before the refusal`);
    t.same(await recoverJournal(root), { recovered: [], rolledBack: ['a.esn', 'b.esn'] });
    t.same(disk(root), { 'a.esn': 'old a', 'b.esn': 'old b' });
  }
  t.equal(found?.state, 'rollback', 'the journal on disk says rollback');
});

t.test('a document bind-mounted from elsewhere is copied to its backup (no link across mounts), and its rename refused', { skip: can.tmpfs }, async (t) => {
  const root = folder();
  const other = folder();
  writeFileSync(join(root, 'a.esn'), 'old a');
  writeFileSync(join(root, 'b.esn'), 'hidden by the mount');
  writeFileSync(join(other, 'b.esn'), 'old b');
  execFileSync('mount', ['--bind', join(other, 'b.esn'), join(root, 'b.esn')]);
  t.teardown(() => execFileSync('umount', [join(root, 'b.esn')]));
  // The link to b.esn's backup fails (EXDEV) and a copy is kept; renaming over a mount point then fails (EBUSY).
  await t.rejects(writeDocuments(root, [{ path: 'a.esn', text: 'new a' }, { path: 'b.esn', text: 'new b' }]), {
    name: 'WriteError', code: 'EBUSY', path: 'b.esn', message: /^writing `b\.esn` failed: the file is busy \(EBUSY\); every document of the write is as it was/,
  });
  t.same(disk(root), { 'a.esn': 'old a', 'b.esn': 'old b' });
});

// The codes no file system on this machine gives (vfat has no hard links; tmpfs no link limit):
// the decision itself, asked directly. The tests above meet EPERM and EXDEV on real files.
t.test('which link errors make the backup a copy', async (t) => {
  const err = (code: string) => Object.assign(new Error(code), { code });
  for (const code of ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV'])
    t.equal(linkRefused(err(code)), true, `${code}: the link was refused, a copy will do`);
  // Errors a copy would meet too (or that say the write itself is wrong) are not refusals.
  for (const code of ['ENOENT', 'EEXIST', 'EACCES', 'EROFS', 'ENOSPC', 'EIO', 'EBUSY', ''])
    t.equal(linkRefused(err(code)), false, `${code || 'an empty code'}: not a refused link`);
  t.equal(linkRefused(new Error('no code')), false, 'an error without a code');
  t.equal(linkRefused(undefined), false, 'something thrown that is not an error');
});

t.test('a folder the file system refuses: the journal, or a temp file, cannot be written', { skip: can.immutable }, async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  mkdirSync(join(root, 'lib'));
  writeFileSync(join(root, 'lib', 'k.esn'), 'old k');
  const off = immutable(t, join(root, 'lib'));
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new' }, { path: 'lib/k.esn', text: 'new k' }]), {
    name: 'WriteError', code: 'EPERM', path: 'lib/k.esn',
    message: /^writing `lib\/k\.esn` failed: the operation is not permitted .* \(EPERM\); nothing was written: lift the protection/,
  });
  t.same(disk(root), { 'lib/k.esn': 'old k', 'scene.esn': 'old' }, 'the first temp and the journal removed');
  off();
  immutable(t, root);
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new' }]), {
    name: 'WriteError', code: 'EPERM', path: JOURNAL_NAME,
    message: /^writing `\.entelechy-journal\.json` failed: the operation is not permitted .* \(EPERM\); nothing was written: lift the protection/,
  });
});

t.test('recovery that the file system refuses says so, and what state the documents are in', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  mkdirSync(join(root, '.scene.esn.aa.entelechy-tmp')); // a folder where the temp file should be
  writeFileSync(join(root, JOURNAL_NAME), journal('prepared', [{ path: 'scene.esn', temp: '.scene.esn.aa.entelechy-tmp' }]));
  await t.rejects(recoverJournal(root), {
    name: 'WriteError', code: 'EISDIR', path: JOURNAL_NAME,
    message: 'recovering an interrupted write in `.entelechy-journal.json` failed: a folder stands where the document goes (EISDIR); the documents are as the interrupted write left them: name another path',
  });
});

t.test('a temp name too long to exist is not there: recovery goes on', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  writeFileSync(join(root, JOURNAL_NAME), journal('prepared', [{ path: 'scene.esn', temp: `.${'x'.repeat(300)}.entelechy-tmp` }]));
  t.same(await recoverJournal(root), { recovered: [], rolledBack: ['scene.esn'] });
  t.same(disk(root), { 'scene.esn': 'old' });
});

t.test('journals recovery never follows, and what each says is wrong', async (t) => {
  const root = folder();
  mkdirSync(join(root, 'lib'));
  writeFileSync(join(root, 'scene.esn'), 'the scene');
  writeFileSync(join(root, '.hidden.esn'), 'hidden');
  const form = 'its form, state or renames are not what Entelechy writes';
  const cases: [string, string][] = [
    ['{"entelechy": "journ', 'it is not JSON (cut short, or not written by Entelechy)'],
    // Each entry is checked, not only the first.
    [journal('committed', [{ path: 'a.esn', temp: '.a.entelechy-tmp' }, { path: 'scene.esn', temp: '.hidden.esn' }]), form],
    [journal('committed', [{ path: 'scene.esn', temp: '.s.entelechy-tmp', backup: '.hidden.esn' }]), form],
    [journal('committed', [{ path: 'scene.esn', temp: '.s.entelechy-tmp', version: 3 }]), form],
    [journal('committed', [{ path: 'scene.esn', temp: 'lib/.s.entelechy-tmp' }]), "`lib/.s.entelechy-tmp` is not a file of Entelechy's beside `scene.esn`"],
    [journal('committed', [{ path: 'scene.esn', temp: 's.entelechy-tmp' }]), "`s.entelechy-tmp` is not a file of Entelechy's beside `scene.esn`"],
    [journal('committed', [{ path: 'scene.esn', temp: '.s.entelechy-tmp', backup: 'lib/.s.entelechy-tmp' }]), "`lib/.s.entelechy-tmp` is not a file of Entelechy's beside `scene.esn`"],
  ];
  for (const [text, why] of cases) {
    writeFileSync(join(root, JOURNAL_NAME), text);
    const e = await recoverJournal(root).catch((x: unknown) => x);
    t.ok(e instanceof JournalError, text);
    t.equal((e as JournalError).name, 'JournalError');
    t.equal((e as JournalError).why, why, text);
    t.same(disk(root), { [JOURNAL_NAME]: text, '.hidden.esn': 'hidden', 'scene.esn': 'the scene' }, 'nothing moved');
  }
});

t.test('an empty set touches nothing, not even a journal a crash left', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  await t.rejects(writeDocuments(root, [{ path: 'scene.esn', text: 'new' }], { crashAfter: 1 }), SimulatedCrash);
  const before = disk(root);
  await writeDocuments(root, []);
  t.same(disk(root), before, 'the interrupted set waits for the next write or session');
});

t.test('writes leave no file open', async (t) => {
  const open = () => readdirSync('/proc/self/fd').length;
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  await writeDocuments(root, [{ path: 'scene.esn', text: 'warm' }]); // the first write opens what stays open (libuv's own)
  const before = open();
  for (let i = 0; i < 5; i++) await writeDocuments(root, [{ path: 'scene.esn', text: `new ${i}` }, { path: `lib/k${i}.esn`, text: 'k' }]);
  t.equal(open(), before, 'as many descriptors as before five writes');
});

t.test('a path past the path limits is refused, the path it names cut to 64 characters', async (t) => {
  const root = folder();
  const deep = `${'d/'.repeat(40)}x.esn`;
  const e = (() => {
    try {
      resolveUnder(root, deep);
    } catch (x) {
      return x;
    }
  })();
  t.ok(e instanceof PathError);
  t.equal((e as PathError).path, deep.slice(0, 64));
  t.match((e as PathError).message, /names more folders than that/);
  // `./` is the folder itself (no empty name is taken for a document).
  t.throws(() => resolveUnder(root, './'), { message: /^`\.\/` names the scene's folder itself, not a document/ });
});

t.test('a one-document write goes on to its temp without fsyncing the folder after its journal; a write of several fsyncs it first', async (t) => {
  // Steps 1-4 write the journal (open, write and fsync its temp, rename). One document: step 5
  // makes its folder, step 6 opens its temp. Several: steps 5-6 open and fsync the folder.
  const temps = (root: string) => Object.keys(disk(root)).filter((f) => new RegExp(`^\\.scene\\.esn\\.${TAG}\\.new\\.entelechy-tmp$`).test(f));
  const one = folder();
  writeFileSync(join(one, 'scene.esn'), 'old');
  t.equal(writeKilledAt(one, [{ path: 'scene.esn', text: 'new' }], 6).signal, 'SIGKILL');
  t.ok(existsSync(join(one, JOURNAL_NAME)), 'one document: the journal stands');
  t.equal(temps(one).length, 1, 'one document: its temp is made at step 6');
  const several = folder();
  writeFileSync(join(several, 'scene.esn'), 'old');
  t.equal(writeKilledAt(several, [{ path: 'scene.esn', text: 'new' }, { path: 'b.esn', text: 'b' }], 6).signal, 'SIGKILL');
  t.ok(existsSync(join(several, JOURNAL_NAME)), 'several documents: the journal stands');
  t.same(temps(several), [], 'several documents: no temp yet at step 6 (the folder was fsync\'d)');
  for (const root of [one, several]) {
    await recoverJournal(root);
    t.same(disk(root), { 'scene.esn': 'old' }, 'recovery leaves the document as it was and nothing else');
  }
});

t.test('the crash seam: ENTELECHY_TEST_KILL_AT_STEP kills the process right after that file operation', async (t) => {
  const root = folder();
  writeFileSync(join(root, 'scene.esn'), 'old');
  // Steps 1-3 open, write and fsync the journal's temp file; it is killed before the rename.
  const child = writeKilledAt(root, [{ path: 'scene.esn', text: 'new' }], 3);
  t.equal(child.signal, 'SIGKILL', `killed: ${child.stderr}`);
  const left = Object.keys(disk(root));
  t.same(left.filter((f) => f !== 'scene.esn').map((f) => new RegExp(`^\\.entelechy-journal\\.json\\.${TAG}\\.entelechy-tmp$`).test(f)), [true], 'only the journal\'s temp file');
  t.notOk(existsSync(join(root, JOURNAL_NAME)));
  t.same(await recoverJournal(root), { recovered: [], rolledBack: [] });
  t.same(disk(root), { 'scene.esn': 'old' });
});
