// Timers stop in preClose, before the listener closes; connections and threads close in onClose, after the last request.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { WebhookDispatcher } from '../domain/webhooks.js';
import type { BoundTimer } from '../execution/index.js';
import type { ExecutionRepository, IdempotencyRepository, StoreHandle } from '../store/types.js';
import type { CredentialVerifier } from '../trust/index.js';

/** Never keeps the process alive. */
function every(app: FastifyInstance, ms: number, task: () => Promise<unknown>): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    timer = setInterval(task, ms).unref();
  });
  app.addHook('preClose', async () => clearInterval(timer));
}

export interface StoreLifecycleOptions {
  store: StoreHandle & Pick<ExecutionRepository, 'purgeExecutions'> & Pick<IdempotencyRepository, 'purgeIdempotencyKeys'>;
  now: () => number;
  retentionDays: number;
  purgeIntervalMs: number;
  idempotencyTtlMs: number;
}

/** Purges at start and periodically; closes the store last. */
export const storeLifecycle = fp(async (app: FastifyInstance, options: StoreLifecycleOptions) => {
  const purge = async () => {
    const before = new Date(options.now() - options.retentionDays * 24 * 3600 * 1000).toISOString();
    try {
      const purged = await options.store.purgeExecutions(before);
      if (purged > 0) app.log.info({ purged, before }, 'purged old execution records');
      const keys = await options.store.purgeIdempotencyKeys(new Date(options.now() - options.idempotencyTtlMs).toISOString());
      if (keys > 0) app.log.info({ keys }, 'purged expired idempotency keys');
    } catch (err) {
      app.log.warn({ err }, 'execution purge failed; will retry');
    }
  };
  app.addHook('onReady', purge);
  every(app, options.purgeIntervalMs, purge);
  app.addHook('onClose', async () => options.store.close());
}, { name: 'store-lifecycle', fastify: '5.x' });

export const verifierLifecycle = fp(async (app: FastifyInstance, options: { verifier: CredentialVerifier; warm: boolean }) => {
  if (options.warm) app.addHook('onReady', async () => options.verifier.warm());
  app.addHook('onClose', () => options.verifier.close());
}, { name: 'verifier-lifecycle', fastify: '5.x' });

/** The timers scenario types declare (OffChainZKP's expiry sweep). */
export const scenarioTimers = fp(async (app: FastifyInstance, options: { timers: readonly BoundTimer[] }) => {
  for (const timer of options.timers) {
    every(app, timer.everyMs, () => timer.run().catch((err: unknown) => app.log.warn({ err, scenarioType: timer.type }, `${timer.name} failed; will retry`)));
  }
}, { name: 'scenario-timers', fastify: '5.x' });

/** The outbox polled from ready until close; deliveries in flight finish before the store closes. */
export const webhooksLifecycle = fp(async (app: FastifyInstance, options: { webhooks: WebhookDispatcher }) => {
  app.addHook('onReady', async () => options.webhooks.start());
  app.addHook('preClose', async () => options.webhooks.stop());
}, { name: 'webhooks-lifecycle', fastify: '5.x' });

/** Follows deployment transactions from ready until close, giving its lease back. */
export const followerLifecycle = fp(async (app: FastifyInstance, options: { follower: { start(): void; stop(): Promise<void> } }) => {
  app.addHook('onReady', async () => options.follower.start());
  app.addHook('preClose', async () => options.follower.stop());
}, { name: 'follower-lifecycle', fastify: '5.x' });
/** What of the deployment service the timers run. */
interface DeploySends {
  readonly configured: boolean;
  recover(olderThanMs?: number): Promise<number>;
  replaceStuck(): Promise<number>;
}

/** A chain error's words without its RPC URL (an API key may be in its path) or request body. */
const logSanitised = async (app: FastifyInstance, err: unknown, message: string) => {
  const { chainErrorText } = await import('../chain/rpc-errors.js');
  app.log.warn({ err: chainErrorText(err, 'deploy') }, message);
};

/** A send untouched this long is no other instance's deploy on its way: the timer carries it on. */
const ABANDONED_SEND_MS = 60_000;

/**
 * Deploy sends a crash left unrecorded are carried on at ready and on a timer; stuck ones replaced
 * (CHAIN_REPLACE_AFTER_MS), mined ones closed.
 */
export const deploymentsLifecycle = fp(async (app: FastifyInstance, options: { deployments: DeploySends; replaceAfterMs: number }) => {
  const { deployments } = options;
  if (!deployments.configured) return;
  const carryOn = async (olderThanMs: number) => {
    const carried = await deployments.recover(olderThanMs);
    if (carried > 0) app.log.info({ carried }, 'deploy transactions stored but not recorded were sent and recorded');
  };
  app.addHook('onReady', async () => {
    await carryOn(0).catch((err: unknown) => logSanitised(app, err, 'carrying on stored deploy transactions failed; will retry'));
  });
  const everyMs = options.replaceAfterMs === 0 ? ABANDONED_SEND_MS : Math.max(1000, Math.floor(options.replaceAfterMs / 4));
  every(app, everyMs, () => carryOn(ABANDONED_SEND_MS).then(() => deployments.replaceStuck())
    .catch((err: unknown) => logSanitised(app, err, 'checking pending deploy transactions failed; will retry')));
}, { name: 'deployments-lifecycle', fastify: '5.x' });
