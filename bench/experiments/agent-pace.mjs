// Experiment (issue 17), plain JavaScript run against any build: node bench/experiments/agent-pace.mjs BUILD_ROOT CORPUS_SCENE [GAP_MS]
// An agent's pace: edits 1 s apart (no frames between them but the one each edit asks for); median compile_ms and edit to frame.
const [root, name, gap = '1000'] = process.argv.slice(2);
const { editedKernel } = await import(`${root}/dist/bench/edit-frame.js`);
const { corpus } = await import(`${root}/dist/bench/corpus-scenes.js`);
const { loadCorpusScene } = await import(`${root}/dist/bench/compile.js`);
const { Session } = await import(`${root}/dist/src/main/session.js`);
const { dispatch } = await import(`${root}/dist/src/protocol/dispatcher.js`);
const { mkdtempSync, cpSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const { join, dirname, basename } = await import('node:path');
const c = corpus().find((x) => x.name === name);
const source = loadCorpusScene(c);
const dir = mkdtempSync(join(tmpdir(), 'ap-'));
cpSync(dirname(c.path), dir, { recursive: true });
const s = await Session.open(join(dir, basename(c.path)), { workers: 2, cacheDir: null });
const ask = async (req) => { const a = JSON.parse(await dispatch(s, JSON.stringify(req))); if (!a.ok) throw new Error(JSON.stringify(a.error)); return a.ok; };
await ask({ op: 'evaluate', time: 0.5 });
const compiles = [], totals = [];
for (let i = 0; i < 7; i++) {
  await new Promise((r) => setTimeout(r, Number(gap)));
  const e = editedKernel(source, i);
  const t0 = performance.now();
  const composed = await ask({ op: 'compose', edits: [{ kernel: e.id, text: e.text }] });
  await ask({ op: 'evaluate', time: i + 1 });
  totals.push(performance.now() - t0);
  compiles.push(composed.events.find((ev) => ev.kind === 'published' && typeof ev.compile_ms === 'number')?.compile_ms);
}
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(JSON.stringify({ compile: med(compiles), total: Math.round(med(totals)), warmth: await s.compiler?.warmth?.() ?? null }));
await s.close();
