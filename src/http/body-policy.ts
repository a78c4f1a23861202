/**
 * Every request body goes through this plugin: one JSON parser, Fastify's own (`getDefaultJsonParser`:
 * secure-json-parse, `__proto__` and `constructor.prototype` keys refused), and one preValidation hook. A route states
 * what it needs of its body in its config (`config: { body: BodyPolicy }`); what it does not state is the default.
 * The text is handed on where JSON.parse loses what was sent: a number it would change (exact-numbers.ts) and execute's
 * memo of credential digests keyed by the text's hash.
 */
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { InvalidJson, PrototypeKey, TooDeep, TooManyKeys, ValidationFailed, bodyError } from './errors.js';
import { inexactNumbers } from './exact-numbers.js';
import { mayHoldUnstorable, unstorableText } from '../domain/storable-text.js';
import { MAX_FIELD_ERRORS } from '../schemas/problem.js';

/** The deepest JSON nesting a request body may have (credentialSubject included). */
export const MAX_JSON_DEPTH = 32;

/**
 * The most keys one object of a request body may have. No schema object has more than a few dozen fields, and a
 * credentialSubject or an inline JSON-LD context a few hundred at most; this is far above them. Listing an object's
 * keys costs V8 time for all of them at once (even to read only the first), and Ajv lists them twice (deciding, then
 * explaining): one object of 83,000 keys in 1 MB cost over 100 ms to refuse. This check lists each object's keys once.
 */
export const MAX_JSON_KEYS = 1000;

export const MERGE_PATCH = 'application/merge-patch+json';

/** What a route takes of a body. Unset fields take the defaults. */
export interface BodyPolicy {
  /** The largest body in bytes (the route's bodyLimit; default BODY_LIMIT). */
  maxBytes?: number;
  /** The deepest nesting (default MAX_JSON_DEPTH). */
  maxDepth?: number;
  /** The most keys of one object (default MAX_JSON_KEYS). */
  maxKeys?: number;
  /** Refuse (400, each field named) a number JSON.parse would change, and text a database cannot store. */
  storedAsSent?: boolean;
  /** Also take application/merge-patch+json (415 elsewhere). */
  mergePatch?: boolean;
  /** Sees each JSON body's text once it parsed. */
  onText?: (request: FastifyRequest, text: string) => void;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    body?: BodyPolicy;
  }
}

/** Where a parsed JSON value passes a shape limit: the keys and indexes down to the object or array, and why. */
export interface ShapeProblem {
  at: (string | number)[];
  /** Set when the object at `at` has too many keys (how many); unset when it nests too deep. */
  keys?: number;
}

/**
 * The first place, depth first, where a parsed JSON value nests deeper than `depth` levels (a scalar is 0 deep, `{}`
 * 1) or has an object of more than `maxKeys` keys. Recursive, but never more than `depth` calls deep, so a deep
 * document cannot overflow the stack here; each object's keys are listed once (run on every body).
 */
export function shapeProblem(value: unknown, depth: number, maxKeys: number): ShapeProblem | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth <= 0) return { at: [] };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = shapeProblem(value[i], depth - 1, maxKeys);
      if (found) {
        found.at.unshift(i);
        return found;
      }
    }
    return undefined;
  }
  // Own keys only: an inherited enumerable key is not the document's.
  const keys = Object.keys(value);
  if (keys.length > maxKeys) return { at: [], keys: keys.length };
  for (const key of keys) {
    const found = shapeProblem(Reflect.get(value, key), depth - 1, maxKeys);
    if (found) {
      found.at.unshift(key);
      return found;
    }
  }
  return undefined;
}

function refuseShape(body: unknown, maxDepth: number, maxKeys: number): void {
  const found = shapeProblem(body, maxDepth, maxKeys);
  if (!found) return;
  const field = ['body', ...found.at].join('.');
  const pointer = found.at.map((k) => `/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  if (found.keys === undefined) {
    throw new TooDeep(maxDepth, [{ field, pointer, message: `is nested ${maxDepth + 1} levels deep; the body may nest at most ${maxDepth}` }]);
  }
  throw new TooManyKeys(maxKeys, [{ field, pointer, message: `has ${found.keys} keys; an object of the body may have at most ${maxKeys}` }]);
}

/** A stored body is refused, each field named, when JSON.parse changed a number of its text or a database cannot store its text. */
function refuseUnkept(text: string, body: unknown): void {
  // One more than a problem lists: enough to say that there are more, and no more work (a body of 140,000 1e-400s).
  const inexact = inexactNumbers(text, MAX_FIELD_ERRORS + 1);
  if (inexact.length > 0) throw new ValidationFailed(inexact, 'The body states a number the service cannot keep exactly');
  const unstorable = mayHoldUnstorable(text) ? unstorableText(body, [], MAX_FIELD_ERRORS + 1) : [];
  if (unstorable.length > 0) throw new ValidationFailed(unstorable, 'The body holds text the service cannot store');
}

/**
 * Why a text Fastify's parser refused does not parse: JSON.parse's message (the position, or the unexpected token)
 * less the excerpt of the text it may add; or, when the text is JSON, the key secure-json-parse refused.
 */
function notJson(text: string): Error {
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    const reason = String(err instanceof Error ? err.message : err).replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');
    return Object.assign(new InvalidJson(reason), { errors: [bodyError(`is not valid JSON: ${reason}`)] });
  }
  return new PrototypeKey();
}

async function registerBodyPolicy(app: FastifyInstance): Promise<void> {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  const kept = new WeakMap<FastifyRequest, string>();

  app.addHook('onRoute', (route) => {
    const maxBytes = route.config?.body?.maxBytes;
    if (maxBytes !== undefined) route.bodyLimit = maxBytes;
  });

  // JSON only: Fastify also parses text/plain by default, which would turn a wrong Content-Type into a 400.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser<string>(['application/json', MERGE_PATCH], { parseAs: 'string' }, (request, text, done) => {
    const policy = request.routeOptions.config?.body;
    if (policy?.mergePatch !== true && request.headers['content-type']?.toLowerCase().startsWith(MERGE_PATCH)) {
      return done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(MERGE_PATCH));
    }
    // Clients send Content-Type: application/json on every call, a DELETE's empty body included.
    if (text === '' && request.method === 'DELETE') return done(null, undefined);
    parse(request, text, (err, body) => {
      if (err) return done('code' in err && err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? notJson(text) : err);
      policy?.onText?.(request, text);
      if (policy?.storedAsSent === true) kept.set(request, text);
      done(null, body);
    });
  });

  // In a hook, not the parser: the shape limits are checked first, on every body.
  app.addHook('preValidation', async (request) => {
    const policy = request.routeOptions.config?.body;
    refuseShape(request.body, policy?.maxDepth ?? MAX_JSON_DEPTH, policy?.maxKeys ?? MAX_JSON_KEYS);
    const text = kept.get(request);
    if (text !== undefined) refuseUnkept(text, request.body);
  });
}

export const bodyPolicy = fp(registerBodyPolicy, { name: 'body-policy', fastify: '5.x' });
