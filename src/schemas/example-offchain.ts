/**
 * The OffChainZKP create example of the OpenAPI document: iden3's KYCAgeCredential (kyc-v3, a context the operator
 * hands in), an age condition proved with credentialAtomicQueryV3 and a nullifier (one holder, one address), linked
 * conditions on the same credential, and a selective disclosure. test/zkp/request-v3.test.ts checks that create
 * accepts it.
 */
const KYC_V3 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld';
const age = { type: 'KYCAgeCredential', context: KYC_V3, groupId: 1 } as const;

export const exampleOffChainScenario = {
  name: 'Adult, one account per person (zero-knowledge)',
  description: 'The holder proves with their wallet, revealing only the document type',
  type: 'OffChainZKP',
  smartContractDeployments: [],
  queryConfigurations: [
    {
      id: 'q-adult',
      query: {
        ...age, requestId: 1, attribute: 'birthday', operator: '$lte', value: 20080101, circuitId: 'credentialAtomicQueryV3',
        proofType: 'BJJSignature2021', params: { nullifierSessionId: 20260101 },
      },
    },
    { id: 'q-document', query: { ...age, requestId: 2, attribute: 'documentType', operator: '$in', value: [1, 2, 3], circuitId: 'linkedMultiQuery' } },
    { id: 'q-born', query: { ...age, requestId: 2, attribute: 'birthday', operator: '$gt', value: 19000101, circuitId: 'linkedMultiQuery' } },
    { id: 'q-show-document', query: { type: 'KYCAgeCredential', context: KYC_V3, requestId: 3, attribute: 'documentType', operator: '$sd' } },
  ],
} as const;
