import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

/** console/ at the package root, from src/http (tests) and dist/http (built) alike. */
const CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console');

/**
 * Only this origin's files and API: no inline script or style, nothing from elsewhere. Replaces helmet's
 * `default-src 'none'` on these routes only; no upgrade-insecure-requests, which blanks a page served over plain http.
 */
export const CONSOLE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self'",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset { type: string; raw: Buffer; gzip: Buffer }

/** Read once at start: the files ship with the package and change only with it. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const type = TYPES[path.extname(name)];
    const file = path.join(dir, name);
    if (type === undefined || !fs.statSync(file).isFile()) continue;
    const raw = fs.readFileSync(file);
    assets.set(name.split(path.sep).join('/'), { type, raw, gzip: gzipSync(raw, { level: 9 }) });
  }
  return assets;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  reply.header('content-security-policy', CONSOLE_CSP).header('cache-control', 'no-cache').header('vary', 'accept-encoding').type(asset.type);
  if (gzip) reply.header('content-encoding', 'gzip');
  return reply.send(gzip ? asset.gzip : asset.raw);
}

/**
 * The compliance officers' console (console/): static files, no server-side session. The page signs in with a token
 * the user pastes and calls the public API with it, so it can do nothing the token could not.
 */
export const consoleRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, { dir = CONSOLE_DIR }) => {
  const assets = loadAssets(dir);
  const index = assets.get('index.html');
  if (index === undefined) throw new Error(`the console's files are missing: no index.html in ${dir}`);
  const hide = { hide: true };
  app.get('/console', { schema: hide }, async (request, reply) => send(request, reply, index));
  app.get('/console/*', { schema: hide }, async (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    const asset = name === '' ? index : assets.get(name);
    if (asset === undefined) return reply.callNotFound();
    return send(request, reply, asset);
  });
};
