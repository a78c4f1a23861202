/**
 * Why the JSON content-type parser is installed here and not left to Fastify: it IS Fastify's parser
 * (`getDefaultJsonParser`: secure-json-parse, `__proto__` and `constructor.prototype` keys refused as the instance's
 * onProtoPoisoning/onConstructorPoisoning options say), plus what Fastify's cannot do:
 * - hand the body's text on. JSON.parse loses what was sent where the service must know it: a number it would change
 *   (exact-numbers.ts: the scenario routes refuse 2^64, 1e-400, -0, which only the text still shows as written), and
 *   execute's memo of credential digests keyed by the text's hash. The checks on the text run in a hook
 *   (`keptBodies`), not in the parser;
 * - take a DELETE's empty body as no body (clients send Content-Type: application/json on every call);
 * - say where a text stops being JSON (Fastify's error says only that it is not).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidJson, PrototypeKey, ValidationFailed, bodyError } from './errors.js';
import { inexactNumbers } from './exact-numbers.js';
import { mayHoldUnstorable, unstorableText } from '../domain/storable-text.js';
import { MAX_FIELD_ERRORS } from '../schemas/problem.js';

/**
 * Why a text Fastify's parser refused does not parse: JSON.parse's message (the position, or the unexpected token)
 * less the excerpt of the text it may add; or, when the text is JSON, the key secure-json-parse refused. Run on refused
 * texts only.
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

/**
 * Parses `contentType` bodies of this context (and its children) with Fastify's own JSON parser (and the additions
 * above), replacing the parser it had; `onText` sees each body's text once it parsed.
 */
export function useJsonParser(
  app: FastifyInstance,
  { onText, contentType = 'application/json' }: { onText?: (request: FastifyRequest, text: string) => void; contentType?: string } = {},
): void {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  if (app.hasContentTypeParser(contentType)) app.removeContentTypeParser(contentType);
  app.addContentTypeParser<string>(contentType, { parseAs: 'string' }, (request, text, done) => {
    if (text === '' && request.method === 'DELETE') return done(null, undefined);
    parse(request, text, (err, body) => {
      if (err) return done('code' in err && err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? notJson(text) : err);
      onText?.(request, text);
      done(null, body);
    });
  });
}

/**
 * For the routes that store what they are sent (scenarios): keeps each JSON body's text in this context and refuses,
 * in a preValidation hook, a body (400, each field named) stating a number JSON.parse would change (exact-numbers.ts)
 * or holding text a database cannot store (storable-text.ts). `accept` adds a content type in a child context (PATCH's
 * merge patch) whose bodies the same hook checks.
 */
export function keptBodies(app: FastifyInstance): { accept: (child: FastifyInstance, contentType: string) => void } {
  const texts = new WeakMap<FastifyRequest, string>();
  const accept = (context: FastifyInstance, contentType: string) =>
    useJsonParser(context, { contentType, onText: (request, text) => texts.set(request, text) });
  accept(app, 'application/json');
  app.addHook('preValidation', async (request) => {
    const text = texts.get(request);
    if (text === undefined) return;
    // One more than a problem lists: enough to say that there are more, and no more work (a body of 140,000 1e-400s).
    const inexact = inexactNumbers(text, MAX_FIELD_ERRORS + 1);
    if (inexact.length > 0) throw new ValidationFailed(inexact, 'The body states a number the service cannot keep exactly');
    const unstorable = mayHoldUnstorable(text) ? unstorableText(request.body, [], MAX_FIELD_ERRORS + 1) : [];
    if (unstorable.length > 0) throw new ValidationFailed(unstorable, 'The body holds text the service cannot store');
  });
  return { accept };
}
