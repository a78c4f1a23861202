/**
 * The scenario of the OpenAPI create example, which the execute examples (examples.ts) run. A module of its own,
 * importing nothing, so that the Scenario schema and the examples both use it without an import cycle; the service
 * validates it like any scenario (test/openapi.test.ts creates it). `adult-kyc`: a green KYC review and an age of at
 * least 18.
 */
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
