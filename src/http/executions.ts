import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { IdOf, StringEnum, refOf } from '../schemas/common.js';
import { Execution, WebhookDeliveryView } from '../schemas/execution.js';
import { deliveryView, executionView } from '../execution/view.js';
import { SUMMARY_BUCKETS_MAX, bucketCount, type ExecutionLifecycle } from '../services/executions.js';
import { Page, PageQuery, pageOf, pageResponse } from './cursor.js';
import { AddressQuery, FromQuery, ProjectFilterQuery, ToQuery, VerdictQuery, filterOf, invalidQuery, periodFilterOf } from './execution-filters.js';
import { rateLimited } from './errors.js';
import { AUTHENTICATED, EXAMPLES, also, answered, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

/** The execution audit log, read-only, and the replay of its webhooks. */
export interface ExecutionRoutesOptions {
  executions: ExecutionLifecycle;
  /** SUMMARIES_PER_MINUTE per token (0: the service-wide limit). */
  summariesPerMinute: number;
  /** SUMMARY_MAX_EXECUTIONS: a summary's period holds at most this many. */
  summaryMaxExecutions: number;
}

const tenantOf = (request: FastifyRequest) => request.principal?.subject ?? `ip:${request.ip}`;

export const executionRoutes: FastifyPluginAsyncTypebox<ExecutionRoutesOptions> = async (app, { executions, summariesPerMinute, summaryMaxExecutions }) => {
  const tags = ['executions'];
  // Its own budget, as dry runs have (shared through REDIS_URL like every route's).
  const summaryRateLimit = summariesPerMinute > 0 && {
    max: summariesPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => `summary:${tenantOf(request)}`,
    errorResponseBuilder: (_request: FastifyRequest, context: { max: number; after: string; ttl: number }) =>
      rateLimited(`Rate limit exceeded: at most ${context.max} summaries a minute for this token; retry in ${context.after}`, context),
  };
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
        '(it always holds one record; a record takes at most ~1 MiB): follow `nextCursor`, which is null only on the last page. ' +
        '`verdict`, `address`, `from` and `to` narrow the list (each one given must hold); pass the same ones with `cursor` for the next pages.',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object({ scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') }, { additionalProperties: false }),
      querystring: Type.Object({
        ...PageQuery.properties,
        verdict: VerdictQuery,
        address: AddressQuery,
        from: Type.Optional(FromQuery(': only the executions created from then')),
        to: Type.Optional(ToQuery(': only the executions created before then')),
        projectId: ProjectFilterQuery,
      }, { additionalProperties: false }),
      response: {
        200: answered(Page(refOf(Execution)), 'A page of the scenario\'s executions, newest first (empty for an id ' +
          'no scenario of the token\'s projects holds or held); `nextCursor` is null on the last page.'),
        ...problemResponses(AUTHENTICATED, {
          400: 'The scenario id, limit, cursor, verdict, address, from or to is not valid, or to is not after from (code SCS_VALIDATION): `errors` names it.',
        }, { examples: { 400: EXAMPLES.invalidLimit } }),
      },
    },
  }, async (request) => {
    const { limit, from } = pageOf(request.query);
    const filter = filterOf(request.query);
    return pageResponse(await executions.list(accessOf(request), request.params.scenarioId, limit, from, filter), (record) => executionView(record));
  });

  const Counts = {
    passed: Type.Integer({ minimum: 0 }), failed: Type.Integer({ minimum: 0 }), error: Type.Integer({ minimum: 0 }), pending: Type.Integer({ minimum: 0 }),
  };
  app.get('/compliance/scenarios/:scenarioId/executions/summary', {
    config: { scope: 'scenarios:read', ...(summaryRateLimit && { rateLimit: summaryRateLimit }) },
    schema: {
      operationId: 'summarizeScenarioExecutions',
      summary: 'Count a scenario\'s verdicts over a period, and the rules that fail',
      description: 'Counted by the database over the executions of the token\'s projects created in [from, to) (narrowed by `verdict` and `address` ' +
        'like the list): per `bucket` (hour or day, in UTC; the first starts where `from` falls, every bucket of the period is listed, empty ones ' +
        `with zeros), the executions per verdict; and per rule id, how many executions it failed (not-valid) or could not decide (error), most failed first. At most ${SUMMARY_BUCKETS_MAX} buckets, ` +
        'and at most SUMMARY_MAX_EXECUTIONS executions in the period (400 naming from: narrow the period). Rate limited per token (SUMMARIES_PER_MINUTE).',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object({ scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') }, { additionalProperties: false }),
      querystring: Type.Object({
        from: FromQuery(''),
        to: ToQuery(`; at most ${SUMMARY_BUCKETS_MAX} buckets after from`),
        bucket: Type.Optional(StringEnum(['hour', 'day'], { default: 'day', description: 'The width of a bucket, in UTC.' })),
        verdict: VerdictQuery,
        address: AddressQuery,
        projectId: ProjectFilterQuery,
      }, { additionalProperties: false }),
      response: {
        200: answered(Type.Object({
          from: Type.String({ description: 'As asked, normalised to UTC.' }),
          to: Type.String({ description: 'As asked, normalised to UTC.' }),
          bucket: StringEnum(['hour', 'day']),
          totals: Type.Object(Counts, { additionalProperties: false, description: 'The executions of the period per verdict.' }),
          buckets: Type.Array(Type.Object({ start: Type.String({ description: 'The bucket\'s start (UTC).' }), ...Counts }, { additionalProperties: false }), {
            description: 'Oldest first.',
          }),
          rules: Type.Array(Type.Object({
            id: Type.String({ description: 'The rule (its id in queryConfigurations).' }),
            notValid: Type.Integer({ minimum: 0, description: 'Executions where it was not-valid.' }),
            error: Type.Integer({ minimum: 0, description: 'Executions where it was error.' }),
          }, { additionalProperties: false }), { description: 'The rules that failed or errored at least once, most not-valid first.' }),
        }, { additionalProperties: false }), 'The period\'s counts: totals, every bucket, the failing rules.'),
        ...problemResponses(AUTHENTICATED, {
          400: 'A query parameter is not valid (code SCS_VALIDATION): `errors` names it (from, to, bucket, verdict, address); to when it is not after ' +
            `from or the period holds more than ${SUMMARY_BUCKETS_MAX} buckets; from when the period holds more than SUMMARY_MAX_EXECUTIONS executions.`,
          429: also(429, 'SUMMARIES_PER_MINUTE summaries a minute for this token.'),
        }),
      },
    },
  }, async (request) => {
    const filter = periodFilterOf(request.query);
    const bucket = request.query.bucket ?? 'day';
    const count = bucketCount(filter.from, filter.to, bucket);
    if (count > SUMMARY_BUCKETS_MAX) {
      throw invalidQuery('to', `the period holds ${count} ${bucket} buckets, at most ${SUMMARY_BUCKETS_MAX}: a shorter period or a wider bucket`);
    }
    const summary = await executions.summary(accessOf(request), request.params.scenarioId, filter, bucket, summaryMaxExecutions);
    if (summary === undefined) {
      throw invalidQuery('from', `the period holds more than ${summaryMaxExecutions} executions (SUMMARY_MAX_EXECUTIONS): narrow it (a later from or an earlier to)`);
    }
    return summary;
  });
};
