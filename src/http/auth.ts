import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { sendProblem } from './errors.js';

const SCOPES = ['scenarios:read', 'scenarios:write', 'scenarios:execute'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: what it may do and which projects it may see ('*' = every project, an operator). */
export interface Principal {
  kind: 'static' | 'jwt';
  /** A stable, non-secret key for rate limiting and logs: a token fingerprint or the JWT subject. */
  subject: string;
  scopes: ReadonlySet<Scope>;
  projects: '*' | ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** The scope a route requires (checked after authentication). */
    scope?: Scope;
  }
}

/** A configured static token: `token`, `token:*` (operator) or `token:projA+projB`. */
export interface StaticToken {
  token: string;
  projects: '*' | string[];
}

export interface JwtOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** The claim holding the caller's projects (an array of strings, or '*'). */
  projectsClaim: string;
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The token of an `Authorization: Bearer <token>` header (scheme in any case, spaces around), or undefined. */
function bearerToken(header: string | undefined): string | undefined {
  return header ? /^[ ]*Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header)?.[1] : undefined;
}

class AuthError extends Error {
  constructor(readonly status: 401 | 503, message: string, readonly bearerError?: string) {
    super(message);
  }
}

/**
 * Why jose refused a JWT, in words for the caller (WWW-Authenticate's error_description, the problem's detail) and
 * the log: which check failed and what it expects, never the token or its claims' values.
 */
function jwtRefusal(err: InstanceType<typeof joseErrors.JOSEError>, jwt: JwtOptions): string {
  if (err instanceof joseErrors.JWTExpired) return 'The bearer token has expired: get a new one';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return `The bearer token is for another audience: its aud must include ${jwt.audience}`;
    if (err.claim === 'iss') return `The bearer token is from another issuer: its iss must be ${jwt.issuer}`;
    if (err.claim === 'nbf') return 'The bearer token is not valid yet (nbf is in the future)';
    return `The bearer token's ${err.claim} claim is not valid`;
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'The bearer token is signed with a key AUTH_JWKS_URL does not list (unknown kid)';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'The bearer token\'s signature does not verify';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'The bearer token is signed with an algorithm this service does not accept';
  return 'The bearer token is not valid';
}

/**
 * Turns a request's Authorization header into a Principal. Static tokens are compared as SHA-256 digests with
 * timingSafeEqual against every configured token, so neither the length nor the position of a match shows in the
 * timing; they carry every scope. JWTs (when AUTH_JWKS_URL is set) are verified against the JWKS, issuer and
 * audience, and carry the scopes of their `scope`/`scp` claim and the projects of the configured claim.
 */
export function createAuthenticator(tokens: StaticToken[], jwt?: JwtOptions) {
  const statics = tokens.map((t) => ({
    digest: digest(t.token),
    principal: {
      kind: 'static' as const,
      subject: `token:${digest(t.token).toString('hex').slice(0, 12)}`,
      scopes: ALL_SCOPES,
      projects: t.projects === '*' ? ('*' as const) : new Set(t.projects),
    },
  }));
  const keys = jwt ? createRemoteJWKSet(new URL(jwt.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 }) : undefined;

  async function fromJwt(token: string): Promise<Principal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys!, {
        issuer: jwt!.issuer,
        audience: jwt!.audience,
        algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
        clockTolerance: 5,
      }));
    } catch (err) {
      // The key set could not be fetched: nothing is known about the token, so try again later, not 401.
      if (err instanceof joseErrors.JWKSTimeout || !(err instanceof joseErrors.JOSEError)) {
        throw new AuthError(503, 'The token keys (AUTH_JWKS_URL) cannot be fetched now; retry shortly');
      }
      throw new AuthError(401, jwtRefusal(err, jwt!), 'invalid_token');
    }
    const raw = payload.scope ?? payload.scp;
    const list = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw : [];
    const scopes = new Set(list.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s as string)));
    const claim = payload[jwt!.projectsClaim];
    const projects = claim === '*'
      ? ('*' as const)
      : new Set(Array.isArray(claim) ? claim.filter((p): p is string => typeof p === 'string') : []);
    return { kind: 'jwt', subject: `jwt:${String(payload.iss)}:${String(payload.sub ?? '')}`, scopes, projects };
  }

  const bySubject = new Map(statics.map((s) => [s.digest.toString('hex'), s.principal.subject]));

  async function authenticate(request: FastifyRequest): Promise<Principal> {
    const header = request.headers.authorization;
    const token = bearerToken(header);
    if (token === undefined) {
      throw new AuthError(401, header ? 'The Authorization header must be "Bearer <token>"' : 'Send Authorization: Bearer <token>');
    }
    if (keys && JWT_SHAPE.test(token)) return fromJwt(token);
    const given = digest(token);
    let found: Principal | undefined;
    for (const s of statics) if (timingSafeEqual(s.digest, given)) found = s.principal;
    if (!found) throw new AuthError(401, 'The bearer token is not valid', 'invalid_token');
    return found;
  }

  /**
   * Whose budget a request to an authenticated route spends, known before authentication runs (the rate limit runs
   * first, so that refused requests cost little): a configured token's subject, however its header is spelled
   * (`bearer`, `BEARER`, extra spaces: one token, one budget); a JWT-shaped token (with AUTH_JWKS_URL) by the digest of
   * the token; anything else (no header, another scheme, an unknown token) undefined: the client address's budget.
   */
  function identify(header: string | undefined): string | undefined {
    const token = bearerToken(header);
    if (token === undefined) return undefined;
    if (keys && JWT_SHAPE.test(token)) return `jwt:${digest(token).toString('base64url').slice(0, 22)}`;
    return bySubject.get(digest(token).toString('hex'));
  }

  return Object.assign(authenticate, { identify });
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

/** onRequest hook: authenticates, or answers 401 problem+json with WWW-Authenticate. */
function authHook(authenticate: Authenticator) {
  return async function (request: FastifyRequest, reply: FastifyReply) {
    try {
      request.principal = await authenticate(request);
    } catch (err) {
      if (!(err instanceof AuthError)) throw err;
      if (err.status === 503) {
        reply.header('Retry-After', '5');
        return sendProblem(reply, 503, { code: 'SCS_AUTH_UNAVAILABLE', detail: err.message });
      }
      // RFC 6750: error_description says why, in the characters it may hold (printable ASCII but " and \).
      const why = err.bearerError ? `, error="${err.bearerError}", error_description="${err.message.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '')}"` : '';
      reply.header('WWW-Authenticate', `Bearer realm="compliance"${why}`);
      request.log.info({ reason: err.message }, 'bearer token refused');
      return sendProblem(reply, 401, { code: 'SCS_UNAUTHORIZED', detail: err.message });
    }
  };
}

/** preHandler: the caller's token must carry the scope its route names in `config.scope`, else 403. */
function scopeHook() {
  return async function (request: FastifyRequest, reply: FastifyReply) {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) {
      return sendProblem(reply, 403, { code: 'SCS_FORBIDDEN', detail: 'This route names no scope, so no token may use it' });
    }
    if (!request.principal?.scopes.has(scope)) {
      reply.header('WWW-Authenticate', `Bearer realm="compliance", error="insufficient_scope", scope="${scope}"`);
      return sendProblem(reply, 403, { code: 'SCS_FORBIDDEN', detail: `This token lacks the scope ${scope}` });
    }
  };
}

/**
 * Bearer authentication (onRequest, 401/503) and the route's scope (preHandler, 403) for every route of the context
 * that registers it: a named plugin, so the hooks apply to that context (the authenticated routes), not a child.
 */
export const auth = fp(async (app: FastifyInstance, { authenticate }: { authenticate: Authenticator }) => {
  app.addHook('onRequest', authHook(authenticate));
  app.addHook('preHandler', scopeHook());
}, { name: 'auth', fastify: '5.x' });
