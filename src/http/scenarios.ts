import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { validateScenarioRules, type FieldProblem } from '../engine/index.js';
import { exampleOffChainScenario } from '../schemas/example-offchain.js';
import { mergePatch } from '../domain/merge-patch.js';
import { checkDeploymentTransitions } from '../domain/deployments.js';
import type { PlanCache } from '../domain/plan-cache.js';
import { IdOf, IdString, refOf } from '../schemas/common.js';
import { Scenario as ScenarioSchema, ScenarioPatch, type Scenario } from '../schemas/scenario.js';
import { exampleOnChainScenario } from '../schemas/example-scenario.js';
import { ScenarioIdTaken } from '../store/errors.js';
import type { ScenarioRow, ScenarioStore } from '../store/types.js';
import {
  Conflict, ForbiddenProject, ScenarioExists, ScenarioNotFound, ValidationFailed, fieldErrors, preconditionFailed,
  type FieldError,
} from './errors.js';
import { IfMatch, scenarioResponses, updateRequestExamples } from './scenario-responses.js';
import { overBudget, type Validators } from './validation.js';
import { PageQuery, pageOf, pageResponse } from './cursor.js';
import { canSee, projectFilter, scopeOf } from './tenancy.js';
import { IdempotencyHeaders, type Idempotency } from './idempotency.js';
import { keptBodies } from './json.js';
import { findScenario, ProjectQuery } from './scenario-lookup.js';
import { KeyedQueue } from '../domain/keyed-queue.js';

/**
 * A PATCH without If-Match merges again onto a concurrent writer's result, at most this many times, each new try after
 * a random pause below 2^attempt ms (at most 5): writers of other processes (WORKERS) or instances that retry in step
 * would otherwise keep colliding. Worst case ~0.1 s before the 409.
 */
const PATCH_ATTEMPTS = 20;
const PATCH_BACKOFF_MAX_MS = 5;
const ScenarioParams = Type.Object({ scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') }, { additionalProperties: false });

/** What create and PATCH say of the credential types (src/domain/credential-types.ts). */
const TYPES_CHECKED =
  'ChallengeQuery rules are checked against the credential types of the JSON-LD contexts the service holds (bundled, ' +
  'and JSONLD_DOCUMENTS_FILE): a `type` near a held type but not it (IDInfo for IDInformation), or an `attribute` ' +
  'its held type does not define (personalData.agee), is a 400 SCS_VALIDATION naming the field and the nearest known ' +
  'names ("did you mean personalData.age?"). A type whose context the service does not hold is accepted unchecked.';
const TYPES_CHECKED_SHORT = 'ChallengeQuery rule types and attributes too, against the held JSON-LD contexts, as on create';

const etagOf = (row: Pick<ScenarioRow, 'seq' | 'revision'>) => `"${row.seq}.${row.revision}"`;

/** If-Match (RFC 9110 13.1.1): `*` or a list of strong entity tags; weak tags never match. */
function ifMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  if (value === '*') return true;
  return value.split(',').map((t) => t.trim()).some((t) => t === etag);
}

const record = (row: ScenarioRow) => ({
  id: row.id, input: row.input, createdAt: row.createdAt, updatedAt: row.updatedAt, revision: row.revision,
});

/**
 * What the schema cannot express, as field errors under `/input`: operator/value fit and unique ids (the engine),
 * and the deployment state machine (a status may not move backwards).
 */
async function checkRules(
  input: Scenario, validate: ScenarioRoutesOptions['validate'], before: Scenario['smartContractDeployments'] = [],
): Promise<void> {
  const seen = new Set<string>();
  // The engine, the deployment states, and the scenario type's own checks (OffChainZKP circuits); one problem per field.
  const problemsFound = [
    ...validateScenarioRules(input),
    ...checkDeploymentTransitions(before, input.smartContractDeployments),
    ...(await validate(input)),
  ].filter((p) => !seen.has(p.pointer) && seen.add(p.pointer));
  if (problemsFound.length > 0) {
    throw new ValidationFailed(
      problemsFound.map((p) => ({ field: `body.input${p.pointer.replace(/\//g, '.')}`, pointer: `/input${p.pointer}`, message: p.message })),
      'The scenario rules are not valid',
    );
  }
}

export interface ScenarioRoutesOptions {
  store: ScenarioStore;
  plans: PlanCache;
  validators: Validators;
  idempotent: Idempotency;
  /** Checks of the scenario type beyond the engine's (OffChainZKP: what the circuits and contexts allow). */
  validate: (scenario: Scenario) => Promise<FieldProblem[]>;
  /** The clock, epoch ms (createdAt, updatedAt). */
  now: () => number;
}

export const scenarioRoutes: FastifyPluginAsyncTypebox<ScenarioRoutesOptions> = async (app, { store, plans, validators, idempotent, validate, now }) => {
  const tags = ['scenarios'];
  // Scenarios are stored as sent: a number JSON.parse would change, or text a database cannot store, is refused (400).
  const bodies = keptBodies(app);
  const withEtag = (reply: FastifyReply, row: ScenarioRow) => reply.header('ETag', etagOf(row));

  app.post('/compliance/scenarios', {
    config: { scope: 'scenarios:write' },
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
    if (!canSee(request.principal, body.input.projectId)) {
      throw new ForbiddenProject(body.input.projectId == null
        ? 'Only an operator token may create a scenario without a projectId; set input.projectId to one of your projects'
        : `This token does not hold project ${body.input.projectId}`);
    }
    await checkRules(body.input, validate);
    const id = body.id ?? randomUUID();
    const row = await store.create(id, body.input, new Date(now()).toISOString());
    if (!row) throw new ScenarioExists(id);
    plans.forget(id, row.seq);
    // The Location names the project when the id alone would be ambiguous for this token (it holds another scenario
    // with this id in another of its projects); a token of one project never needs it.
    const ambiguous = (await store.heads(id, scopeOf(request.principal).projects)).length > 1;
    const where = ambiguous ? `?projectId=${encodeURIComponent(body.input.projectId ?? '')}` : '';
    withEtag(reply, row).header('Location', `/compliance/scenarios/${encodeURIComponent(id)}${where}`).code(201);
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
    return pageResponse(await store.list(limit, from, projectFilter(request)), record);
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
    const { scenarioId } = request.params;
    const row = await findScenario(store, request.principal, request.query.projectId, scenarioId);
    withEtag(reply, row);
    return record(row);
  });

  app.delete('/compliance/scenarios/:scenarioId', {
    config: { scope: 'scenarios:write' },
    schema: {
      operationId: 'deleteScenario',
      summary: 'Delete a scenario',
      tags, security: [{ bearerAuth: ['scenarios:write'] }],
      params: ScenarioParams,
      querystring: ProjectQuery,
      response: scenarioResponses.remove,
    },
  }, async (request, reply) => {
    const { scenarioId } = request.params;
    const row = await findScenario(store, request.principal, request.query.projectId, scenarioId);
    if (!(await store.delete(row.seq))) throw new ScenarioNotFound(scenarioId);
    plans.forget(scenarioId, row.seq);
    return reply.code(204).send(null);
  });

  // PATCH lives in a child context of its own so that only it accepts application/merge-patch+json.
  const patches = new KeyedQueue();
  await app.register(async (child: typeof app) => {
    bodies.accept(child, 'application/merge-patch+json');
    child.patch('/compliance/scenarios/:scenarioId', {
      config: { scope: 'scenarios:write' },
      schema: {
        operationId: 'updateScenario',
        summary: 'Update a scenario',
        description:
          'JSON Merge Patch (RFC 7396) over the fields of `input`: absent = unchanged, null = cleared (400 on a required field), ' +
          'arrays replaced whole. The merged scenario is validated in full (' + TYPES_CHECKED_SHORT + '). Send `If-Match` with the ETag of a read to refuse a lost update (412). ' +
          'Like every write, it needs a bearer token with the scope scenarios:write.',
        tags, security: [{ bearerAuth: ['scenarios:write'] }],
        consumes: ['application/json', 'application/merge-patch+json'],
        params: ScenarioParams,
        querystring: ProjectQuery,
        headers: Type.Object({ 'if-match': IfMatch }),
        body: Type.Object({ input: refOf(ScenarioPatch) }, { additionalProperties: false }),
        'x-request-examples': updateRequestExamples,
        response: scenarioResponses.update,
      },
    }, async (request, reply) => {
      const { scenarioId } = request.params;
      const ifMatch = request.headers['if-match'];
      const patch = request.body.input;
      // PATCHes of one scenario through this instance run one after the other; compare-and-set on the revision guards
      // against writers elsewhere: without If-Match, a concurrent writer makes us merge again onto its result.
      return patches.run(scenarioId, async () => {
        for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
          if (attempt > 0) await sleep(Math.random() * Math.min(PATCH_BACKOFF_MAX_MS, 2 ** attempt));
          const current = await findScenario(store, request.principal, request.query.projectId, scenarioId);
          const etag = etagOf(current);
          if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag)) throw preconditionFailed(ifMatch, etag);
          const merged = mergePatch(current.input, patch);
          if (!validators.scenario(merged)) {
            const errors = validators.scenario.errors ?? [];
            throw new ValidationFailed(
              fieldErrors('body.input', errors).map((e): FieldError => ({ ...e, pointer: `/input${e.pointer}` })),
              'The scenario after the patch is not valid',
              overBudget(errors),
            );
          }
          const moved = merged.projectId;
          if (!canSee(request.principal, moved)) {
            throw new ForbiddenProject(moved == null
              ? 'Only an operator token may remove a scenario\'s projectId'
              : `This token does not hold project ${moved}: moving a scenario needs a token holding both projects`);
          }
          await checkRules(merged, validate, current.input.smartContractDeployments);
          let row;
          try {
            row = await store.update(current.seq, merged, current.revision, new Date(now()).toISOString());
          } catch (err) {
            if (!(err instanceof ScenarioIdTaken)) throw err;
            throw new Conflict(`Project ${moved ?? '(none)'} has a scenario with id ${scenarioId} already: the scenario cannot move there`);
          }
          if (row) {
            plans.forget(scenarioId, row.seq);
            withEtag(reply, row);
            return { input: row.input };
          }
          // Another writer changed the scenario meanwhile: read it again. A stale If-Match then fails above (412 naming
          // the new ETag); without If-Match, or with *, the patch merges onto the new revision.
        }
        throw new Conflict('The scenario kept changing under concurrent writes; send the PATCH again');
      });
    });
  });
};
