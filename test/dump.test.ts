// The compiler's passes made visible: `entelechy check --dump PASS` prints what each pass made
// (IR after lower and fuse, the plan, WebAssembly text after emit and optimise), and
// ENTELECHY_DUMP=after:PASS prints it to stderr wherever the pass runs (here: render's compile
// thread). Real processes of the real command.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PASSES } from '../src/ir/dump.js';
import { ROOT } from './helpers.js';
import { scratchDir } from './scratch.js';

const BIN = join(ROOT, 'bin', 'entelechy.js');
const TMP = scratchDir('entelechy-dump-');
t.teardown(() => rmSync(TMP, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}) {
  // No module cache: a module read from it is not compiled, so its passes would print nothing.
  return spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ENTELECHY_CACHE_DIR: 'off', ...env } });
}

/** The texts printed after each pass, by pass. */
function dumps(out: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of out.split(/^;; after /m).slice(1)) {
    const nl = part.indexOf('\n');
    found.set(part.slice(0, nl), part.slice(nl + 1));
  }
  return found;
}

t.test('check --dump PASS prints what each pass made, and only that pass', async (t) => {
  const expected: Record<string, RegExp> = {
    lower: /^function fractal\.mandelbrot@1 \(2-d, fuel \d+\)\n  F0 write image: f32, f32, f32, f32\n  U0 in\.zoom\.0: f32\n[\s\S]*  loop \(fuel of fractal\.mandelbrot@1\) \{/,
    fuse: /^function fractal \(2-d/,
    unroll: /^unroll fractal\n  no counted loop/,
    interleave: /^interleave fractal\n  4 vectors per step, sharing the loop at body\[\d+\]/,
    interior: /^interior fractal\n  no/,
    plan: /^plan fractal\n  interleave: 4 vectors per step, sharing the loop at body\[\d+\]\n  interior split: no\n  optimise: binaryen -O3/,
    lockstep: /^lockstep fractal\n  loop of node 0: counters L\d+; tested once: /,
    uses: /^uses fractal\n  step vector 0: x vector kept, top mask kept\n[\s\S]*  vector: x vector kept, top mask kept/,
    emit: /^\(module[\s\S]*\(func \$run/,
    optimise: /^\(module[\s\S]*\(func \$run/,
  };
  t.same(Object.keys(expected), [...PASSES], 'every pass is dumped here');
  const texts = new Map<string, string>();
  for (const pass of PASSES) {
    const r = cli(['check', 'examples/mandelbrot/scene.esn', '--dump', pass]);
    t.equal(r.status, 0, `${pass}: exit status 0 (${r.stderr})`);
    const found = dumps(r.stdout);
    t.same([...found.keys()], [pass], `${pass}: only that pass`);
    t.match(found.get(pass), expected[pass], `${pass}: what it made`);
    texts.set(pass, found.get(pass)!);
  }
  t.not(texts.get('optimise'), texts.get('emit'), 'optimise prints the optimised module, not the emitted one');
});

t.test('check --dump lists the passes when given another name', async (t) => {
  const r = cli(['check', 'examples/rings/scene.esn', '--dump', 'vectorise']);
  t.equal(r.status, 1);
  t.match(r.stderr, /Argument: dump.*Choices: "lower", "fuse", "unroll", "interleave", "interior", "plan", "lockstep", "uses", "emit", "optimise"/s);
  t.notMatch(r.stderr, /    at /, 'no stack trace');
});

t.test('ENTELECHY_DUMP=after:PASS prints to stderr where the pass runs; an unknown pass is named', async (t) => {
  const r = cli(['render', 'examples/rings/scene.esn', '-o', join(TMP, 'rings.png'), '--size', '16x16'], { ENTELECHY_DUMP: 'after:fuse,after:plan,after:nothing' });
  t.equal(r.status, 0, r.stderr);
  const found = dumps(r.stderr);
  t.same([...found.keys()], ['fuse', 'plan'], 'the passes asked for, each once');
  t.match(found.get('fuse'), /^function rings \+ tint/);
  // A one-frame render of 16 x 16 is compiled on the fast tier (renderTier): a straight line, one vector per step.
  t.match(found.get('plan'), /^plan rings \+ tint \(fast tier\)\n\s+interleave: one vector per step/);
  t.match(r.stderr, /ENTELECHY_DUMP: there is no pass `nothing`; the passes: lower, fuse, unroll, interleave, interior, plan, lockstep, uses, emit, optimise/);
  t.equal(dumps(r.stdout).size, 0, 'nothing on stdout');
});

t.test('the fast tier interleaves a loop as the optimised tier does (a straight line stays one vector per step)', async (t) => {
  // One vector per step ran the mandelbrot example's escape loop at 2.4x the CPU (bench/RESULTS.md, issue 17).
  const r = cli(['render', 'examples/mandelbrot/scene.esn', '-o', join(TMP, 'mandelbrot.png'), '--size', '16x16'], { ENTELECHY_DUMP: 'after:plan' });
  t.equal(r.status, 0, r.stderr);
  t.match(dumps(r.stderr).get('plan'), /^plan fractal \(fast tier\)\n\s+interleave: 4 vectors per step, sharing the loop at body\[\d+\]\n\s+interior split: no\n\s+optimise: no \(the fast tier\)/);
});
