/** Shared fixtures of the engine tests: a fixed clock, ids, and synthetic credentials (the engine does not verify). */
import { challengeQueryEvaluator, type TypeDeclarations } from '../../src/engine/index.js';
import type { Credential } from '../../src/schemas/credential.js';

export const NOW = Date.parse('2025-06-01T12:00:00Z');
export const EXECUTION_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
export const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

/** The engine's compile step for ChallengeQuery, as its module declares it, without the registry's query policies. */
export const TYPES: TypeDeclarations = { evaluators: { ChallengeQuery: challengeQueryEvaluator } };

/** An IDInformation credential usable at NOW, with every field the contract's Credential requires. */
export function credential(id: string, credentialSubject: Record<string, unknown>, over: Partial<Credential> = {}): Credential {
  return {
    id,
    '@context': ['https://www.w3.org/2018/credentials/v1'],
    type: ['VerifiableCredential', 'IDInformation'],
    issuanceDate: '2024-01-01T00:00:00Z',
    expirationDate: '2030-01-01T00:00:00Z',
    credentialSubject,
    credentialStatus: { id: 'https://issuer.example/status/1', type: 'SparseMerkleTreeProof', revocationNonce: 1 },
    issuer: 'did:example:issuer',
    credentialSchema: { id: 'https://schemas.example/kyc.json', type: 'JsonSchema2023' },
    proof: { type: 'BJJSignature2021' },
    ...over,
  };
}
