// The stdin door: request lines on standard input, answers on standard output.

import { fstatSync } from 'node:fs';
import { Door, DoorLimits, LineHandler, LineSplitter, fullLimits } from './door.js';

// ---------------------------------------------------------------------------------------------
// stdin / stdout
// ---------------------------------------------------------------------------------------------

/**
 * Whether standard input is a regular file (`entelechy serve scene.esn < requests.jsonl`): its end
 * is the end of a script, not a client going away.
 */
export function stdinIsFile(): boolean {
  try {
    return fstatSync(0).isFile();
  } catch {
    return false;
  }
}

/**
 * Serves request lines from `input` (default process.stdin), answers to `output` (default
 * process.stdout). Resolves when the input ends (after the queued requests are answered), when a
 * `quit` closes the connection, or when the output fails (EPIPE). It does not end `output`.
 *
 * `endCancels`: the end of the input is the client going away (a pipe or terminal closed, as a
 * TCP FIN is): the evaluations its requests run or queue are cancelled (cancel.ts), and the
 * requests still queued are answered.
 */
export function serveStdio(
  handler: LineHandler,
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
  limits?: DoorLimits,
  options: { endCancels?: boolean } = {},
): Promise<void> {
  const lim = fullLimits(limits);
  return new Promise<void>((resolve) => {
    const out = output as NodeJS.WritableStream & { writableLength?: number; writableNeedDrain?: boolean };
    let done = false;
    let outputFailed = false;
    const waitDrain = (): Promise<void> =>
      new Promise<void>((r) => {
        if (outputFailed || !out.writableNeedDrain) return r();
        const finish = () => {
          out.off('drain', finish);
          out.off('error', finish);
          out.off('close', finish);
          r();
        };
        out.on('drain', finish);
        out.on('error', finish);
        out.on('close', finish);
      });
    const detach = () => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onInputError);
      input.off('close', onEnd);
      out.off('error', onOutputError);
      // Keep error listeners so a late EPIPE or read error cannot crash the process.
      input.on('error', () => {});
      out.on('error', () => {});
      try {
        input.pause();
      } catch {
        // nothing to pause
      }
    };
    const door = new Door(
      'stdin',
      handler,
      {
        write: (line) => {
          out.write(line + '\n');
        },
        backlog: () => out.writableLength ?? 0,
        drained: waitDrain,
        pause: () => input.pause(),
        resume: () => input.resume(),
        end: () => {},
        destroy: () => {},
      },
      lim,
      (_door, why) => {
        if (done) return;
        done = true;
        detach();
        if (why === 'ended') void waitDrain().then(() => resolve());
        else resolve();
      },
    );
    const splitter = new LineSplitter(
      lim.maxLineBytes,
      (line) => door.push(line),
      (head) => door.pushOversize(head),
    );
    function onData(chunk: Buffer | string) {
      if (!door.closed) splitter.push(chunk);
    }
    function onEnd() {
      if (door.closed) return;
      splitter.end();
      if (options.endCancels) door.peerClosed();
      door.inputEnd();
    }
    function onInputError() {
      onEnd();
    }
    function onOutputError() {
      outputFailed = true;
      door.gone('output failed');
    }
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('close', onEnd);
    input.on('error', onInputError);
    out.on('error', onOutputError);
    input.resume();
  });
}
