import { Type, type Static } from '@sinclair/typebox';
import { RefString, refOf } from './common.js';

/**
 * Seed 2.1. A credential is a signed document from another system, so fields beyond the seed's are accepted and
 * ignored (W3C credentials carry more); every field of the seed's table is required.
 * `proof` is an object in the seed; iden3 wallets send an array of proofs (BJJSignature2021, Iden3SparseMerkleTreeProof),
 * so both are accepted.
 */
export const CredentialStatus = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 2048 }),
    type: Type.String({
      minLength: 1, maxLength: 256,
      examples: ['SparseMerkleTreeProof'],
      description: 'SparseMerkleTreeProof, Iden3ReverseSparseMerkleTreeProof, Iden3commRevocationStatusV1.0 or Iden3OnchainSparseMerkleTreeProof2023.',
    }),
    revocationNonce: Type.Integer({ minimum: 0 }),
  },
  { $id: 'CredentialStatus', additionalProperties: true },
);

export const CredentialSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 2048 }),
    type: Type.String({ minLength: 1, maxLength: 256, examples: ['JsonSchema2023'] }),
  },
  { $id: 'CredentialSchema', additionalProperties: true },
);

const Instant = Type.String({ format: 'date-time', description: 'RFC 3339 date-time with a time zone.' });

export const Credential = Type.Object(
  {
    id: RefString,
    '@context': Type.Array(Type.String({ maxLength: 2048 }), { minItems: 1, maxItems: 64 }),
    type: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 64 }),
    expirationDate: Instant,
    issuanceDate: Instant,
    credentialSubject: Type.Object({}, { additionalProperties: true, description: 'Claims about the holder; contents depend on the credential type.' }),
    credentialStatus: refOf(CredentialStatus),
    issuer: Type.String({ minLength: 1, maxLength: 2048 }),
    credentialSchema: refOf(CredentialSchema),
    proof: Type.Union([
      Type.Object({}, { additionalProperties: true }),
      Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 16 }),
    ], { description: 'A proof object, or an array of them as iden3 wallets send.' }),
  },
  { $id: 'Credential', additionalProperties: true },
);
export type Credential = Static<typeof Credential>;
