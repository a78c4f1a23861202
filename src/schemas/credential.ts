import { Type, type Static } from '@sinclair/typebox';
import { RefString, refOf } from './common.js';

/**
 * The contract's Credential. A credential is a signed document from another system, so fields beyond the contract's
 * are accepted and ignored (W3C credentials carry more); every field the contract lists is required except
 * `expirationDate`, which W3C and iden3 make optional and real Privado ID credentials omit (absent: never expires).
 * `proof` is an object in the contract; iden3 wallets send an array of proofs (BJJSignature2021, Iden3SparseMerkleTreeProof),
 * so both are accepted.
 */
export const CredentialStatus = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 2048, description: 'Where the issuer publishes the status (a URL or a DID).' }),
    type: Type.String({
      minLength: 1, maxLength: 256,
      examples: ['SparseMerkleTreeProof'],
      description: 'SparseMerkleTreeProof, Iden3ReverseSparseMerkleTreeProof, Iden3commRevocationStatusV1.0 or ' +
        'Iden3OnchainSparseMerkleTreeProof2023. Another type cannot be checked, so the credential never makes a rule valid.',
    }),
    revocationNonce: Type.Integer({ minimum: 0, description: 'The number the issuer revokes the credential by.' }),
  },
  {
    $id: 'CredentialStatus',
    additionalProperties: true,
    description: 'Where to check that the issuer has not revoked the credential; checked on execute.',
  },
);

export const CredentialSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 2048, description: 'URL of the JSON schema of the credential.' }),
    type: Type.String({ minLength: 1, maxLength: 256, examples: ['JsonSchema2023'] }),
  },
  { $id: 'CredentialSchema', additionalProperties: true, description: 'The JSON schema the credential follows.' },
);

const Instant = (what: string) => Type.String({ format: 'date-time', description: `${what} (RFC 3339 date-time with a time zone).` });

export const Credential = Type.Object(
  {
    id: Type.String({ ...RefString, description: 'Id of the credential, kept in the audit log with its SHA-256.' }),
    '@context': Type.Array(Type.String({ maxLength: 2048 }), { minItems: 1, maxItems: 64, description: 'JSON-LD contexts of the credential.' }),
    type: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
      minItems: 1, maxItems: 64,
      description: 'Credential types, e.g. [VerifiableCredential, IDInformation]: a rule reads the credentials whose types include its query `type`.',
    }),
    expirationDate: Type.Optional(Type.String({
      format: 'date-time',
      description: 'The credential is not usable from this instant on (RFC 3339 date-time with a time zone). Absent, it ' +
        'never expires: optional here though the contract\'s table lists it, because W3C and iden3 make it optional and ' +
        'real Privado ID credentials omit it.',
    })),
    issuanceDate: Instant('The credential is usable from this instant on'),
    credentialSubject: Type.Object({}, { additionalProperties: true, description: 'Claims about the holder; contents depend on the credential type.' }),
    credentialStatus: refOf(CredentialStatus),
    issuer: Type.String({
      minLength: 1, maxLength: 2048,
      description: 'DID of the issuer: it must be trusted (TRUSTED_ISSUERS, narrowed by the scenario\'s trustedIssuers).',
    }),
    credentialSchema: refOf(CredentialSchema),
    proof: Type.Union([
      Type.Object({}, { additionalProperties: true }),
      Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 16 }),
    ], { description: 'A proof object, or an array of them as iden3 wallets send.' }),
  },
  {
    $id: 'Credential',
    additionalProperties: true,
    description: 'A W3C verifiable credential (iden3 / Privado ID) sent exactly as the holder\'s wallet holds it: its proof ' +
      'is checked (unless CREDENTIAL_VERIFICATION=off), so any change makes it not valid. Fields beyond these are accepted.',
  },
);
export type Credential = Static<typeof Credential>;
