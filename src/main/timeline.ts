// ENTELECHY_TIMELINE=1: each stage of a command as it ends, on stderr, in milliseconds since the
// process started (wall, then CPU of all its threads): what a cold `render` waits for before its
// first frame (bench --cold reads these lines). Nothing is printed or measured without it.

const on = process.env.ENTELECHY_TIMELINE === '1';

/** Print that `stage` has ended. */
export function mark(stage: string): void {
  if (!on) return;
  const cpu = process.cpuUsage();
  process.stderr.write(`timeline ${stage}: ${performance.now().toFixed(1)} ms, cpu ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms\n`);
}
