import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, onSendAsyncHookHandler } from 'fastify';
import { canonicalJson, sha256Hex } from '../domain/canonical-json.js';
import type { IdempotencyKeys } from '../services/idempotency.js';
import { IdempotencyInProgress, IdempotencyKeyReused, ValidationFailed } from './errors.js';
import { accessOf } from './tenancy.js';

export { IDEMPOTENCY_LEASE_MS } from '../services/idempotency.js';
/** How often the owner of a claim renews its lease while it works. */
const HEARTBEAT_MS = 10_000;
/** No request works longer than this: a heartbeat stops then, whatever happened to its request. */
const MAX_HEARTBEAT_MS = 10 * 60_000;
const KEY = /^[\x21-\x7e]{1,255}$/;
/** Response headers replayed with the body. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'attestation', 'attestation-eip712'];

/**
 * Idempotency-Key (the Stripe model) for POST routes: the first request with a key does the work and its response
 * (status, body byte for byte, Location/ETag) is stored; a retry with the same key and request gets that response
 * with `Idempotent-Replayed: true`; the same key with another request (body, query such as `?projectId=`, or the
 * token's projects: whatever selects the result) is 422; one still in progress is 409. Keys are scoped to the caller
 * and the route, and expire after 24 h. Only a success (2xx), the answer of work done, is stored: a refusal changed
 * nothing, so it frees the key and a retry is judged anew (a 400 of the handler, a 404, a 429 with its Retry-After, a
 * 5xx). A claim is a lease renewed while its request works, so a claim whose process died is free within
 * IDEMPOTENCY_LEASE_MS.
 */
/** The header as route schemas declare it (documented in openapi.yaml). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    minLength: 1, maxLength: 255,
    description: 'Makes a retry safe: the same key and request (body and query) within 24 h return the first success (Idempotent-Replayed: true) without doing the work again; another request with the key is 422. Refusals are not kept: a retry after one is judged anew.',
  })),
});

export type Idempotency = ReturnType<typeof idempotency>;

/** The key as stored: scoped to the caller and the route, hashed (the client's key text is not kept). */
export function storedKey(subject: string, route: string, key: string): string {
  return createHash('sha256').update(`${subject}\n${route}\n${key}`).digest('hex');
}

export function idempotency(keys: IdempotencyKeys, now: () => number) {
  // The claim a request holds (its stored key) and the heartbeat renewing its lease, until its answer is sent.
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
      projects: accessOf(request).key,
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
      // Not stored: free the key (a retry will do the work again) and fail this response rather than pretend.
      await keys.release(key).catch(() => {});
      throw err;
    }
    return payload;
  };

  return { preHandler, onSend };
}
