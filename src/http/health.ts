import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { StringEnum } from '../schemas/common.js';
import type { DatabaseState } from '../services/health.js';
import { DatabaseNotReady, ShuttingDown, StorageFullNotReady } from './errors.js';
import { answered, problemResponses } from './responses.js';

const Health = Type.Object({
  status: Type.String({ examples: ['ok'] }),
  details: Type.Optional(Type.Object({
    chainFollower: Type.Optional(Type.Object({
      behind: Type.Array(Type.String(), {
        description: 'Chains whose deployment transactions this instance could not follow in its last round (the RPC ' +
          'endpoint did not answer, or none is configured for a chain a deployment names).',
      }),
      pending: Type.Integer({ description: 'TxPosted deployment transactions followed.' }),
    }, { additionalProperties: false, description: 'Present while the follower is behind.' })),
    budgets: Type.Optional(StringEnum(['shared', 'per-process'], {
      description: 'With REDIS_URL: `shared` while Redis answers, `per-process` (each instance its own budgets) while it does not.',
    })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Since when Redis has not answered.' })),
  }, { additionalProperties: false, description: 'Present while the chain follower is behind, and with REDIS_URL; the instance still takes traffic.' })),
}, { additionalProperties: false });

export interface HealthOptions {
  database: () => Promise<DatabaseState>;
  /** Whether the instance is stopping (draining or closing): then it is not ready, whatever the database says. */
  stopping: () => boolean;
  /** The chain follower's state on this instance, where it holds the lease. */
  following?: () => { behind: string[]; pending: number; holding: boolean };
  /** With REDIS_URL: whether the budgets are shared now. Never a reason to be unready. */
  budgets?: () => { budgets: 'shared' | 'per-process'; since?: string };
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { database, stopping, following, budgets }) => {
  app.get('/health/live', {
    schema: {
      operationId: 'live',
      summary: 'The process is up',
      description: 'Never shed under load (an orchestrator would restart a busy but healthy process); /health/ready is.',
      tags: ['health'],
      response: { 200: answered(Health, 'The process is up and answers HTTP.') },
    },
    config: { loadShedding: false },
    logLevel: 'warn',
  }, async () => ({ status: 'ok' }));

  app.get('/health/ready', {
    schema: {
      operationId: 'ready', summary: 'The database answers and takes writes', tags: ['health'],
      response: {
        200: answered(Health, 'The database answers and takes writes: this instance can take traffic. With REDIS_URL, ' +
          '`details.budgets` says whether the budgets are shared across instances now.'),
        ...problemResponses([503], {
          503: 'The database does not answer (code SCS_DATABASE_UNAVAILABLE), its storage is full (SCS_STORAGE_FULL: a ' +
            'write was refused for lack of space, and a 64 KiB test write still is), the service is overloaded ' +
            '(SCS_OVERLOADED), or this instance is stopping (SCS_SHUTTING_DOWN, from the stop signal on): send no ' +
            'traffic to this instance for now; ask again after Retry-After.',
        }),
      },
    },
    logLevel: 'warn',
  }, async (request) => {
    if (stopping()) throw new ShuttingDown('send traffic to another');
    const state = await database();
    const follower = following?.();
    const behind = follower?.holding === true && follower.behind.length > 0;
    if (state.ready && (behind || budgets)) {
      return { status: 'ok', details: { ...(behind && { chainFollower: { behind: follower.behind, pending: follower.pending } }), ...budgets?.() } };
    }
    if (state.ready) return { status: 'ok' };
    request.log.warn({ err: state.err }, 'readiness check failed');
    throw state.fullForSeconds === undefined ? new DatabaseNotReady() : new StorageFullNotReady(state.fullForSeconds);
  });
};
