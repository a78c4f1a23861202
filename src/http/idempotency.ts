import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, onSendAsyncHookHandler } from 'fastify';
import { canonicalJson, sha256Hex } from '../domain/canonical-json.js';
import type { IdempotencyStore } from '../store/types.js';
import { sendProblem } from './errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const KEY = /^[\x21-\x7e]{1,255}$/;
/** Response headers replayed with the body. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag'];

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey?: string;
  }
}

/**
 * Idempotency-Key (the Stripe model) for POST routes: the first request with a key does the work and its response
 * (status, body byte for byte, Location/ETag) is stored; a retry with the same key and body gets that response
 * with `Idempotent-Replayed: true`; the same key with another body is 422; one still in progress is 409. Keys are
 * scoped to the caller and the route, and expire after 24 h. Requests refused by validation store nothing; a 5xx
 * frees the key so the retry does the work.
 */
/** The header as route schemas declare it (documented in openapi.yaml). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    minLength: 1, maxLength: 255,
    description: 'Makes a retry safe: the same key and body within 24 h return the first response (Idempotent-Replayed: true) without doing the work again; another body with the key is 422.',
  })),
});

export type Idempotency = ReturnType<typeof idempotency>;

export function idempotency(store: IdempotencyStore, now: () => number) {
  const preHandler: preHandlerAsyncHookHandler = async function (request: FastifyRequest, reply: FastifyReply) {
    const raw = request.headers['idempotency-key'];
    if (raw === undefined) return;
    if (typeof raw !== 'string' || !KEY.test(raw)) {
      return sendProblem(reply, 400, {
        code: 'SCS_VALIDATION',
        detail: 'Idempotency-Key must be 1 to 255 printable characters',
        errors: [{ field: 'headers.idempotency-key', pointer: '/idempotency-key', message: 'must be 1 to 255 printable characters' }],
      });
    }
    const key = createHash('sha256')
      .update(`${request.principal?.subject ?? ''}\n${request.method} ${request.routeOptions.url}\n${raw}`)
      .digest('hex');
    const requestHash = sha256Hex(canonicalJson(request.body ?? null));
    const at = now();
    const claim = await store.claimIdempotencyKey(key, requestHash, new Date(at).toISOString(), new Date(at - IDEMPOTENCY_TTL_MS).toISOString());
    if (claim.claimed) {
      request.idempotencyKey = key;
      return;
    }
    if (claim.requestHash !== requestHash) {
      return sendProblem(reply, 422, {
        code: 'SCS_IDEMPOTENCY_KEY_REUSED',
        detail: 'This Idempotency-Key was used with another request body; use a new key for a new request',
      });
    }
    if (!claim.response) {
      reply.header('Retry-After', '1');
      return sendProblem(reply, 409, { code: 'SCS_IDEMPOTENCY_IN_PROGRESS', detail: 'A request with this Idempotency-Key is still in progress' });
    }
    const { status, headers, body } = claim.response;
    reply.code(status).headers(headers).header('Idempotent-Replayed', 'true');
    return reply.send(body);
  };

  const onSend: onSendAsyncHookHandler<unknown> = async function (request, reply, payload) {
    const key = request.idempotencyKey;
    if (key === undefined) return payload;
    request.idempotencyKey = undefined;
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await store.releaseIdempotencyKey(key).catch((err) => request.log.warn({ err }, 'could not release an idempotency key'));
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers[h] = String(v);
    }
    try {
      await store.completeIdempotencyKey(key, { status: reply.statusCode, headers, body: payload });
    } catch (err) {
      // Not stored: free the key (a retry will do the work again) and fail this response rather than pretend.
      await store.releaseIdempotencyKey(key).catch(() => {});
      throw err;
    }
    return payload;
  };

  return { preHandler, onSend };
}
