import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { exampleOffChainScenario } from '../schemas/example-offchain.js';
import { IdOf, IdString, ProjectQuery, refOf } from '../schemas/common.js';
import { Scenario as ScenarioSchema, ScenarioPatch } from '../schemas/scenario.js';
import { exampleOnChainScenario } from '../schemas/example-scenario.js';
import { etagOf, type ScenarioRow, type ScenarioService, type SchemaCheck } from '../services/scenarios.js';
import { revisionPath } from '../services/revisions.js';
import { fieldErrors, type FieldError } from './errors.js';
import { IfMatch, record, revisionSource, scenarioResponses, updateRequestExamples } from './scenario-responses.js';
import { overBudget, type Validators } from './validation.js';
import { PageQuery, pageOf, pageResponse } from './cursor.js';
import { accessOf } from './tenancy.js';
import { IdempotencyHeaders, type Idempotency } from './idempotency.js';
import { MERGE_PATCH } from './body-policy.js';

const ScenarioParams = Type.Object({ scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') }, { additionalProperties: false });

/** What create and PATCH say of the credential types (src/domain/credential-types.ts). */
const TYPES_CHECKED =
  'ChallengeQuery rules are checked against the credential types of the JSON-LD contexts the service holds (bundled, ' +
  'and JSONLD_DOCUMENTS_FILE): a `type` near a held type but not it (IDInfo for IDInformation), or an `attribute` ' +
  'its held type does not define (personalData.agee), is a 400 SCS_VALIDATION naming the field and the nearest known ' +
  'names ("did you mean personalData.age?"). A type whose context the service does not hold is accepted unchecked.';
const TYPES_CHECKED_SHORT = 'ChallengeQuery rule types and attributes too, against the held JSON-LD contexts, as on create';

/** The merged document of a PATCH, checked against the whole Scenario schema; its errors named under body.input. */
export const scenarioSchemaCheck = (validators: Validators): SchemaCheck => (candidate) => {
  if (validators.scenario(candidate)) return { scenario: candidate };
  const errors = validators.scenario.errors ?? [];
  return {
    errors: fieldErrors('body.input', errors).map((error): FieldError => ({ ...error, pointer: `/input${error.pointer}` })),
    truncated: overBudget(errors),
  };
};

export const scenarioRoutes: FastifyPluginAsyncTypebox<{ scenarios: ScenarioService; idempotent: Idempotency }> = async (app, { scenarios, idempotent }) => {
  const tags = ['scenarios'];
  // Scenarios are stored as sent: a number JSON.parse would change, or text a database cannot store, is refused (400).
  const storedAsSent = { storedAsSent: true } as const;
  const withEtag = (reply: FastifyReply, row: ScenarioRow) => reply.header('ETag', etagOf(row));

  app.post('/compliance/scenarios', {
    config: { scope: 'scenarios:write', body: storedAsSent },
    preHandler: idempotent.preHandler,
    onSend: idempotent.onSend,
    schema: {
      operationId: 'createScenario',
      summary: 'Create a scenario',
      description:
        'A scenario must exist before it can be executed or patched. `id` is optional: chosen by the client or ' +
        'generated. Ids are unique per project: 409 when the scenario\'s project has one with that id; another project\'s ' +
        'scenarios are never revealed. ' + TYPES_CHECKED,
      tags, security: [{ bearerAuth: ['scenarios:write'] }],
      body: Type.Object(
        { id: Type.Optional(IdString), input: refOf(ScenarioSchema) },
        {
          additionalProperties: false,
        },
      ),
      'x-request-examples': {
        challengeQuery: {
          summary: 'ChallengeQuery: rules checked against the credentials sent with execute',
          value: { id: 'adult-kyc', input: ScenarioSchema.examples[0] },
        },
        onChainZkp: {
          summary: 'OnChainZKP: a rule answered by a UniversalVerifier request (npm run demo:onchain)',
          description: 'The verifier contract must hold a request under `requestId` that asks what the rule says ' +
            '(KYCAgeCredential birthday $lt 20020101 here): the service compares them, see docs/onchain-walkthrough.md.',
          value: { id: 'onchain-demo', input: exampleOnChainScenario },
        },
        offChainZkp: {
          summary: 'OffChainZKP: execute answers an iden3comm authorization request; the wallet\'s proof completes it',
          description: 'Needs ZKP_VERIFIER_DID and PUBLIC_BASE_URL: see docs/offchain-walkthrough.md (npm run demo:offchain).',
          value: { id: 'adult-zkp', input: exampleOffChainScenario },
        },
      },
      headers: IdempotencyHeaders,
      response: scenarioResponses.create,
    },
  }, async (request, reply) => {
    const body = request.body;
    const { row, ambiguous } = await scenarios.create(accessOf(request), body.id, body.input, revisionSource(request, reply));
    // The Location names the project when the id alone would be ambiguous for this token (it holds another scenario
    // with this id in another of its projects); a token of one project never needs it.
    const where = ambiguous ? `?projectId=${encodeURIComponent(body.input.projectId ?? '')}` : '';
    withEtag(reply, row).header('Location', `/compliance/scenarios/${encodeURIComponent(row.id)}${where}`).code(201);
    return record(row);
  });

  app.get('/compliance/scenarios', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'listScenarios',
      summary: 'List scenarios',
      description: 'In creation order. Pass `nextCursor` back as `cursor` for the next page; it is null on the last page. A page ' +
        'ends at `limit` scenarios or once their inputs pass 1 MiB of JSON, whichever comes first (it always holds one).',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      querystring: PageQuery,
      response: scenarioResponses.list,
    },
  }, async (request) => {
    const { limit, from } = pageOf(request.query);
    return pageResponse(await scenarios.list(accessOf(request), limit, from), record);
  });

  app.get('/compliance/scenarios/:scenarioId', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getScenario',
      summary: 'Read a scenario',
      tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: ScenarioParams,
      querystring: ProjectQuery,
      response: scenarioResponses.read,
    },
  }, async (request, reply) => {
    const row = await scenarios.find(accessOf(request), request.params.scenarioId);
    withEtag(reply, row);
    return record(row);
  });

  // A body a DELETE ignores is refused as on the other writes.
  app.delete('/compliance/scenarios/:scenarioId', {
    config: { scope: 'scenarios:write', body: storedAsSent },
    schema: {
      operationId: 'deleteScenario',
      summary: 'Delete a scenario',
      tags, security: [{ bearerAuth: ['scenarios:write'] }],
      params: ScenarioParams,
      querystring: ProjectQuery,
      response: scenarioResponses.remove,
    },
  }, async (request, reply) => {
    await scenarios.delete(accessOf(request), request.params.scenarioId);
    return reply.code(204).send(null);
  });

  app.patch('/compliance/scenarios/:scenarioId', {
    config: { scope: 'scenarios:write', body: { ...storedAsSent, mergePatch: true } },
    schema: {
      operationId: 'updateScenario',
      summary: 'Update a scenario',
      description:
        'JSON Merge Patch (RFC 7396) over the fields of `input`: absent = unchanged, null = cleared (400 on a required field), ' +
        'arrays replaced whole. The merged scenario is validated in full (' + TYPES_CHECKED_SHORT + '). Send `If-Match` with the ETag of a read to refuse a lost update (412). ' +
        'Like every write, it needs a bearer token with the scope scenarios:write. In a project that requires approval ' +
        '(SCENARIO_APPROVAL_PROJECTS) the change is a proposal: 202, the scenario unchanged until another approves it.',
      tags, security: [{ bearerAuth: ['scenarios:write'] }],
      consumes: ['application/json', MERGE_PATCH],
      params: ScenarioParams,
      querystring: ProjectQuery,
      headers: Type.Object({ 'if-match': IfMatch }),
      body: Type.Object({ input: refOf(ScenarioPatch) }, { additionalProperties: false }),
      'x-request-examples': updateRequestExamples,
      response: scenarioResponses.update,
    },
  }, async (request, reply) => {
    const patched = await scenarios.patch(accessOf(request), request.params.scenarioId, request.body.input, request.headers['if-match'], revisionSource(request, reply));
    if ('live' in patched) return withEtag(reply, patched.live).send({ input: patched.live.input });
    const { proposed, input } = patched;
    return reply.code(202).header('Location', revisionPath(proposed)).send({ input });
  });
};
