// An example host program: serves the session's frames over HTTP on demand, and reacts to
// changes of the running world. Run it against `entelechy serve SCENE --listen 127.0.0.1:7788`:
//
//   node dist/bridges/host/example.js ws://127.0.0.1:7788 8080
//   curl -o frame.png 'http://127.0.0.1:8080/frame?time=0.5'
//
// Edit the scene's documents and save: `published` or `rejected` is printed, and the next frame
// shows the new version (a rejected edit leaves the previous one running).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, EntelechyError } from './index.js';

const [address = '127.0.0.1:7788', httpPort = '8080'] = process.argv.slice(2);
const client = await connect(address, { timeout: 10000 });

client.on('published', (event) => console.log(`published: ${JSON.stringify(event.paths ?? event.kernel)}`));
client.on('rejected', (event) => console.log(`rejected, the previous version keeps running: ${event.message}`));
client.onClose((error) => {
  console.log(`the session ended${error ? `: ${error.message}` : ''}`);
  process.exit(error ? 1 : 0);
});
client.watch(250); // poll sync: edits saved on disk are prepared, then published or rejected

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://host');
  if (url.pathname !== '/frame') {
    res.writeHead(404).end('try /frame?time=0.5\n');
    return;
  }
  try {
    const time = url.searchParams.has('time') ? Number(url.searchParams.get('time')) : undefined;
    const frame = await client.request('evaluate', time === undefined ? {} : { time });
    const output = url.searchParams.get('output') ?? frame.outputs[0]?.name;
    const png = await client.readPng(output ? { output } : {});
    res.writeHead(200, { 'content-type': 'image/png', 'x-frame': String(frame.frame) }).end(png);
  } catch (err) {
    // The engine's message says what to change (a time that is not a number, an unknown output...).
    const status = err instanceof EntelechyError ? 400 : 502;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`${(err as Error).message}\n`);
  }
});
server.listen(Number(httpPort), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`frames on http://127.0.0.1:${port}/frame?time=0.5`);
});
