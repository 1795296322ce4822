// The `entelechy` command line.

import { basename, dirname, extname, resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { benchMode, givenOptions, pipelineNames, wholeCount } from './bench-args.js';
import { formatDiagnostic } from '../ir/check/report.js';
import { loadScene, type Scene } from '../ir/check/scene.js';
import { dumpTo, PASSES, type PassName } from '../ir/dump.js';
import type { Diagnostic } from '../ir/syntax/tree.js';
import { MAX_EXTENT } from '../ir/syntax/values.js';
import { availableParallelism } from 'node:os';
import type { Backend } from '../main/engine.js';
import { SceneFolder } from '../main/files.js';
import { sceneEntryProblem } from '../main/documents.js';
import { parseMemory } from '../main/budget.js';
import { optimiseBudget, optimiseBudgetOption } from '../main/optimise-budget.js';
import { isVideoFile, videoCrf } from '../main/video.js';
import { checkParamOptions, parseParamOptions } from '../main/param-option.js';
import { isUserError, markPrinted, UserError, wasPrinted } from '../main/user-error.js';
import { mark } from '../main/timeline.js';
import { parseInputOptions } from '../main/input-feed.js';
import type { PipelineName } from '../../bench/reference/measurement.js';
import { command, COMMANDS } from './commands.js';

// The commands that compile load binaryen (about a second): they are imported when they run, so
// `check` and `help` start at once.
const defaultWorkers = () => availableParallelism();

/** The most threads --workers may ask for (a render's pool is bounded there too). */
const MAX_WORKERS = 256;

/** The commands that take a scene document. */
const SCENE_COMMANDS = ['render', 'check', 'serve', 'mcp', 'bisect'];

export { UserError };

export function parseSize(text: string): number[] {
  const m = /^\s*(\d+)\s*x\s*(\d+)(?:\s*x\s*(\d+))?\s*$/i.exec(text);
  if (!m) throw new UserError(`--size takes WIDTHxHEIGHT (or WxHxD), each a whole number from 1 to ${MAX_EXTENT}, e.g. 1024x768; got \`${text}\``);
  const dims = m.slice(1).filter(Boolean).map(Number);
  if (dims.some((d) => d < 1 || d > MAX_EXTENT)) throw new UserError(`--size: each extent must be between 1 and ${MAX_EXTENT}; got \`${text}\``);
  return dims;
}

/** The bytes of a --memory option (budget.ts), or undefined for the default. */
export function memoryOption(text: unknown): number | undefined {
  if (text === undefined) return undefined;
  const bytes = parseMemory(String(text));
  if (typeof bytes !== 'number') throw new UserError(bytes.problem);
  return bytes;
}

export interface LoadedScene {
  scene: Scene;
  folder: SceneFolder;
}

export function loadSceneFile(scenePath: string, options: { size?: number[]; inputSizes?: Record<string, number[]> } = {}): LoadedScene {
  let folder: SceneFolder;
  try {
    folder = new SceneFolder(scenePath);
  } catch {
    throw new UserError(`cannot open \`${scenePath}\`: no such file`);
  }
  const entry = basename(scenePath);
  const problem = sceneEntryProblem(scenePath);
  if (problem) throw new UserError(problem);
  if (folder.read(entry) === undefined) throw new UserError(`cannot open \`${scenePath}\`: no such file`);
  const scene = loadScene(entry, { read: (p) => folder.readDocument(p), size: options.size, inputSizes: options.inputSizes });
  return { scene, folder };
}

/**
 * The benchmarks (bench/: pipelines, C references, results) live in the repository; the npm
 * package leaves them out, so `entelechy bench` loads them only when asked, and says where they are.
 */
async function loadBench() {
  const { isPipelineName } = await fromBench(() => import('../../bench/reference/measurement.js'));
  return { isPipelineName, bench: async (...a: Parameters<typeof import('../../bench/run.js').bench>) => (await import('../../bench/run.js')).bench(...a) };
}

async function fromBench<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new UserError('`entelechy bench` runs the benchmarks in bench/ (pipelines, C references), which the npm package leaves out: run it in a clone of the repository (npm install, then npx entelechy bench)');
  }
}


function describe(d: Diagnostic, folderPrefix: string): string {
  let s = formatDiagnostic({ ...d, path: folderPrefix + d.path });
  if (d.fix && d.fix.text !== null) s += `\n  fix: ${d.fix.text}`;
  return s;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function sceneName(scenePath: string): string {
  const file = basename(scenePath, '.esn');
  return file === 'scene' ? basename(dirname(resolve(scenePath))) : file;
}

async function renderCommand(argv: {
  scene: string; output?: string; out?: string; time: number; size?: string; backend: string; fuse: boolean;
  frames?: string; fps: number; crf?: number; workers: number; json: boolean; param?: string[]; input?: string[]; memory?: string; tile?: string;
  shard?: string; overwrite: boolean; farm?: string; z?: number;
}): Promise<void> {
  const size = argv.size ? parseSize(argv.size) : undefined;
  const paramOptions = parseParamOptions(argv.param);
  if (!(argv.fps > 0)) throw new UserError(`--fps must be a positive number; got ${given('--fps', argv.fps)}`);
  // One frame has no rate: --fps without --frames was ignored without a word.
  if (argv.frames === undefined && process.argv.some((a) => a === '--fps' || a.startsWith('--fps=')))
    throw new UserError('--fps sets the rate of --frames (frame N is at --time + N / fps): add --frames FIRST:LAST, or leave --fps out');
  if (!Number.isFinite(argv.time)) throw new UserError(`--time must be a number of seconds, e.g. --time 1.5; got ${given('--time', argv.time)}`);
  const { parseFrames, render } = await import('../main/render.js');
  const { parseTile } = await import('../main/tiles/render-tiled.js');
  mark('render imported');
  const tile = argv.tile === undefined ? undefined : parseTile(String(argv.tile));
  if (tile && !Array.isArray(tile)) throw new UserError(tile.problem);
  const frames = argv.frames !== undefined ? parseFrames(argv.frames) : undefined;
  const shard = argv.shard !== undefined ? await shardOption(argv.shard, frames, argv.out) : undefined;
  if (shard && argv.farm !== undefined) throw new UserError('--shard and --farm are two ways to split a render: give one');
  // An input whose size the scene leaves open takes its image's: read before the scene is checked.
  const { checkInputOptions, checkSequenceFiles, inputImageSizes } = await import('../main/input-feed.js');
  const inputs = parseInputOptions(argv.input);
  checkSequenceFiles(inputs, frames?.first ?? 0, frames?.last ?? 0);
  const inputSizes = await inputImageSizes(inputs, frames?.first ?? 0);
  const { scene } = loadSceneFile(argv.scene, { size, inputSizes });
  mark('scene parsed and checked');
  const prefix = dirname(argv.scene) === '.' ? '' : `${dirname(argv.scene)}/`;
  if (scene.diagnostics.length) {
    const message = `${argv.scene} has ${plural(scene.diagnostics.length, 'error')}: nothing rendered`;
    if (argv.json) process.stdout.write(JSON.stringify({ error: { message, diagnostics: scene.diagnostics.map((d) => ({ ...d, path: prefix + d.path })) } }) + '\n');
    for (const d of scene.diagnostics) process.stderr.write(describe(d, prefix) + '\n');
    throw markPrinted(new UserError(message));
  }
  if (size && !scene.nodes.some((n) => n.domain.length === size.length)) {
    const dims = [...new Set(scene.nodes.map((n) => n.domain.length))].sort();
    throw new UserError(`--size ${argv.size} has ${size.length} axes, but no node of ${argv.scene} has ${size.length}: its nodes are ${dims.map((d) => `${d}-D`).join(' and ')}; give ${dims.map((d) => ['WIDTH', 'WIDTHxHEIGHT', 'WIDTHxHEIGHTxDEPTH'][d - 1]).join(' or ')}`);
  }
  // --size was ignored without a word where every node of its axes follows what it reads (the
  // photo example's nodes follow its picture).
  if (size && !scene.nodes.some((n) => n.resized)) {
    const sized = scene.nodes.filter((n) => n.domain.length === size.length);
    // An input whose declaration fixes its size is where the size comes from: --size does not reach it.
    const fixed = [...scene.inputs.values()].filter((i) => i.statement.size && i.dims === size.length);
    const where = fixed.length
      ? `change the size of what they read: ${fixed.map((i) => `input \`${i.name}\` declares \`size ${i.size.join(' x ')}\` (${i.path})`).join(', ')}; edit that, or leave the size out of the declaration and give an image of the size you want (--input NAME=FILE)`
      : 'change the size of what they read';
    throw new UserError(`--size ${argv.size} sizes no node of ${argv.scene}: its ${size.length}-D nodes (${sized.map((n) => n.name).join(', ')}) take their size from what they read (${sized[0].domain.join(' x ')}): leave --size out, or ${where}`);
  }
  const params = checkParamOptions(scene, paramOptions);
  checkInputOptions(scene, inputs, argv.scene);
  // An image stretched to a size the scene fixes changes its aspect without a word otherwise.
  for (const i of inputs) {
    const input = scene.inputs.get(i.name)!;
    const image = inputSizes[i.name] ?? [];
    // (A 3-D input takes no image: that is said next, and a note of stretching would contradict it.)
    if (input.dims === 2 && input.statement.size && input.size.join(' x ') !== image.join(' x '))
      process.stderr.write(`note: input \`${i.name}\` declares \`size ${input.size.join(' x ')}\` (${input.path}), so ${i.sequence ? 'each image' : `\`${i.file}\``} (${image.join(' x ')}) is stretched to it; leave the size out of the declaration to take the image's\n`);
  }
  // An input left empty renders a picture of nothing (every pixel 0) without a word otherwise.
  for (const input of scene.inputs.values())
    if (input.dims > 1 && !input.statement.value && !inputs.some((i) => i.name === input.name))
      process.stderr.write(`note: input \`${input.name}\` was given no image, so it holds zeros; fill it with --input ${input.name}=FILE\n`);
  const output = argv.output ?? scene.outputs[0]?.name;
  if (!output) throw new UserError(`${argv.scene} declares no output: add \`output NAME <- NODE.PORT;\``);
  if (!scene.outputs.some((o) => o.name === output))
    throw new UserError(`${argv.scene} has no output \`${output}\`; its outputs: ${scene.outputs.map((o) => o.name).join(', ')}`);
  const file = argv.out ?? (frames ? `${sceneName(argv.scene)}/%04d.png` : `${sceneName(argv.scene)}.png`);
  // Pictures are PNG whatever the name says: `-o out.jpg` wrote PNG bytes under a JPEG's name.
  if (!isVideoFile(file) && !['.png', '.npy'].includes(extname(file).toLowerCase()))
    throw new UserError(`-o ${file}: render writes PNG pictures (name the file .png), videos (.mp4, .webm, .gif, through ffmpeg) or NumPy arrays of the output's values (.npy)`);
  const z = sliceOption(scene, output, file, argv.z);
  if (argv.farm !== undefined && (z !== undefined || extname(file).toLowerCase() === '.npy'))
    throw new UserError(`--farm brings back pictures of 2-D outputs: render ${z !== undefined ? 'a z-slice' : 'a .npy'} here, or split its frames with --shard`);
  const crf = videoCrf(file, argv.crf);
  const options = {
    output, file, z, time: argv.time, frames, fps: argv.fps, crf, params, inputs, workers: argv.workers, memory: memoryOption(argv.memory), tile, backend: argv.backend as Backend, fuse: argv.fuse,
    json: argv.json, progress: !argv.json && Boolean(process.stderr.isTTY), shard, resume: (Boolean(shard) || argv.farm !== undefined) && !argv.overwrite,
  };
  if (argv.farm !== undefined) {
    const { farmRender } = await import('../farm/submit.js');
    return farmRender(scene, { ...options, farm: argv.farm, size, inputSizes });
  }
  await render(scene, options);
}

/**
 * What the command line gave for a numeric option, as typed: yargs makes `--time abc` NaN, and
 * "got NaN" does not say what was wrong. The value itself where the option is not in argv.
 */
function given(flag: string, value: unknown, argv: readonly string[] = process.argv): string {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === flag && i + 1 < argv.length) return `\`${argv[i + 1]}\``;
    if (argv[i].startsWith(`${flag}=`)) return `\`${argv[i].slice(flag.length + 1)}\``;
  }
  return String(value);
}

/**
 * --z: the z-slice of a 3-D output a picture shows. A 3-D output needs one, or a .npy, which holds
 * every slice; said before anything runs (the render evaluated the scene and then failed to write).
 */
function sliceOption(scene: Scene, output: string, file: string, z: number | undefined): number | undefined {
  const size = scene.nodes.find((n) => n.name === scene.outputs.find((o) => o.name === output)!.node)!.domain;
  const npy = extname(file).toLowerCase() === '.npy';
  if (z === undefined) {
    if (size.length === 3 && !npy)
      throw new UserError(`output \`${output}\` is 3-D (${size.join(' x ')}): a picture shows one z-slice of it: add --z N (0 to ${size[2] - 1}), or write every value to a NumPy array: -o ${output}.npy`);
    return undefined;
  }
  if (size.length !== 3) throw new UserError(`--z picks a z-slice of a 3-D output, and \`${output}\` is ${size.length}-D (${size.join(' x ')}): leave --z out`);
  if (npy) throw new UserError(`-o ${file} holds every z-slice of \`${output}\`: leave --z out (or write a picture of one slice: -o ${output}.png --z ${z})`);
  if (!Number.isInteger(z) || z < 0 || z >= size[2]) throw new UserError(`--z must be a whole number from 0 to ${size[2] - 1} (\`${output}\` is ${size.join(' x ')}); got ${given('--z', z)}`);
  return z;
}

/** --shard: with --frames and numbered files only (a video cannot be written in pieces). */
async function shardOption(text: string, frames: unknown, out: string | undefined) {
  const { parseShard } = await import('../main/shard.js');
  if (!frames) throw new UserError('--shard splits a range of frames: give --frames FIRST:LAST too');
  if (out && isVideoFile(out)) throw new UserError(`--shard writes numbered images: give -o out/%04d.png (and join them into ${out} with ffmpeg once every shard is done)`);
  return parseShard(text);
}

async function check(argv: { scene: string; json: boolean; dump?: PassName }): Promise<number> {
  const { scene } = loadSceneFile(argv.scene);
  const prefix = dirname(argv.scene) === '.' ? '' : `${dirname(argv.scene)}/`;
  if (argv.json) {
    const diagnostics = scene.diagnostics.map((d) => ({ ...d, path: prefix + d.path }));
    process.stdout.write(JSON.stringify({ ok: diagnostics.length === 0, diagnostics }) + '\n');
  } else if (scene.diagnostics.length === 0) {
    process.stdout.write(`${argv.scene}: ok (${plural(scene.kernels.size, 'kernel')}, ${plural(scene.nodes.length, 'node')}, ${plural(scene.outputs.length, 'output')})\n`);
    // It checks, and a session can run it (and compose an output); render has nothing to write.
    if (scene.outputs.length === 0) process.stderr.write(`note: ${argv.scene} declares no output, so \`render\` has nothing to write: add \`output NAME <- NODE.PORT;\`\n`);
    // Likewise when every output is 3-D: a picture is of a 2-D field.
    else if (scene.outputs.every((o) => scene.nodes.find((n) => n.name === o.node)?.domain.length === 3))
      process.stderr.write(`note: every output of ${argv.scene} is 3-D: \`render\` writes a picture of one z-slice (--z N), or every value as a NumPy array (-o NAME.npy)\n`);
  } else {
    for (const d of scene.diagnostics) process.stdout.write(describe(d, prefix) + '\n');
  }
  if (scene.diagnostics.length) return 1;
  if (argv.dump) await dumpPass(scene, argv.dump);
  return 0;
}

/** Print what the compiler made after `pass`, for every group the scene runs (fused, no pins). */
async function dumpPass(scene: Scene, pass: PassName): Promise<void> {
  const { sceneGroups } = await import('../main/scene-groups.js');
  dumpTo([pass], (p, text) => process.stdout.write(`;; after ${p}\n${text}\n`));
  try {
    const groups = sceneGroups(scene, [], true);
    if (PASSES.indexOf(pass) <= PASSES.indexOf('fuse')) return;
    const { compileFunction } = await import('../codegen/compile.js');
    for (const g of groups) compileFunction(g.ir);
  } finally {
    dumpTo(undefined);
  }
}

export async function main(args: string[]): Promise<number> {
  // `help` is yargs's own word too (it would print the usage): read its name and --json here.
  if (args[0] === 'help' && !args.includes('--help')) {
    const names = args.slice(1).filter((a) => !a.startsWith('-'));
    const unknown = args.slice(1).find((a) => a.startsWith('-') && a !== '--json' && a !== '--all');
    if (names.length > 1 || unknown) throw new UserError(`help takes one name and --json, e.g. \`entelechy help evaluate --json\` (or --all for every name); got \`${args.slice(1).join(' ')}\``);
    const { printHelp } = await import('./tools.js');
    const status = printHelp(names[0], args.includes('--json'), args.includes('--all'));
    // A command's options: as yargs describes them (`entelechy serve --help`), from its definition below.
    const command = COMMANDS.find((c) => c.name === names[0]?.toLowerCase());
    if (status === 0 && !args.includes('--json') && command) process.stdout.write(`\n${await commandOptions(command.name)}\n`);
    return status;
  }
  let status = 0;
  await commandLine(args, (s) => (status = s)).parseAsync();
  return status;
}

/** The options part of `entelechy NAME --help` (its positionals and options). */
function commandOptions(name: string): Promise<string> {
  return new Promise((resolve) =>
    commandLine([name, '--help'], () => undefined).parse([name, '--help'], {}, (_e, _argv, output) => resolve(output.slice(Math.max(0, output.search(/^(Positionals|Options):/m))).trimEnd())),
  );
}

/** The yargs parser of the commands; `setStatus` takes the exit status a command asks for. */
function commandLine(args: string[], setStatus: (status: number) => void) {
  return yargs(args)
    .scriptName('entelechy')
    .usage('$0 <command> [options]\n\nA live engine for fields: scenes of compiled kernels.')
    .command(
      ...command('render'),
      (y) =>
        y
          .positional('scene', { type: 'string', demandOption: true, describe: 'the scene document (.esn)' })
          .option('out', { alias: 'o', type: 'string', describe: 'the PNG to write (default: the scene name .png); with --frames out/%04d.png, or a video: out.mp4, out.webm, out.gif (through ffmpeg; videos keep no partial alpha: mp4 and webm drop it, a GIF pixel is transparent under alpha 0.5); or the output\'s values as a NumPy array: out.npy (a 3-D output whole)' })
          .option('output', { type: 'string', describe: 'which output of the scene (default: the first)' })
          .option('z', { type: 'number', describe: 'of a 3-D output, the z-slice a picture shows (from 0); -o NAME.npy writes every value instead' })
          .option('time', { type: 'number', default: 0, describe: 'the world clock in seconds (with --frames, of frame 0: frame N is at TIME + N / FPS)' })
          .option('param', { type: 'array', string: true, describe: 'NAME=VALUE: start a param at a value (repeatable; a vector as 1,0.5,0), checked as the param operation checks it' })
          .option('input', { type: 'array', string: true, describe: 'NAME=FILE: fill an input field from an image (PNG, JPEG, WebP, TIFF, GIF), its size following the image unless the scene fixes it (then the image is stretched to that size, its aspect not kept); NAME=in/%04d.png reads one file per frame' })
          .option('size', { type: 'string', describe: `WIDTHxHEIGHT (or WxHxD), each from 1 to ${MAX_EXTENT}: the size of every node with that many axes whose size the scene fixes` })
          .option('frames', { type: 'string', describe: 'FIRST:LAST: render a range of frames (inclusive) to numbered files (-o out/%04d.png)' })
          .option('fps', { type: 'number', default: 30, describe: 'frames per second of the world clock with --frames (and of the video)' })
          .option('crf', { type: 'number', describe: 'a video\'s quality, lower is better: 0 is the best (not lossless: colour is stored as 4:2:0 YUV, as players need); .mp4 0-51 (default 18), .webm 0-63 (default 31)' })
          .option('workers', { type: 'number', default: defaultWorkers(), describe: 'worker threads (default: one per core)' })
          .option('memory', { type: 'string', describe: 'the memory budget for fields, e.g. 512M or 2G (default: an eighth of the machine\'s, at most 4G); a render whose fields do not fit is made in tiles' })
          .option('tile', { type: 'string', describe: 'WIDTHxHEIGHT: render in tiles of this size (default: in tiles only when the fields do not fit --memory, of whole rows)' })
          .option('json', { type: 'boolean', default: false, describe: 'one JSON line per frame (frame, file, millis: from its start until its file is written whole; frames overlap, the next computed while one is encoded, so theirs add up to more than the summary\'s) and a summary, for pipelines' })
          .option('backend', { choices: ['jit', 'interp'], default: 'jit', describe: 'compiled WebAssembly, or the reference interpreter' })
          .option('fuse', { type: 'boolean', default: true, describe: 'fuse pointwise chains into one loop' })
          .option('shard', { type: 'string', describe: 'INDEX/COUNT: render only this shard\'s run of --frames (from 0); auto/COUNT takes the index from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID, auto also the count from SLURM_ARRAY_TASK_COUNT. Frames already written whole are skipped (docs/distributed.md)' })
          .option('farm', { type: 'string', describe: 'redis://HOST:PORT: render --frames on the farm\'s workers (entelechy farm worker), writing each frame here as it comes back; frames already written whole are skipped (docs/distributed.md)' })
          .option('overwrite', { type: 'boolean', default: false, describe: 'with --shard or --farm: render every frame again, even those already written' }),
      (argv) => renderCommand(argv as never),
    )
    .command(
      ...command('farm'),
      (y) =>
        y
          .positional('role', { choices: ['worker'], demandOption: true, describe: 'worker: take frames from the queue' })
          .option('redis', { type: 'string', demandOption: 'give the farm\'s Redis: --redis redis://HOST:PORT', describe: 'the Redis URL, e.g. redis://127.0.0.1:6379' })
          .option('concurrency', { type: 'number', describe: 'jobs held at once: one evaluates while the ones before it are encoded on threads and sent (default: --workers + 1)' })
          .option('workers', { type: 'number', default: defaultWorkers(), describe: 'evaluation threads per frame (default: one per core)' })
          .option('memory', { type: 'string', describe: 'the memory budget for fields per frame in flight, e.g. 512M or 2G' })
          .option('stall-ms', { type: 'number', default: 30000, describe: 'how long a frame\'s lock lasts unrenewed: a worker that dies mid-frame loses it to another after this (BullMQ\'s lockDuration and stalledInterval)' })
          .option('json', { type: 'boolean', default: false, describe: 'one JSON line per event (ready, started, done, failed)' }),
      async (argv) => {
        for (const [name, v, least] of [['--concurrency', argv.concurrency ?? 1, 1], ['--workers', argv.workers, 1], ['--stall-ms', argv.stallMs, 100]] as const)
          if (!(Number.isInteger(v) && v >= least)) throw new UserError(`${name} must be a whole number of at least ${least}; got ${given(name, v)}`);
        const { farmWorker } = await import('../farm/worker.js');
        await farmWorker({ redis: String(argv.redis), concurrency: argv.concurrency, workers: argv.workers, memory: memoryOption(argv.memory), stallMs: argv.stallMs, json: argv.json });
      },
    )
    .command(
      ...command('check'),
      (y) =>
        y
          .positional('scene', { type: 'string', demandOption: true, describe: 'the scene document (.esn)' })
          .option('json', { type: 'boolean', default: false, describe: 'print {ok, diagnostics} as JSON' })
          .option('dump', { choices: PASSES, describe: 'then print what the compiler made after this pass (IR, or WebAssembly text), per group' }),
      async (argv) => {
        setStatus(await check(argv as never));
      },
    )
    .command(
      ...command('bench'),
      (y) =>
        y
          .option('size', { type: 'number', default: 4096, describe: 'fields are SIZE x SIZE' })
          .option('pipelines', { type: 'string', default: 'P1,P2,P3,P4', describe: 'which pipelines, e.g. P1,P3' })
          .option('runs', { type: 'number', default: 5, describe: 'timed runs after a warm-up (the median is reported)' })
          .option('workers', { type: 'number', default: defaultWorkers(), describe: 'workers (and C threads) for the parallel runs' })
          .option('c', { type: 'boolean', default: true, describe: 'include the C reference (--no-c to skip)' })
          .option('js', { type: 'boolean', default: true, describe: 'include plain JavaScript (--no-js to skip)' })
          .option('halide', { type: 'boolean', default: true, describe: 'include Halide 14\'s JIT when libhalide14-0-dev is installed (--no-halide to skip)' })
          .option('json', { type: 'boolean', default: false, describe: 'one JSON object per measurement' })
          .option('compile', { type: 'boolean', default: false, describe: 'instead: the compile corpus, per scene and tier: time per compiler stage, wasm size, edit to first frame in its parts; and the chain scene interpreted against compiled' })
          .option('cold', { type: 'boolean', default: false, describe: 'instead: the first frame of `render` from process start with the module cache off, per example and corpus scene (--runs processes each), its stages in wall and CPU time' })
          .option('scenes', { type: 'string', describe: 'with --compile or --cold: which corpus scenes, e.g. raymarch,P4 (default all; with --compile, `chain` names the chain scene)' })
          .option('edits', { type: 'number', default: 11, describe: 'with --compile: timed edits per scene, of each kind (a literal nudged; the code\'s shape changed)' })
          .option('rounds', { type: 'number', describe: 'instead: N rounds (3 if only --sizes, --chart or --out is given), each running the engine, the C reference and Halide one after the other per pipeline, size and worker count; reports each ratio\'s min / median / max over the rounds and the load average (no plain JavaScript)' })
          .option('sizes', { type: 'string', describe: 'with rounds: several sizes, e.g. 256,1024,4096 (default: --size)' })
          .option('chart', { type: 'string', describe: 'with rounds: draw the ratios to C (and Halide) into this SVG file' })
          .option('out', { type: 'string', describe: 'with rounds: write the whole report (every round\'s figures) into this JSON file' }),
      async (argv) => {
        const mode = benchMode(givenOptions(hideBin(process.argv)));
        const runs = wholeCount('runs', argv.runs, 1000, given('--runs', argv.runs));
        const scenes = argv.scenes?.split(',').map((s) => s.trim());
        if (mode === 'compile' || mode === 'cold') {
          const { benchCompile, corpus, CHAIN } = await fromBench(() => import('../../bench/compile.js'));
          const names = [...corpus().map((c) => c.name), ...(mode === 'cold' ? [] : [CHAIN])];
          const unknown = scenes?.find((s) => !names.includes(s));
          if (unknown !== undefined) throw new UserError(`--scenes: \`${unknown}\` is not a corpus scene; they are ${names.join(', ')}`);
          if (mode === 'cold') {
            const { benchCold } = await fromBench(() => import('../../bench/cold.js'));
            await benchCold({ scenes, runs, json: argv.json });
            return;
          }
          const edits = wholeCount('edits', argv.edits, 1000, given('--edits', argv.edits));
          await benchCompile({ scenes, runs, edits, json: argv.json });
          return;
        }
        const { isPipelineName, bench } = await loadBench();
        const pipelines = pipelineNames(String(argv.pipelines), isPipelineName);
        if (!(argv.size >= 16 && argv.size <= 16384)) throw new UserError(`--size must be between 16 and 16384; got ${given('--size', argv.size)}`);
        if (mode === 'rounds') {
          const { benchRounds } = await fromBench(() => import('../../bench/rounds-cli.js'));
          await benchRounds({ ...argv, runs, pipelines: pipelines as PipelineName[] });
          return;
        }
        await bench({ size: argv.size, pipelines: pipelines as PipelineName[], runs, workers: Math.max(1, argv.workers), c: argv.c, js: argv.js, halide: argv.halide, json: argv.json });
      },
    )
    .command(
      ...command('serve'),
      (y) =>
        y
          .positional('scene', { type: 'string', demandOption: true, describe: 'the scene document (.esn)' })
          .option('listen', { type: 'string', describe: 'host:port for TCP and WebSocket (127.0.0.1:7788; port 0 picks a free one)' })
          .option('grant', { type: 'array', string: true, describe: 'grant only these capabilities (default: all)' })
          .option('deny', { type: 'array', string: true, describe: 'withhold these capabilities' })
          .option('param', { type: 'array', string: true, describe: 'NAME=VALUE: start a param at a value (repeatable; a vector as 1,0.5,0), checked as the param operation checks it' })
          .option('input', { type: 'array', string: true, describe: 'NAME=FILE: fill an input with an image (PNG, JPEG, WebP, TIFF, GIF), stretched to the input\'s size (repeatable)' })
          .option('allow-origin', { type: 'array', string: true, describe: 'a browser origin whose pages may open a WebSocket (e.g. http://localhost:5173; loopback pages of this port always may)' })
          .option('workers', { type: 'number', default: defaultWorkers(), describe: 'evaluation workers' })
          .option('memory', { type: 'string', describe: 'the memory budget for fields, e.g. 512M or 2G (default: an eighth of the machine\'s, at most 4G)' })
          .option('optimise-budget', optimiseBudgetOption),
      async (argv) => {
        const { sessionGrants } = await import('./tools.js');
        const { serve } = await import('./serve.js');
        const budget = optimiseBudget(argv.optimiseBudget);
        const grants = sessionGrants(argv.grant as string[] | undefined, argv.deny as string[] | undefined);
        const listenSpec = argv.listen === '' ? '127.0.0.1:7788' : (argv.listen as string | undefined);
        const allowedOrigins = (argv.allowOrigin as string[] | undefined) ?? [];
        for (const o of allowedOrigins)
          if (o !== '*' && !/^https?:\/\/[^/\s]+$/i.test(o)) throw new UserError(`--allow-origin takes an origin such as http://localhost:5173 (scheme, host and port, no path); got \`${o}\``);
        const params = parseParamOptions(argv.param as string[] | undefined);
        const inputs = parseInputOptions(argv.input as string[] | undefined);
        await serve(String(argv.scene), { listen: listenSpec, allowedOrigins, grants, params, inputs, workers: Math.max(1, argv.workers as number), memory: memoryOption(argv.memory), optimiseBudget: budget });
      },
    )
    .command(
      ...command('mcp'),
      (y) =>
        y
          .positional('scene', { type: 'string', demandOption: true, describe: 'the scene document (.esn)' })
          .option('grant', { type: 'array', string: true, describe: 'grant only these capabilities (default: all)' })
          .option('deny', { type: 'array', string: true, describe: 'withhold these capabilities' })
          .option('param', { type: 'array', string: true, describe: 'NAME=VALUE: start a param at a value (repeatable; a vector as 1,0.5,0), checked as the param operation checks it' })
          .option('input', { type: 'array', string: true, describe: 'NAME=FILE: fill an input with an image (PNG, JPEG, WebP, TIFF, GIF), stretched to the input\'s size (repeatable)' })
          .option('workers', { type: 'number', default: defaultWorkers(), describe: 'evaluation workers' })
          .option('memory', { type: 'string', describe: 'the memory budget for fields, e.g. 512M or 2G (default: an eighth of the machine\'s, at most 4G)' })
          .option('optimise-budget', optimiseBudgetOption),
      async (argv) => {
        const { mcp } = await import('../mcp/run.js');
        const budget = optimiseBudget(argv.optimiseBudget);
        const params = parseParamOptions(argv.param as string[] | undefined);
        const inputs = parseInputOptions(argv.input as string[] | undefined);
        await mcp(String(argv.scene), { grant: argv.grant as string[] | undefined, deny: argv.deny as string[] | undefined, params, inputs, workers: Math.max(1, argv.workers as number), memory: memoryOption(argv.memory), optimiseBudget: budget });
      },
    )
    .command(
      ...command('help'),
      (y) => y.positional('name', { type: 'string' }).option('json', { type: 'boolean', default: false }),
      async (argv) => {
        const { printHelp } = await import('./tools.js');
        setStatus(printHelp(argv.name as string | undefined, Boolean(argv.json)));
      },
    )
    .command(
      ...command('bisect'),
      (y) =>
        y
          .positional('scene', { type: 'string', demandOption: true })
          .option('good', { type: 'string', demandOption: true, describe: 'a point of history at which the replay passes: a position in its versions (0 = the first), a version digest (or its first 4+ characters), running, disk, or a generation published over the protocol ("KERNEL gN", or pI: its position in history\'s generations)' })
          .option('bad', { type: 'string', demandOption: true, describe: 'a later point at which it fails (named as --good is)' })
          .option('test', { type: 'string', demandOption: true, describe: 'the .replay file whose failure to find' })
          .option('connect', { type: 'string', default: '127.0.0.1:7788', describe: 'HOST:PORT of the running session (entelechy serve --listen, or the Player) whose history to search' })
          .option('path', { type: 'string', describe: 'the document whose versions to search (default: the scene)' })
          .option('deadline', { type: 'number', describe: 'milliseconds the bisect may take; past them it stops' })
          .option('json', { type: 'boolean', default: false, describe: 'print the answer as the protocol gives it' }),
      async (argv) => {
        const { bisectCommand } = await import('./bisect.js');
        setStatus(await bisectCommand(String(argv.scene), { good: String(argv.good), bad: String(argv.bad), test: String(argv.test), connect: String(argv.connect), path: argv.path as string | undefined, deadline: argv.deadline as number | undefined, json: Boolean(argv.json) }));
      },
    )
    .command(
      ...command('test'),
      (y) =>
        y
          .positional('paths', { type: 'string', array: true, default: ['.'], describe: 'replay files or folders (default: the .replay files under this folder)' })
          .option('grant', { type: 'array', string: true, describe: 'replay with only these capabilities granted (default: all)' })
          .option('deny', { type: 'array', string: true, describe: 'replay with these capabilities withheld' })
          .option('timeout', { type: 'number', default: 60000, describe: 'milliseconds a request may take before its replay stops there and fails (0: no limit); a request\'s own `deadline` still applies' }),
      async (argv) => {
        const { sessionGrants } = await import('./tools.js');
        const { replayFiles } = await import('./test-replays.js');
        const paths = argv.paths as string[] | undefined;
        const grants = sessionGrants(argv.grant as string[] | undefined, argv.deny as string[] | undefined);
        const timeout = argv.timeout as number;
        if (!Number.isFinite(timeout) || timeout < 0) throw new UserError(`--timeout takes milliseconds, a number of at least 0 (0: no limit); got ${argv.timeout}`);
        setStatus(await replayFiles(paths?.length ? paths : ['.'], grants, timeout));
      },
    )
    // An option given twice came as an array where one value was expected (a path, a number):
    // an internal error, or a message quoting only the first. Options taking several keep them.
    .check((argv, options) => {
      // Every command's --workers: threads are real; 1000 of them was taken silently (and Node warned of a leak).
      const w = argv.workers as unknown;
      if (w !== undefined && !Array.isArray(w) && !(typeof w === 'number' && Number.isInteger(w) && w >= 1 && w <= MAX_WORKERS))
        throw new UserError(`--workers takes a whole number of threads from 1 to ${MAX_WORKERS}; got ${given('--workers', w)}`);
      for (const key of Object.keys(options.key)) {
        const value = argv[key];
        if (Array.isArray(value) && key.length > 1 && !options.array.includes(key))
          throw new UserError(`--${key} is given ${value.length} times (${value.join(', ')}); give it once`);
      }
      return true;
    }, true)
    .demandCommand(1, 'name a command: render, check, serve, mcp, farm, help, test, bisect or bench (entelechy --help lists them)')
    .strict()
    .recommendCommands()
    .help()
    .alias('version', 'v')
    .fail((msg, err) => {
      if (err) throw err;
      const command = args.find((a) => !a.startsWith('-'));
      if (/^Not enough non-option arguments/.test(msg) && command && SCENE_COMMANDS.includes(command)) throw new UserError(`name a scene: entelechy ${command} <scene.esn> (entelechy ${command} --help lists its options)`);
      const negative = args.find((a) => /^-\d/.test(a));
      if (/^Unknown argument/.test(msg) && negative) throw new UserError(`${msg}: \`${negative}\` reads as an option; write a value that starts with \`-\` as --name=${negative}`);
      throw new UserError(msg);
    });
}

export async function run(args: string[]): Promise<void> {
  // A reader of stdout that goes away (`entelechy help | head -1`) is no error of ours: Node
  // reports it as an unhandled 'error' event with a stack trace. A render stops for it (cancel.ts).
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
  try {
    process.exitCode = await main(args);
  } catch (e) {
    // With --json, stdout says every error too, as one line: {"error": {"message": ...}}.
    if (args.includes('--json') && !wasPrinted(e)) {
      const message = isUserError(e) ? e.message : `internal error: ${(e as Error)?.message ?? e}`;
      process.stdout.write(JSON.stringify({ error: { message, ...(isUserError(e) ? {} : { internal: true }) } }) + '\n');
    }
    if (isUserError(e)) {
      process.stderr.write(`entelechy: ${e.message}\n`);
    } else {
      const err = e as Error;
      process.stderr.write(`entelechy: internal error: ${err?.message ?? err}\n(this is a bug in entelechy, not in your scene; set ENTELECHY_DEBUG=1 for details)\n`);
      if (process.env.ENTELECHY_DEBUG) process.stderr.write(`${err?.stack}\n`);
    }
    const { failureStatus } = await import('../main/cancel.js');
    process.exitCode = failureStatus();
  }
}

export { hideBin };
