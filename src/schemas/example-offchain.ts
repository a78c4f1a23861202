import { ID_INFORMATION_CONTEXT_URL } from '../jsonld/urls.js';

/** On the service's own IDInformation type: its context ships with the service, so "Try it out" creates it as it is. */
const idInfo = { type: 'IDInformation', context: ID_INFORMATION_CONTEXT_URL, groupId: 1 } as const;

export const exampleOffChainScenario = {
  name: 'Adult, one account per person (zero-knowledge)',
  description: 'The holder proves with their wallet, revealing only their country',
  type: 'OffChainZKP',
  smartContractDeployments: [],
  queryConfigurations: [
    {
      id: 'q-adult',
      query: {
        ...idInfo, requestId: 1, attribute: 'personalData.birthDate', operator: '$lte', value: 20080101, circuitId: 'credentialAtomicQueryV3',
        proofType: 'BJJSignature2021', params: { nullifierSessionId: 20260101 },
      },
    },
    {
      id: 'q-document',
      query: { ...idInfo, requestId: 2, attribute: 'documentType', operator: '$in', value: ['PASSPORT', 'ID_CARD'], circuitId: 'linkedMultiQuery' },
    },
    { id: 'q-born', query: { ...idInfo, requestId: 2, attribute: 'personalData.birthDate', operator: '$gt', value: 19000101, circuitId: 'linkedMultiQuery' } },
    { id: 'q-show-country', query: { type: 'IDInformation', context: ID_INFORMATION_CONTEXT_URL, requestId: 3, attribute: 'personalData.country', operator: '$sd' } },
  ],
} as const;
