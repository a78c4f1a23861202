import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
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

interface Asset { type: string; raw: Buffer; gzip: Buffer; etag: string }

const require = createRequire(import.meta.url);

/** Libraries a page imports itself (never the first load), served from the installed, pinned package as `vendor/<name>`. */
export const VENDOR: Readonly<Record<string, () => string>> = {
  'vendor/uPlot.esm.js': () => require.resolve('uplot/dist/uPlot.esm.js'),
  'vendor/uPlot.min.css': () => require.resolve('uplot/dist/uPlot.min.css'),
  // The package's ES module (its `import` export; `require` would resolve to the CommonJS file).
  'vendor/qr.js': () => fileURLToPath(import.meta.resolve('@paulmillr/qr')),
};

function asset(file: string, type: string): Asset {
  const raw = fs.readFileSync(file);
  const etag = createHash('sha256').update(raw).digest('base64url').slice(0, 22);
  return { type, raw, gzip: gzipSync(raw, { level: 9 }), etag };
}

/** Read once at start: the files ship with the package and change only with it. */
function loadAssets(dir: string): Map<string, Asset> {
  if (!fs.existsSync(dir)) {
    throw new Error(`the console's files are missing: ${dir} does not exist (ship console/ with the package, or set CONSOLE=false)`);
  }
  const assets = new Map<string, Asset>();
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const type = TYPES[path.extname(name)];
    const file = path.join(dir, name);
    if (type === undefined || !fs.statSync(file).isFile()) continue;
    assets.set(name.split(path.sep).join('/'), asset(file, type));
  }
  for (const [name, resolve] of Object.entries(VENDOR)) {
    let file: string;
    try {
      file = resolve();
    } catch {
      throw new Error(`the console's library for ${name} is missing: install the package's dependencies (npm ci), or set CONSOLE=false`);
    }
    assets.set(name, asset(file, TYPES[path.extname(file)] ?? 'application/octet-stream'));
  }
  return assets;
}

/** Whether Accept-Encoding takes gzip: named (or `*`) with a q above 0, as RFC 9110 12.5.3 reads it. */
export function acceptsGzip(header: string | undefined): boolean {
  const q = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [coding = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (coding === '') continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q.set(coding, Number.isFinite(value) ? value : 0);
  }
  return (q.get('gzip') ?? q.get('x-gzip') ?? q.get('*') ?? 0) > 0;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  const gzip = acceptsGzip(request.headers['accept-encoding']);
  // One strong tag per representation: the gzip bytes differ from the plain ones.
  const etag = `"${asset.etag}${gzip ? '-gz' : ''}"`;
  reply.header('content-security-policy', CONSOLE_CSP).header('cache-control', 'no-cache').header('vary', 'accept-encoding')
    .header('etag', etag).type(asset.type);
  const ifNoneMatch = String(request.headers['if-none-match'] ?? '');
  if (ifNoneMatch.split(',').some((t) => t.trim() === '*' || t.trim().replace(/^W\//, '') === etag)) return reply.code(304).send();
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
