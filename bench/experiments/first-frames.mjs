// Experiment (issue 17), plain JavaScript run against any build: node bench/experiments/first-frames.mjs BUILD_ROOT SCENE [N]
// Frames right after a session opens: wall ms of each of the first N evaluates (a Player's first second).
const [root, scene, n = '30'] = process.argv.slice(2);
const { Session } = await import(`${root}/dist/src/main/session.js`);
const { dispatch } = await import(`${root}/dist/src/protocol/dispatcher.js`);
const { mkdtempSync, cpSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const { join, dirname, basename } = await import('node:path');
const dir = mkdtempSync(join(tmpdir(), 'ff-'));
cpSync(dirname(scene), dir, { recursive: true });
const t0 = performance.now();
const s = await Session.open(join(dir, basename(scene)), { workers: 2, cacheDir: null });
const open = performance.now() - t0;
const times = [];
for (let i = 0; i < Number(n); i++) {
  const a = performance.now();
  const ans = JSON.parse(await dispatch(s, JSON.stringify({ op: 'evaluate', time: i * 0.016 })));
  if (!ans.ok) throw new Error(JSON.stringify(ans.error));
  times.push(performance.now() - a);
}
const sum = (xs) => xs.reduce((x, y) => x + y, 0);
console.log(JSON.stringify({ open: Math.round(open), first10: Math.round(sum(times.slice(0, 10))), next10: Math.round(sum(times.slice(10, 20))), last10: Math.round(sum(times.slice(20, 30))) }));
await s.close();
