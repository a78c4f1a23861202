/**
 * Bench fixtures. The engine benchmark: one 5-rule ChallengeQuery scenario of mixed operators (string $eq,
 * number $gte, string $nin, number $between, ISO date $lt) over three credential types, and three valid credentials
 * (one per type) padded with an iden3-like BJJSignature2021 proof (an execute body of about 4 KB); every rule passes.
 * The HTTP and memory benchmarks: see HTTP_RULES below.
 */

export const TOKEN = 'bench-token-0123456789abcdef0123';
/** EIP-55 mixed case, as wallets and frontends send it (so the checksum is verified on every execute). */
export const ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

export const RULES = [
  { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
  { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' } },
  { id: 'q-country', query: { type: 'IDInformation', requestId: 3, attribute: 'personalData.citizenship', value: ['PRK', 'IRN', 'SYR', 'CUB'], operator: '$nin' } },
  { id: 'q-risk', query: { type: 'AMLCheck', requestId: 4, attribute: 'riskScore', value: [0, 40], operator: '$between' } },
  { id: 'q-residence', query: { type: 'ProofOfResidence', requestId: 5, attribute: 'residentSince', value: '2025-01-01', operator: '$lt' } },
];

export function scenario(name = 'Bench KYC', rules = RULES) {
  return {
    name,
    description: 'Benchmark scenario: 5 rules of mixed operators over 3 credential types',
    type: 'ChallengeQuery',
    queryConfigurations: rules,
    smartContractDeployments: [],
  };
}

const hex = (seed, length) => {
  let out = '';
  let x = seed >>> 0;
  while (out.length < length) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, length);
};

const ISSUER = 'did:iden3:polygon:amoy:xBdqiqz3yVT79NEAuNaqKSDZ6a5V6q8Ph66i5d2tT';

export function credential(n, type, subject, dates = {}) {
  return {
    id: `urn:uuid:4d3c2b1a-0000-4000-8000-00000000000${n}`,
    '@context': [
      'https://www.w3.org/2018/credentials/v1',
      'https://schema.iden3.io/core/jsonld/iden3proofs.jsonld',
      `https://schemas.example/${type}.jsonld`,
    ],
    type: ['VerifiableCredential', type],
    issuanceDate: dates.issuanceDate ?? '2025-01-01T00:00:00Z',
    expirationDate: dates.expirationDate ?? '2035-01-01T00:00:00Z',
    credentialSubject: { id: 'did:iden3:polygon:amoy:x6x5sor7zpyZX9yNpm8h1rPBDSN9idaEhDj1Qm8Q9', type, ...subject },
    credentialStatus: {
      id: `https://issuer.example/v1/agent/credentials/status/${n}`,
      type: 'Iden3commRevocationStatusV1.0',
      revocationNonce: 1000 + n,
    },
    issuer: ISSUER,
    credentialSchema: { id: `https://schemas.example/${type}.json`, type: 'JsonSchema2023' },
    proof: [{
      type: 'BJJSignature2021',
      issuerData: {
        id: ISSUER,
        state: { value: hex(n * 7 + 2, 64) },
      },
      coreClaim: hex(n * 7 + 4, 192),
      signature: hex(n * 7 + 5, 128),
    }],
  };
}

/** Three valid credentials, one per type the rules read; every rule passes on them. */
export function credentials() {
  return [
    credential(1, 'IDInformation', { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA', firstName: 'Ada', lastName: 'Lovelace' } }),
    credential(2, 'AMLCheck', { riskScore: 12, provider: 'example-aml', checkedAt: '2025-06-01T10:00:00Z' }),
    credential(3, 'ProofOfResidence', { residentSince: '2019-05-20', country: 'FRA', postalCode: '75001' }),
  ];
}

export function executeBody(scenarioId, creds = credentials()) {
  return { address: ADDRESS, scenarioId, credentials: creds };
}

// -----------------------------------------------------------------------------------------------------------------
// The HTTP and memory benchmarks run execute as production does: credential trust verification (strict, the
// default since the trust work) before the rules. Their credentials are real IDInformation credentials (BJJSignature2021
// proofs, SparseMerkleTreeProof status) issued by the service's deterministic demo issuer for ADDRESS, which the
// server trusts and answers statuses for in process with DEMO_ISSUER=1. Their rules read IDInformation claims only
// (the demo issuer's JSON-LD context); operators are mixed as above.
// -----------------------------------------------------------------------------------------------------------------

export const HTTP_RULES = [
  ...RULES.slice(0, 3), // q-kyc, q-age, q-country: IDInformation already
  { id: 'q-birth', query: { type: 'IDInformation', requestId: 4, attribute: 'personalData.birthDate', value: [19000101, 20080101], operator: '$between' } },
  { id: 'q-entry', query: { type: 'IDInformation', requestId: 5, attribute: 'entryTime', value: '2026-01-01T00:00:00Z', operator: '$lt' } },
];

export const httpScenario = (name = 'Bench execute') => scenario(name, HTTP_RULES);

/** Claims of the three IDInformation credentials; every rule passes on each. */
export const ID_CLAIMS = [
  { reviewAnswer: 'GREEN', documentType: 'PASSPORT', entryTime: '2025-06-01T10:00:00Z', personalData: { firstName: 'Ada', lastName: 'Lovelace', age: 30, citizenship: 'FRA', birthDate: 19950101 } },
  { reviewAnswer: 'GREEN', documentType: 'ID_CARD', entryTime: '2025-03-12T08:30:00Z', personalData: { firstName: 'Ada', lastName: 'Lovelace', age: 30, citizenship: 'GBR', birthDate: 19950101 } },
  { reviewAnswer: 'GREEN', documentType: 'RESIDENCE_PERMIT', entryTime: '2024-11-02T16:45:00Z', personalData: { firstName: 'Ada', lastName: 'Lovelace', age: 30, citizenship: 'FRA', birthDate: 19950101 } },
];

/** Three IDInformation credentials with made-up proofs: for CREDENTIAL_VERIFICATION=off. */
export function syntheticIdCredentials() {
  return ID_CLAIMS.map((claims, i) => credential(i + 1, 'IDInformation', { id: `did:pkh:eip155:1:${ADDRESS}`, ...claims }));
}

/** Three IDInformation credentials issued for ADDRESS by the demo issuer in dist/ (about 2.8 KB each). */
export async function demoIdCredentials() {
  const { createDemoIssuer } = await import('../dist/trust/demo-issuer.js');
  const issuer = await createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
  const now = Date.now();
  const out = [];
  for (const claims of ID_CLAIMS) {
    out.push(await issuer.issue({
      subjectId: `did:pkh:eip155:1:${ADDRESS}`,
      claims,
      issuanceDate: new Date(now - 3_600_000),
      expirationDate: new Date(now + 365 * 86_400_000),
    }));
  }
  return { issuer: issuer.did, credentials: out };
}
