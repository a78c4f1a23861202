import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimited, sendProblem } from './errors.js';
import { installLoadShedding } from './load-shedding.js';

/** The deepest JSON nesting a request body may have (credentialSubject included). */
export const MAX_JSON_DEPTH = 32;

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Where a parsed JSON value nests deeper than `limit` levels (a scalar is 0 deep, `{}` 1): the keys and indexes down
 * to the first object or array past the limit, or undefined when none is. Recursive, but never more than `limit`
 * calls deep, so a deep document cannot overflow the stack here; it allocates only once it found one (run on every body).
 */
export function tooDeepAt(value: unknown, limit: number): (string | number)[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (limit <= 0) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = tooDeepAt(value[i], limit - 1);
      if (at) return [i, ...at];
    }
    return undefined;
  }
  for (const key in value) {
    if (!hasOwn.call(value, key)) continue;
    const at = tooDeepAt((value as Record<string, unknown>)[key], limit - 1);
    if (at) return [key, ...at];
  }
  return undefined;
}

/** Whether a parsed JSON value nests deeper than `limit` levels (see tooDeepAt). */
export const deeperThan = (value: unknown, limit: number): boolean => tooDeepAt(value, limit) !== undefined;

/**
 * The rate limit's key: on a route that takes a token, the caller's identity (`identify`: a configured token's subject
 * however the header is spelled, or a JWT that verified before); everywhere else, and for a missing, malformed or
 * unknown token, the client address. So neither respelling a token nor adding an Authorization header to a route without one buys a
 * fresh budget, and unknown tokens share their address's.
 */
function rateKey(identify: (header: string | undefined) => string | undefined) {
  return (request: FastifyRequest): string => {
    const secured = request.routeOptions.config?.scope !== undefined;
    const id = secured ? identify(request.headers.authorization) : undefined;
    return id === undefined ? `ip:${request.ip}` : `id:${id}`;
  };
}

export interface ProtectionOptions {
  /** Per-token rate limit: at most `max` requests per `windowMs` (max 0 = off). */
  rateLimit: { max: number; windowMs: number };
  /** Shed load with 503 when the event loop lags more than this (0 = off). */
  maxEventLoopDelayMs: number;
  /** The caller's identity from the Authorization header (see rateKey). */
  identify: (header: string | undefined) => string | undefined;
}

/**
 * Abuse protection: security headers, a per-token rate limit (429 + Retry-After), load shedding when the event
 * loop lags (503 + Retry-After), and a JSON depth limit (400). Registered on the root: it applies to every route.
 */
async function registerProtection(app: FastifyInstance, { rateLimit: limits, maxEventLoopDelayMs, identify }: ProtectionOptions): Promise<void> {
  // The Swagger UI at /docs sets its own CSP for its static files; the API answers JSON only.
  await app.register(helmet, { contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } });

  if (limits.max > 0) {
    // One app-level onRequest hook instead of the plugin's per-route ones: those run after the routes' own onRequest
    // hooks, authentication included, so a request refused 401 (an unknown token, sprayed) was never counted.
    await app.register(rateLimit, {
      global: false,
      max: limits.max,
      timeWindow: limits.windowMs,
      keyGenerator: rateKey(identify),
      allowList: (request) => request.url.startsWith('/health/') || request.url === '/metrics',
      errorResponseBuilder: (_request, context) => rateLimited(
        `Rate limit exceeded: at most ${context.max} requests per window for this token (or, without one, this client address); retry in ${context.after}`,
        context,
      ),
    });
    // A route with a limit of its own (config.rateLimit, e.g. the OffChainZKP callback per client address) gets the
    // plugin's hook for it instead: the plugin runs one limit per request.
    const limit = app.rateLimit();
    app.addHook('onRequest', async (request, reply) => {
      if (typeof (request.routeOptions.config as { rateLimit?: unknown }).rateLimit === 'object') return;
      await limit.call(app, request, reply);
    });
  }

  if (maxEventLoopDelayMs > 0) installLoadShedding(app, maxEventLoopDelayMs);

  app.addHook('preValidation', async (request, reply) => {
    const at = tooDeepAt(request.body, MAX_JSON_DEPTH);
    if (at) {
      const field = ['body', ...at].join('.');
      return sendProblem(reply, 400, {
        code: 'SCS_TOO_DEEP',
        detail: `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels, first at ${field}`,
        errors: [{
          field,
          pointer: at.map((k) => `/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''),
          message: `is nested ${MAX_JSON_DEPTH + 1} levels deep; the body may nest at most ${MAX_JSON_DEPTH}`,
        }],
      });
    }
  });
}

export const protection = fp(registerProtection, { name: 'protection', fastify: '5.x' });
