import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import type { JwtOptions, StaticToken } from '../domain/auth-settings.js';
import { storableText } from '../domain/storable-text.js';
import { AuthUnavailable, Forbidden, Unauthorized, ValidationFailed } from './errors.js';
import { keysUnavailable, remoteKeys } from './jwks.js';

const SCOPES = ['scenarios:read', 'scenarios:write', 'scenarios:execute', 'scenarios:approve'] as const;
type Scope = (typeof SCOPES)[number];

/** '*': an operator's, every project. */
export interface Principal {
  kind: 'static' | 'jwt';
  /** Non-secret: a token's fingerprint, or a JWT's issuer and subject. */
  subject: string;
  /** False for a JWT without `sub`: every such token of its issuer has one subject, so none may stand for an approver. */
  named: boolean;
  scopes: ReadonlySet<Scope>;
  projects: '*' | ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    scope?: Scope;
  }
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);
const SCOPE_NAMES: ReadonlySet<unknown> = ALL_SCOPES;
const isScope = (s: unknown): s is Scope => SCOPE_NAMES.has(s);
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Verified JWTs remembered for identify; least recently used evicted. */
const KNOWN_JWTS = 10_000;

/** base64url leaves a signature's last low bits free: decoded and encoded again, its spellings are one key. */
function jwtKey(token: string): string {
  const dot = token.lastIndexOf('.');
  const signature = Buffer.from(token.slice(dot + 1), 'base64url').toString('base64url');
  return createHash('sha256').update(`${token.slice(0, dot)}.${signature}`).digest('base64url').slice(0, 22);
}

/** Scheme in any case, spaces around. */
function bearerToken(header: string | undefined): string | undefined {
  return header ? /^[ ]*Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header)?.[1] : undefined;
}

/** Which check failed and what it expects, for caller and log; never the token or its claims. */
function jwtRefusal(err: InstanceType<typeof joseErrors.JOSEError>, jwt: JwtOptions): string {
  if (err instanceof joseErrors.JWTExpired) return 'The bearer token has expired: get a new one';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'exp') return 'The bearer token has no expiry (exp); tokens must expire';
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

/** Static tokens as SHA-256 digests, timingSafeEqual against all (no length or position shows); every scope theirs. */
export function createAuthenticator(tokens: StaticToken[], jwt?: JwtOptions) {
  const statics = tokens.map((t) => ({
    digest: digest(t.token),
    principal: {
      kind: 'static' as const,
      subject: `token:${digest(t.token).toString('hex').slice(0, 12)}`,
      named: true,
      scopes: ALL_SCOPES,
      projects: t.projects === '*' ? ('*' as const) : new Set(t.projects),
    },
  }));
  const verifier = jwt ? { jwt, keys: remoteKeys(jwt.jwksUrl) } : undefined;
  // Until known good, made-up tokens share their client address's budget.
  const knownJwts = new LRUCache<string, true>({ max: KNOWN_JWTS });

  async function fromJwt(token: string, { jwt, keys }: NonNullable<typeof verifier>): Promise<Principal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: jwt.issuer,
        audience: jwt.audience,
        algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
        clockTolerance: 5,
        // A token without an expiry would be good forever, however it leaked.
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      // Nothing is known of the token: 503, not 401.
      if (keysUnavailable(err) || !(err instanceof joseErrors.JOSEError)) {
        throw new AuthUnavailable('The token keys (AUTH_JWKS_URL) cannot be fetched now; retry shortly');
      }
      throw new Unauthorized(jwtRefusal(err, jwt), 'invalid_token');
    }
    knownJwts.set(jwtKey(token), true, { ttl: Math.max(1, ((payload.exp ?? 0) + 5) * 1000 - Date.now()) });
    const raw = payload.scope ?? payload.scp;
    const list: unknown[] = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw : [];
    const scopes = new Set(list.filter(isScope));
    const claim = payload[jwt.projectsClaim];
    const projects = claim === '*'
      ? ('*' as const)
      : new Set(Array.isArray(claim) ? claim.filter((p): p is string => typeof p === 'string' && p !== '') : []);
    // Project ids reach the database: the rule for every stored text.
    if (projects !== '*' && ![...projects].every(storableText)) {
      const field = `the token's ${jwt.projectsClaim} claim`;
      throw new ValidationFailed([
        { field: `headers.authorization.${jwt.projectsClaim}`, pointer: '/authorization', message: `${field} must not hold U+0000 or an unpaired UTF-16 surrogate` },
      ], `A project id in ${field} holds U+0000 or an unpaired UTF-16 surrogate`);
    }
    const sub = String(payload.sub ?? '');
    return { kind: 'jwt', subject: `jwt:${String(payload.iss)}:${sub}`, named: sub !== '', scopes, projects };
  }

  const bySubject = new Map(statics.map((s) => [s.digest.toString('hex'), s.principal.subject]));

  async function authenticate(request: FastifyRequest): Promise<Principal> {
    const header = request.headers.authorization;
    const token = bearerToken(header);
    if (token === undefined) {
      throw new Unauthorized(header ? 'The Authorization header must be "Bearer <token>"' : 'Send Authorization: Bearer <token>');
    }
    // Configured tokens first: one may have a JWT's shape (two dots) and is still that token.
    const given = digest(token);
    let found: Principal | undefined;
    for (const s of statics) if (timingSafeEqual(s.digest, given)) found = s.principal;
    if (found) return found;
    if (verifier && JWT_SHAPE.test(token)) return fromJwt(token, verifier);
    throw new Unauthorized('The bearer token is not valid', 'invalid_token');
  }

  /** The rate limit's key before authentication: one per token however spelled; undefined: the client address's. */
  function identify(header: string | undefined): string | undefined {
    const token = bearerToken(header);
    if (token === undefined) return undefined;
    const subject = bySubject.get(digest(token).toString('hex'));
    if (subject !== undefined || !verifier || !JWT_SHAPE.test(token)) return subject;
    const key = jwtKey(token);
    return knownJwts.has(key) ? `jwt:${key}` : undefined;
  }

  return Object.assign(authenticate, { identify });
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

/** Else 401 (with its challenge), 400 or 503. */
function authHook(authenticate: Authenticator) {
  return async function (request: FastifyRequest) {
    try {
      request.principal = await authenticate(request);
    } catch (err) {
      if (err instanceof Unauthorized) request.log.info({ reason: err.message }, 'bearer token refused');
      throw err;
    }
  };
}

/** 403 without the route's `config.scope`. */
async function scopeHook(request: FastifyRequest) {
  const scope = request.routeOptions.config.scope;
  if (scope === undefined) throw new Forbidden('This route names no scope, so no token may use it');
  if (!request.principal?.scopes.has(scope)) throw new Forbidden(`This token lacks the scope ${scope}`, scope);
}

/** Named: the hooks apply to the registering context, the authenticated routes. */
export const auth = fp(async (app: FastifyInstance, { authenticate }: { authenticate: Authenticator }) => {
  app.addHook('onRequest', authHook(authenticate));
  app.addHook('preHandler', scopeHook);
}, { name: 'auth', fastify: '5.x' });
