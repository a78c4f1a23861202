import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ExecutionResult } from '../schemas/execution.js';
import type { Store } from '../store/types.js';
import type { VerifierStats } from '../trust/types.js';
import { MetricsUnavailable } from './errors.js';
import { problemResponses } from './responses.js';

/**
 * Prometheus metrics. Labels are route patterns, methods, statuses, scenario types, verdict statuses and store
 * operations: never ids, addresses, tokens or anything from a credential.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total', help: 'HTTP requests by route pattern, method and status', labelNames: ['method', 'route', 'status'], registers: [this.registry],
  });

  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds', help: 'HTTP request latency by route pattern, method and status',
    labelNames: ['method', 'route', 'status'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private readonly verdicts = new Counter({
    name: 'compliance_rule_verdicts_total', help: 'Rule results of execute calls by scenario type and status',
    labelNames: ['scenario_type', 'status'], registers: [this.registry],
  });

  private readonly storeLatency = new Histogram({
    name: 'store_operation_duration_seconds', help: 'Database operation latency by operation and outcome',
    labelNames: ['operation', 'outcome'], buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2],
    registers: [this.registry],
  });

  /** The text /metrics answers: this process's registry, or in a cluster worker every worker's, summed. */
  private readonly exposition: () => Promise<string>;

  /**
   * `gather`, in a cluster worker: makes the function that collects every worker's figures from this registry (the
   * composition root hands in cluster.ts's clusterMetrics); without it, this process's registry alone.
   */
  constructor(gather?: (registry: Registry) => () => Promise<string>) {
    collectDefaultMetrics({ register: this.registry });
    if (gather) {
      const all = gather(this.registry);
      this.exposition = () => all().catch((err: Error) => { throw new MetricsUnavailable(err.message); });
    } else {
      this.exposition = () => this.registry.metrics();
    }
  }

  /** The cold verification path's figures, read from the credential verifier at each scrape. */
  watchVerifier(stats: () => VerifierStats): void {
    let counted = 0;
    // eslint-disable-next-line no-new -- a collector: the registry keeps it and calls collect() at each scrape
    new Counter({
      name: 'credential_cold_checks_total',
      help: 'First checks of credentials (signature, issuer key, merklization) started in the verification threads',
      registers: [this.registry],
      collect() {
        const now = stats().coldChecks;
        this.inc(now - counted);
        counted = now;
      },
    });
    // eslint-disable-next-line no-new -- a collector: the registry keeps it and calls collect() at each scrape
    new Gauge({
      name: 'credential_cold_queue',
      help: 'Credentials admitted for a first check and not finished (COLD_QUEUE_MAX bounds it)',
      registers: [this.registry],
      collect() {
        this.set(stats().coldReserved);
      },
    });
  }

  countVerdicts(results: readonly ExecutionResult[]): void {
    for (const r of results) this.verdicts.inc({ scenario_type: r.objectType, status: r.result.status });
  }

  /** The store, with every async operation timed. */
  timeStore(store: Store): Store {
    const histogram = this.storeLatency;
    return new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function' || prop === 'close') return value;
        const operation = String(prop);
        return (...args: unknown[]) => {
          const end = histogram.startTimer({ operation });
          const result = value.apply(target, args);
          if (result instanceof Promise) {
            return result.then(
              (v) => { end({ outcome: 'ok' }); return v; },
              (e) => { end({ outcome: 'error' }); throw e; },
            );
          }
          end({ outcome: 'ok' });
          return result;
        };
      },
    });
  }

  /** The latency hook and the /metrics route on `app` (through the `metrics` plugin below). */
  register(app: FastifyInstance): void {
    app.addHook('onResponse', async (request, reply) => {
      const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
      this.requests.inc(labels);
      this.latency.observe(labels, reply.elapsedTime / 1000);
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
      const text = await this.exposition();
      reply.type(this.registry.contentType);
      return text;
    });
  }
}

/** Request counts and latencies of every route (onResponse), and GET /metrics: a named plugin on the root. */
export const metricsPlugin = fp(async (app: FastifyInstance, { metrics }: { metrics: Metrics }) => metrics.register(app), {
  name: 'metrics', fastify: '5.x',
});
