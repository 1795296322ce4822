// The protocol's docs and help are read from the operations table: a stale docs/protocol.md fails
// here (run `npm run docs`), and every operation has a handler and a help entry.

import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderProtocolDoc } from '../src/protocol/docs.js';
import { HANDLERS } from '../src/protocol/handlers/index.js';
import { helpEntry } from '../src/protocol/help.js';
import { OPERATIONS, OPERATION_NAMES, type OperationName } from '../src/protocol/operations.js';
import { BUILTIN_FUNCTIONS } from '../src/ir/builtins.js';
import { ROOT } from './helpers.js';

t.test('docs/protocol.md is generated from the table and is current', async (t) => {
  t.equal(readFileSync(join(ROOT, 'docs', 'protocol.md'), 'utf8'), renderProtocolDoc(), 'docs/protocol.md is stale: run `npm run docs`');
});

t.test('the 26 operations, each with a handler and a help entry', async (t) => {
  t.equal(OPERATIONS.length, 26);
  t.same(OPERATION_NAMES, ['status', 'kernels', 'kernel', 'graph', 'document', 'history', 'bisect', 'compose', 'sync', 'prepare', 'publish', 'retire', 'param', 'evaluate', 'read', 'write', 'snapshot', 'restore', 'pause', 'reset', 'help', 'trace', 'pin', 'unpin', 'cancel', 'quit']);
  for (const name of OPERATION_NAMES) {
    t.type(HANDLERS[name as OperationName], 'function', `${name} has a handler`);
    const e = helpEntry(name) as { kind?: string; entries?: { kind: string }[] };
    t.ok((e.entries ?? [e]).some((x) => x.kind === 'operation'), `help ${name} describes the operation`);
  }
});

t.test('help reads the compiler, parser and grant tables, and suggests similar names', async (t) => {
  for (const b of BUILTIN_FUNCTIONS) t.ok(helpEntry(b.name), `help ${b.name}`);
  t.match(helpEntry('field.read'), { kind: 'grant' });
  t.match(helpEntry('vec4'), { name: 'vec4' });
  t.match(helpEntry('kernel'), { name: 'kernel' });
  t.match(helpEntry('preparing'), { kind: 'event' });
  t.match(helpEntry('>'), { kind: 'replay line' });
  const index = helpEntry() as { index: Record<string, string[]> };
  t.ok(index.index.operation.includes('compose'));
  t.throws(() => helpEntry('smoothstpe'), { message: /similar: smoothstep/ });
});
