import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../domain/metrics.js';
import { MetricsUnavailable } from './errors.js';
import { problemResponses } from './responses.js';

/** The latency hook and the /metrics route on `app`. */
function register(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', {
    schema: {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description: 'Open like the health checks; expose it to your scraper only. No label carries personal data. ' +
        'With WORKERS above 1, the figures of every worker process, summed (503 if they cannot be gathered).',
      tags: ['health'],
      produces: ['text/plain'],
      response: {
        200: Type.String({ description: 'Prometheus text exposition format' }),
        ...problemResponses([503], {
          503: 'The figures of the worker processes could not be gathered (code SCS_METRICS_UNAVAILABLE), or the ' +
            'service is overloaded (SCS_OVERLOADED): scrape again.',
        }),
      },
    },
    logLevel: 'warn',
  }, async (_request, reply) => {
    const text = await metrics.exposition().catch((err: Error) => {
      throw metrics.gathersWorkers ? new MetricsUnavailable(err.message) : err;
    });
    reply.type(metrics.registry.contentType);
    return text;
  });
}

/** Request counts and latencies of every route (onResponse), and GET /metrics: a named plugin on the root. */
export const metricsPlugin = fp(async (app: FastifyInstance, { metrics }: { metrics: Metrics }) => register(app, metrics), {
  name: 'metrics', fastify: '5.x',
});
