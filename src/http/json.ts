/**
 * Why the JSON content-type parser is installed here and not left to Fastify: it IS Fastify's parser
 * (`getDefaultJsonParser`: secure-json-parse, `__proto__` and `constructor.prototype` keys refused as the instance's
 * onProtoPoisoning/onConstructorPoisoning options say), with the one thing Fastify's cannot do: hand the body's text
 * on. JSON.parse loses what was sent where the service must know it: a number it would change (exact-numbers.ts:
 * the scenario routes refuse 2^64, 1e-400, -0, which only the text still shows as written), and execute's memo of
 * credential digests keyed by the text's hash. The checks on the text run in a hook (`keptBodies`), not in the parser.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationFailed } from './errors.js';
import { inexactNumbers } from './exact-numbers.js';
import { unstorableText } from '../domain/storable-text.js';

type Done = (err: Error | null, body?: unknown) => void;
type JsonParser = (request: FastifyRequest, text: string, done: Done) => void;

/**
 * Parses `contentType` bodies of this context (and its children) with Fastify's own JSON parser, replacing the parser
 * it had; `onText` sees each body's text once it parsed.
 */
export function useJsonParser(
  app: FastifyInstance,
  { onText, contentType = 'application/json' }: { onText?: (request: FastifyRequest, text: string) => void; contentType?: string } = {},
): void {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning) as unknown as JsonParser;
  if (app.hasContentTypeParser(contentType)) app.removeContentTypeParser(contentType);
  app.addContentTypeParser(contentType, { parseAs: 'string' }, (request, text, done) => {
    parse(request, text as string, (err, body) => {
      if (!err) onText?.(request, text as string);
      done(err, body);
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
    const inexact = inexactNumbers(text);
    if (inexact.length > 0) throw new ValidationFailed(inexact, 'The body states a number the service cannot keep exactly');
    const unstorable = unstorableText(request.body);
    if (unstorable.length > 0) throw new ValidationFailed(unstorable, 'The body holds text the service cannot store');
  });
  return { accept };
}
