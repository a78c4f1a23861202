import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimited, TooDeep, TooManyKeys } from './errors.js';
import { installLoadShedding } from './load-shedding.js';

/** The deepest JSON nesting a request body may have (credentialSubject included). */
export const MAX_JSON_DEPTH = 32;

/**
 * The most keys one object of a request body may have. No schema object has more than a few dozen fields, and a
 * credentialSubject or an inline JSON-LD context a few hundred at most; this is far above them. Listing an object's
 * keys costs V8 time for all of them at once (even to read only the first), and Ajv lists them twice (deciding, then
 * explaining): one object of 83,000 keys in 1 MB cost over 100 ms to refuse. This check lists each object's keys once.
 */
export const MAX_JSON_KEYS = 1000;

/** Where a parsed JSON value passes a shape limit: the keys and indexes down to the object or array, and why. */
export interface ShapeProblem {
  at: (string | number)[];
  /** Set when the object at `at` has too many keys (how many); unset when it nests too deep. */
  keys?: number;
}

/**
 * The first place, depth first, where a parsed JSON value nests deeper than `depth` levels (a scalar is 0 deep, `{}`
 * 1) or has an object of more than `maxKeys` keys. Recursive, but never more than `depth` calls deep, so a deep
 * document cannot overflow the stack here; each object's keys are listed once (run on every body).
 */
export function shapeProblem(value: unknown, depth: number, maxKeys: number): ShapeProblem | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth <= 0) return { at: [] };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = shapeProblem(value[i], depth - 1, maxKeys);
      if (found) {
        found.at.unshift(i);
        return found;
      }
    }
    return undefined;
  }
  // Own keys only: an inherited enumerable key is not the document's.
  const keys = Object.keys(value);
  if (keys.length > maxKeys) return { at: [], keys: keys.length };
  for (const key of keys) {
    const found = shapeProblem(Reflect.get(value, key), depth - 1, maxKeys);
    if (found) {
      found.at.unshift(key);
      return found;
    }
  }
  return undefined;
}

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
 * loop lags (503 + Retry-After), and limits on a JSON body's depth and keys per object (400). Registered on the root: it applies to every route.
 */
async function registerProtection(app: FastifyInstance, { rateLimit: limits, maxEventLoopDelayMs, identify }: ProtectionOptions): Promise<void> {
  // The Swagger UI at /docs sets its own CSP for its static files; the API answers JSON only.
  // No upgrade-insecure-requests: the API's JSON loads nothing, and the directive does harm on an http page (docs.ts).
  await app.register(helmet, {
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], upgradeInsecureRequests: null } },
  });

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
      if (typeof request.routeOptions.config.rateLimit === 'object') return;
      await limit.call(app, request, reply);
    });
  }

  if (maxEventLoopDelayMs > 0) installLoadShedding(app, maxEventLoopDelayMs);

  app.addHook('preValidation', async (request) => {
    const found = shapeProblem(request.body, MAX_JSON_DEPTH, MAX_JSON_KEYS);
    if (!found) return;
    const field = ['body', ...found.at].join('.');
    const pointer = found.at.map((k) => `/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
    if (found.keys === undefined) {
      throw new TooDeep(MAX_JSON_DEPTH, [{ field, pointer, message: `is nested ${MAX_JSON_DEPTH + 1} levels deep; the body may nest at most ${MAX_JSON_DEPTH}` }]);
    }
    throw new TooManyKeys(MAX_JSON_KEYS, [{ field, pointer, message: `has ${found.keys} keys; an object of the body may have at most ${MAX_JSON_KEYS}` }]);
  });
}

export const protection = fp(registerProtection, { name: 'protection', fastify: '5.x' });
