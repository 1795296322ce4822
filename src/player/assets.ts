// The files the Player serves over plain HTTP: its page, and the web bridge (bridges/web) as an
// example client. They are plain files read from the package at each request (no bundler), so a
// page edited on disk is served as it is now.

import { existsSync, readFileSync } from 'node:fs';
import type http from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpHandler } from '../protocol/door.js';

/** The package's root: this module runs as dist/src/player/assets.js. */
function packageRoot(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  for (const up of ['../../..', '../..']) {
    const root = normalize(join(here, up));
    if (existsSync(join(root, 'src', 'player', 'page', 'index.html'))) return root;
  }
  throw new Error(`the Player's page is missing (looked for src/player/page/index.html above ${here})`);
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
};

/**
 * The pages may not be shown inside another site's frame: a page of any origin could frame the
 * Player and lead the person's clicks onto its buttons (record, publish, the sliders).
 */
const NOT_FRAMED = { 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'", 'x-content-type-options': 'nosniff' };

/** URL prefixes and the folders they serve. */
const ROUTES: [string, string][] = [
  ['/bridges/web/', 'bridges/web'],
  ['/', 'src/player/page'],
];

export function assetHandler(): HttpHandler {
  const root = packageRoot();
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === '/bridges/web') return redirect(res, '/bridges/web/');
    for (const [prefix, folder] of ROUTES) {
      if (!path.startsWith(prefix)) continue;
      const rest = path.slice(prefix.length) || 'index.html';
      const base = join(root, folder);
      const file = normalize(join(base, rest));
      // Only files inside the folder, never `..` out of it.
      if (!file.startsWith(base + sep) || !TYPES[extname(file)] || !existsSync(file)) return false;
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)]!, 'content-length': body.length, 'cache-control': 'no-store', ...NOT_FRAMED });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    }
    return false;
  };
}

function redirect(res: http.ServerResponse, to: string): true {
  res.writeHead(301, { location: to });
  res.end();
  return true;
}
