import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { InvalidJson, PrototypeKey, TooDeep, TooManyKeys, ValidationFailed, bodyError } from './errors.js';
import { inexactNumbers } from './exact-numbers.js';
import { mayHoldUnstorable, unstorableText } from '../domain/storable-text.js';
import { MAX_FIELD_ERRORS } from '../schemas/problem.js';

export const MAX_JSON_DEPTH = 32;

/** Far above any schema's object: listing 83,000 keys (here, twice in Ajv) cost 100 ms. */
export const MAX_JSON_KEYS = 1000;

export const MERGE_PATCH = 'application/merge-patch+json';

// Fastify parses no body of these.
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE']);

/** What a route takes of a body (`config: { body }`); unset fields take the defaults. */
interface BodyPolicy {
  maxBytes?: number;
  maxDepth?: number;
  maxKeys?: number;
  /** 400 for a number JSON.parse would change, or text a database cannot store. */
  storedAsSent?: boolean;
  mergePatch?: boolean;
  onText?: (request: FastifyRequest, text: string) => void;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    body?: BodyPolicy;
  }
}

export interface ShapeProblem {
  at: (string | number)[];
  /** How many keys the object at `at` has; unset when it nests too deep. */
  keys?: number;
}

/** The first place deeper than `depth` (`{}` is 1) or with over `maxKeys` keys; recursion stops at `depth`. */
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

function refuseUnkept(text: string, body: unknown): void {
  const inexact = inexactNumbers(text, MAX_FIELD_ERRORS + 1);
  if (inexact.length > 0) throw new ValidationFailed(inexact, 'The body states a number the service cannot keep exactly');
  const unstorable = mayHoldUnstorable(text) ? unstorableText(body, [], MAX_FIELD_ERRORS + 1) : [];
  if (unstorable.length > 0) throw new ValidationFailed(unstorable, 'The body holds text the service cannot store');
}

/** Where a refused text stops being JSON, or the key secure-json-parse refused. */
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

  // Fastify's text/plain parser would turn a wrong Content-Type into a 400.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // Before the body is read; an unknown route's 404 comes first.
  app.addHook('preParsing', async (request) => {
    if (request.is404 || BODYLESS.has(request.method) || request.mediaType !== MERGE_PATCH) return;
    if (request.routeOptions.config?.body?.mergePatch !== true) throw new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(MERGE_PATCH);
  });
  app.addContentTypeParser<string>(['application/json', MERGE_PATCH], { parseAs: 'string' }, (request, text, done) => {
    const policy = request.routeOptions.config?.body;
    // Clients send Content-Type: application/json with a DELETE's empty body too.
    if (text === '' && request.method === 'DELETE') return done(null, undefined);
    parse(request, text, (err, body) => {
      if (err) return done('code' in err && err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? notJson(text) : err);
      policy?.onText?.(request, text);
      if (policy?.storedAsSent === true) kept.set(request, text);
      done(null, body);
    });
  });

  // Shape limits first, on every body.
  app.addHook('preValidation', async (request) => {
    const policy = request.routeOptions.config?.body;
    refuseShape(request.body, policy?.maxDepth ?? MAX_JSON_DEPTH, policy?.maxKeys ?? MAX_JSON_KEYS);
    const text = kept.get(request);
    if (text !== undefined) refuseUnkept(text, request.body);
  });
}

export const bodyPolicy = fp(registerBodyPolicy, { name: 'body-policy', fastify: '5.x' });
