import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from './errors.js';

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/**
 * Bearer-token check for every /compliance route. Tokens are compared as SHA-256 digests with timingSafeEqual,
 * and every configured token is compared on every request, so neither the length nor the position of a match
 * shows in the timing.
 */
export function bearerAuth(tokens: string[]) {
  const digests = tokens.map(digest);
  return async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    const header = request.headers.authorization;
    const match = header ? /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header) : null;
    if (!match) {
      reply.header('WWW-Authenticate', 'Bearer realm="compliance"');
      return sendProblem(reply, 401, {
        code: 'SCS_UNAUTHORIZED',
        detail: header ? 'The Authorization header must be "Bearer <token>"' : 'Send Authorization: Bearer <token>',
      });
    }
    const given = digest(match[1]);
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, given) || ok;
    if (!ok) {
      reply.header('WWW-Authenticate', 'Bearer realm="compliance", error="invalid_token"');
      return sendProblem(reply, 401, { code: 'SCS_UNAUTHORIZED', detail: 'The bearer token is not valid' });
    }
  };
}
