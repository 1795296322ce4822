// The protocol's limits over the real doors (`entelechy serve` on stdin and TCP): a request past
// one is refused before any work, naming the field, the limit and what to do, and the session
// goes on answering everyone. No timing is asserted: a request is shown to be cheap by being
// refused by its cap, and another connection's `status` to be answered, in order.

import t, { type Test } from 'tap';
import net from 'node:net';
import { join } from 'node:path';
import { serveListening } from './serve-process.js';
import { copyExample, Lines } from './fixtures.js';
import { LIMITS, LIMIT_LIST, checkLimits, pathProblem, shallow, tooDeep } from '../src/protocol/limits.js';
import { closest, similar } from '../src/ir/suggest.js';
import { renderProtocolDoc } from '../src/protocol/docs.js';
import { helpEntry } from '../src/protocol/help.js';
import { hidePaths, plainReason } from '../src/protocol/envelope.js';

type Answer = { id?: unknown; ok?: any; error?: any };

/** `entelechy serve` on a copy of the rings example, on stdin and on a TCP port. */
async function serve() {
  const dir = copyExample('rings', 'limits');
  const { child, port, stderr } = await serveListening(t, join(dir, 'scene.esn'));
  const out = new Lines(child.stdout);
  const ask = async (req: object | string): Promise<Answer> => {
    child.stdin.write((typeof req === 'string' ? req : JSON.stringify(req)) + '\n');
    const line = await out.next();
    if (line === undefined) throw new Error(`serve ended: ${stderr()}`);
    return JSON.parse(line);
  };
  return { dir, port, ask, stderr };
}

async function tcp(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  t.teardown(() => socket.destroy());
  return { socket, lines: new Lines(socket), send: (req: object | string) => socket.write((typeof req === 'string' ? req : JSON.stringify(req)) + '\n') };
}

/** An error answer that is a refusal by `limit`, for `field`, saying the limit and what to do. */
function refused(t2: Test, a: Answer, limit: keyof typeof LIMITS, field?: string): void {
  const l = LIMITS[limit];
  t2.ok(a.error, `refused (${JSON.stringify(a).slice(0, 200)})`);
  t2.equal(a.error?.limit, l.name, `by ${l.name}`);
  t2.equal(a.error?.max, l.limit, 'with the limit as data');
  if (field !== undefined) t2.equal(a.error?.field, field, `naming ${field}`);
  t2.match(a.error?.message ?? '', String(l.limit), 'the message says the limit');
  t2.match(a.error?.message ?? '', l.remedy.slice(0, 20), 'and what to do');
  t2.notOk(a.error?.internal, 'not an internal error');
}

t.test('every cap refuses over stdin, naming the field, the limit and what to do', async (t) => {
  const s = await serve();
  // help with a long name: the similar-name search of 21 s before the cap.
  refused(t, await s.ask({ id: 1, op: 'help', name: 'x'.repeat(100_000) }), 'name', 'name');
  // Nesting: `outputs` 10,000 deep overflowed the stack.
  refused(t, await s.ask(`{"id":2,"op":"evaluate","outputs":${'['.repeat(10_000)}${']'.repeat(10_000)}}`), 'nesting');
  // A 5-million-segment path overflowed the stack; a long one, too many names, a long name.
  refused(t, await s.ask({ id: 3, op: 'document', path: 'a/'.repeat(5_000_000) + 'b' }), 'path', 'path');
  refused(t, await s.ask({ id: 4, op: 'document', path: 'a/'.repeat(40) + 'b.esn' }), 'segments', 'path');
  refused(t, await s.ask({ id: 5, op: 'snapshot', path: 'A'.repeat(240) }), 'segment', 'path');
  // Edits: 174,762 of them took 4.6 s; one compose's edits in all documents count together.
  const edit = { node: 'rings', member: 'count', text: 'count = 3.0;' };
  refused(t, await s.ask({ id: 6, op: 'compose', edits: new Array(LIMITS.edits.limit + 1).fill(edit) }), 'edits', 'edits');
  const half = new Array(600).fill(edit);
  refused(t, await s.ask({ id: 7, op: 'compose', documents: [{ path: 'scene.esn', edits: half }, { path: 'kernels.esn', edits: half }] }), 'edits', 'documents[1].edits');
  // Edits times the document's length: each edit parses the document again.
  refused(t, await s.ask({ id: 8, op: 'compose', edits: new Array(500).fill(edit) }), 'editWork', 'edits');
  // Texts: a document, a kernel source, an edit's text.
  const long = '// ' + 'x'.repeat(LIMITS.text.limit);
  refused(t, await s.ask({ id: 9, op: 'compose', path: 'big.esn', text: long }), 'text', 'text');
  refused(t, await s.ask({ id: 10, op: 'prepare', source: long }), 'text', 'source');
  refused(t, await s.ask({ id: 11, op: 'compose', documents: [{ path: 'scene.esn', edits: [{ ...edit, text: long }] }] }), 'text', 'documents[0].edits[0].text');
  // Other arrays.
  refused(t, await s.ask({ id: 12, op: 'evaluate', keys: new Array(LIMITS.items.limit + 1).fill('a') }), 'items', 'keys');
  refused(t, await s.ask({ id: 13, op: 'compose', documents: new Array(LIMITS.documents.limit + 1).fill({ path: 'scene.esn', text: '' }) }), 'documents', 'documents');
  // Within the limits all is as before: the world still answers, a real edit still lands.
  const done = await s.ask({ id: 14, op: 'compose', edits: [edit, { node: 'rings', member: 'size', text: 'size = 128 x 128;' }] });
  t.ok(done.ok, `two edits compose (${JSON.stringify(done).slice(0, 200)})`);
  const status = await s.ask({ id: 15, op: 'status' });
  t.equal(status.id, 15);
  t.equal(status.ok?.loaded, true, 'the session goes on');
});

t.test('compose of no documents is a clear error, not an internal one', async (t) => {
  const s = await serve();
  const a = await s.ask({ id: 1, op: 'compose', documents: [] });
  t.equal(a.error?.field, 'documents');
  t.match(a.error?.message, /empty.*path, text/);
  t.notOk(a.error?.internal);
});

t.test('a hostile request on one connection does not hold another: refused by its cap, the other answered in order', async (t) => {
  const s = await serve();
  const a = await tcp(s.port);
  const b = await tcp(s.port);
  // A sends the 524,288-character help name (127 s before the cap) and then a status; B a status.
  a.send({ id: 'hostile', op: 'help', name: 'y'.repeat(524_288) });
  a.send({ id: 'a-status', op: 'status' });
  b.send({ id: 'b-status', op: 'status' });
  const [first, second] = (await a.lines.take(2)).map((l) => JSON.parse(l!));
  refused(t, first, 'name', 'name');
  t.equal(first.id, 'hostile', 'answered first on its connection');
  t.equal(second.id, 'a-status', 'then the status after it');
  t.equal(second.ok?.loaded, true);
  const other = JSON.parse((await b.lines.next())!);
  t.equal(other.id, 'b-status', "the other connection's status is answered");
  t.equal(other.ok?.loaded, true);
});

t.test('help describes each limit, and each field its limit; docs/protocol.md lists them', async (t) => {
  for (const l of LIMIT_LIST) {
    const e = helpEntry(l.name) as any;
    t.equal(e.kind, 'limit', l.name);
    t.equal(e.max, l.limit);
  }
  const source = helpEntry('source') as any; // a field, and a member of kernel's answer
  const name = (source.entries ?? [source]).find((e: any) => e.kind === 'field');
  t.equal(name.limit, LIMITS.text.name, 'a field names its limit');
  const doc = renderProtocolDoc();
  for (const l of LIMIT_LIST) t.match(doc, `| \`${l.name}\` | ${l.limit} ${l.unit} |`, `docs list ${l.name}`);
});

t.test('the checks themselves', async (t) => {
  t.equal(tooDeep('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}'), undefined, 'brackets in strings do not count');
  t.equal(tooDeep('{"a":"\\\\"}'), undefined, 'an escaped backslash ends before the quote');
  t.equal(tooDeep('{"a":"\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}'), undefined, 'an escaped quote does not end the string');
  t.equal(tooDeep('['.repeat(33), 2), 2, 'the bracket past the limit');
  t.equal(tooDeep('['.repeat(32) + ']'.repeat(32)), undefined, 'exactly the limit passes');
  t.notOk(checkLimits({ path: 'lib/kernels.esn', edits: [{ node: 'a', text: 'b' }] }));
  t.equal(pathProblem('a/'.repeat(32) + 'b')?.limit, LIMITS.segments);
  t.equal(pathProblem('a/'.repeat(31) + 'b'), undefined);
  t.equal(pathProblem('é'.repeat(101))?.limit, LIMITS.segment, 'a name is measured in UTF-8 bytes');
});

t.test('the similar-name search is bounded whatever it is given', async (t) => {
  const names = ['status', 'kernel', 'kernels', 'evaluate'];
  t.same(similar('x'.repeat(1_000_000), names), [], 'a name past 64 characters gets no suggestion');
  t.same(similar('status', ['s'.repeat(1_000_000), 'status']), ['status'], 'a candidate past 64 characters is skipped');
  t.equal(closest('kernal', ['k'.repeat(1_000_000), 'kernel']), 'kernel');
  t.same(similar('kernal', names).slice(0, 2), ['kernel', 'kernels'], 'short names still find their neighbours');
});

t.test('an internal error says no machine path and no stack', async (t) => {
  const io = Object.assign(new Error("EPERM: operation not permitted, rename '/home/someone/scenes/rings/.scene.esn.tmp' -> '/home/someone/scenes/rings/scene.esn'"), { code: 'EPERM', syscall: 'rename', path: '/home/someone/scenes/rings/.scene.esn.tmp' });
  t.equal(plainReason(io), 'EPERM: operation not permitted (rename `.scene.esn.tmp`)');
  const thrown = new TypeError("Cannot read properties of undefined (reading 'path')");
  thrown.stack = `TypeError: x\n    at compose (file:///work/x/dist/src/protocol/handlers/structure.js:60:20)`;
  t.equal(plainReason(thrown), "Cannot read properties of undefined (reading 'path')", 'the first line, no stack');
  t.equal(plainReason(new Error('cannot load /opt/app/dist/src/x.js\n    at y (/opt/app/z.js:1:1)')), 'cannot load .../x.js');
  t.equal(hidePaths('C:\\Users\\me\\scene.esn and file:///srv/a/b.js and lib/sub/kernels.esn'), '.../scene.esn and .../b.js and lib/sub/kernels.esn', 'relative paths stay');
});

t.test('a request refused for its nesting still has its id echoed', async (t) => {
  t.equal(shallow('{"id":3,"a":[[["x]"]]],"b":{"c":1},"d":"q"}'), '{"id":3,"a":null,"b":null,"d":"q"}');
  const s = await serve();
  const a = await s.ask(`{"kernel":${'{"x":'.repeat(100)}1${'}'.repeat(100)},"op":"kernel","id":70}`);
  t.equal(a.id, 70);
  t.equal(a.error?.limit, LIMITS.nesting.name);
});
