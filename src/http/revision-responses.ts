import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { IdOf } from '../schemas/common.js';
import type { ScenarioRevision } from '../services/revisions.js';
import { EXAMPLES } from './responses.js';

/** What the revision and approval routes share. */
export const NOT_FOUND = 'No scenario with this id in the token\'s projects (SCS_SCENARIO_NOT_FOUND: another project\'s are never ' +
  'revealed), or it has no such revision kept (SCS_REVISION_NOT_FOUND).';
export const AMBIGUOUS = 'SCS_SCENARIO_AMBIGUOUS: several of the token\'s projects have a scenario with this id; add ?projectId= to name one.';
export const LOOKUP = { 400: EXAMPLES.invalidQuery, 404: EXAMPLES.scenarioNotFound, 409: EXAMPLES.ambiguous };
export const Params = { scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') };
export const RevisionParams = Type.Object({
  ...Params, revision: Type.Integer({ minimum: 1, maximum: 2 ** 31 - 1, description: 'The revision number.' }),
}, { additionalProperties: false });

/**
 * A revision's JSON, its content and patch as the stored text: `content` is, to the byte, what the scenario's GET
 * answered, which serialising it again would not promise.
 */
export const revisionJson = (r: ScenarioRevision) =>
  `{"scenarioId":${JSON.stringify(r.scenarioId)},"incarnation":${r.incarnation},"revision":${r.revision},` +
  `"projectId":${JSON.stringify(r.projectId)},"digest":${JSON.stringify(r.digest)},"author":${JSON.stringify(r.author)},` +
  `"createdAt":${JSON.stringify(r.createdAt)},"state":${JSON.stringify(r.state)},"baseRevision":${JSON.stringify(r.baseRevision)},` +
  `"decidedBy":${JSON.stringify(r.decidedBy)},"decidedAt":${JSON.stringify(r.decidedAt)},"patch":${r.patch ?? 'null'},"content":${r.content}}`;

/** Sent as it is: the text is the answer's JSON already. */
export const sendJson = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);
