// The end of `entelechy serve`'s standard input: a pipe closed by its client is the client going
// away (as a TCP FIN is), so what its requests were evaluating stops, the process ends, and
// nothing is half-written; a regular file of requests (`< requests.jsonl`) is a script: its end
// stops nothing, and every request of it is answered.

import t from 'tap';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';
import { Lines } from './fixtures.js';
import { scratchDir } from './scratch.js';

/** Frame 0 is quick; frame 1 loops 16 million times at each of 64 x 64 elements (minutes of work). */
const SCENE = `kernel t.slow@1 {
  grants time.read, field.write;
  state n: field2<f32> = 0.0;
  out r: field2<f32>;
  each (x, y) {
    let k = 0;
    while (frame == 1 && k < 16000000) { k++; }
    n = n + 1.0;
    r = n + k;
  }
}
node slow: t.slow@1 { size = 64 x 64; }
output r <- slow.r;
`;

/** The same kernel in a new version whose migration loops as long. */
const SLOW_MIGRATION = SCENE.replace('t.slow@1 {', 't.slow@2 {')
  .replace('node slow: t.slow@1', 'node slow: t.slow@2')
  .replace('  }\n}\nnode', '  }\n  migrate from t.slow@1 { let s = 0.0; for (let i = 0; i < 16000000; i++) { s += 1.0; } n = s; }\n}\nnode');

function folder(scene = SCENE): string {
  const dir = scratchDir('entelechy-stdin-end-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'scene.esn'), scene);
  return dir;
}

function serve(dir: string, stdin: 'pipe' | number) {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'serve', join(dir, 'scene.esn'), '--workers', '1'], { cwd: ROOT, stdio: [stdin, 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return { child, out: new Lines(child.stdout!), exit, stderr: () => stderr };
}

t.test('closing stdin mid-evaluate cancels the frame and the process ends', async (t) => {
  const dir = folder();
  const s = serve(dir, 'pipe');
  s.child.stdin!.write('{"id":1,"op":"evaluate"}\n');
  const first = JSON.parse((await s.out.next())!);
  t.equal(first.ok?.frame, 1, `precondition: frame 0 is quick (${s.stderr()})`);
  s.child.stdin!.write('{"id":2,"op":"evaluate"}\n');
  s.child.stdin!.end();
  const second = JSON.parse((await s.out.next())!);
  t.equal(second.id, 2);
  t.equal(second.error?.cancelled, true, 'the long frame is cancelled');
  t.equal(second.error?.reason, 'closed', 'because its client closed stdin');
  t.equal(second.error?.frame, 1, 'nothing of it was kept: the frame counter is as before it');
  t.equal(await s.exit, 0, 'the process ends, cleanly');
  t.equal(await s.out.next(), undefined, 'and answers nothing more');
});

t.test('closing stdin mid-compose (a long migration) cancels it: nothing is written and the process ends', async (t) => {
  const dir = folder();
  const s = serve(dir, 'pipe');
  s.child.stdin!.write('{"id":1,"op":"evaluate"}\n');
  t.ok(JSON.parse((await s.out.next())!).ok, 'precondition: a frame ran, so there is state to migrate');
  s.child.stdin!.write(JSON.stringify({ id: 2, op: 'compose', text: SLOW_MIGRATION }) + '\n');
  s.child.stdin!.end();
  const answer = JSON.parse((await s.out.next())!);
  t.equal(answer.error?.cancelled, true, `the compose is cancelled: ${JSON.stringify(answer).slice(0, 300)}`);
  t.equal(answer.error?.reason, 'closed');
  t.match(answer.error?.message, /end the requests with \{"op":"quit"\} to have every one answered whole/, 'and says how to have it answered');
  t.equal(await s.exit, 0, 'the process ends, cleanly');
  t.equal(readFileSync(join(dir, 'scene.esn'), 'utf8'), SCENE, 'the document is as it was');
  t.same(readdirSync(dir), ['scene.esn'], 'no journal, temp file or backup left');
});

t.test('a file of requests on stdin is a script: its end stops nothing, every request is answered', async (t) => {
  // Quick frames: the session reads the whole file and its end before the first frame runs, so
  // were the end taken for a client going away, both would be cancelled.
  const dir = folder(SCENE.replace('k < 16000000', 'k < 16'));
  const requests = join(dir, 'requests.jsonl');
  writeFileSync(requests, '{"id":1,"op":"evaluate"}\n{"id":2,"op":"evaluate","deadline":600000}\n');
  const fd = openSync(requests, 'r');
  const s = serve(dir, fd);
  closeSync(fd);
  const answers = [JSON.parse((await s.out.next())!), JSON.parse((await s.out.next())!)];
  t.same(answers.map((a) => a.ok?.frame), [1, 2], `both frames ran to the end: ${JSON.stringify(answers).slice(0, 300)}`);
  t.equal(await s.exit, 0);
});

t.test('a pipe that says quit before it closes is answered whole: its end is no client going away', async (t) => {
  // Frames of about a second, all asked and the pipe closed at once: the requests before `quit`
  // were cancelled (reason closed) by the end of the pipe behind them.
  const dir = folder(SCENE.replace('while (frame == 1 && k < 16000000)', 'while (k < 300000)'));
  const s = serve(dir, 'pipe');
  s.child.stdin!.end('{"id":1,"op":"evaluate"}\n{"id":2,"op":"evaluate"}\n{"id":3,"op":"quit"}\n');
  const answers = [JSON.parse((await s.out.next())!), JSON.parse((await s.out.next())!), JSON.parse((await s.out.next())!)];
  t.same(answers.map((a) => a.ok?.frame), [1, 2, undefined], `both frames ran to the end: ${JSON.stringify(answers).slice(0, 300)}`);
  t.same(answers[2], { id: 3, ok: {} }, 'then quit');
  t.equal(await s.exit, 0);
});
