import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { StringEnum } from '../schemas/common.js';
import type { DatabaseState } from '../services/health.js';
import type { DeployerShortfall } from '../services/deployments.js';
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
    }, { additionalProperties: false })),
    deployers: Type.Optional(Type.Array(Type.Object({
      chain: Type.String(), address: Type.String(), balanceWei: Type.String(), neededWei: Type.String(),
    }, { additionalProperties: false }), {
      description: 'Deployer keys (CHAIN_DEPLOYER_KEY) whose balance cannot pay for one more deployment (3,000,000 gas at ' +
        'the current fees): fund these addresses. Listed only then; the instance stays ready.',
    })),
    budgets: Type.Optional(StringEnum(['shared', 'per-process'], {
      description: 'With REDIS_URL: `shared` while Redis answers, `per-process` (each instance its own budgets) while it does not.',
    })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Since when Redis has not answered.' })),
  }, { additionalProperties: false, description: 'Present while something is behind, and with REDIS_URL; the instance still takes traffic.' })),
}, { additionalProperties: false });

export interface HealthOptions {
  database: () => Promise<DatabaseState>;
  /** Whether the instance is stopping (draining or closing): then it is not ready, whatever the database says. */
  stopping: () => boolean;
  /** The chain follower's state on this instance, where it holds the lease. */
  following?: () => { behind: string[]; pending: number; holding: boolean };
  /** Deployers short of funds: shown, never a reason to be unready. */
  deployers?: () => Promise<DeployerShortfall[]>;
  /** With REDIS_URL: whether the budgets are shared now. Never a reason to be unready. */
  budgets?: () => { budgets: 'shared' | 'per-process'; since?: string };
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { database, stopping, following, deployers, budgets }) => {
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
    if (state.ready) {
      const follower = following?.();
      const behind = follower?.holding === true && follower.behind.length > 0
        ? { chainFollower: { behind: follower.behind, pending: follower.pending } }
        : undefined;
      const short = (await deployers?.()) ?? [];
      const details = { ...behind, ...(short.length > 0 && { deployers: short }), ...budgets?.() };
      return Object.keys(details).length === 0 ? { status: 'ok' } : { status: 'ok', details };
    }
    request.log.warn({ err: state.err }, 'readiness check failed');
    throw state.fullForSeconds === undefined ? new DatabaseNotReady() : new StorageFullNotReady(state.fullForSeconds);
  });
};
