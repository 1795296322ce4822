// The `entelechy-player` command line.

import { parseMemory } from '../main/budget.js';
import { optimiseBudget, optimiseBudgetOption } from '../main/optimise-budget.js';
import yargs from 'yargs';
import { serveStdio } from '../protocol/transports.js';
import { doorHandler, startInputs, startParams } from '../cli/serve.js';
import { parseInputOptions } from '../main/input-feed.js';
import { isUserError } from '../main/user-error.js';
import { parseParamOptions } from '../main/param-option.js';
import { PlayerError, startPlayer } from './start.js';
import { onStopSignals } from '../main/cancel.js';

export async function runPlayer(args: string[]): Promise<void> {
  try {
    await main(args);
  } catch (e) {
    if (isUserError(e)) process.stderr.write(`entelechy-player: ${e.message}\n`);
    else {
      const err = e as Error;
      process.stderr.write(`entelechy-player: internal error: ${err?.message ?? err}\n(this is a bug in entelechy, not in your scene; set ENTELECHY_DEBUG=1 for details)\n`);
      if (process.env.ENTELECHY_DEBUG) process.stderr.write(`${err?.stack}\n`);
    }
    process.exitCode = 1;
  }
}

async function main(args: string[]): Promise<void> {
  const argv = await yargs(args)
    .scriptName('entelechy-player')
    .usage('$0 <scene.esn> [options]\n\nA live window on a running scene: open the printed URL in a browser (docs/player.md; `entelechy help player`).')
    .command('$0 <scene>', 'run the scene and serve the Player page', (y) =>
      y.positional('scene', { type: 'string', demandOption: true, describe: 'the scene document (.esn)' }),
    )
    .option('listen', { type: 'string', default: '127.0.0.1:7788', describe: 'host:port for the page and the protocol (port 0 picks a free one)' })
    .option('serve', { type: 'boolean', default: false, describe: 'protocol lines on stdin too (answers on stdout)' })
    .option('grant', { type: 'array', string: true, describe: 'grant only these capabilities (default: all)' })
    .option('deny', { type: 'array', string: true, describe: 'withhold these capabilities' })
    .option('workers', { type: 'number', describe: 'evaluation workers (default: one per core)' })
    .option('memory', { type: 'string', describe: 'the memory budget for fields, e.g. 512M or 2G (default: an eighth of the machine\'s, at most 4G)' })
    .option('optimise-budget', optimiseBudgetOption)
    .option('param', { type: 'array', string: true, describe: 'NAME=VALUE: start a param at a value (repeatable; a vector as 1,0.5,0)' })
    .option('input', { type: 'array', string: true, describe: 'NAME=FILE: fill an input with an image (PNG, JPEG), resized to it (repeatable)' })
    .option('preview', { type: 'boolean', default: false, describe: 'hold saved edits: the page shows each beside the running world, to publish or discard (the page\'s box)' })
    .strict()
    .help()
    .fail((msg, err) => {
      if (err) throw err;
      if (/^Not enough non-option arguments/.test(msg)) throw new PlayerError('name a scene: entelechy-player <scene.esn> [--listen host:port] [--serve]');
      throw new PlayerError(msg);
    })
    .parseAsync();
  const { sessionGrants } = await import('../cli/tools.js');
  const grants = sessionGrants(argv.grant as string[] | undefined, argv.deny as string[] | undefined);
  const workers = argv.workers === undefined ? undefined : Math.max(1, argv.workers);
  const params = parseParamOptions(argv.param as string[] | undefined);
  const inputs = parseInputOptions(argv.input as string[] | undefined);
  const budget = optimiseBudget(argv.optimiseBudget);
  const memory = argv.memory === undefined ? undefined : parseMemory(String(argv.memory));
  if (memory !== undefined && typeof memory !== 'number') throw new PlayerError(memory.problem);
  const player = await startPlayer(String(argv.scene), { listen: argv.listen, grants, ...(workers ? { workers } : {}), ...(memory ? { memory } : {}), optimiseBudget: budget });
  try {
    await startParams(player.session, params, 'entelechy-player');
    await startInputs(player.session, inputs, 'entelechy-player');
    if (argv.preview) player.window.preview.setMode(true);
  } catch (e) {
    await player.close();
    throw e;
  }
  // With --serve, stdout carries the protocol's answers: the address goes to stderr.
  (argv.serve ? process.stderr : process.stdout).write(`player at ${player.url}\n`);
  if (player.session.refused) process.stderr.write(`entelechy-player: ${player.session.refused.message}\n(the Player runs; mend the scene and save it)\n`);
  const stop = () => {
    // Ending the workers can take a moment on a busy machine; the person asked to stop now.
    setTimeout(() => process.exit(0), 2000).unref();
    void player.close().then(() => process.exit(0));
  };
  onStopSignals(stop);
  if (!argv.serve) return; // the listener keeps the process alive until it is stopped
  await serveStdio(doorHandler(player.session));
  // stdin ended: keep serving the page. A quit on stdin ends the process.
  if (!process.stdin.readableEnded) await player.close().then(() => process.exit(0));
}
