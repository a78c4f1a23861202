import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdOf, ProjectQuery, refOf } from '../schemas/common.js';
import { SmartContractDeployment } from '../schemas/scenario.js';
import type { DeploymentService } from '../services/deployments.js';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

const ADDRESS = '^0x[0-9a-fA-F]{40}$';

const Params = Type.Object({ scenarioId: IdOf('The scenario\'s id.', 'adult-kyc') }, { additionalProperties: false });
const DeploymentParams = Type.Object({
  scenarioId: IdOf('The scenario\'s id.', 'adult-kyc'),
  deploymentId: IdOf('The deployment\'s id in the scenario\'s smartContractDeployments.', 'deploy-0b5e2c1e-7d0c-4a5e-9a55-3f1f0c2d9e41'),
}, { additionalProperties: false });

const DeployRequest = Type.Object({
  chain: Type.Optional(Type.String({ pattern: '^eip155:[1-9][0-9]{0,18}$', description: 'CAIP-2 chain (default: CHAIN_DEFAULT).' })),
  verifier: Type.Optional(Type.String({ pattern: ADDRESS, description: 'The UniversalVerifier: CHAIN_VERIFIER_ADDRESS\'s for the chain, the only one allowed (another: 422).' })),
  validators: Type.Optional(Type.Array(Type.String({ pattern: ADDRESS }), {
    minItems: 1, maxItems: 16, description: 'The request validators the rules may use, among CHAIN_VALIDATORS\'s for the chain (another: 422; default: all of them).',
  })),
}, { additionalProperties: false, description: 'Where to deploy; each field defaults from the configuration.' });

const deploymentPath = (scenarioId: string, deploymentId: string) =>
  `/compliance/scenarios/${encodeURIComponent(scenarioId)}/deployments/${encodeURIComponent(deploymentId)}`;

const LOOKUP = { 404: 'No scenario with this id among the token\'s projects (SCS_SCENARIO_NOT_FOUND), or it has no deployment with this id (SCS_DEPLOYMENT_NOT_FOUND).' };

export const deploymentRoutes: FastifyPluginAsyncTypebox<{ deployments: DeploymentService }> = async (app, { deployments }) => {
  const tags = ['scenarios'];

  app.post('/compliance/scenarios/:scenarioId/deployments', {
    config: { scope: 'scenarios:write' },
    schema: {
      operationId: 'deployScenario',
      summary: 'Deploy an OnChainZKP scenario\'s rules to a verifier contract',
      description: 'Turns every rule into a UniversalVerifier request (@iden3/contracts 3.x: the validator proving its circuit, ' +
        'params and query hash as iden3\'s libraries compute them, allowed issuers from trustedIssuers, a type-1 request id) and ' +
        'sends them in one setRequests transaction signed with the service\'s key (CHAIN_DEPLOYER_KEY); where the rules make two ' +
        'requests or more, a setMultiRequest of them follows (the ungrouped requests by id, the groups by groupId), its own ' +
        'transaction. The scenario gets a deployment DeploymentStarted with its transactions TxPosted (ScenarioDeploy both: ' +
        'tx-1 setRequests, tx-2 setMultiRequest) and each rule\'s request (`requests`); the rules take those ' +
        'requestIds at once when no deployment is Deployed, else when this one is. Answers 202 before the transaction is mined; ' +
        'Location is the deployment, to follow.',
      tags, security: [{ bearerAuth: ['scenarios:write'] }],
      params: Params,
      querystring: ProjectQuery,
      body: DeployRequest,
      response: {
        202: answered(refOf(SmartContractDeployment), 'The deployment, DeploymentStarted; Location is its URL. Requests the verifier holds already as the rules make them are reused, not sent: without any left to send, its transactions are none and the follower decides it by reading the verifier.', ['Location']),
        ...problemResponses([...AUTHENTICATED, 404, 409, 422, 503], {
          ...LOOKUP,
          409: 'SCS_NOT_ONCHAIN: the scenario is not OnChainZKP. SCS_DEPLOYER_NOT_CONFIGURED: no key, chain, verifier or ' +
            'validators are configured (the detail names the variable to set). SCS_FEE_TOO_HIGH: gas costs more than ' +
            'CHAIN_MAX_FEE_PER_GAS. SCS_DEPLOYER_UNDERFUNDED: the deploy may cost more than the deployer holds. ' +
            'SCS_CONFLICT: the rules are deployed as they are already, or their transaction is on its way or was just mined (another deploy of them, perhaps on another instance).',
          422: 'SCS_DEPLOY_REFUSED: the verifier would revert the transaction (the detail names the contract\'s error, e.g. ' +
            'ValidatorIsNotWhitelisted), its gas is above CHAIN_DEPLOY_MAX_GAS or the block\'s gas limit, or the node refused ' +
            'the transaction for good (a transfer took its nonce). SCS_HELD_BY_VERIFIER: the verifier holds a rule\'s request id ' +
            '(another validator) or group (other requests) otherwise than the rules make it, and setRequests cannot overwrite it: ' +
            'the errors name each rule\'s query/requestId or query/groupId; choose a new one. SCS_VALIDATION: a rule cannot be made a request (no JSON-LD context, no validator for its circuit).',
          503: 'SCS_CHAIN_UNAVAILABLE: the chain timed out, did not answer or answered an error that is not a revert (a rate limit, an HTTP 5xx, a busy node) before the transaction was stored (with `Retry-After`; nothing was sent).',
        }),
      },
    },
    // No body at all is an empty one: every field has its default.
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {};
    },
  }, async (request, reply) => {
    const { scenarioId } = request.params;
    const { deployment } = await deployments.deploy(accessOf(request), scenarioId, request.body);
    return reply.code(202).header('Location', deploymentPath(scenarioId, deployment.id)).send(deployment);
  });

  app.get('/compliance/scenarios/:scenarioId/deployments/:deploymentId', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getDeployment', summary: 'Read a deployment of a scenario', tags, security: [{ bearerAuth: ['scenarios:read'] }],
      params: DeploymentParams, querystring: ProjectQuery,
      response: { 200: answered(refOf(SmartContractDeployment), 'The deployment as the scenario holds it now.'), ...problemResponses([...AUTHENTICATED, 404, 409], LOOKUP) },
    },
  }, async (request) => deployments.find(accessOf(request), request.params.scenarioId, request.params.deploymentId));

  app.delete('/compliance/scenarios/:scenarioId/deployments/:deploymentId', {
    config: { scope: 'scenarios:write' },
    schema: {
      operationId: 'retireDeployment',
      summary: 'Retire a deployment',
      description: 'A Deployed deployment becomes Deprecated (execute no longer reads it); its requests stay on chain.',
      tags, security: [{ bearerAuth: ['scenarios:write'] }],
      params: DeploymentParams, querystring: ProjectQuery,
      response: {
        200: answered(refOf(SmartContractDeployment), 'Retired: the deployment, now Deprecated (or already so).'),
        ...problemResponses([...AUTHENTICATED, 404, 409], { ...LOOKUP, 409: 'SCS_CONFLICT: the deployment is not Deployed (still on its way, or failed).' }),
      },
    },
  }, async (request) => deployments.retire(accessOf(request), request.params.scenarioId, request.params.deploymentId));
};
