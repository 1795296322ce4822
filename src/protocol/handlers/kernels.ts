// Kernels: prepare (validate only), publish (change the running world, not a file), retire.

import type { RequestFields } from '../operations.js';
import type { Session } from '../../main/session.js';
import { parseDocument } from '../../ir/syntax/index.js';
import { diagnosticsError, ProtocolError } from '../error.js';
import { dryRun, evaluateOptions, refuseEvaluateAlone } from './speculate.js';


/** The kernel id a source declares (exactly one kernel). */
function kernelId(source: string): string {
  const { doc, diagnostics } = parseDocument('(protocol)', source);
  if (diagnostics.length) throw diagnosticsError('the source does not parse', diagnostics);
  const ks = doc.statements.filter((st) => st.kind === 'kernel');
  if (ks.length !== 1) throw new ProtocolError(`\`source\` must declare exactly one kernel (with any fn, struct or type it needs); it declares ${ks.length}`, { field: 'source' });
  return ks[0].name.value;
}

/** Check a protocol kernel within the scene; the scene as it would run with it. */
function prepared(s: Session, id: string, source: string) {
  const published = new Map(s.published);
  published.set(id, source);
  const scene = s.check(s.texts, published);
  if (scene.diagnostics.length) throw diagnosticsError(`${id} does not check`, scene.diagnostics);
  return scene;
}

function describe(s: Session, id: string, scene = s.scene) {
  const k = scene.kernels.get(id)!;
  return {
    id,
    ports: k.ports.map((p) => ({ name: p.name, kind: p.kind, type: p.dims ? `field${p.dims}<${p.type.name}>` : p.type.name })),
    grants: k.grants,
  };
}

export async function prepare(s: Session, f: RequestFields<'prepare'>) {
  const source = String(f.source);
  const id = kernelId(source);
  const evaluate = evaluateOptions(f.evaluate);
  // With `evaluate`: the kernel run as publishing it would run it, on a fork (speculate.ts).
  if (evaluate) return s.change(async () => ({ ...describe(s, id, prepared(s, id, source)), ...(await dryRun(s, publishing(s, id, source), evaluate)) }));
  const scene = prepared(s, id, source);
  // Compile it too: a kernel no node runs yet still has to compile.
  await s.prepare([scene.kernels.get(id)!.ir]);
  return describe(s, id, scene);
}

/** Refuse unless the registry holds generation `expect` of `id` (`what`: replace or retire). */
function checkExpect(s: Session, id: string, expect: unknown, what: 'replace' | 'retire'): void {
  if (expect === undefined) return;
  const kernel = s.registry.get(id);
  const held = kernel?.generation ?? 0;
  // The current source and generation travel with the refusal: the next request can be the right one.
  if (held !== expect)
    throw new ProtocolError(`cannot ${what} ${id}: \`expect\` is ${expect}, but the registry holds g${held}${kernel ? ` (from ${kernel.origin}; its source is this error's \`source\`)` : ''}: send it again with "expect": ${held}`, { kernel: id, generation: held, expected: expect, ...(kernel ? { origin: kernel.origin, source: kernel.source } : {}) });
}

/** The change publishing a kernel makes. */
function publishing(s: Session, id: string, source: string) {
  return { reason: 'publish' as const, texts: s.texts, published: new Map(s.published).set(id, source), refusal: `${id} does not check` };
}

export async function publish(s: Session, f: RequestFields<'publish'>) {
  const evaluate = evaluateOptions(f.evaluate);
  refuseEvaluateAlone(f.dry_run, evaluate, 'publish');
  return s.change(async () => {
    const source = String(f.source);
    const id = kernelId(source);
    checkExpect(s, id, f.expect, 'replace');
    if (f.dry_run) {
      const run = await dryRun(s, publishing(s, id, source), evaluate);
      // The generation it would be: the next one when the source is new, else the one held.
      const told = run.events.find((e) => e.kind === 'published' && e.kernel === id);
      return { id, generation: (told?.kind === 'published' && told.generation) || (s.registry.get(id)?.generation ?? 1), dry_run: true, ...run };
    }
    const events = await s.commit(publishing(s, id, source));
    return { id, generation: s.registry.get(id)?.generation ?? 1, events };
  });
}

export async function retire(s: Session, f: RequestFields<'retire'>) {
  return s.change(async () => {
    const id = String(f.kernel);
    if (!s.published.has(id)) {
      const origin = s.registry.get(id)?.origin;
      throw new ProtocolError(origin ? `${id} comes from ${origin}, not the protocol: remove it there with compose ({"kernel": "${id}", "text": null})` : `no kernel \`${id}\` was published over the protocol`, { kernel: id });
    }
    checkExpect(s, id, f.expect, 'retire');
    const published = new Map(s.published);
    published.delete(id);
    const events = await s.commit({ reason: 'retire', texts: s.texts, published, refusal: `retiring ${id} would leave the scene broken; the kernel stays` });
    return { id, generation: s.registry.get(id)?.generation ?? 0, events };
  });
}
