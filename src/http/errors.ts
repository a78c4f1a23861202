import type { Duplex } from 'node:stream';
import createError from '@fastify/error';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { MAX_FIELD_ERRORS, type Problem } from '../schemas/problem.js';
import { overBudget } from './validation.js';

export type { FieldError } from '../schemas/problem.js';
import type { FieldError } from '../schemas/problem.js';

/** HTTP's coded errors (SCS_); the services' are in services/errors.ts, the executions' in execution/errors.ts. */
const RouteNotFound = createError<[string, string]>('SCS_ROUTE_NOT_FOUND', 'No route %s %s', 404);
export const WebhooksDisabled = createError(
  'SCS_WEBHOOKS_DISABLED', 'Webhooks are not enabled on this service (its operator sets WEBHOOK_SECRET)', 404,
);
/** `reason`: JSON.parse's message, without the body's text. */
export const InvalidJson = createError<[string]>('SCS_INVALID_JSON', 'Body is not valid JSON: %s. Send a JSON object with Content-Type: application/json', 400);
export const PrototypeKey = createError(
  'SCS_PROTOTYPE_KEY',
  'The body has a "__proto__" key, or a "constructor" key holding "prototype", which this service refuses (prototype ' +
  'poisoning); remove or rename the key',
  400,
);
export const MetricsUnavailable = createError<[string]>('SCS_METRICS_UNAVAILABLE', 'The metrics of the workers could not be gathered: %s', 503);

/** Every 400 lists its fields; a body wrong as a whole names the body. */
export const bodyError = (message: string): FieldError => ({ field: 'body', pointer: '', message });

const ValidationError = createError<[string]>('SCS_VALIDATION', '%s', 400);
/** `errorsTruncated`: whoever found them stopped looking. */
export class ValidationFailed extends ValidationError {
  constructor(readonly errors: FieldError[], message = 'The request is not valid', readonly errorsTruncated = false) {
    super(message);
  }
}

/** A 400 naming the first place too deep (body-policy.ts). */
export class TooDeep extends createError<[number, string]>('SCS_TOO_DEEP', 'The JSON body nests deeper than %d levels, first at %s', 400) {
  constructor(depth: number, readonly errors: FieldError[]) {
    super(depth, errors[0]?.field ?? 'body');
  }
}
/** A 400 naming the object (body-policy.ts). */
export class TooManyKeys extends createError<[number, string]>(
  'SCS_TOO_MANY_KEYS', 'The JSON body has an object of more than %d keys, at %s', 400,
) {
  constructor(keys: number, readonly errors: FieldError[]) {
    super(keys, errors[0]?.field ?? 'body');
  }
}

/** RFC 6750; a refusal may name a more precise one. */
const BEARER_CHALLENGE = 'Bearer realm="compliance"';
/** `bearerError` (RFC 6750) goes into the challenge. */
export class Unauthorized extends createError<[string]>('SCS_UNAUTHORIZED', '%s', 401) {
  readonly challenge: string;
  constructor(message: string, bearerError?: string) {
    super(message);
    // error_description in the characters RFC 6750 allows there (printable ASCII but " and \).
    this.challenge = bearerError
      ? `${BEARER_CHALLENGE}, error="${bearerError}", error_description="${message.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '')}"`
      : BEARER_CHALLENGE;
  }
}
/** The route names no scope, or (with `scope`) the token lacks it. */
export class Forbidden extends createError<[string]>('SCS_FORBIDDEN', '%s', 403) {
  readonly challenge?: string;
  constructor(message: string, scope?: string) {
    super(message);
    if (scope !== undefined) this.challenge = `${BEARER_CHALLENGE}, error="insufficient_scope", scope="${scope}"`;
  }
}

/** 503s by choice: not logged as outages, nor with a stack trace. */
const deliberate503 = <C extends unknown[]>(code: string, message: string, retryAfterSeconds: number) =>
  class extends createError<C>(code, message, 503, Error, false) {
    readonly deliberate = true;
    retryAfterSeconds = retryAfterSeconds;
  };
export const ShuttingDown = deliberate503<[string]>('SCS_SHUTTING_DOWN', 'This instance is shutting down; %s', 1);
export const Overloaded = deliberate503<[number, number]>(
  'SCS_OVERLOADED', 'The service is overloaded (event loop delay %d ms, over %d ms); retry shortly', 1,
);
export const AuthUnavailable = deliberate503<[string]>('SCS_AUTH_UNAVAILABLE', '%s', 5);
/** /health/ready: the database does not answer. */
export const DatabaseNotReady = deliberate503<[]>('SCS_DATABASE_UNAVAILABLE', 'The database does not answer, or cannot write to its storage', 1);
/** /health/ready: the storage refuses writes (StorageFull's Retry-After). */
export class StorageFullNotReady extends deliberate503<[]>(
  'SCS_STORAGE_FULL', 'The database\'s storage is full: writes are refused until space is freed', 1,
) {
  constructor(retryAfterSeconds: number) {
    super();
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The Idempotency-Key was used with another request. */
export const IdempotencyKeyReused = createError(
  'SCS_IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with another request body; use a new key for a new request', 422,
);
/** A request with the Idempotency-Key still runs: retry after a second. */
export class IdempotencyInProgress extends createError(
  'SCS_IDEMPOTENCY_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress', 409,
) {
  readonly retryAfterSeconds = 1;
}

interface CodedError extends FastifyError {
  detail?: string;
  errors?: FieldError[];
  errorsTruncated?: boolean;
  retryAfterSeconds?: number;
  /** WWW-Authenticate; a 401 without one gets the plain challenge. */
  challenge?: string;
  /** Not logged as an outage. */
  deliberate?: boolean;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 408: 'Request Timeout', 409: 'Conflict', 410: 'Gone', 412: 'Precondition Failed', 413: 'Content Too Large',
  414: 'URI Too Long', 415: 'Unsupported Media Type', 422: 'Unprocessable Content', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 503: 'Service Unavailable',
};

/**
 * Every problem carries an SCS_ code: the zkp module's ZKP_X is SCS_ZKP_X; any other becomes SCS_ and its status's
 * title (SCS_BAD_REQUEST), or SCS_HTTP_<status>.
 */
export function problemCode(code: string | undefined, status: number): string {
  if (code?.startsWith('SCS_')) return code;
  if (code?.startsWith('ZKP_')) return `SCS_${code}`;
  const title = TITLES[status];
  return title ? `SCS_${title.toUpperCase().replace(/ /g, '_')}` : `SCS_HTTP_${status}`;
}

const TYPES: Record<string, string> = {
  SCS_VALIDATION: 'urn:problem:validation',
  FST_ERR_VALIDATION: 'urn:problem:validation',
};

/** At most MAX_FIELD_ERRORS field errors, and errorsTruncated past them. */
function boundedErrors(errors: FieldError[] | undefined, truncated: boolean | undefined): Pick<Problem, 'errors' | 'errorsTruncated'> {
  if (errors === undefined) return {};
  const more = truncated === true || errors.length > MAX_FIELD_ERRORS;
  return { errors: errors.length > MAX_FIELD_ERRORS ? errors.slice(0, MAX_FIELD_ERRORS) : errors, ...(more && { errorsTruncated: true }) };
}

function problem(status: number, fields: Partial<Problem>): Problem {
  const code = problemCode(fields.code, status);
  return {
    type: fields.type ?? TYPES[code] ?? `urn:problem:${code.toLowerCase().replace(/_/g, '-')}`,
    title: fields.title ?? TITLES[status] ?? 'Error',
    status,
    ...(fields.detail !== undefined && { detail: fields.detail }),
    ...(fields.instance !== undefined && { instance: fields.instance }),
    code,
    ...boundedErrors(fields.errors, fields.errorsTruncated),
  };
}

const pathOf = (url: string): string => url.split('?', 1)[0] ?? url;

/**
 * Answers problem+json and logs the code and status, never the detail or fields, which may quote the client. Also
 * called by handleFrameworkError, whose reply belongs to the router's context.
 */
function sendProblem(reply: FastifyReply, status: number, fields: Partial<Problem>): FastifyReply {
  const body = problem(status, { instance: pathOf(reply.request.url), ...fields });
  reply.request.log.info({ problem: body.code, status }, 'answered with a problem');
  return reply.code(status).type('application/problem+json').send(body);
}

/** ('body', '/credentials/0/id') -> body.credentials.0.id */
function fieldName(part: string, pointer: string): string {
  const segments = pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [part, ...segments].join('.');
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** "a", "a or b", "a, b or c" */
const orList = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);
const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The paths above a JSON pointer: '/a/b' -> '', '/a'. */
function * ancestors(pointer: string): Generator<string> {
  for (let i = pointer.indexOf('/'); i !== -1; i = pointer.indexOf('/', i + 1)) yield pointer.slice(0, i);
}

/** Keywords whose error only says a branch failed; the branch's own errors name the fields. */
const BRANCHING = new Set(['anyOf', 'oneOf', 'if']);

/**
 * Ajv errors to one message per field, grouped once. A failed anyOf reports every branch: a type mismatch is dropped
 * where another error shows the value has a branch's type; the rest make one message, enums one list.
 */
export function fieldErrors(part: string, errors: AjvError[]): FieldError[] {
  const reported = errors.filter((e) => errors.length === 1 || !BRANCHING.has(e.keyword));
  const atPath = new Map<string, AjvError[]>();
  // A type mismatch at these fields is explained by another error.
  const explainedAt = new Set<string>();
  for (const e of reported) {
    const here = atPath.get(e.instancePath);
    if (here) here.push(e);
    else atPath.set(e.instancePath, [e]);
    if (e.keyword !== 'type') explainedAt.add(e.instancePath);
    for (const above of ancestors(e.instancePath)) explainedAt.add(above);
  }
  const at = (path: string) => atPath.get(path) ?? [];
  const out: FieldError[] = [];
  const seen = new Set<string>();
  const add = (pointer: string, message: string) => {
    if (seen.has(`${pointer} ${message}`)) return;
    seen.add(`${pointer} ${message}`);
    out.push({ field: fieldName(part, pointer), pointer, message });
  };
  const grouped = new Set<string>();
  const firstOfGroup = (path: string, group: string) => !grouped.has(`${group} ${path}`) && grouped.add(`${group} ${path}`);
  for (const e of reported) {
    const path = e.instancePath;
    if (e.keyword === 'required') {
      add(`${path}/${String(e.params.missingProperty)}`, 'is required');
    } else if (e.keyword === 'additionalProperties') {
      add(`${path}/${String(e.params.additionalProperty)}`, 'is not allowed here');
    } else if (e.keyword === 'const' || e.keyword === 'enum') {
      if (!firstOfGroup(path, 'values')) continue;
      const values = [...new Set(at(path).flatMap((o) =>
        o.keyword === 'const' ? [o.params.allowedValue] : o.keyword === 'enum' && Array.isArray(o.params.allowedValues) ? o.params.allowedValues : []))];
      add(path, values.length === 1 ? `must be ${shown(values[0])}` : `must be one of ${values.map(shown).join(', ')}`);
    } else if (e.keyword === 'type') {
      if (explainedAt.has(path) || !firstOfGroup(path, 'types')) continue;
      const types = [...new Set(at(path).flatMap((o) => (o.keyword === 'type' ? String(o.params.type).split(',') : [])))];
      const wanted = types.length > 1 ? types.filter((t) => t !== 'null') : types;
      add(path, `must be ${orList(wanted)}`);
    } else {
      add(path, e.message ?? 'is not valid');
    }
  }
  return out;
}

const SEND_JSON = 'Send a JSON object with Content-Type: application/json';

/** Fastify's body-parsing errors, as this service's codes. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; detail: (request: FastifyRequest) => string; body?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413, code: 'SCS_BODY_TOO_LARGE',
    detail: (request) => `The body is larger than ${request.routeOptions.bodyLimit ?? 'the'} bytes this service accepts; send a smaller body`,
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415, code: 'SCS_UNSUPPORTED_MEDIA_TYPE',
    detail: (request) => {
      const given = request.headers['content-type'];
      const what = given === undefined ? 'A body without a Content-Type header' : `Content-Type ${JSON.stringify(given.slice(0, 100))}`;
      return `${what} is not accepted here. ${SEND_JSON} (PATCH also takes application/merge-patch+json)`;
    },
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400, code: 'SCS_EMPTY_BODY', detail: () => `The body is empty, but its Content-Type says JSON. ${SEND_JSON}`,
    body: 'is empty; send a JSON object',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    status: 400, code: 'SCS_INVALID_JSON', detail: () => `Body is not valid JSON. ${SEND_JSON}`, body: 'is not valid JSON',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400, code: 'SCS_BAD_CONTENT_LENGTH',
    detail: () => 'The body\'s length is not the one its Content-Length header states; send the exact length in bytes, or no Content-Length',
  },
};

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: CodedError, request: FastifyRequest, reply: FastifyReply) => {
    if (error.validation) {
      const part = error.validationContext ?? 'body';
      return sendProblem(reply, 400, {
        code: 'SCS_VALIDATION',
        detail: `The request ${part} is not valid`,
        errors: fieldErrors(part, error.validation),
        errorsTruncated: overBudget(error.validation),
      });
    }
    const framework = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
    if (framework) {
      return sendProblem(reply, framework.status, {
        code: framework.code, detail: framework.detail(request), ...(framework.body && { errors: [bodyError(framework.body)] }),
      });
    }
    if (error instanceof SyntaxError) {
      return sendProblem(reply, 400, { code: 'SCS_INVALID_JSON', detail: `Body is not valid JSON. ${SEND_JSON}`, errors: [bodyError('is not valid JSON')] });
    }
    const status = error.statusCode ?? 500;
    const retry = error.retryAfterSeconds;
    if (status >= 400 && status < 500) {
      const challenge = error.challenge ?? (status === 401 ? BEARER_CHALLENGE : undefined);
      if (challenge !== undefined) reply.header('WWW-Authenticate', challenge);
      if (retry !== undefined) reply.header('Retry-After', String(retry));
      return sendProblem(reply, status, {
        code: error.code, detail: error.detail ?? error.message, ...(error.errors && { errors: error.errors, errorsTruncated: error.errorsTruncated }),
      });
    }
    if (status === 503) {
      reply.header('Retry-After', String(retry ?? 1));
      if (error.deliberate !== true) request.log.warn({ err: error }, 'service unavailable');
      return sendProblem(reply, 503, { code: error.code, detail: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, status >= 500 && status < 600 ? status : 500, {
      code: 'SCS_INTERNAL',
      detail: 'An unexpected error occurred; it has been logged with the request id',
    });
  });

  app.setNotFoundHandler(async (request) => {
    throw new RouteNotFound(request.method, pathOf(request.url));
  });
}

/** Fastify's `frameworkErrors`: the router's refusals, before any hook, as problem+json with the x-request-id. */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = pathOf(request.url);
  reply.header('x-request-id', request.id);
  if (error.code === 'FST_ERR_BAD_URL') {
    sendProblem(reply, 400, { code: 'SCS_BAD_URL', detail: 'The request path is not a valid URL: a percent-encoding is malformed' });
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendProblem(reply, 414, { code: 'SCS_PATH_PARAMETER_TOO_LONG', detail: 'A path parameter is longer than this service accepts' });
  } else {
    request.log.error({ err: error, path }, 'router error');
    sendProblem(reply, 500, { code: 'SCS_INTERNAL', detail: 'An unexpected error occurred; it has been logged with the request id' });
  }
}

/** Fastify's `clientErrorHandler`: what Node's HTTP parser refuses, as problem+json, then the connection closed. */
export function handleClientError(this: FastifyInstance, error: ConnectionError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'SCS_REQUEST_TIMEOUT', 'The request was not received in time; send it again, whole']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'SCS_HEADERS_TOO_LARGE', 'The request headers are larger than this service accepts; send fewer or shorter headers']
        : [400, 'SCS_MALFORMED_REQUEST', 'The request is not valid HTTP/1.1; send a well-formed request line and headers'];
  this.log.info({ problem: code, status }, 'answered with a problem');
  if (socket.writable) {
    const body = JSON.stringify(problem(status, { code, detail }));
    socket.write(`HTTP/1.1 ${status} ${TITLES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

const RateLimitedError = createError<[string]>('SCS_RATE_LIMITED', '%s', 429);
class RateLimited extends RateLimitedError {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message);
  }
}

/** @fastify/rate-limit's error: always 429 (its 403 is for `ban`, not set). */
export const rateLimited = (message: string, context: { ttl: number }): Error =>
  new RateLimited(message, Math.max(1, Math.ceil(context.ttl / 1000)));

/** The root's error handler (a named plugin, so not encapsulated). */
export const problemDetails = fp(async (app: FastifyInstance) => registerErrorHandling(app), { name: 'problem-details', fastify: '5.x' });
