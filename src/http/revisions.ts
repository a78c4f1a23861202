import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProjectQuery, refOf } from '../schemas/common.js';
import { ScenarioRevision as RevisionSchema } from '../schemas/scenario.js';
import type { RevisionService } from '../services/revisions.js';
import { Page, PageQuery, pageOf, pageResponse } from './cursor.js';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';
import { AMBIGUOUS, LOOKUP, NOT_FOUND, Params, RevisionParams, revisionJson, sendJson } from './revision-responses.js';
import { accessOf } from './tenancy.js';

const IncarnationQuery = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'The incarnation whose revision to read (an execution\'s `links.revision` names it): a scenario deleted, ' +
    'or deleted and created again, keeps its revisions while executions that ran them are kept. Absent: the live scenario.',
});

/** A scenario's revisions: what it said at each revision, who wrote it, and the change from the one before. */
export const revisionRoutes: FastifyPluginAsyncTypebox<{ revisions: RevisionService }> = async (app, { revisions }) => {
  const tags = ['scenarios'];

  app.get('/compliance/scenarios/:scenarioId/revisions', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'listScenarioRevisions',
      summary: 'List a scenario\'s revisions, oldest first',
      description: 'Every create and PATCH keeps the whole scenario as a revision. Pass `nextCursor` back as `cursor` for ' +
        'the next page; a page ends at `limit` revisions or once their contents pass 1 MiB, whichever comes first. ' +
        'The live scenario\'s revisions: one deleted and created again with this id starts again at 1 (the earlier ' +
        'one\'s stay reachable through `?incarnation=` on the revision route, as execution links give it).',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object(Params, { additionalProperties: false }),
      querystring: Type.Object({ ...PageQuery.properties, ...ProjectQuery.properties }, { additionalProperties: false }),
      response: {
        200: answered(Page(refOf(RevisionSchema)), 'A page of the scenario\'s revisions; `nextCursor` is null on the last page.'),
        ...problemResponses([...AUTHENTICATED, 404, 409], { 404: NOT_FOUND, 409: AMBIGUOUS }, { examples: LOOKUP }),
      },
    },
  }, async (request, reply) => {
    const { limit, from } = pageOf(request.query);
    const page = await revisions.list(accessOf(request), request.params.scenarioId, limit, from);
    const { nextCursor } = pageResponse(page, (r) => r);
    return sendJson(reply, `{"items":[${page.items.map(revisionJson).join(',')}],"nextCursor":${JSON.stringify(nextCursor)}}`);
  });

  app.get('/compliance/scenarios/:scenarioId/revisions/:revision', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getScenarioRevision',
      summary: 'Read one revision of a scenario',
      description: 'The scenario as it was at this revision (`content`, byte for byte what its GET answered then), its ' +
        'digest, author, time and the merge patch from the revision before.',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: RevisionParams,
      querystring: Type.Object({ ...ProjectQuery.properties, incarnation: Type.Optional(IncarnationQuery) }, { additionalProperties: false }),
      response: {
        200: answered(refOf(RevisionSchema), 'The revision: its content as it was, its digest, author, time and patch.'),
        ...problemResponses([...AUTHENTICATED, 404, 409], { 404: NOT_FOUND, 409: AMBIGUOUS }, { examples: LOOKUP }),
      },
    },
  }, async (request, reply) => {
    const { scenarioId, revision } = request.params;
    const access = accessOf(request);
    return sendJson(reply, revisionJson(await revisions.get(access, scenarioId, revision, request.query.incarnation)));
  });
};
