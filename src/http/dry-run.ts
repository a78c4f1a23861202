import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { AddressParser } from '../domain/address.js';
import { contentDigest } from '../domain/canonical-json.js';
import { verdictOf } from '../domain/verdict.js';
import { fieldError } from '../domain/storable-text.js';
import { ProjectQuery, refOf } from '../schemas/common.js';
import { DryRunAnswer, DryRunRequest } from '../schemas/dry-run.js';
import type { ExecutionLifecycle } from '../services/executions.js';
import type { ScenarioService } from '../services/scenarios.js';
import { ValidationFailed, rateLimited } from './errors.js';
import { AUTHENTICATED, EXAMPLES, also, answered, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

export interface DryRunRoutesOptions {
  executions: ExecutionLifecycle;
  scenarios: ScenarioService;
  /** CredentialVerifier.coldRefusal. */
  coldRefusal: (tenant: string) => Error | undefined;
  /** 0: the service-wide limit. */
  perMinute: number;
}

/** The scenario id a draft's results carry. */
const DRAFT_ID = 'draft';

const tenantOf = (request: FastifyRequest) => request.principal?.subject ?? `ip:${request.ip}`;

export const dryRunRoutes: FastifyPluginAsyncTypebox<DryRunRoutesOptions> = async (app, { executions, scenarios, coldRefusal, perMinute }) => {
  const addresses = new AddressParser();
  // Its own budget, keyed like the service-wide one after authentication.
  const rateLimit = perMinute > 0 && {
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => `dry-run:${tenantOf(request)}`,
    errorResponseBuilder: (_request: FastifyRequest, context: { max: number; after: string; ttl: number }) =>
      rateLimited(`Rate limit exceeded: at most ${context.max} dry runs a minute for this token; retry in ${context.after}`, context),
  };

  app.post('/compliance/scenarios/dry-run', {
    config: { scope: 'scenarios:write', ...(rateLimit && { rateLimit }) },
    onRequest: async (request) => {
      const refused = coldRefusal(tenantOf(request));
      if (refused) throw refused;
    },
    schema: {
      operationId: 'dryRunScenario',
      summary: 'Try a scenario without recording anything',
      description:
        'Runs a stored scenario (its live revision, or a kept `revision`), or a draft sent whole, against the address and credentials exactly as execute would ' +
        '(the same credential verification and rule engine) and answers its results with a trace of how each rule was ' +
        'decided: for each credential of the rule\'s type, its checks (dates, issuer, holder, proof, revocation, the ' +
        'attribute\'s value against the operator) and which one decided. Nothing is kept: no execution record, no ' +
        'webhook, no attestation, no idempotency entry (an Idempotency-Key header is ignored). The trace names credentials by position and id and never quotes ' +
        'a credential\'s values. OnChainZKP reads the chain as execute does. OffChainZKP answers the authorization ' +
        'request execute would send, but no pending execution is kept: a wallet answering it gets 404. Scope ' +
        'scenarios:write: dry runs are for whoever writes the rules, and leave no audit record. Rate limited per token ' +
        '(DRY_RUNS_PER_MINUTE).',
      tags: ['execute'],
      security: [{ bearerAuth: ['scenarios:write'] }],
      body: refOf(DryRunRequest),
      querystring: ProjectQuery,
      response: {
        200: answered(refOf(DryRunAnswer), 'The scenario ran (whatever the verdicts): its results and each rule\'s trace.'),
        ...problemResponses([...AUTHENTICATED, 404, 409, 413, 415], {
          400: also(400, 'A draft is validated as POST /compliance/scenarios validates `input`, its fields named under ' +
            'body.scenario (e.g. body.scenario.queryConfigurations.0.query.operator); the address as for execute.'),
          403: also(403, 'SCS_FORBIDDEN_PROJECT: the draft\'s projectId is not one of the token\'s projects (a draft ' +
            'without one needs an operator token).'),
          404: 'No scenario with this id in the token\'s projects (code SCS_SCENARIO_NOT_FOUND), or no such revision of it ' +
            '(SCS_REVISION_NOT_FOUND).',
          409: 'SCS_SCENARIO_AMBIGUOUS: several of the token\'s projects have a scenario with this id; add ?projectId= to name one.',
          429: also(429, 'DRY_RUNS_PER_MINUTE dry runs a minute for this token; SCS_VERIFICATION_BUDGET as on execute.'),
        }, { examples: { 404: EXAMPLES.scenarioNotFound, 409: EXAMPLES.ambiguous } }),
      },
    },
  }, async (request) => {
    const { scenario, credentials, address: sent } = request.body;
    const address = addresses.parse(sent);
    if (!address.ok) throw new ValidationFailed([fieldError(typeof sent === 'string' ? ['address'] : ['address', 'address'], address.message)]);
    const access = accessOf(request);
    const subject = {
      access,
      address: address.address,
      addressChain: typeof sent === 'object' ? sent.chain : undefined,
      credentials,
      digests: () => credentials.map((credential) => contentDigest(credential)),
      tenant: tenantOf(request),
    };
    const run = 'id' in scenario
      ? await executions.dryRun({ ...subject, scenarioId: scenario.id, ...(scenario.revision !== undefined && { revision: scenario.revision }) })
      : await executions.dryRun({ ...subject, scenarioId: DRAFT_ID, revision: 0, scenario: await scenarios.draft(access, scenario) });
    return { verdict: verdictOf(run.results.map((r) => r.result)), revision: run.revision, results: run.results, trace: run.trace };
  });
};
