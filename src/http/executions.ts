import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdString, refOf } from '../schemas/common.js';
import { Execution } from '../schemas/execution.js';
import type { Store } from '../store/types.js';
import { executionView } from '../execution/view.js';
import { Page, PageQuery, pageOf, pageResponse } from './cursor.js';
import { ExecutionNotFound, problemResponses } from './errors.js';
import { canSee, projectFilter } from './tenancy.js';

/** The execution audit log, read-only. */
export const executionRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const tags = ['executions'];

  app.get('/compliance/executions/:executionId', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getExecution',
      summary: 'Read one execution from the audit log',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object({ executionId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: refOf(Execution), ...problemResponses(400, 401, 403, 404, 503) },
    },
  }, async (request) => {
    const { executionId } = request.params;
    const record = await store.getExecution(executionId);
    // Executions follow their scenario's project.
    if (!record || !canSee(request.principal, record.projectId)) throw new ExecutionNotFound(executionId);
    return executionView(record, await store.webhooksOf(executionId));
  });

  app.get('/compliance/scenarios/:scenarioId/executions', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'listScenarioExecutions',
      summary: 'List a scenario\'s executions, newest first',
      description: 'Kept for EXECUTION_RETENTION_DAYS. Records outlive a deleted scenario until they are purged. Only the records of the token\'s projects are listed: an id no scenario of them holds (now or ever) answers an empty page, never 404.',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object({ scenarioId: IdString }, { additionalProperties: false }),
      querystring: PageQuery,
      response: { 200: Page(refOf(Execution)), ...problemResponses(400, 401, 403, 404, 503) },
    },
  }, async (request) => {
    const { scenarioId } = request.params;
    const { limit, from } = pageOf(request.query);
    // The records of the token's projects under this id, whoever holds the id now: a scenario deleted and its id
    // taken by another project keeps its history for its own project, and the answer for another project's id is
    // the same as for an id never used (the records are filtered by project, so nothing of the other is shown).
    return pageResponse(await store.listExecutions(scenarioId, limit, from, projectFilter(request)), (r) => executionView(r));
  });
};
