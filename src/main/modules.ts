// Compiled modules: cached in memory by the digest of their IR (a scene change recompiles only
// what changed), and for `render` on disk, so that a render whose modules are all there never
// loads the compiler: importing binaryen takes about a second, most of a small render or of
// opening a session.
//
// Modules are prepared before an engine is built (prepareModules), compiled here (compileHere,
// which loads the compiler on demand) or on the compile worker; the engine only takes them.
// A module on disk is keyed by the compiler's identity (a digest of its code and of binaryen's
// version) and the IR, and is used only when it compiles and names the IR's nodes and fuel; a
// file that does not is compiled again and replaced. A folder that cannot be written is no cache.
// The folder keeps the CACHE_FILES modules used last.

import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { moduleMeta } from '../codegen/instantiate.js';
import type { IrFunction } from '../ir/ir.js';
import { literalsOf } from '../ir/literals.js';
import type { Tier } from '../codegen/plan.js';
import { makeFolders, writeFileAtomic } from './files.js';
import { mark } from './timeline.js';

export type { Tier };
type Compile = (ir: IrFunction, tier: Tier) => Uint8Array<ArrayBuffer>;
let compile: Compile | undefined;

/** Load the compiler (binaryen). Engines that compile need it; cached modules do not. */
export async function loadCompiler(): Promise<void> {
  if (!compile) {
    const { compileFunction } = await import('../codegen/compile.js');
    mark('compiler loaded');
    compile = (ir, tier) => compileFunction(ir, { tier });
  }
}

/** Whether this thread has loaded the compiler (a session's coordinator never does). */
export function compilerLoaded(): boolean {
  return compile !== undefined;
}

const memoryCache = new Map<string, WebAssembly.Module>();

/**
 * An IR's JSON text, made once per IR object (an IrFunction is never changed once built): an
 * edit digested each group's IR and named its disk file 4-5 times on the coordinator (each
 * JSON.stringify of the inline corpus scene's 205 KB of IR ~2 ms).
 */
const irTexts = new WeakMap<IrFunction, string>();
function irText(ir: IrFunction): string {
  let text = irTexts.get(ir);
  if (text === undefined) {
    text = JSON.stringify(ir);
    irTexts.set(ir, text);
  }
  return text;
}

/**
 * An IR as text in two parts: its form with the literals as data (src/ir/literals.ts), and the
 * literals' values. One JSON text serves the digests of the function (form and values) and of its
 * form (the form alone: the form is its own form), under which a form's fast module is kept.
 */
function irParts(ir: IrFunction): [form: string, values: string] {
  const { ir: form, values } = literalsOf(ir);
  return [irText(form), values.length ? `|${values.map((v) => (Object.is(v, -0) ? '-0' : String(v))).join(',')}` : ''];
}

const digests = new WeakMap<IrFunction, string>();
export function irDigest(ir: IrFunction): string {
  let digest = digests.get(ir);
  if (digest === undefined) {
    const [form, values] = irParts(ir);
    digest = createHash('sha256').update(form).update(values).digest('hex').slice(0, 16);
    digests.set(ir, digest);
  }
  return digest;
}

/** The key of a function's module of a tier: the IR's digest, and `~fast` for the fast tier. Workers cache instances by it. */
function moduleKey(ir: IrFunction, tier: Tier): string {
  return tier === 'optimised' ? irDigest(ir) : `${irDigest(ir)}~fast`;
}

/**
 * The keys a fast module of the function may be found under: its own, then its form's (the
 * function with its literals as data: src/ir/literals.ts), which every function differing from it
 * only in its literals shares. The form's module reads the literals from the argument block, which
 * writeArgs fills for every function: a literal edit runs on the form compiled after the last one.
 */
function fastKeys(ir: IrFunction): string[] {
  const form = literalsOf(ir).ir;
  return form === ir ? [moduleKey(ir, 'fast')] : [moduleKey(ir, 'fast'), moduleKey(form, 'fast')];
}

/** The keys a module of the function of `tier` (or of either, optimised first) may be found under. */
function keysOf(ir: IrFunction, tier?: Tier): { key: string; tier: Tier }[] {
  const fast = () => fastKeys(ir).map((key) => ({ key, tier: 'fast' as const }));
  if (tier === 'fast') return fast();
  return tier === 'optimised' ? [{ key: moduleKey(ir, tier), tier }] : [{ key: moduleKey(ir, 'optimised'), tier: 'optimised' }, ...fast()];
}

/**
 * The module of a function: from the memory cache (unless `cache` is false), else compiled here.
 * `prepared` says it must be in the cache: a missing one is an internal error, not a compile.
 * Without a `tier`, the best one there: optimised, else fast (compiled: optimised).
 */
export function compileModule(ir: IrFunction, options: { cache?: boolean; prepared?: boolean; tier?: Tier } = {}): { module: WebAssembly.Module; digest: string; key: string; tier: Tier; cached: boolean } {
  const digest = irDigest(ir);
  if (options.cache ?? true) {
    for (const { key, tier } of keysOf(ir, options.tier)) {
      const hit = memoryCache.get(key);
      if (hit) return { module: hit, digest, key, tier, cached: true };
    }
  }
  if (options.prepared) throw new Error(`internal: the module of ${ir.nodes.join(' + ')} was not prepared before its engine was built`);
  if (!compile) throw new Error('internal: the compiler is not loaded (await loadCompiler() before an engine compiles)');
  const tier = options.tier ?? 'optimised';
  const module = new WebAssembly.Module(compile(ir, tier));
  const key = moduleKey(ir, tier);
  memoryCache.set(key, module);
  return { module, digest, key, tier, cached: false };
}

/** Whether a module of the function is in memory: of `tier`, or (none given) of either. */
export function hasModule(ir: IrFunction, tier?: Tier): boolean {
  return keysOf(ir, tier).some(({ key }) => memoryCache.has(key));
}

/** Put a module of the function compiled elsewhere (the compile worker, the disk cache) into the memory cache. */
export function seedModule(ir: IrFunction, module: WebAssembly.Module, tier: Tier = 'optimised'): void {
  memoryCache.set(moduleKey(ir, tier), module);
}

/**
 * The folder of modules on disk: $ENTELECHY_CACHE_DIR, else entelechy/modules under
 * $XDG_CACHE_HOME or ~/.cache; none when ENTELECHY_CACHE_DIR is `off`.
 */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.ENTELECHY_CACHE_DIR === 'off') return null;
  if (env.ENTELECHY_CACHE_DIR) return env.ENTELECHY_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'entelechy', 'modules');
}

let identity: string | undefined;

/** The compiler's code and binaryen's version, digested: another compiler never reads these files. */
function compilerIdentity(): string {
  if (identity === undefined) {
    const hash = createHash('sha256');
    const codegen = join(dirname(fileURLToPath(import.meta.url)), '..', 'codegen');
    for (const name of readdirSync(codegen).filter((n) => n.endsWith('.js')).sort()) hash.update(name).update(readFileSync(join(codegen, name)));
    const binaryenMain = createRequire(import.meta.url).resolve('binaryen');
    hash.update(readFileSync(join(dirname(binaryenMain), 'package.json')));
    identity = hash.digest('hex');
  }
  return identity;
}

/** The disk cache's name of a function's modules: the compiler's identity and the IR, hashed once per IR object. */
const diskNames = new WeakMap<IrFunction, string>();
function diskFile(dir: string, ir: IrFunction, tier: Tier): string {
  let name = diskNames.get(ir);
  if (name === undefined) {
    const [form, values] = irParts(ir);
    name = createHash('sha256').update(compilerIdentity()).update(form).update(values).digest('hex').slice(0, 32);
    diskNames.set(ir, name);
  }
  return join(dir, tier === 'optimised' ? `${name}.wasm` : `${name}.fast.wasm`);
}

function readCached(file: string, ir: IrFunction): WebAssembly.Module | undefined {
  try {
    const module = new WebAssembly.Module(readFileSync(file));
    const meta = moduleMeta(module);
    if (JSON.stringify(meta.nodes) === JSON.stringify(ir.nodes) && meta.fuel === ir.fuel) {
      try {
        utimesSync(file, new Date(), new Date()); // used: among the last to be pruned
      } catch {
        // a cache only readable still serves
      }
      return module;
    }
  } catch {
    // absent, unreadable or not a module of ours: compiled again
  }
  return undefined;
}

/** A module compiled from a function, with its bytes (for the disk cache). */
export interface CompiledModule {
  module: WebAssembly.Module;
  bytes: Uint8Array<ArrayBuffer>;
}

/** Compiles functions to modules of a tier: here on the calling thread (compileHere) or on a compile worker. */
export type ModuleCompiler = (irs: IrFunction[], tier: Tier) => Promise<CompiledModule[]>;

/** Compile on the calling thread, loading the compiler first. */
export const compileHere: ModuleCompiler = async (irs, tier) => {
  await loadCompiler();
  return irs.map((ir) => {
    const bytes = compile!(ir, tier);
    return { module: new WebAssembly.Module(bytes), bytes };
  });
};

/** The forms' keys of the functions whose fast module was compiled or read (prepareModules). */
const formsSeen = new Set<string>();

/**
 * What prepareModules compiles for a function at `tier`: at the fast tier, its form (its literals
 * as data: src/ir/literals.ts) when a function of that form came before, as when literals are
 * edited in a row faster than the optimiser makes the form (it starts after the edit's first
 * frame): the first such edit compiles the form, the next ones find it. Else the function itself:
 * a shape edit's own module compiled 1-3 ms faster than its form's (the inline corpus scene's).
 */
function compiledFor(ir: IrFunction, tier: Tier): IrFunction {
  if (tier !== 'fast') return ir;
  const form = literalsOf(ir).ir;
  const key = moduleKey(form, 'fast');
  if (form !== ir && formsSeen.has(key)) return form;
  formsSeen.add(key);
  return ir;
}

/**
 * Every function's module in the memory cache: already there, read from the disk cache, or
 * compiled (by `compiler`) and written to it. A module of the optimised tier serves for the
 * fast tier too (it is there, and runs faster); the fast tier may compile the function's form
 * (compiledFor). Returns how many were compiled and read.
 */
export async function prepareModules(irs: IrFunction[], compiler: ModuleCompiler = compileHere, dir = cacheDir(), tier: Tier = 'optimised'): Promise<{ compiled: number; read: number }> {
  const missing = new Map<string, IrFunction>();
  let read = 0;
  const tiers: Tier[] = tier === 'fast' ? ['optimised', 'fast'] : ['optimised'];
  for (const ir of irs) {
    if (hasModule(ir, tier === 'fast' ? undefined : tier)) continue;
    const target = compiledFor(ir, tier);
    const key = moduleKey(target, tier);
    if (missing.has(key)) continue;
    const compiledOf = (t: Tier) => (t === 'fast' ? target : ir);
    const found = dir ? tiers.map((t) => ({ t, module: readCached(diskFile(dir, compiledOf(t), t), ir) })).find((c) => c.module) : undefined;
    if (found) {
      seedModule(compiledOf(found.t), found.module!, found.t);
      read++;
    } else {
      missing.set(key, target);
    }
  }
  if (!missing.size) return { compiled: 0, read };
  const compiled = await compiler([...missing.values()], tier);
  [...missing.values()].forEach((ir, i) => {
    seedModule(ir, compiled[i].module, tier);
    if (dir) writeCached(diskFile(dir, ir, tier), compiled[i].bytes);
  });
  if (dir) tryPrune(dir);
  return { compiled: missing.size, read };
}

function writeCached(file: string, bytes: Uint8Array): void {
  try {
    makeFolders(dirname(file));
    writeFileAtomic(file, bytes);
  } catch {
    // a cache that cannot be written is no cache
  }
}

function tryPrune(dir: string): void {
  try {
    prune(dir);
  } catch {
    // nor one that cannot be listed
  }
}

/** Files the disk cache keeps; past that, the least recently used go, down to PRUNE_TO. */
export const CACHE_FILES = 2000;
const PRUNE_TO = 1500;

/**
 * Keep the cache folder to CACHE_FILES modules: the ones read or written longest ago go (a read
 * touches its file's time). Every compiled scene adds files; nothing else would ever remove them.
 */
export function prune(dir: string, keep = CACHE_FILES, to = PRUNE_TO): void {
  const names = readdirSync(dir).filter((n) => n.endsWith('.wasm'));
  if (names.length <= keep) return;
  const aged = names.map((n) => ({ n, t: statSync(join(dir, n)).mtimeMs })).sort((a, b) => a.t - b.t);
  for (const { n } of aged.slice(0, names.length - to)) rmSync(join(dir, n), { force: true });
}
