import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { createDemoIssuer, type DemoIssuer } from '../src/trust/demo-issuer.js';
import type { ExecutionResult } from '../src/schemas/execution.js';
import { TEMP_ROOT_VARIABLE } from './temp-root.global.js';
import { iden3DocumentsEnv } from './shared-fixtures.js';

export const TOKEN = 'test-token-0123456789abcdef';
export const auth = { authorization: `Bearer ${TOKEN}` };

/**
 * A fresh directory inside this run's temporary root (test/temp-root.global.ts removes it when the run ends). Run
 * without that global setup, the directories are made in the system's and removed when the process exits.
 */
export function tempDir(prefix = 'scs-'): string {
  const root = process.env[TEMP_ROOT_VARIABLE];
  const dir = fs.mkdtempSync(path.join(root ?? os.tmpdir(), prefix));
  if (root === undefined) process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * An app on a real SQLite file in a fresh temporary directory, verifying credentials as the service does by default
 * (CREDENTIAL_VERIFICATION=strict) and trusting the demo issuer: send it demoCredential()s. A test about something else
 * that sends the synthetic credential() passes CREDENTIAL_VERIFICATION: 'off' and says why.
 */
export async function makeApp(env: Record<string, string> = {}, deps: AppDeps = {}): Promise<FastifyInstance & { config: Config }> {
  // Load shedding off unless a test asks for it: a busy test machine must not turn requests into 503s.
  // VERIFY_THREADS=0: checks on the request thread, so that an app starts no threads that load the iden3 libraries.
  // iden3's KYC contexts from ../shared/fixtures, as an operator hands them in (the service does not ship them).
  const config = loadConfig({
    DATA_DIR: tempDir(), API_TOKENS: TOKEN, MAX_EVENT_LOOP_DELAY_MS: '0', CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '1',
    VERIFY_THREADS: '0', ...iden3DocumentsEnv(), ...env,
  });
  const app = await buildApp(config, { logger: false, ...deps });
  await app.ready();
  return Object.assign(app, { config });
}

export const DAY = 24 * 3600 * 1000;

/** A credential with every field the contract's Credential requires. */
export function credential(overrides: Record<string, unknown> = {}, subject: Record<string, unknown> = {}) {
  return {
    id: `urn:uuid:${crypto.randomUUID()}`,
    '@context': ['https://www.w3.org/2018/credentials/v1'],
    type: ['VerifiableCredential', 'IDInformation'],
    issuanceDate: new Date(Date.now() - DAY).toISOString(),
    expirationDate: new Date(Date.now() + 365 * DAY).toISOString(),
    credentialSubject: {
      id: 'did:iden3:polygon:amoy:x6x5sor7zpycB7z7Q9348dXJxZ9s5b9AgmPeSccZz',
      reviewAnswer: 'GREEN',
      personalData: { firstName: 'Alice', lastName: 'Liddell', age: 30, citizenship: 'FRA', birthDate: 19950101 },
      ...subject,
    },
    credentialStatus: { id: 'https://issuer.example/status/1', type: 'SparseMerkleTreeProof', revocationNonce: 1 },
    issuer: 'did:iden3:polygon:amoy:xBdqiqz3yVT79NEAuNaqKSDZ6a5V6q8Ph66i5d2tT',
    credentialSchema: { id: 'https://schemas.example/IDInformation.json', type: 'JsonSchema2023' },
    proof: { type: 'BJJSignature2021' },
    ...overrides,
  };
}

export const ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

let demoIssuer: Promise<DemoIssuer> | undefined;

/**
 * A credential the demo issuer signed (BJJSignature2021) for `holder` (ADDRESS by default; `subjectId`: another subject
 * DID, e.g. one that encodes no address), with credential()'s claims
 * and `subject` over them (`expirationDate: null`: none); makeApp's apps trust it. Issued by one demo issuer per test process (its key is fixed, so
 * every app's in-process status answers agree with it).
 */
export async function demoCredential(
  subject: Record<string, unknown> = {},
  { holder = ADDRESS as string, subjectId = undefined as string | undefined, issuanceDate = new Date(Date.now() - DAY), expirationDate = new Date(Date.now() + 365 * DAY) as Date | null } = {},
): Promise<Record<string, any>> {
  demoIssuer ??= createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
  const { personalData, ...rest } = subject;
  return (await demoIssuer).issue({
    subjectId: subjectId ?? `did:pkh:eip155:1:${holder}`,
    claims: { reviewAnswer: 'GREEN', ...rest, personalData: { firstName: 'Alice', age: 30, citizenship: 'FRA', ...(personalData as object) } },
    issuanceDate,
    expirationDate,
  });
}

export function scenario(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Adult KYC',
    description: 'Holder is an adult with a green review',
    queryConfigurations: [
      { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
      { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' } },
    ],
    smartContractDeployments: [],
    type: 'ChallengeQuery',
    ...overrides,
  };
}

/** Executes a scenario for ADDRESS with one demo-issuer credential, expects 200 and answers the results. */
export async function executeOnce(app: FastifyInstance, scenarioId: string): Promise<ExecutionResult[]> {
  const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [await demoCredential()], scenarioId } });
  if (res.statusCode !== 200) throw new Error(`execute ${scenarioId}: ${res.statusCode} ${res.body}`);
  return res.json() as ExecutionResult[];
}
