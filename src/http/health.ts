import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ScenarioStore } from '../store/types.js';
import { problemResponses, sendProblem } from './errors.js';

const Health = Type.Object({ status: Type.String({ examples: ['ok'] }) }, { additionalProperties: false });

export const healthRoutes: FastifyPluginAsyncTypebox<{ store: ScenarioStore }> = async (app, { store }) => {
  app.get('/health/live', {
    schema: {
      operationId: 'live',
      summary: 'The process is up',
      description: 'Never shed under load (an orchestrator would restart a busy but healthy process); /health/ready is.',
      tags: ['health'],
      response: { 200: Health },
    },
    config: { loadShedding: false },
    logLevel: 'warn',
  }, async () => ({ status: 'ok' }));

  app.get('/health/ready', {
    schema: {
      operationId: 'ready', summary: 'The database answers', tags: ['health'],
      response: { 200: Health, ...problemResponses(503) },
    },
    logLevel: 'warn',
  }, async (request, reply) => {
    try {
      await store.ping();
      return { status: 'ok' };
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      reply.header('Retry-After', '1');
      return sendProblem(reply, 503, { code: 'SCS_DATABASE_UNAVAILABLE', detail: 'The database does not answer' });
    }
  });
};
