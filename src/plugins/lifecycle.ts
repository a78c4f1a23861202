/** Timers stop in preClose, before the listener closes; connections and threads close in onClose, after the last request. */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { WebhookDispatcher } from '../domain/webhooks.js';
import type { BoundTimer } from '../execution/index.js';
import type { Store } from '../store/types.js';
import type { CredentialVerifier } from '../trust/index.js';

function every(app: FastifyInstance, ms: number, task: () => Promise<unknown>): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    timer = setInterval(task, ms).unref();
  });
  app.addHook('preClose', async () => clearInterval(timer));
}

export interface StoreLifecycleOptions {
  store: Store;
  now: () => number;
  /** EXECUTION_RETENTION_DAYS */
  retentionDays: number;
  purgeIntervalMs: number;
  idempotencyTtlMs: number;
}

/** Purges at start and periodically; the store closes last. */
export const storeLifecycle = fp(async (app: FastifyInstance, o: StoreLifecycleOptions) => {
  const purge = async () => {
    const before = new Date(o.now() - o.retentionDays * 24 * 3600 * 1000).toISOString();
    try {
      const purged = await o.store.purgeExecutions(before);
      if (purged > 0) app.log.info({ purged, before }, 'purged old execution records');
      const keys = await o.store.purgeIdempotencyKeys(new Date(o.now() - o.idempotencyTtlMs).toISOString());
      if (keys > 0) app.log.info({ keys }, 'purged expired idempotency keys');
    } catch (err) {
      app.log.warn({ err }, 'execution purge failed; will retry');
    }
  };
  app.addHook('onReady', purge);
  every(app, o.purgeIntervalMs, purge);
  app.addHook('onClose', async () => o.store.close());
}, { name: 'store-lifecycle', fastify: '5.x' });

export const verifierLifecycle = fp(async (app: FastifyInstance, o: { verifier: CredentialVerifier; warm: boolean }) => {
  if (o.warm) app.addHook('onReady', async () => o.verifier.warm());
  app.addHook('onClose', () => o.verifier.close());
}, { name: 'verifier-lifecycle', fastify: '5.x' });

export const scenarioTimers = fp(async (app: FastifyInstance, o: { timers: readonly BoundTimer[] }) => {
  for (const t of o.timers) {
    every(app, t.everyMs, () => t.run().catch((err: unknown) => app.log.warn({ err, scenarioType: t.type }, `${t.name} failed; will retry`)));
  }
}, { name: 'scenario-timers', fastify: '5.x' });

export const webhooksLifecycle = fp(async (app: FastifyInstance, o: { webhooks: WebhookDispatcher }) => {
  app.addHook('onReady', async () => o.webhooks.start());
  app.addHook('preClose', async () => o.webhooks.stop());
}, { name: 'webhooks-lifecycle', fastify: '5.x' });
