// The PNG written as its rows arrive (src/main/png-file.ts): the same bytes as the PNG encoded
// whole, whatever runs the rows come in; nothing left behind when it is abandoned or cannot be
// written.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodePng, encodePng } from '../src/main/image.js';
import { deflateStrips, PngEncoder, PngJoiner } from '../src/main/png.js';
import { PngFile, PngWriteError } from '../src/main/png-file.js';
import { writeFileAtomic } from '../src/main/files.js';
import { xorshift } from './helpers.js';
import { scratchDir } from './scratch.js';

const dir = scratchDir('entelechy-png-file-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function picture(w: number, h: number, seed: number): Uint8Array {
  const next = xorshift(seed);
  // Runs of flat colour and noise, so strips compress differently.
  return new Uint8Array(w * h * 4).map((_, i) => (i % 3000 < 1500 ? (next() * 256) & 255 : (i >> 12) & 255));
}

t.test('rows given in uneven runs make the bytes of the PNG encoded whole', async (t) => {
  const [w, h] = [1023, 2500]; // 2 strips of about 4 MiB, the last short
  const rgba = picture(w, h, 5);
  const whole = await encodePng(w, h, rgba);
  const file = join(dir, 'runs.png');
  const png = await PngFile.create(file, w, h);
  for (let y = 0, n = 1; y < h; y += n, n = (n * 7 + 3) % 611) {
    const y1 = Math.min(h, y + Math.max(1, n));
    await png.rows(rgba.slice(y * w * 4, y1 * w * 4));
    n = y1 - y;
  }
  t.notOk(existsSync(file), 'the name is not taken before the file is whole');
  const bytes = await png.finish();
  const written = readFileSync(file);
  t.equal(bytes, written.length);
  t.ok(written.equals(whole), 'the same bytes as encodePng');
  t.ok(Buffer.from(decodePng(written).rgba).equals(Buffer.from(rgba)), 'decodes to the pixels');
  t.same(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
});

t.test('an encoder sends its pieces in order and never holds the image', async (t) => {
  const [w, h] = [4096, 1600]; // 7 strips of 256 rows: more than two per thread in flight
  const pieces: number[] = [];
  let given = 0;
  const encoder = new PngEncoder(w, h, (b) => void pieces.push(b.length));
  const rows = new Uint8Array(w * 16 * 4);
  const next = xorshift(9);
  for (let y = 0; y < h; y += 16) {
    rows.forEach((_, i) => (rows[i] = (next() * 256) & 255)); // one buffer, reused: the encoder copies what it keeps
    await encoder.rows(rows);
    given += 16;
  }
  await encoder.end();
  t.equal(given, h);
  t.equal(pieces.length, 1 + 7 + 1, 'the header, a piece per strip, the checksum and end');
  await t.rejects(encoder.rows(rows), /rows given for a picture 1600 high/, 'no rows past the last');
});

t.test('a PNG abandoned part way leaves nothing; one with rows missing is refused', async (t) => {
  const file = join(dir, 'abandoned.png');
  const png = await PngFile.create(file, 8, 8);
  await png.rows(new Uint8Array(8 * 4 * 3));
  await t.rejects(png.finish(), /3 of 8 rows given/);
  t.notOk(existsSync(file));
  t.same(readdirSync(dir).filter((f) => f.startsWith('.abandoned')), [], 'its temporary file is gone');
  await t.rejects(png.rows(new Uint8Array(7)), /not whole rows/);
});

t.test('a folder that cannot be made is a PngWriteError naming the file', async (t) => {
  writeFileSync(join(dir, 'a-file'), 'x');
  const file = join(dir, 'a-file', 'out.png');
  const e = await PngFile.create(file, 4, 4).catch((e: unknown) => e);
  t.ok(e instanceof PngWriteError, 'a PngWriteError');
  t.match((e as Error).message, /cannot write `.*a-file\/out.png`: a file is in the way of its folder/);
});

t.test('a file written whole goes through a link there, and refuses a named pipe instead of replacing it', async (t) => {
  // The rename of the temporary file replaced whatever had the name: `render -o pipe.png` left a
  // regular file where the pipe was (and, as root, `-o /dev/full` the device).
  const real = join(dir, 'real.png');
  writeFileSync(real, 'keep');
  const link = join(dir, 'link.png');
  symlinkSync('real.png', link);
  const png = await PngFile.create(link, 1, 1);
  await png.rows(new Uint8Array([1, 2, 3, 255]));
  await png.finish();
  t.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link');
  t.equal(readlinkSync(link), 'real.png');
  t.same([...decodePng(readFileSync(real)).rgba], [1, 2, 3, 255], 'the PNG went where it leads');
  writeFileAtomic(link, 'text');
  t.ok(lstatSync(link).isSymbolicLink(), 'writeFileAtomic keeps the link too');
  t.equal(readFileSync(real, 'utf8'), 'text');

  const pipe = join(dir, 'pipe.png');
  execFileSync('mkfifo', [pipe]);
  const e = await PngFile.create(pipe, 1, 1).catch((e: unknown) => e);
  t.ok(e instanceof PngWriteError, 'a PngWriteError');
  t.match((e as Error).message, /cannot write `.*pipe\.png`: it is a named pipe, not a file: name a file to write to/);
  t.ok(lstatSync(pipe).isFIFO(), 'the pipe is still a pipe');
  t.throws(() => writeFileAtomic(pipe, 'x'), { code: 'ENOTREG' });
  t.ok(lstatSync(pipe).isFIFO());
  t.same(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');

  // A link to a folder that is not there: the error named the temporary file beside its target.
  const dangling = join(dir, 'dangling.png');
  symlinkSync(join(dir, 'no-such-folder', 'z.png'), dangling);
  const d = await PngFile.create(dangling, 1, 1).catch((e: unknown) => e);
  t.match((d as Error).message, /cannot write `.*dangling\.png`: it is a link to `.*no-such-folder\/z\.png`, whose folder is not there \(ENOENT\): make the folder, or remove the link/);
  t.notMatch((d as Error).message, /\.tmp/, 'no temporary name');
});

t.test('strips deflated apart (a farm worker\'s tiles) join into the PNG encoded in one piece', async (t) => {
  const [w, h] = [4096, 700]; // strips of 255 rows: 0, 255, 510
  const rgba = picture(w, h, 3);
  const rows = (y0: number, y1: number) => rgba.subarray(y0 * w * 4, y1 * w * 4);
  const join = async (cuts: number[]) => {
    const pieces: Buffer[] = [];
    const joiner = new PngJoiner(w, h, (b) => void pieces.push(b));
    for (let i = 0; i + 1 < cuts.length; i++) for (const s of await deflateStrips(rows(cuts[i], cuts[i + 1]), w, cuts[i], h)) await joiner.add(s);
    await joiner.end();
    return Buffer.concat(pieces);
  };
  const whole = await encodePng(w, h, rgba);
  t.ok((await join([0, 510, 700])).equals(whole), 'jobs cut on strip boundaries: the same bytes');
  const uneven = await join([0, 300, 301, 700]);
  t.notOk(uneven.equals(whole), 'jobs cut elsewhere make other strips');
  t.ok(Buffer.from(decodePng(uneven).rgba).equals(Buffer.from(rgba)), 'which decode to the same pixels (one zlib stream, its checksum combined)');
  const joiner = new PngJoiner(w, h, () => {});
  const late = await deflateStrips(rows(300, 400), w, 300, h);
  await t.rejects(joiner.add(late[0]), /rows from 300 came when 0 was next: strips join in order/);
  await t.rejects(joiner.end(), /0 of 700 rows joined/);
});
