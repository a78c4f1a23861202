import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** What a browser client must read from an answer: the scenario's version, when to retry, where it was created, replays, the id to quote. */
const CORS_EXPOSED_HEADERS = ['ETag', 'Retry-After', 'Location', 'Idempotent-Replayed', 'x-request-id', 'Attestation', 'Attestation-EIP712'];

/** What a browser client sends beyond the CORS-safelisted headers. */
const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key', 'x-request-id'];

/**
 * CORS for the listed origins only (CORS_ORIGINS; not registered when the list is empty, so a preflight is then a
 * 404 as before). A listed origin's preflight is answered 204 before authentication (a browser sends no Authorization
 * header with it); an unlisted origin gets no Access-Control-* header, and its preflight the 404 of an unknown route.
 * Tokens travel in the Authorization header, never cookies: no credentials mode. Headers are set in onRequest, so
 * 401, 429 and 503 answers carry them too and a page can read their Retry-After.
 */
async function registerCors(app: FastifyInstance, { origins }: { origins: readonly string[] }): Promise<void> {
  const listed = new Set(origins);
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin !== undefined && listed.has(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    // An OPTIONS without Access-Control-Request-Method is answered as a preflight, not with a text/plain 400.
    strictPreflight: false,
  });
  // helmet sends Cross-Origin-Resource-Policy: same-origin, which would keep a listed origin's no-cors loads (and
  // pages with Cross-Origin-Embedder-Policy) from the answer; for a listed origin the answer is meant to be shared.
  app.addHook('onSend', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && listed.has(origin)) reply.header('cross-origin-resource-policy', 'cross-origin');
  });
}

export const corsPlugin = fp(registerCors, { name: 'cors', fastify: '5.x' });
