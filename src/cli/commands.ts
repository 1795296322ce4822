// The CLI's commands: the usage and summary yargs registers each with (cli.ts) and `help NAME`
// describes (with an example), so `entelechy help serve` and `{"op": "help", "name": "serve"}` say
// what `entelechy serve --help` says. Each command's options stay beside its handler in cli.ts;
// `entelechy help NAME` prints them too, from yargs.

export interface CommandSpec {
  name: string;
  usage: string;
  summary: string;
  example: string;
  doc: string;
}

export const COMMANDS: readonly CommandSpec[] = [
  { name: 'serve', usage: 'serve <scene>', summary: 'run a session: protocol lines on stdin (answers on stdout), and with --listen over TCP and WebSocket',
    example: "printf '%s\\n' '{\"id\":1,\"op\":\"status\"}' '{\"op\":\"quit\"}' | entelechy serve examples/rings/scene.esn   (or --listen 127.0.0.1:7788; a pipe's requests end with quit: each one before it is answered whole)", doc: 'docs/protocol.md#the-agent-protocol' },
  { name: 'mcp', usage: 'mcp <scene>', summary: 'run a session as a Model Context Protocol server on stdio: the operations as tools (docs/mcp.md)',
    example: 'entelechy mcp examples/rings/scene.esn', doc: 'docs/mcp.md' },
  { name: 'test', usage: 'test [paths..]', summary: 'replay .replay files (requests and expected answers) against a fresh session each, on a copy of the scene\'s folder; a failed expectation is named by file:line:column (help replay: the line forms)',
    example: 'entelechy test examples/rings/rings.replay   (or a folder of .replay files)', doc: 'docs/protocol.md#replay-files' },
  { name: 'bisect', usage: 'bisect <scene>', summary: 'the first point of the scene\'s history a running session has seen (`history`: its versions and the generations published over the protocol), at which a replay starts failing: --good REV --bad REV --test FILE.replay, asked of the session at --connect (default 127.0.0.1:7788); answers the version, the diff from the last good one and the failed step',
    example: 'entelechy bisect examples/rings/scene.esn --good 0 --bad running --test rings.replay --connect 127.0.0.1:7788', doc: 'docs/agents.md#finding-the-change-that-broke-a-replay' },
  { name: 'render', usage: 'render <scene>', summary: 'evaluate a scene and write its output as a PNG, numbered PNGs or a video (.mp4, .webm, .gif)',
    example: 'entelechy render examples/rings/scene.esn -o rings.png --time 0.5 --param warmth=0.8', doc: 'docs/rendering.md' },
  { name: 'check', usage: 'check <scene>', summary: 'check a scene and print its diagnostics (file:line:column); exit status 1 on errors',
    example: 'entelechy check examples/rings/scene.esn --json', doc: 'docs/language.md' },
  { name: 'help', usage: 'help [name]', summary: 'without a name, a quick start; with one, describe an operation, field, answer member, event, concept, command, type, builtin, form, grant, door or replay line (the same as the protocol\'s help)',
    example: 'entelechy help evaluate   (--json: as the protocol answers it; --all: every name)', doc: 'docs/protocol.md#the-agent-protocol' },
  { name: 'farm', usage: 'farm <role>', summary: 'farm worker --redis URL: render frames for `render --farm` from a queue in Redis (docs/distributed.md)',
    example: 'entelechy farm worker --redis redis://127.0.0.1:6379', doc: 'docs/distributed.md' },
  { name: 'bench', usage: 'bench', summary: 'measure the benchmark pipelines P1-P4 (bench/scenes/p1.esn to p4.esn) on the engine, in plain JavaScript, in C and in Halide, side by side',
    example: 'entelechy bench --pipelines P1 --size 1024', doc: 'bench/RESULTS.md' },
];

/** The command's usage and summary, as yargs takes them. */
export function command(name: string): [string, string] {
  const c = COMMANDS.find((x) => x.name === name);
  if (!c) throw new Error(`no command ${name} in COMMANDS`);
  return [c.usage, c.summary];
}
