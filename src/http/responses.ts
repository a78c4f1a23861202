import { Type, type TSchema } from '@sinclair/typebox';
import { MAX_JSON_DEPTH, MAX_JSON_KEYS } from './body-policy.js';

/**
 * The documented responses of the routes, as the OpenAPI document shows them: for each status, when it is answered and
 * what a client does about it. Every error is application/problem+json with a stable `code` to branch on.
 */

/** What each problem status means on any authenticated route; a route adds or replaces what is its own. */
const WHEN: Record<number, string> = {
  400: 'The request is not valid (code SCS_VALIDATION; SCS_INVALID_JSON when the body is not JSON, SCS_TOO_DEEP when it ' +
    `nests deeper than ${MAX_JSON_DEPTH} levels, SCS_TOO_MANY_KEYS when one of its objects has more than ${MAX_JSON_KEYS} keys). \`errors\` has one ` +
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

/** Response headers, as the OpenAPI document declares them where they are sent. */
const HEADERS = {
  ETag: {
    type: 'string',
    description: 'The scenario\'s version, a strong entity tag with its quotes (e.g. `"12.3"`): send it back as is in ' +
      'If-Match on PATCH to refuse a lost update.',
  },
  Location: {
    type: 'string',
    description: 'The URL path of what was made: a created scenario (with ?projectId= where the id alone is ambiguous for ' +
      'this token), or a PATCH\'s proposed revision.',
  },
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: '`true` when this is the stored response to an earlier request with the same Idempotency-Key (nothing was done again).',
  },
  'Retry-After': { type: 'string', pattern: '^[0-9]+$', description: 'Seconds to wait before sending again.' },
  Attestation: {
    type: 'string',
    description: 'With `?attest=jws`: a compact JWS (typ `scs-attestation+jwt`, ES256 or EdDSA) of the execution\'s verdict, ' +
      'to verify with /.well-known/jwks.json. Claims: executionId (also jti), scenarioId, scenarioRevision, scenarioDigest, ' +
      'address (also sub), verdict, rules [{id, status}], credentials [SHA-256], iat, exp (and iss where configured).',
  },
  'Attestation-EIP712': {
    type: 'string',
    description: 'With `?attest=eip712`: base64url of a JSON {signer, domain, message, signature}: the EIP-712 typed data ' +
      '`Attestation(address subject,bytes32 scenario,uint8 verdict,uint64 expiry,uint256 nonce)` and its signature.',
  },
} as const;

type HeaderName = keyof typeof HEADERS;
const headersOf = (names: readonly HeaderName[]) => Object.fromEntries(names.map((n) => [n, HEADERS[n]]));

/** The statuses that always come with Retry-After. */
const RETRY = new Set([429, 503]);

/** Example problems per status; a route passes a more telling one (412 on PATCH); docs.ts fills in `instance`. */
/** A problem as the service sends it (errors.ts): its type is derived from its code. */
const problem = (status: number, title: string, code: string, detail: string, extra: Record<string, unknown> = {}) =>
  ({ type: `urn:problem:${code.toLowerCase().replace(/_/g, '-')}`, title, status, detail, code, ...extra });

const PROBLEM_EXAMPLES: Record<number, Record<string, unknown>> = {
  401: problem(401, 'Unauthorized', 'SCS_UNAUTHORIZED', 'The bearer token is not valid'),
  403: problem(403, 'Forbidden', 'SCS_FORBIDDEN', 'This token lacks the scope scenarios:write'),
  412: problem(412, 'Precondition Failed', 'SCS_PRECONDITION_FAILED', 'If-Match "12.3" does not match the current ETag "12.4" ' +
    'of the scenario; send If-Match: "12.4" as the ETag header gives it (quotes included, no W/ prefix: If-Match compares strong tags)'),
  413: problem(413, 'Content Too Large', 'SCS_BODY_TOO_LARGE', 'The body is larger than 1048576 bytes this service accepts; send a smaller body'),
  415: problem(415, 'Unsupported Media Type', 'SCS_UNSUPPORTED_MEDIA_TYPE', 'Content-Type "text/plain" is not accepted here. ' +
    'Send a JSON object with Content-Type: application/json (PATCH also takes application/merge-patch+json)'),
  422: problem(422, 'Unprocessable Content', 'SCS_IDEMPOTENCY_KEY_REUSED',
    'This Idempotency-Key was used with another request body; use a new key for a new request'),
  429: problem(429, 'Too Many Requests', 'SCS_RATE_LIMITED', 'Rate limit exceeded: at most 6000 requests per window for this ' +
    'token (or, without one, this client address); retry in 1 minute'),
  503: problem(503, 'Service Unavailable', 'SCS_OVERLOADED', 'The service is overloaded (event loop delay 1240 ms, over 1000 ms); retry shortly'),
};

const invalid = (detail: string, field: string, message: string) => problem(400, 'Bad Request', 'SCS_VALIDATION', detail, {
  type: 'urn:problem:validation',
  errors: [{ field, pointer: `/${field.split('.').slice(1).join('/')}`, message }],
});

const GTE_MESSAGE = 'value for $gte must be a number or an ISO 8601 date (e.g. 2001-02-03, 2001-02-03T04:05:06Z or 2001-02-03T04:05:06.789+02:00)';

/** Route-specific example problems, as the service answers them (400, 404 and 409 say something of their route). */
export const EXAMPLES = {
  invalidExecute: invalid('The request body is not valid', 'body.credentials.0.issuanceDate', 'is required'),
  invalidRules: invalid(`The scenario is not valid: /input/queryConfigurations/1/query/value ${GTE_MESSAGE}`,
    'body.input.queryConfigurations.1.query.value', GTE_MESSAGE),
  invalidPatch: invalid('The scenario after the patch is not valid', 'body.input.name', 'is required'),
  invalidQuery: invalid('The request querystring is not valid', 'querystring.projectId', 'must NOT have more than 128 characters'),
  invalidExecutionId: invalid('The request params is not valid', 'params.executionId', 'must NOT have more than 64 characters'),
  invalidLimit: invalid('The request querystring is not valid', 'querystring.limit', 'must be >= 1'),
  scenarioNotFound: problem(404, 'Not Found', 'SCS_SCENARIO_NOT_FOUND', 'No scenario with id adult-kyc'),
  executionNotFound: problem(404, 'Not Found', 'SCS_EXECUTION_NOT_FOUND', 'No execution with id 0b5e2c1e-7d0c-4a5e-9a55-3f1f0c2d9e41'),
  scenarioExists: problem(409, 'Conflict', 'SCS_SCENARIO_EXISTS', 'A scenario with id adult-kyc exists already'),
  ambiguous: problem(409, 'Conflict', 'SCS_SCENARIO_AMBIGUOUS', 'Scenario id adult-kyc names a scenario in more than one ' +
    'project this token holds (kyc-eu, kyc-us); add ?projectId= to name one'),
  selfApproval: problem(403, 'Forbidden', 'SCS_SELF_APPROVAL', 'Scenario adult-kyc revision 3 was proposed by this token\'s ' +
    'subject: another must approve it (four eyes)'),
  noApproveScope: problem(403, 'Forbidden', 'SCS_FORBIDDEN', 'This token lacks the scope scenarios:approve'),
  proposalStale: problem(409, 'Conflict', 'SCS_PROPOSAL_STALE', 'Scenario adult-kyc revision 3 was proposed against revision 1, ' +
    'and revision 2 is live now: send the change again as a PATCH (a new proposal against the live revision)'),
  notProposed: problem(409, 'Conflict', 'SCS_REVISION_NOT_PROPOSED', 'Scenario adult-kyc revision 3 is not a proposal awaiting a ' +
    'decision (it is approved)'),
};

/** The statuses every route behind bearer authentication may answer with, whatever it does. */
export const AUTHENTICATED = [400, 401, 403, 429, 503] as const;

/** Route response entries for problem statuses, as application/problem+json; `when` replaces a status's common description. */
export function problemResponses(
  statuses: readonly number[],
  when: Partial<Record<number, string>> = {},
  { examples = {}, retryAfter = [] }: { examples?: Partial<Record<number, Record<string, unknown>>>; retryAfter?: readonly number[] } = {},
): Record<number, unknown> {
  return Object.fromEntries([...new Set(statuses)].map((status) => {
    const example = examples[status] ?? PROBLEM_EXAMPLES[status];
    return [status, {
      description: when[status] ?? WHEN[status] ?? 'An error: see `code` and `detail`.',
      ...((RETRY.has(status) || retryAfter.includes(status)) && { headers: headersOf(['Retry-After']) }),
      content: {
        'application/problem+json': {
          schema: Type.Ref('Problem'),
          ...(example && { examples: { [String(example.code)]: { value: example } } }),
        },
      },
    }];
  }));
}

/** The common description of a status followed by what a route adds to it. */
export const also = (status: number, more: string) => `${WHEN[status]} ${more}`;

/**
 * A success response: its schema, and when it is answered (the OpenAPI response's description; the schema keeps its
 * own description of what the body is). @fastify/swagger keeps nothing beside a $ref in the document, but reads the
 * description there as the response's.
 */
export const answered = <T extends TSchema>(schema: T, description: string, headers: readonly HeaderName[] = []): T => ({
  ...schema,
  ...('$ref' in schema ? { description } : { 'x-response-description': description }),
  ...(headers.length > 0 && { headers: headersOf(headers) }),
});
