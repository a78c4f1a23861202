/** From a real run with DEMO_ISSUER=1; test/openapi.test.ts executes them again and compares. */
import type { Static } from '@sinclair/typebox';
import type { ExecuteRequest, ExecutionResult } from './execution.js';
import { exampleScenario } from './example-scenario.js';

/** The holder of the example credential (its credentialSubject.id is did:pkh:eip155:1:<this address>). */
const EXAMPLE_HOLDER = '0x52908400098527886E0F7030069857D2E4169EE7';
/** An address that holds no credential of the example. */
const EXAMPLE_OTHER_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

/** An IDInformation credential of EXAMPLE_HOLDER, signed by the demo issuer (BJJSignature2021), valid until 2036. */
const credential = {
  id: 'urn:uuid:8120b248-892b-80ea-a314-a2029e98a7b0',
  '@context': [
    'https://www.w3.org/2018/credentials/v1',
    'https://schema.iden3.io/core/jsonld/iden3proofs.jsonld',
    'https://compliance.example/schemas/IDInformation-v1.jsonld',
  ],
  type: [
    'VerifiableCredential',
    'IDInformation',
  ],
  expirationDate: '2036-01-15T09:00:00.000Z',
  issuanceDate: '2026-01-15T09:00:00.000Z',
  credentialSubject: {
    id: 'did:pkh:eip155:1:0x52908400098527886E0F7030069857D2E4169EE7',
    journeyId: '9b2d1f3e-6c1a-4f0e-8d7b-2a5c4e6f8a10',
    reviewAnswer: 'GREEN',
    documentType: 'PASSPORT',
    isSandbox: true,
    personalData: {
      firstName: 'Alice',
      lastName: 'Demo',
      age: 30,
      citizenship: 'FRA',
      country: 'FRA',
      birthDate: 19950101,
      countryOfBirth: 'FRA',
    },
    type: 'IDInformation',
  },
  credentialStatus: {
    id: 'http://127.0.0.1:3000/demo-issuer/status/2086668936',
    type: 'SparseMerkleTreeProof',
    revocationNonce: 2086668936,
  },
  issuer: 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa',
  credentialSchema: {
    id: 'https://compliance.example/schemas/IDInformation-v1.json',
    type: 'JsonSchema2023',
  },
  proof: [
    {
      issuerData: {
        id: 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa',
        state: {
          rootOfRoots: '0000000000000000000000000000000000000000000000000000000000000000',
          revocationTreeRoot: '0000000000000000000000000000000000000000000000000000000000000000',
          claimsTreeRoot: '40db748af9f36ce0e813d451876cb4c9db4e66539baed704c8e4d85e6cc89b2d',
          value: 'b031058df13323f3e26b2ce0b8709bb48023c3636b1e3dd48246e8fc5bb26e1e',
        },
        mtp: {
          existence: true,
          siblings: [],
        },
        authCoreClaim: 'cca3371a6cb1b715004407e325bd993c0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001d1c112ea6cc789027bfac5e76d8381f0a5ebe34f7f31d37f65d0327341db7277d795817180c02d907003f7a20c2dea48b48afa32bd5ea0e453b2487ea0ead070000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
        credentialStatus: {
          id: 'http://127.0.0.1:3000/demo-issuer/status/0',
          type: 'SparseMerkleTreeProof',
          revocationNonce: 0,
        },
      },
      type: 'BJJSignature2021',
      coreClaim: '947dae32218864d81ca205741eb94b912a000000000000000000000000000000ffff31cf10473ba0a87ff8619327eb1c6cd83fa4deaf0e6836d21403510b0e00db0656ba1f8a6f269a8d62700c0e19f39549a3a6a9d452a6d4207464dc6d10050000000000000000000000000000000000000000000000000000000000000000880a607c000000009052377c0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
      signature: '0d86c0aaf18988dfe2f71f981d2dc981d58bab1cfc3a6ecc34bae374ab7b810a2a6e5211a3fa9613fc8f3d37d651e238739507fa5606b3fc8aaabf9600d4a300',
    },
  ],
};

type Example<T> = { summary: string; description?: string; value: T };

export const executeRequestExamples = {
  holder: {
    summary: 'The holder\'s own credential',
    description: 'Execute the adult-kyc scenario for the address the credential was issued to.',
    value: { scenarioId: 'adult-kyc', address: EXAMPLE_HOLDER, credentials: [credential] },
  },
  anotherAddress: {
    summary: 'Someone else\'s credential',
    description: 'The same credential sent for another address: it is not this address\'s credential.',
    value: { scenarioId: 'adult-kyc', address: EXAMPLE_OTHER_ADDRESS, credentials: [credential] },
  },
} satisfies Record<string, Example<Static<typeof ExecuteRequest>>>;

/**
 * The answer to executing `exampleScenario` for `address`: one result per rule, in order, each not-valid with the
 * reasons `reasons` gives for its objectId, or valid where it gives none.
 */
function answer(address: string, executionId: string, reasons: Record<string, string[]> = {}): ExecutionResult[] {
  return exampleScenario.queryConfigurations.map(({ id, query }) => {
    const why = reasons[id] ?? [];
    return {
      objectType: exampleScenario.type,
      objectId: id,
      name: exampleScenario.name,
      address,
      result: { result: { is_valid: why.length === 0, reasons: why }, executionId, status: why.length === 0 ? 'valid' : 'not-valid', query },
      executionId,
      scenarioId: 'adult-kyc',
    };
  });
}

const NOT_THE_HOLDER = `credential #1 (${credential.id}): belongs to another holder: credentialSubject.id encodes an address other than the request's address`;

export const executeResponseExamples = {
  holder: {
    summary: 'Every rule is valid',
    value: answer(EXAMPLE_HOLDER, 'd3371f11-73dc-44ea-862a-f4602b1f660f'),
  },
  anotherAddress: {
    summary: 'Every rule is not valid, and the reasons say why',
    value: answer(EXAMPLE_OTHER_ADDRESS, '88585899-6123-44bf-8440-903f22cec8bd', {
      'q-kyc': ['expected a usable IDInformation credential with reviewAnswer $eq "GREEN"', NOT_THE_HOLDER],
      'q-age': ['expected a usable IDInformation credential with personalData.age $gte 18', NOT_THE_HOLDER],
    }),
  },
} satisfies Record<keyof typeof executeRequestExamples, Example<ExecutionResult[]>>;
