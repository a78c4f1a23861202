import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimited } from './errors.js';
import { installLoadShedding } from './load-shedding.js';

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
 * Abuse protection: security headers, a per-token rate limit (429 + Retry-After) and load shedding when the event
 * loop lags (503 + Retry-After); a body's limits are the body policy's (body-policy.ts). Registered on the root: it
 * applies to every route.
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
}

export const protection = fp(registerProtection, { name: 'protection', fastify: '5.x' });
