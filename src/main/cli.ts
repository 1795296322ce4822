// The `entelechy` command line.

import { basename, dirname, resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { formatDiagnostic } from '../ir/check/report.js';
import { loadScene, type Scene } from '../ir/check/scene.js';
import type { Diagnostic } from '../ir/syntax/tree.js';
import { Engine, EvaluationError, type Backend } from './engine.js';
import { PathError, SceneFolder, writeFileAtomic } from './files.js';
import { encodePng, fieldToRgba, ImageError } from './image.js';
import { MemoryLimitError } from './memory.js';

/** A mistake of the user's: printed as a message, never as a stack trace. */
export class UserError extends Error {}

export function parseSize(text: string): number[] {
  const m = /^\s*(\d+)\s*x\s*(\d+)(?:\s*x\s*(\d+))?\s*$/i.exec(text);
  if (!m) throw new UserError(`--size takes WIDTHxHEIGHT (or WxHxD), e.g. 1024x768; got \`${text}\``);
  const dims = m.slice(1).filter(Boolean).map(Number);
  if (dims.some((d) => d < 1 || d > 65536)) throw new UserError(`--size: each extent must be between 1 and 65536; got \`${text}\``);
  return dims;
}

export interface LoadedScene {
  scene: Scene;
  folder: SceneFolder;
}

export function loadSceneFile(scenePath: string, options: { size?: number[] } = {}): LoadedScene {
  let folder: SceneFolder;
  try {
    folder = new SceneFolder(scenePath);
  } catch {
    throw new UserError(`cannot open \`${scenePath}\`: no such file`);
  }
  const entry = basename(scenePath);
  if (folder.read(entry) === undefined) throw new UserError(`cannot open \`${scenePath}\`: no such file`);
  const scene = loadScene(entry, { read: (p) => folder.read(p), size: options.size });
  return { scene, folder };
}

function describe(d: Diagnostic, folderPrefix: string): string {
  let s = formatDiagnostic({ ...d, path: folderPrefix + d.path });
  if (d.fix && d.fix.text !== null) s += `\n  fix: ${d.fix.text}`;
  return s;
}

function sceneName(scenePath: string): string {
  const file = basename(scenePath, '.esn');
  return file === 'scene' ? basename(dirname(resolve(scenePath))) : file;
}

function render(argv: { scene: string; output?: string; out?: string; time: number; size?: string; backend: string; fuse: boolean }): void {
  const size = argv.size ? parseSize(argv.size) : undefined;
  const { scene } = loadSceneFile(argv.scene, { size });
  const prefix = dirname(argv.scene) === '.' ? '' : `${dirname(argv.scene)}/`;
  if (scene.diagnostics.length) {
    for (const d of scene.diagnostics) process.stderr.write(describe(d, prefix) + '\n');
    throw new UserError(`${argv.scene} has ${scene.diagnostics.length} error${scene.diagnostics.length > 1 ? 's' : ''}: nothing rendered`);
  }
  const outputName = argv.output ?? scene.outputs[0]?.name;
  if (!outputName) throw new UserError(`${argv.scene} declares no output: add \`output NAME <- NODE.PORT;\``);
  if (!scene.outputs.some((o) => o.name === outputName))
    throw new UserError(`${argv.scene} has no output \`${outputName}\`; its outputs: ${scene.outputs.map((o) => o.name).join(', ')}`);
  const engine = new Engine(scene, { backend: argv.backend as Backend, fuse: argv.fuse });
  try {
    const report = engine.evaluate({ time: argv.time });
    const field = engine.outputField(outputName)!;
    const png = encodePng(field.width, field.height, fieldToRgba(engine.memory, field, outputName));
    const file = argv.out ?? `${sceneName(argv.scene)}.png`;
    writeFileAtomic(file, png);
    const millis = report.timings.reduce((a, t) => a + t.millis, 0);
    process.stderr.write(`wrote ${file} (${field.width} x ${field.height}, output \`${outputName}\`, ${millis.toFixed(1)} ms evaluating, ${engine.compileMillis.toFixed(0)} ms compiling)\n`);
  } finally {
    engine.dispose();
  }
}

function check(argv: { scene: string; json: boolean }): number {
  const { scene } = loadSceneFile(argv.scene);
  const prefix = dirname(argv.scene) === '.' ? '' : `${dirname(argv.scene)}/`;
  if (argv.json) {
    const diagnostics = scene.diagnostics.map((d) => ({ ...d, path: prefix + d.path }));
    process.stdout.write(JSON.stringify({ ok: diagnostics.length === 0, diagnostics }) + '\n');
  } else if (scene.diagnostics.length === 0) {
    process.stdout.write(`${argv.scene}: ok (${scene.kernels.size} kernels, ${scene.nodes.length} nodes, ${scene.outputs.length} outputs)\n`);
  } else {
    for (const d of scene.diagnostics) process.stdout.write(describe(d, prefix) + '\n');
  }
  return scene.diagnostics.length ? 1 : 0;
}

export async function main(args: string[]): Promise<number> {
  let status = 0;
  const parser = yargs(args)
    .scriptName('entelechy')
    .usage('$0 <command> [options]\n\nA live engine for fields: scenes of compiled kernels.')
    .command(
      'render <scene>',
      'evaluate a scene and write its output as a PNG',
      (y) =>
        y
          .positional('scene', { type: 'string', demandOption: true, describe: 'the scene document (.esn)' })
          .option('out', { alias: 'o', type: 'string', describe: 'the PNG to write (default: the scene name .png)' })
          .option('output', { type: 'string', describe: 'which output of the scene (default: the first)' })
          .option('time', { type: 'number', default: 0, describe: 'the world clock in seconds' })
          .option('size', { type: 'string', describe: 'WIDTHxHEIGHT: the size of every node whose size the scene fixes' })
          .option('backend', { choices: ['jit', 'interp'], default: 'jit', describe: 'compiled WebAssembly, or the reference interpreter' })
          .option('fuse', { type: 'boolean', default: true, describe: 'fuse pointwise chains into one loop' }),
      (argv) => render(argv as never),
    )
    .command(
      'check <scene>',
      'check a scene and print its diagnostics (file:line:column); exit status 1 on errors',
      (y) =>
        y
          .positional('scene', { type: 'string', demandOption: true })
          .option('json', { type: 'boolean', default: false, describe: 'print {ok, diagnostics} as JSON' }),
      (argv) => {
        status = check(argv as never);
      },
    )
    .demandCommand(1, 'name a command: render or check (entelechy --help lists them)')
    .strict()
    .help()
    .fail((msg, err) => {
      if (err) throw err;
      throw new UserError(msg);
    });
  await parser.parseAsync();
  return status;
}

export function isUserError(e: unknown): e is Error {
  return e instanceof UserError || e instanceof EvaluationError || e instanceof MemoryLimitError || e instanceof ImageError || e instanceof PathError;
}

export async function run(args: string[]): Promise<void> {
  try {
    process.exitCode = await main(args);
  } catch (e) {
    if (isUserError(e)) {
      process.stderr.write(`entelechy: ${e.message}\n`);
    } else {
      const err = e as Error;
      process.stderr.write(`entelechy: internal error: ${err?.message ?? err}\n(this is a bug in entelechy, not in your scene; set ENTELECHY_DEBUG=1 for details)\n`);
      if (process.env.ENTELECHY_DEBUG) process.stderr.write(`${err?.stack}\n`);
    }
    process.exitCode = 1;
  }
}

export { hideBin };
