import { ID_INFORMATION_CONTEXT_URL } from '../jsonld/urls.js';
/** Its own module: no import cycle. */
export const exampleScenario = {
  name: 'Adult KYC',
  description: 'Holder is at least 18 and passed KYC',
  queryConfigurations: [
    { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' as const } },
    { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' as const } },
  ],
  smartContractDeployments: [],
  type: 'ChallengeQuery' as const,
};

/** The requestId is too large for a JSON number. */
export const exampleOnChainScenario = {
  name: 'Born before 2002 (on chain)',
  description: 'The holder proved to the UniversalVerifier that the birth date of their IDInformation credential is before 2002-01-01',
  queryConfigurations: [{
    id: 'born-before-2002',
    query: {
      type: 'IDInformation',
      context: ID_INFORMATION_CONTEXT_URL,
      requestId: '1766847064778385395302369794886434203869876842642017056790870324894838731',
      attribute: 'personalData.birthDate',
      operator: '$lt' as const,
      value: 20020101,
    },
  }],
  smartContractDeployments: [{
    id: 'universal-verifier', contractName: 'UniversalVerifier', status: 'Deployed',
    address: '0x9a9f2ccfde556a7e9ff0848998aa4a0cfd8863ae', chain: 'eip155:31337',
  }],
  type: 'OnChainZKP' as const,
};
