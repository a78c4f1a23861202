import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import type { JwtOptions, StaticToken } from '../domain/auth-settings.js';
import { storableText } from '../domain/storable-text.js';
import { AuthUnavailable, Forbidden, Unauthorized, ValidationFailed } from './errors.js';
import { keysUnavailable, remoteKeys } from './jwks.js';

const SCOPES = ['scenarios:read', 'scenarios:write', 'scenarios:execute'] as const;
type Scope = (typeof SCOPES)[number];

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

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);
const SCOPE_NAMES: ReadonlySet<unknown> = ALL_SCOPES;
const isScope = (s: unknown): s is Scope => SCOPE_NAMES.has(s);
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Verified JWTs remembered for the rate limit's key (identify); more only evicts the least recently used. */
const KNOWN_JWTS = 10_000;

/**
 * One key per JWT however its signature is spelled: base64url leaves the last character's low bits free, so 16
 * spellings of an ES256 signature (and 4 of an RS256 one) verify alike. Decoded and encoded again, they are one text.
 */
function jwtKey(token: string): string {
  const dot = token.lastIndexOf('.');
  const signature = Buffer.from(token.slice(dot + 1), 'base64url').toString('base64url');
  return createHash('sha256').update(`${token.slice(0, dot)}.${signature}`).digest('base64url').slice(0, 22);
}

/** The token of an `Authorization: Bearer <token>` header (scheme in any case, spaces around), or undefined. */
function bearerToken(header: string | undefined): string | undefined {
  return header ? /^[ ]*Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header)?.[1] : undefined;
}

/**
 * Why jose refused a JWT, in words for the caller (WWW-Authenticate's error_description, the problem's detail) and
 * the log: which check failed and what it expects, never the token or its claims' values.
 */
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
  const verifier = jwt ? { jwt, keys: remoteKeys(jwt.jwksUrl) } : undefined;
  // The JWTs that verified, by jwtKey, until they expire: the rate limit counts a request against its token only
  // once the token is known good, so made-up tokens share their client address's budget.
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
      // The key set could not be fetched: nothing is known about the token, so try again later, not 401.
      if (keysUnavailable(err) || !(err instanceof joseErrors.JOSEError)) {
        throw new AuthUnavailable('The token keys (AUTH_JWKS_URL) cannot be fetched now; retry shortly');
      }
      throw new Unauthorized(jwtRefusal(err, jwt), 'invalid_token');
    }
    // exp is there: jwtVerify requires it.
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
    return { kind: 'jwt', subject: `jwt:${String(payload.iss)}:${String(payload.sub ?? '')}`, scopes, projects };
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

  /**
   * Whose budget a request to an authenticated route spends, known before authentication runs (the rate limit runs
   * first, so that refused requests cost little): a configured token's subject, however its header is spelled
   * (`bearer`, `BEARER`, extra spaces: one token, one budget); a JWT that verified before (with AUTH_JWKS_URL) by its
   * jwtKey (one budget however its signature is spelled); anything else (no header, another scheme, an unknown token,
   * a JWT not verified yet) undefined: the client address's budget.
   */
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

/** onRequest hook: authenticates, or throws 401 (with its WWW-Authenticate challenge), 400 or 503. */
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

/** preHandler: the caller's token must carry the scope its route names in `config.scope`, else 403. */
async function scopeHook(request: FastifyRequest) {
  const scope = request.routeOptions.config.scope;
  if (scope === undefined) throw new Forbidden('This route names no scope, so no token may use it');
  if (!request.principal?.scopes.has(scope)) throw new Forbidden(`This token lacks the scope ${scope}`, scope);
}

/**
 * Bearer authentication (onRequest, 401/503) and the route's scope (preHandler, 403) for every route of the context
 * that registers it: a named plugin, so the hooks apply to that context (the authenticated routes), not a child.
 */
export const auth = fp(async (app: FastifyInstance, { authenticate }: { authenticate: Authenticator }) => {
  app.addHook('onRequest', authHook(authenticate));
  app.addHook('preHandler', scopeHook);
}, { name: 'auth', fastify: '5.x' });
