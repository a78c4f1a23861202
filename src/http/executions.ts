import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdOf, refOf } from '../schemas/common.js';
import { Execution, WebhookDeliveryView } from '../schemas/execution.js';
import { deliveryView, executionView } from '../execution/view.js';
import type { ExecutionLifecycle } from '../services/executions.js';
import { Page, PageQuery, pageOf, pageResponse } from './cursor.js';
import { AUTHENTICATED, EXAMPLES, answered, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

/** The execution audit log, read-only, and the replay of its webhooks. */
export const executionRoutes: FastifyPluginAsyncTypebox<{ executions: ExecutionLifecycle }> = async (app, { executions }) => {
  const tags = ['executions'];
  const ExecutionIdParam = Type.String({ minLength: 1, maxLength: 64, description: 'The executionId of an execute answer.' });

  app.get('/compliance/executions/:executionId', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getExecution',
      summary: 'Read one execution from the audit log',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object({ executionId: ExecutionIdParam }, { additionalProperties: false }),
      querystring: Type.Object({
        embed: Type.Optional(Type.Literal('rules', { description: '`rules`: add the rules of the revision that ran (`rules`).' })),
      }, { additionalProperties: false }),
      response: {
        200: answered(refOf(Execution), '`links.revision` is the scenario revision it ran. ' +
          'The execution as recorded: its state and its results. For OffChainZKP, read it ' +
          'again until `state` is completed (the wallet answered: the results carry the verdicts) or failed (the ' +
          'authorization request expired: start a new execution).'),
        ...problemResponses([...AUTHENTICATED, 404], {
          404: 'No execution with this id in the token\'s projects (code SCS_EXECUTION_NOT_FOUND). Records are kept ' +
            'EXECUTION_RETENTION_DAYS days.',
        }, { examples: { 400: EXAMPLES.invalidExecutionId, 404: EXAMPLES.executionNotFound } }),
      },
    },
  }, async (request) => executions.find(accessOf(request), request.params.executionId, request.query.embed === 'rules'));

  app.post('/compliance/executions/:executionId/webhooks/:deliveryId/replay', {
    config: { scope: 'scenarios:write' },
    schema: {
      operationId: 'replayExecutionWebhook',
      summary: 'Send an execution\'s webhook again',
      description: 'Makes the delivery due now with a fresh round of WEBHOOK_MAX_ATTEMPTS attempts, whatever its state ' +
        '(a failed one after the receiver was fixed, or a delivered one the receiver lost). The payload and the ' +
        '`webhook-id` are the same as before (a receiver that drops duplicates by `webhook-id` drops it too); the ' +
        'signature and `webhook-timestamp` are new. Sent by the next poll of the outbox (WEBHOOK_POLL_MS); follow it ' +
        'in the execution\'s `webhooks` log.',
      tags, security: [{ bearerAuth: ['scenarios:write'] }],
      params: Type.Object({
        executionId: ExecutionIdParam,
        deliveryId: Type.String({ minLength: 1, maxLength: 64, description: 'The id of a delivery in the execution\'s `webhooks`.' }),
      }, { additionalProperties: false }),
      response: {
        202: answered(refOf(WebhookDeliveryView), 'The delivery, due now: pending, no attempts yet.'),
        ...problemResponses([...AUTHENTICATED, 404], {
          404: 'No execution with this id in the token\'s projects (SCS_EXECUTION_NOT_FOUND), or it has no delivery ' +
            'with this id (SCS_WEBHOOK_DELIVERY_NOT_FOUND).',
        }, { examples: { 400: EXAMPLES.invalidExecutionId, 404: EXAMPLES.executionNotFound } }),
      },
    },
  }, async (request, reply) => {
    const { executionId, deliveryId } = request.params;
    const delivery = await executions.replayWebhook(accessOf(request), executionId, deliveryId);
    request.log.info({ executionId, delivery: deliveryId }, 'webhook replay requested');
    return reply.code(202).send(deliveryView(delivery));
  });

  app.get('/compliance/scenarios/:scenarioId/executions', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'listScenarioExecutions',
      summary: 'List a scenario\'s executions, newest first',
      description: 'Kept for EXECUTION_RETENTION_DAYS. Records outlive a deleted scenario until they are purged. Only the records of the token\'s projects are listed: an id no scenario of them holds (now or ever) answers an empty page, never 404. ' +
        'A page ends at `limit` records or once their results and credentials pass 1 MiB of JSON, whichever comes first ' +
        '(it always holds one record; a record takes at most ~1 MiB): follow `nextCursor`, which is null only on the last page.',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object({ scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') }, { additionalProperties: false }),
      querystring: PageQuery,
      response: {
        200: answered(Page(refOf(Execution)), 'A page of the scenario\'s executions, newest first (empty for an id ' +
          'no scenario of the token\'s projects holds or held); `nextCursor` is null on the last page.'),
        ...problemResponses(AUTHENTICATED, { 400: 'The scenario id, limit or cursor is not valid (code SCS_VALIDATION): `errors` names it.' },
          { examples: { 400: EXAMPLES.invalidLimit } }),
      },
    },
  }, async (request) => {
    const { limit, from } = pageOf(request.query);
    return pageResponse(await executions.list(accessOf(request), request.params.scenarioId, limit, from), (record) => executionView(record));
  });
};
