import helmet from '@fastify/helmet';
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimited } from './errors.js';
import { installLoadShedding } from './load-shedding.js';

/** The caller where a token is taken, else the address. */
function rateKey(identify: (header: string | undefined) => string | undefined) {
  return (request: FastifyRequest): string => {
    const secured = request.routeOptions.config?.scope !== undefined;
    const id = secured ? identify(request.headers.authorization) : undefined;
    return id === undefined ? `ip:${request.ip}` : `id:${id}`;
  };
}

export interface ProtectionOptions {
  /** 0: off. */
  rateLimit: { max: number; windowMs: number };
  maxEventLoopDelayMs: number;
  identify: (header: string | undefined) => string | undefined;
  store?: RateLimitPluginOptions['store'];
}

/** Security headers, a per-token rate limit and load shedding, on every route. */
async function registerProtection(app: FastifyInstance, { rateLimit: limits, maxEventLoopDelayMs, identify, store }: ProtectionOptions): Promise<void> {
  // The directive harms an http page (docs.ts).
  await app.register(helmet, {
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], upgradeInsecureRequests: null } },
  });

  if (limits.max > 0) {
    // The plugin's per-route hooks run after auth: a sprayed 401 would not count.
    await app.register(rateLimit, {
      global: false,
      max: limits.max,
      timeWindow: limits.windowMs,
      ...(store && { store }),
      keyGenerator: rateKey(identify),
      allowList: (request) => request.url.startsWith('/health/') || request.url === '/metrics',
      errorResponseBuilder: (_request, context) => rateLimited(
        `Rate limit exceeded: at most ${context.max} requests per window for this token (or, without one, this client address); retry in ${context.after}`,
        context,
      ),
    });
    // A route's own config.rateLimit replaces this one.
    const limit = app.rateLimit();
    app.addHook('onRequest', async (request, reply) => {
      if (typeof request.routeOptions.config.rateLimit === 'object') return;
      await limit.call(app, request, reply);
    });
  }

  if (maxEventLoopDelayMs > 0) installLoadShedding(app, maxEventLoopDelayMs);
}

export const protection = fp(registerProtection, { name: 'protection', fastify: '5.x' });
