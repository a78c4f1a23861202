import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Attestor } from '../domain/attestation.js';
import type { ExecutionLifecycle } from '../services/executions.js';
import { AttestQuery, attestRequest } from './attest-request.js';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

const Eip712Schema = Type.Object({
  signer: Type.String({ description: 'The address that signed (ATTESTATION_EIP712_KEY\'s): what the contract allows.' }),
  domain: Type.Object({ name: Type.String(), version: Type.String(), chainId: Type.Integer(), verifyingContract: Type.String() }),
  message: Type.Object({
    subject: Type.String({ description: 'The address checked.' }),
    scenario: Type.String({ description: 'keccak256(abi.encode(string projectId, string scenarioId)): the scenario\'s project ("" for a scenario without a project) and its id.' }),
    verdict: Type.Integer({ description: '1 passed, 2 failed, 3 error, 4 pending.' }),
    expiry: Type.Integer({ description: 'Unix seconds after which the contract refuses it.' }),
    nonce: Type.String({ description: 'uint256 in decimal: the contract accepts each nonce once.' }),
  }),
  signature: Type.String({ description: '65 bytes, hex (r, s, v).' }),
}, { description: 'EIP-712 typed data `Attestation(address subject,bytes32 scenario,uint8 verdict,uint64 expiry,uint256 nonce)` and its signature.' });

/** The keys that verify JWS attestations: open, as a backend fetches them. */
export const jwksRoute: FastifyPluginAsyncTypebox<{ attestor: Attestor }> = async (app, { attestor }) => {
  app.get('/.well-known/jwks.json', {
    schema: {
      operationId: 'getAttestationKeys',
      summary: 'The public keys of JWS attestations (JWKS)',
      description: 'The key that signs now first, then previous keys, still published so that what they signed verifies ' +
        '(pick by the JWS header\'s `kid`). Empty when no JWS attestation key is configured. Cache it; fetch again on an unknown `kid`.',
      tags: ['attestations'],
      response: {
        200: answered(Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }),
          'The JSON Web Key Set of attestation keys (public parts only), the signing key first.'),
      },
    },
  }, async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=300');
    return attestor.jwks;
  });
};

/** An attestation of a recorded execution, signed anew (a bearer token with scenarios:read). */
export const attestationRoutes: FastifyPluginAsyncTypebox<{
  executions: ExecutionLifecycle;
  attestor: Attestor;
}> = async (app, { executions, attestor }) => {
  app.get('/compliance/executions/:executionId/attestation', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getExecutionAttestation',
      summary: 'Sign an execution\'s verdict again',
      description: 'A fresh attestation (new issued-at, expiry and EIP-712 nonce) of a recorded execution: a JWS, and an ' +
        'EIP-712 one when `chainId` and `verifyingContract` are given. For an OffChainZKP execution, read it once completed. ' +
        'Answers 409 once the scenario moved past the revision that ran (its digest is signed), or was deleted and ' +
        'created again under its id.',
      tags: ['attestations'], security: [{ bearerAuth: ['scenarios:read'] }],
      params: Type.Object({ executionId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      querystring: Type.Object({ chainId: AttestQuery.chainId, verifyingContract: AttestQuery.verifyingContract }, { additionalProperties: false }),
      response: {
        200: answered(Type.Object({
          jws: Type.Optional(Type.String({ description: 'Compact JWS (typ scs-attestation+jwt).' })),
          eip712: Type.Optional(Eip712Schema),
        }, { additionalProperties: false }), 'The execution signed anew: `jws` always, `eip712` when chainId and verifyingContract were given.'),
        ...problemResponses([...AUTHENTICATED, 404, 409], {
          404: 'No execution with this id in the token\'s projects (code SCS_EXECUTION_NOT_FOUND).',
          409: 'SCS_SCENARIO_CHANGED: the scenario was changed or deleted (or deleted and created again) since the execution ran; the attestation given ' +
            'with the execute answer (`?attest=`) is the one to use.',
        }),
      },
    },
  }, async (request) => {
    const wantEip712 = request.query.chainId !== undefined || request.query.verifyingContract !== undefined;
    const asked = attestRequest(request.query, attestor, wantEip712 ? ['jws', 'eip712'] : ['jws']);
    return executions.attest(accessOf(request), request.params.executionId, asked);
  });
};
