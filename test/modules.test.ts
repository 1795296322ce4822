// The module cache's folder (src/main/modules.ts): where it is, and that it keeps to a size,
// dropping the modules used longest ago. (Reads and writes through `render`: test/cli.test.ts.)

import t from 'tap';
import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, prune } from '../src/main/modules.js';
import { scratchDir } from './scratch.js';

t.test('the cache folder: ENTELECHY_CACHE_DIR, else under XDG_CACHE_HOME or ~/.cache; off: none', async (t) => {
  t.equal(cacheDir({ ENTELECHY_CACHE_DIR: '/tmp/x' }), '/tmp/x');
  t.equal(cacheDir({ ENTELECHY_CACHE_DIR: 'off', XDG_CACHE_HOME: '/c' }), null);
  t.equal(cacheDir({ XDG_CACHE_HOME: '/c' }), join('/c', 'entelechy', 'modules'));
  t.match(cacheDir({}), /\.cache[\\/]entelechy[\\/]modules$/);
});

t.test('past its size the folder drops the modules used longest ago', async (t) => {
  const dir = scratchDir('entelechy-cache-');
  for (let i = 0; i < 12; i++) {
    const file = join(dir, `m${String(i).padStart(2, '0')}.wasm`);
    writeFileSync(file, 'x');
    utimesSync(file, new Date(1e12 + i * 1000), new Date(1e12 + i * 1000)); // m11 used last
  }
  writeFileSync(join(dir, 'notes.txt'), 'not a module');
  prune(dir, 12, 5);
  t.equal(readdirSync(dir).length, 13, 'at the size: nothing goes');
  prune(dir, 10, 5);
  t.same(readdirSync(dir).sort(), ['m07.wasm', 'm08.wasm', 'm09.wasm', 'm10.wasm', 'm11.wasm', 'notes.txt'], 'the 5 used last stay, and what is not a module');
});
