import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { BoundRoute } from '../execution/index.js';
import { rateLimited } from './errors.js';
import { answered, problemResponses } from './responses.js';

/**
 * The routes scenario types declare (ScenarioRoute: OffChainZKP's callback), each in a context of its own (its text
 * parsers stay its own). Open: outside bearer auth, the handler's checks decide.
 */
export const typeRoutes: FastifyPluginAsyncTypebox<{ routes: readonly BoundRoute[] }> = async (app, { routes }) => {
  for (const route of routes) {
    await app.register(async (scope) => {
      if (route.textTypes && route.textTypes.length > 0) {
        scope.addContentTypeParser([...route.textTypes], { parseAs: 'string' }, (_req, body, done) => done(null, body));
      }
      // Instead of the service-wide limit; off with RATE_LIMIT_MAX=0.
      const limit = route.perClient;
      const perClient = limit && limit.perMinute > 0 && {
        max: limit.perMinute,
        timeWindow: 60_000,
        keyGenerator: (request: FastifyRequest) => `${route.operationId}:${request.ip}`,
        errorResponseBuilder: (_request: FastifyRequest, context: { max: number; after: string; ttl: number }) =>
          rateLimited(`Rate limit exceeded: at most ${context.max} ${limit.what} a minute from this client address; retry in ${context.after}`, context),
      };
      scope.route({
        method: route.method,
        url: route.path,
        config: {
          ...(perClient && { rateLimit: perClient }),
          ...(route.bodyLimit !== undefined && { body: { maxBytes: route.bodyLimit } }),
        },
        schema: {
          operationId: route.operationId,
          summary: route.summary,
          description: route.description,
          tags: [...route.tags],
          consumes: [...route.consumes],
          params: route.params,
          body: route.body,
          response: {
            200: answered(route.ok.schema, route.ok.description),
            ...problemResponses(Object.keys(route.problems).map(Number), route.problems),
          },
        },
        handler: async (request) => route.handle({ params: request.params as Record<string, string>, body: request.body }),
      });
    });
  }
};
