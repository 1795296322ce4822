// `entelechy bisect SCENE --good REV --bad REV --test FILE.replay`: the first point of the scene's
// history at which a replay starts failing. The points are those a running session has seen
// (`history`: versions loaded, composed, saved and synced, and generations published over the
// protocol), so the command asks that session, over its TCP door
// (`entelechy serve SCENE --listen`, or the Player), with the `bisect` operation; the replay file
// is read here and sent as text. Ending the command (Ctrl-C) closes the connection, which stops
// the bisect there.

import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { basename } from 'node:path';
import { versionOf } from '../main/documents.js';
import { UserError } from '../main/user-error.js';
import { parseReplay } from '../protocol/replay.js';

export interface BisectOptions {
  good: string;
  bad: string;
  test: string;
  connect: string;
  path?: string;
  deadline?: number;
  json: boolean;
}

/** Send request lines over one TCP connection and take their answers, in order. */
async function exchange(address: string, requests: object[]): Promise<Record<string, any>[]> {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(address.trim());
  if (!m) throw new UserError(`--connect takes HOST:PORT (what \`entelechy serve --listen\` printed), e.g. 127.0.0.1:7788; got \`${address}\``);
  const socket = net.connect(Number(m[2]), m[1]!.replace(/^\[|\]$/g, ''));
  const answers: Record<string, any>[] = [];
  return new Promise((resolve, reject) => {
    let buf = '';
    let next = 0;
    const send = () => socket.write(JSON.stringify({ id: next + 1, ...requests[next] }) + '\n');
    socket.once('connect', send);
    socket.on('data', (chunk) => {
      buf += String(chunk);
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let answer: Record<string, any>;
        try {
          answer = JSON.parse(line) as Record<string, any>;
        } catch {
          continue; // not a protocol line
        }
        if (answer.id !== next + 1) continue; // an event line, or an answer not ours
        answers.push(answer);
        // A refusal ends the exchange: the requests after it depend on it.
        if (answer.error || ++next === requests.length) {
          socket.end();
          resolve(answers);
          return;
        }
        send();
      }
    });
    socket.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new UserError(
          e.code === 'ECONNREFUSED'
            ? `no session listens on ${address}: bisect searches the versions a running session has seen. Start one (\`entelechy serve SCENE --listen ${address}\`, or the Player), make the changes there, then bisect; or name its address with --connect HOST:PORT`
            : `cannot reach the session at ${address}: ${e.message}`,
        ),
      ),
    );
    socket.once('close', () => {
      if (next < requests.length && answers.length <= next) reject(new UserError(`the session at ${address} closed the connection before it answered`));
    });
  });
}

/** Run the command; its exit status. */
export async function bisectCommand(scene: string, o: BisectOptions): Promise<number> {
  if (o.deadline !== undefined && !(o.deadline > 0)) throw new UserError(`--deadline takes the milliseconds the bisect may take, a number above 0; got \`${o.deadline}\``);
  if (!existsSync(o.test)) throw new UserError(`no such replay file: ${o.test} (--test names the .replay file whose failure to find)`);
  const replay = readFileSync(o.test, 'utf8');
  parseReplay(replay, o.test); // its mistakes named by file:line:column here, before any session is asked
  const request = { op: 'bisect', good: o.good, bad: o.bad, replay, ...(o.path ? { path: o.path } : {}), ...(o.deadline !== undefined ? { deadline: o.deadline } : {}) };
  // The session must be the scene's: one of another folder's scene of the same name was searched
  // with this replay without a word. Its scene file on disk is compared with this one, first.
  const [status, history] = await exchange(o.connect, [{ op: 'status' }, { op: 'history' }]);
  if (status!.error) throw new UserError(`the session at ${o.connect} refused \`status\`: ${status!.error.message}`);
  if (status!.ok.scene !== basename(scene))
    throw new UserError(`the session at ${o.connect} runs \`${status!.ok.scene}\`, not \`${basename(scene)}\`: connect to the session of ${scene}`);
  const here = existsSync(scene) ? versionOf(readFileSync(scene, 'utf8')) : undefined;
  const there = history?.ok?.disk as string | undefined;
  if (here !== undefined && there !== undefined && here !== there)
    throw new UserError(`the session at ${o.connect} runs a \`${status!.ok.scene}\` whose file holds another text than ${scene} (version ${there} there, ${here} here): it is another folder's scene, or this file changed since the session last read it; connect to the session of ${scene} (its folder), or let it pick up the change first (sync)`);
  const [answer] = await exchange(o.connect, [request]);
  if (o.json) {
    process.stdout.write(JSON.stringify(answer) + '\n');
    return answer!.error ? 1 : 0;
  }
  if (answer!.error) throw new UserError(answer!.error.message);
  process.stdout.write(report(answer!.ok, o.test));
  return 0;
}

/** The answer for a person: where it broke, the failed step, then the diff. */
function report(ok: Record<string, any>, file: string): string {
  // A generation published over the protocol ran over a version of the document: both are named.
  const v = (r: Record<string, any>) =>
    r.kind === 'generation' ? `${r.name} (${r.origin}, ${r.at}) over position ${r.position}, ${r.version}` : `position ${r.position}, ${r.version} (${r.origin}, ${r.at})`;
  const f = ok.failure;
  const lines = [
    `first bad: ${v(ok.first_bad)}`,
    `last good: ${v(ok.last_good)}`,
    `fails at ${file}:${f.line}:${f.column}: ${f.message}`,
    `  request:  ${f.request}`,
    ...(f.expected !== undefined || f.actual !== undefined ? [`  expected: ${JSON.stringify(f.expected)}`, `  actual:   ${JSON.stringify(f.actual)}`] : []),
    `replayed ${ok.candidates} point${ok.candidates === 1 ? '' : 's'} of the history (${ok.runs.map((r: { name: string }) => r.name).join(', ')})`,
    '',
    ...(ok.diff ? [ok.diff] : []),
    ...(ok.kernels_diff ? [ok.kernels_diff] : []),
  ];
  return lines.join('\n');
}
