import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, onSendAsyncHookHandler } from 'fastify';
import { canonicalJson, sha256Hex } from '../domain/canonical-json.js';
import type { IdempotencyKeys } from '../services/idempotency.js';
import { IdempotencyInProgress, IdempotencyKeyReused, ValidationFailed } from './errors.js';
import { accessFor } from '../services/access.js';

export { IDEMPOTENCY_LEASE_MS } from '../services/idempotency.js';
const HEARTBEAT_MS = 10_000;
/** A heartbeat stops then, whatever happened to its request. */
const MAX_HEARTBEAT_MS = 10 * 60_000;
const KEY = /^[\x21-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'attestation', 'attestation-eip712'];

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    minLength: 1, maxLength: 255,
    description: 'Makes a retry safe: the same key and request (body and query) within 24 h return the first success (Idempotent-Replayed: true) without doing the work again; another request with the key is 422. Refusals are not kept: a retry after one is judged anew.',
  })),
});

export type Idempotency = ReturnType<typeof idempotency>;

/** Scoped to the caller and the route, hashed: the client's key text is not kept. */
export function storedKey(subject: string, route: string, key: string): string {
  return createHash('sha256').update(`${subject}\n${route}\n${key}`).digest('hex');
}

/**
 * Idempotency-Key (Stripe's model) for POST routes: the first request with a key does the work, a retry with the same
 * request gets its stored response; another request with the key (body, query or the token's projects) is 422. Only
 * a 2xx is stored: a refusal changed nothing, so it frees the key.
 */
export function idempotency(keys: IdempotencyKeys, now: () => number) {
  const claims = new WeakMap<FastifyRequest, { key: string; heartbeat: NodeJS.Timeout }>();
  const preHandler: preHandlerAsyncHookHandler = async function (request: FastifyRequest, reply: FastifyReply) {
    const raw = request.headers['idempotency-key'];
    if (raw === undefined) return;
    if (typeof raw !== 'string' || !KEY.test(raw)) {
      throw new ValidationFailed(
        [{ field: 'headers.idempotency-key', pointer: '/idempotency-key', message: 'must be 1 to 255 printable characters' }],
        'Idempotency-Key must be 1 to 255 printable characters',
      );
    }
    const key = storedKey(request.principal?.subject ?? '', `${request.method} ${request.routeOptions.url}`, raw);
    const requestHash = sha256Hex(canonicalJson({
      body: request.body ?? null,
      query: request.query ?? null,
      // The token's own projects, not as `?projectId=` narrows them: a retry by a token holding other projects is a
      // different request (422), even where the narrowing makes both see the same.
      projects: accessFor(request.principal?.projects).key,
    }));
    const at = now();
    const claim = await keys.claim(key, requestHash);
    if (claim.claimed) {
      const heartbeat = setInterval(() => {
        if (now() - at > MAX_HEARTBEAT_MS) return clearInterval(heartbeat);
        keys.renew(key).catch((err) => request.log.warn({ err }, 'could not renew an idempotency lease'));
      }, HEARTBEAT_MS).unref();
      claims.set(request, { key, heartbeat });
      return;
    }
    if (claim.requestHash !== requestHash) throw new IdempotencyKeyReused();
    if (!claim.response) throw new IdempotencyInProgress();
    const { status, headers, body } = claim.response;
    reply.code(status).headers(headers).header('Idempotent-Replayed', 'true');
    return reply.send(body);
  };

  const onSend: onSendAsyncHookHandler<unknown> = async function (request, reply, payload) {
    const held = claims.get(request);
    if (held === undefined) return payload;
    claims.delete(request);
    const { key, heartbeat } = held;
    clearInterval(heartbeat);
    if (reply.statusCode >= 300 || typeof payload !== 'string') {
      await keys.release(key).catch((err) => request.log.warn({ err }, 'could not release an idempotency key'));
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const value = reply.getHeader(h);
      if (value !== undefined) headers[h] = String(value);
    }
    try {
      await keys.complete(key, { status: reply.statusCode, headers, body: payload });
    } catch (err) {
      // Not stored: free the key and fail this response rather than pretend.
      await keys.release(key).catch(() => {});
      throw err;
    }
    return payload;
  };

  return { preHandler, onSend };
}
