import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Attestor, AttestedExecution, Eip712Attestation } from '../domain/attestation.js';
import { contentDigest } from '../domain/canonical-json.js';
import { BAD_CHECKSUM, evm, toChecksumAddress } from '../domain/address/evm.js';
import { attestedExecution } from '../execution/view.js';
import type { ExecutionRecord, Store } from '../store/types.js';
import { ExecutionNotFound, ScenarioChanged, ValidationFailed } from './errors.js';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';
import { canSee } from './tenancy.js';

/** The query asking for attestations (execute) or saying which EIP-712 one (GET .../attestation). */
export const AttestQuery = {
  attest: Type.Optional(Type.String({
    pattern: '^(jws|eip712)(,(jws|eip712))?$',
    description: 'Sign the verdict: `jws` (header `Attestation`: a compact JWS a backend verifies with ' +
      '/.well-known/jwks.json), `eip712` (header `Attestation-EIP712`: base64url JSON of the typed data and its ' +
      'signature, for a contract such as contracts/ComplianceGate.sol; needs `chainId` and `verifyingContract`, and an ' +
      'EVM address), or `jws,eip712`. Absent: none (the answer is the same array either way). No example value: the ' +
      'docs page would fill it in and "Try it out" would then need the operator\'s keys.',
  })),
  chainId: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'EIP-712: the chain id of the verifying contract (e.g. 1).' })),
  verifyingContract: Type.Optional(Type.String({
    pattern: '^0x[0-9a-fA-F]{40}$',
    description: 'EIP-712: the contract that checks the attestation (the typed data\'s domain).',
  })),
};
interface AttestQuery { attest?: string; chainId?: string; verifyingContract?: string }

const field = (name: string, message: string) => ({ field: `querystring.${name}`, pointer: `/${name}`, message });

export interface AttestRequest {
  jws: boolean;
  eip712?: { chainId: number; verifyingContract: `0x${string}` };
}

/** What the query asks, checked against what this service can sign; a 400 naming the field otherwise. */
export function attestRequest(query: AttestQuery, attestor: Attestor, asked = (query.attest ?? '').split(',')): AttestRequest {
  const jws = asked.includes('jws');
  const eip712 = asked.includes('eip712');
  const problems = [];
  if (jws && !attestor.jws) problems.push(field('attest', 'this service has no JWS attestation key (ATTESTATION_JWKS)'));
  if (eip712 && !attestor.eip712) problems.push(field('attest', 'this service has no EIP-712 attestation key (ATTESTATION_EIP712_KEY)'));
  if (eip712 && query.chainId === undefined) problems.push(field('chainId', 'is required with attest=eip712'));
  if (eip712 && query.verifyingContract === undefined) problems.push(field('verifyingContract', 'is required with attest=eip712'));
  if (query.chainId !== undefined && !Number.isSafeInteger(Number(query.chainId))) problems.push(field('chainId', 'must be at most 2^53-1'));
  if (query.verifyingContract !== undefined && evm.check(query.verifyingContract) !== undefined) {
    problems.push(field('verifyingContract', BAD_CHECKSUM));
  }
  if (problems.length > 0) throw new ValidationFailed(problems, 'The attestation asked for cannot be given');
  return {
    jws,
    // Checksummed here: viem refuses a mixed-case address whose checksum it has to check itself.
    ...(eip712 && query.verifyingContract !== undefined && {
      eip712: { chainId: Number(query.chainId), verifyingContract: toChecksumAddress(query.verifyingContract) as `0x${string}` },
    }),
  };
}

/** The EIP-712 attestation as the `Attestation-EIP712` header carries it: base64url of its JSON. */
export const eip712Header = (a: Eip712Attestation) => Buffer.from(JSON.stringify(a)).toString('base64url');

/** Signs what `asked` says of `execution`. */
export async function attestationsOf(attestor: Attestor, asked: AttestRequest, execution: AttestedExecution, nowMs: number) {
  const [jws, eip712] = await Promise.all([
    asked.jws ? attestor.signJws(execution, nowMs) : undefined,
    asked.eip712 ? attestor.signEip712(execution, asked.eip712, nowMs) : undefined,
  ]);
  if (asked.eip712 && eip712 === undefined) {
    throw new ValidationFailed([field('attest', 'an EIP-712 attestation needs an EVM address (0x + 40 hex)')], 'The attestation asked for cannot be given');
  }
  return { jws, eip712 };
}

const Eip712Schema = Type.Object({
  signer: Type.String({ description: 'The address that signed (ATTESTATION_EIP712_KEY\'s): what the contract allows.' }),
  domain: Type.Object({ name: Type.String(), version: Type.String(), chainId: Type.Integer(), verifyingContract: Type.String() }),
  message: Type.Object({
    subject: Type.String({ description: 'The address checked.' }),
    scenario: Type.String({ description: 'keccak256 of the scenario id (UTF-8).' }),
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
export const attestationRoutes: FastifyPluginAsyncTypebox<{ store: Store; attestor: Attestor; now: () => number }> = async (app, { store, attestor, now }) => {
  /** The scenario revision's digest, from the store: only while the scenario is still at the revision that ran. */
  const scenarioDigest = async (r: ExecutionRecord): Promise<string | undefined> => {
    const rows = await store.find(r.scenarioId, [r.projectId ?? '']);
    const row = rows.find((x) => x.revision === r.scenarioRevision);
    return row && contentDigest(row.input);
  };

  app.get('/compliance/executions/:executionId/attestation', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getExecutionAttestation',
      summary: 'Sign an execution\'s verdict again',
      description: 'A fresh attestation (new issued-at, expiry and EIP-712 nonce) of a recorded execution: a JWS, and an ' +
        'EIP-712 one when `chainId` and `verifyingContract` are given. For an OffChainZKP execution, read it once completed. ' +
        'Answers 409 once the scenario moved past the revision that ran (its digest is signed).',
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
          409: 'SCS_SCENARIO_CHANGED: the scenario was changed or deleted since the execution ran; the attestation given ' +
            'with the execute answer (`?attest=`) is the one to use.',
        }),
      },
    },
  }, async (request) => {
    const { executionId } = request.params;
    const wantEip712 = request.query.chainId !== undefined || request.query.verifyingContract !== undefined;
    const asked = attestRequest(request.query, attestor, wantEip712 ? ['jws', 'eip712'] : ['jws']);
    const record = await store.getExecution(executionId);
    if (!record || !canSee(request.principal, record.projectId)) throw new ExecutionNotFound(executionId);
    const digest = await scenarioDigest(record);
    if (digest === undefined) throw new ScenarioChanged(JSON.stringify(record.scenarioId), record.scenarioRevision);
    return attestationsOf(attestor, asked, attestedExecution(record, digest), now());
  });
};
