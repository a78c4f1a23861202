import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { IdOf, ProjectQuery, refOf } from '../schemas/common.js';
import { ScenarioRevision as RevisionSchema } from '../schemas/scenario.js';
import type { RevisionService, ScenarioRevision } from '../services/revisions.js';
import { Page, PageQuery, pageOf, pageResponse } from './cursor.js';
import { AUTHENTICATED, EXAMPLES, answered, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

const NOT_FOUND = 'No scenario with this id in the token\'s projects (SCS_SCENARIO_NOT_FOUND: another project\'s are never ' +
  'revealed), or it has no such revision kept (SCS_REVISION_NOT_FOUND).';
const AMBIGUOUS = 'SCS_SCENARIO_AMBIGUOUS: several of the token\'s projects have a scenario with this id; add ?projectId= to name one.';
const LOOKUP = { 400: EXAMPLES.invalidQuery, 404: EXAMPLES.scenarioNotFound, 409: EXAMPLES.ambiguous };
const Params = { scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') };
const IncarnationQuery = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'The incarnation whose revision to read (an execution\'s `links.revision` names it): a scenario deleted, ' +
    'or deleted and created again, keeps its revisions while executions that ran them are kept. Absent: the live scenario.',
});

/**
 * A revision's JSON, its content and patch as the stored text: `content` is, to the byte, what the scenario's GET
 * answered, which serialising it again would not promise.
 */
const revisionJson = (r: ScenarioRevision) =>
  `{"scenarioId":${JSON.stringify(r.scenarioId)},"incarnation":${r.incarnation},"revision":${r.revision},` +
  `"projectId":${JSON.stringify(r.projectId)},"digest":${JSON.stringify(r.digest)},"author":${JSON.stringify(r.author)},` +
  `"createdAt":${JSON.stringify(r.createdAt)},"patch":${r.patch ?? 'null'},"content":${r.content}}`;

/** Sent as it is: the text is the answer's JSON already. */
const sendJson = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);

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
      params: Type.Object({ ...Params, revision: Type.Integer({ minimum: 1, maximum: 2 ** 31 - 1, description: 'The revision number.' }) }, { additionalProperties: false }),
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
