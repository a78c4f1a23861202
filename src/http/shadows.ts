import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProjectQuery, refOf } from '../schemas/common.js';
import { ShadowRun } from '../schemas/shadow.js';
import type { ShadowService, ShadowState } from '../services/shadows.js';
import { PageQuery, pageOf, pageResponse } from './cursor.js';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';
import { AMBIGUOUS, LOOKUP, RevisionParams } from './revision-responses.js';
import { accessOf } from './tenancy.js';

const NOT_FOUND = 'No scenario with this id in the token\'s projects (SCS_SCENARIO_NOT_FOUND), no such revision kept ' +
  '(SCS_REVISION_NOT_FOUND), or the revision was never in shadow (SCS_SHADOW_NOT_FOUND).';

const view = (s: ShadowState) => {
  const { items, nextCursor } = pageResponse({ items: s.flippedExecutions, ...(s.next !== undefined && { next: s.next }) }, (id) => id);
  return {
    scenarioId: s.scenarioId, revision: s.revision, state: s.active ? 'active' as const : 'stopped' as const, startedAt: s.startedAt,
    ...(s.stoppedAt !== null && { stoppedAt: s.stoppedAt }), startedBy: s.startedBy, compared: s.compared, flipped: s.flipped,
    undecided: s.undecided, skipped: s.skipped, byRule: s.byRule, flippedExecutions: items, nextCursor,
  };
};

const answers = (description: string, conflict = AMBIGUOUS) => ({
  200: answered(refOf(ShadowRun), description),
  ...problemResponses([...AUTHENTICATED, 404, 409], { 404: NOT_FOUND, 409: conflict }, { examples: LOOKUP }),
});

/** Shadow runs: a proposed revision evaluated beside every live execute, its differences counted. */
export const shadowRoutes: FastifyPluginAsyncTypebox<{ shadows: ShadowService }> = async (app, { shadows }) => {
  const tags = ['scenarios'];
  const path = '/compliance/scenarios/:scenarioId/revisions/:revision/shadow';
  const write = { tags, security: [{ bearerAuth: ['scenarios:write'] }], params: RevisionParams, querystring: ProjectQuery };

  app.post(path, {
    config: { scope: 'scenarios:write' },
    schema: {
      operationId: 'startShadowRun',
      summary: 'Put a proposed revision in shadow',
      description: 'From now on every execute of the scenario, on every instance, also evaluates this proposed revision with ' +
        'the same inputs, after its answer is sent, and records only each rule\'s status in both revisions and whether the ' +
        'verdict would flip. The live answer is unchanged. One revision per scenario at a time; approving or rejecting the ' +
        'proposal stops it. Started again after a stop, it resumes its counts. Not for OffChainZKP scenarios.',
      ...write,
      response: answers('The shadow run, active, with its counts so far.', 'SCS_REVISION_NOT_PROPOSED: only a proposal ' +
        'awaiting a decision can be shadowed. SCS_SHADOW_BUSY: another revision of the scenario is in shadow; stop it first. ' +
        'SCS_SHADOW_UNSUPPORTED: an OffChainZKP scenario (or a revision making it one): a wallet answers one authorization ' +
        `request, so a revision asking other queries cannot be judged on the same proof. ${AMBIGUOUS}`),
    },
  }, async (request) => {
    const { scenarioId, revision } = request.params;
    const started = await shadows.start(accessOf(request), request.principal?.subject ?? null, scenarioId, revision);
    request.log.info({ scenarioId, revision }, 'shadow run started');
    return view(started);
  });

  app.delete(path, {
    config: { scope: 'scenarios:write' },
    schema: {
      operationId: 'stopShadowRun',
      summary: 'Stop a shadow run, keeping its counts',
      description: 'Executes no longer evaluate the revision (evaluations already queued still finish and count). Its ' +
        'counts and flipped executions stay readable until the retention purge takes their executions.',
      ...write,
      response: answers('The shadow run, stopped, with its counts.'),
    },
  }, async (request) => {
    const { scenarioId, revision } = request.params;
    const stopped = await shadows.stop(accessOf(request), scenarioId, revision);
    request.log.info({ scenarioId, revision }, 'shadow run stopped');
    return view(stopped);
  });

  app.get(path, {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getShadowRun',
      summary: 'Read a shadow run: executions compared, verdicts that would flip, by rule',
      description: 'Counts over the comparisons kept (the retention purge takes a comparison with its execution). ' +
        '`flippedExecutions` is paged: pass `nextCursor` back as `cursor`. Comparisons are written in batches, so one made ' +
        'in the last fraction of a second may not be counted yet.',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: RevisionParams,
      querystring: Type.Object({ ...PageQuery.properties, ...ProjectQuery.properties }, { additionalProperties: false }),
      response: answers('The shadow run and a page of the executions whose verdict would flip.'),
    },
  }, async (request) => {
    const { scenarioId, revision } = request.params;
    const { limit, from } = pageOf(request.query);
    return view(await shadows.state(accessOf(request), scenarioId, revision, limit, from));
  });
};
