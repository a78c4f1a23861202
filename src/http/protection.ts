import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { sendProblem } from './errors.js';

/** The deepest JSON nesting a request body may have (credentialSubject included). */
export const MAX_JSON_DEPTH = 32;

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Whether a parsed JSON value nests deeper than `limit` levels (a scalar is 0 deep, `{}` 1). Recursive, but never more
 * than `limit` calls deep, so a deep document cannot overflow the stack here; it allocates nothing (run on every body).
 */
export function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (deeperThan(value[i], limit - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (hasOwn.call(value, key) && deeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  }
  return false;
}

/**
 * helmet's headers for these options, computed once: they do not depend on the request (no CSP nonces here), and
 * @fastify/helmet would rebuild helmet on every request (~5 µs).
 */
export function securityHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: unknown) => { headers[name.toLowerCase()] = String(value); },
    removeHeader: (name: string) => { delete headers[name.toLowerCase()]; },
  };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, () => {});
  return headers;
}

/** Rate limits key on the presented token (hashed; never logged in clear), or on the client address without one. */
function rateKey(request: FastifyRequest): string {
  const auth = request.headers.authorization;
  return auth ? `t:${createHash('sha256').update(auth).digest('base64url').slice(0, 22)}` : `ip:${request.ip}`;
}

/**
 * Abuse protection: security headers, a per-token rate limit (429 + Retry-After), load shedding when the event
 * loop lags (503 + Retry-After), and a JSON depth limit (400).
 */
export async function registerProtection(app: FastifyInstance, config: Config): Promise<void> {
  // The Swagger UI at /docs sets its own CSP for its static files; the API answers JSON only.
  const headers = securityHeaders({ contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } });
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });

  if (config.rateLimit.max > 0) {
    await app.register(rateLimit, {
      max: config.rateLimit.max,
      timeWindow: config.rateLimit.windowMs,
      keyGenerator: rateKey,
      allowList: (request) => request.url.startsWith('/health/') || request.url === '/metrics',
      errorResponseBuilder: (_request, context) => {
        const err = new Error(`Rate limit exceeded: at most ${context.max} requests per window for this token; retry in ${context.after}`) as Error & {
          statusCode: number; code: string; retryAfterSeconds: number;
        };
        err.statusCode = context.statusCode;
        err.code = 'SCS_RATE_LIMITED';
        err.retryAfterSeconds = Math.max(1, Math.ceil(context.ttl / 1000));
        return err;
      },
    });
  }

  if (config.maxEventLoopDelayMs > 0) {
    await app.register(underPressure, {
      maxEventLoopDelay: config.maxEventLoopDelayMs,
      // The mean delay over each 1 s window is compared, so a short pause does not shed load; a sustained lag does.
      retryAfter: 1,
      exposeStatusRoute: false,
      pressureHandler: (_request: FastifyRequest, reply: FastifyReply, type: string) => {
        reply.header('Retry-After', '1');
        sendProblem(reply, 503, { code: 'SCS_OVERLOADED', detail: `The service is overloaded (${type}); retry shortly` });
      },
    });
  }

  app.addHook('preValidation', async (request, reply) => {
    if (deeperThan(request.body, MAX_JSON_DEPTH)) {
      return sendProblem(reply, 400, {
        code: 'SCS_TOO_DEEP',
        detail: `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels`,
        errors: [{ field: 'body', pointer: '', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }],
      });
    }
  });
}
