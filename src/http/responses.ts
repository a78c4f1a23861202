import { Type, type TSchema } from '@sinclair/typebox';

/**
 * The documented responses of the routes, as the OpenAPI document shows them: for each status, when it is answered and
 * what a client does about it. Every error is application/problem+json with a stable `code` to branch on.
 */

/** What each problem status means on any authenticated route; a route adds or replaces what is its own. */
const WHEN: Record<number, string> = {
  400: 'The request is not valid (code SCS_VALIDATION; SCS_INVALID_JSON when the body is not JSON). `errors` has one ' +
    'entry per failing field: `field` names it (e.g. body.credentials.0.issuer) and `message` says what it must be. ' +
    'At most 20 are listed; `errorsTruncated: true` says the request fails in more places (fix these and send it again ' +
    'to see the next). Show each message next to its field and fix the request: sent again unchanged, it gets the same answer.',
  401: 'No bearer token, or one this service does not accept (code SCS_UNAUTHORIZED; the WWW-Authenticate header says ' +
    'why). Send `Authorization: Bearer <token>` with a valid token; sign in again if it expired.',
  403: 'The token is valid but lacks the scope this operation needs (code SCS_FORBIDDEN; WWW-Authenticate names the ' +
    'scope). Use a token with that scope: retrying with this one does not help.',
  404: 'Not found.',
  409: 'Conflict with the current state.',
  413: 'The body is larger than this service accepts (BODY_LIMIT). Send a smaller one.',
  415: 'The Content-Type is not one this operation takes. Send JSON with `Content-Type: application/json`.',
  422: 'The Idempotency-Key was used before with another body (code SCS_IDEMPOTENCY_KEY_REUSED). Use a new key for a ' +
    'new request; reuse a key only to retry the very same request.',
  429: 'Too many requests from this token, or without a token from this client address (code SCS_RATE_LIMITED, when ' +
    'RATE_LIMIT_MAX is set). Wait the seconds the Retry-After header gives, then send again.',
  503: 'The service cannot answer right now: it is overloaded (SCS_OVERLOADED), its database does not answer ' +
    '(SCS_DATABASE_UNAVAILABLE), its database\'s storage is full (SCS_STORAGE_FULL: nothing of the request was written) ' +
    'or the keys that verify tokens cannot be fetched (SCS_AUTH_UNAVAILABLE). Wait the ' +
    'seconds the Retry-After header gives, then send again (with the same Idempotency-Key, a POST is never done twice).',
};

/** The statuses every route behind bearer authentication may answer with, whatever it does. */
export const AUTHENTICATED = [400, 401, 403, 429, 503] as const;

/**
 * Route response entries for problem statuses, documented (and serialized) as application/problem+json, the content
 * type every error of this service is sent with. `when` gives a route's own description of a status (when it is
 * answered, what to do), replacing the common one.
 */
export function problemResponses(statuses: readonly number[], when: Partial<Record<number, string>> = {}): Record<number, unknown> {
  return Object.fromEntries([...new Set(statuses)].map((status) => [status, {
    description: when[status] ?? WHEN[status] ?? 'An error: see `code` and `detail`.',
    content: { 'application/problem+json': { schema: Type.Ref('Problem') } },
  }]));
}

/** The common description of a status followed by what a route adds to it. */
export const also = (status: number, more: string) => `${WHEN[status]} ${more}`;

/**
 * A success response: its schema, and when it is answered (the OpenAPI response's description; the schema keeps its
 * own description of what the body is). @fastify/swagger keeps nothing beside a $ref in the document, but reads the
 * description there as the response's.
 */
export const answered = <T extends TSchema>(schema: T, description: string): T =>
  ({ ...schema, ...('$ref' in schema ? { description } : { 'x-response-description': description }) });
