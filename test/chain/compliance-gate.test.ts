/**
 * EIP-712 attestations on a real EVM: the service signs (?attest=eip712), contracts/ComplianceGate.sol checks them
 * on the local Hardhat node. A valid attestation passes the guarded function once; a tampered, expired, replayed,
 * other-address or failed-verdict one reverts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import {
  BaseError, ContractFunctionRevertedError, createPublicClient, encodeAbiParameters, http, keccak256, type Abi, type Address, type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startLocalChain, type LocalChain } from './evm.js';
import { auth, demoCredential, makeApp, scenario } from '../helpers.js';

const KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

/** What a gate is deployed with: keccak256(abi.encode(projectId, scenarioId)), '' for a scenario without a project. */
const scenarioHash = (projectId: string, scenarioId: string) =>
  keccak256(encodeAbiParameters([{ type: 'string' }, { type: 'string' }], [projectId, scenarioId]));

interface Eip712Answer {
  signer: Address;
  domain: { chainId: number; verifyingContract: Address };
  message: { subject: Address; scenario: Hex; verdict: number; expiry: number; nonce: string };
  signature: Hex;
}

let chain: LocalChain;
let gate: Address;
let abi: Abi;
let app: FastifyInstance;
let past: FastifyInstance;

async function withScenario(a: FastifyInstance) {
  await a.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
  return a;
}

beforeAll(async () => {
  chain = await startLocalChain();
  gate = await chain.deploy('ComplianceGate', [scenarioHash('', 'adult'), privateKeyToAccount(KEY).address]);
  abi = chain.artifacts.ComplianceGate!.abi;
  app = await withScenario(await makeApp({ ATTESTATION_EIP712_KEY: KEY, REQUIRE_HOLDER_BINDING: 'true' }));
  // A service whose clock is two hours behind: its attestations (600 s) expired an hour and a half ago.
  past = await withScenario(await makeApp({ ATTESTATION_EIP712_KEY: KEY, REQUIRE_HOLDER_BINDING: 'true' }, { now: () => Date.now() - 2 * 3600_000 }));
}, 120_000);

afterAll(async () => {
  await app?.close();
  await past?.close();
  await chain?.stop();
});

async function attestation(subject: Address, { service = app, age = 30, to = gate, headers = auth, scenarioId = 'adult' } = {}): Promise<Eip712Answer> {
  const cred = await demoCredential({ personalData: { lastName: 'B', age, birthDate: 19950101 } }, { holder: subject });
  const res = await service.inject({
    method: 'POST',
    url: `/compliance/scenarios/execute?attest=eip712&chainId=${chain.chainId}&verifyingContract=${to}`,
    headers,
    payload: { address: subject, credentials: [cred], scenarioId },
  });
  expect(res.statusCode).toBe(200);
  return JSON.parse(Buffer.from(String(res.headers['attestation-eip712']), 'base64url').toString()) as Eip712Answer;
}

const args = (a: Eip712Answer, overrides: { expiry?: number; nonce?: string; signature?: Hex } = {}) =>
  [BigInt(overrides.expiry ?? a.message.expiry), BigInt(overrides.nonce ?? a.message.nonce), overrides.signature ?? a.signature] as const;

/** The custom error a guarded call from `from` reverts with, or 'ok'. */
async function outcome(from: Address, a: Eip712Answer, overrides = {}, to = gate): Promise<string> {
  const client = createPublicClient({ transport: http(chain.url) });
  try {
    await client.simulateContract({ account: from, address: to, abi, functionName: 'guarded', args: args(a, overrides) });
    return 'ok';
  } catch (err) {
    const revert = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
    if (revert instanceof ContractFunctionRevertedError) return revert.data?.errorName ?? 'revert';
    throw err;
  }
}

describe('EIP-712 attestations and contracts/ComplianceGate.sol', () => {
  it('a valid attestation passes the guarded function, once: replayed, it reverts', async () => {
    const subject = chain.accounts[1]!;
    const a = await attestation(subject);
    expect(a.message).toMatchObject({ subject, scenario: scenarioHash('', 'adult'), verdict: 1 });
    expect(a.signer).toBe(privateKeyToAccount(KEY).address);
    expect(await outcome(subject, a)).toBe('ok');
    await chain.write(gate, 'ComplianceGate', 'guarded', args(a), subject);
    expect(await outcome(subject, a)).toBe('NonceUsed');
  });

  it('an attestation sent by another address reverts', async () => {
    const a = await attestation(chain.accounts[1]!);
    expect(await outcome(chain.accounts[2]!, a)).toBe('SignerNotAllowed');
  });

  it('a tampered attestation reverts: another expiry, another nonce, a changed signature', async () => {
    const subject = chain.accounts[1]!;
    const a = await attestation(subject);
    expect(await outcome(subject, a, { expiry: a.message.expiry + 3600 })).toBe('SignerNotAllowed');
    expect(await outcome(subject, a, { nonce: (BigInt(a.message.nonce) + 1n).toString() })).toBe('SignerNotAllowed');
    const sig = a.signature;
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'a' ? 'b' : 'a'}${sig.slice(11)}` as Hex;
    expect(['SignerNotAllowed', 'BadSignature']).toContain(await outcome(subject, a, { signature: flipped }));
    expect(await outcome(subject, a)).toBe('ok');
  });

  it('an expired attestation reverts', async () => {
    const subject = chain.accounts[1]!;
    const a = await attestation(subject, { service: past });
    expect(a.message.expiry).toBeLessThan(Date.now() / 1000);
    expect(await outcome(subject, a)).toBe('AttestationExpired');
  });

  it('the attestation of a failed verdict reverts', async () => {
    const subject = chain.accounts[1]!;
    const a = await attestation(subject, { age: 12 });
    expect(a.message.verdict).toBe(2);
    expect(await outcome(subject, a)).toBe('SignerNotAllowed');
  });

  it('a signer removed from the allow-list is refused', async () => {
    const subject = chain.accounts[1]!;
    const a = await attestation(subject);
    await chain.write(gate, 'ComplianceGate', 'setSigner', [a.signer, false]);
    try {
      expect(await outcome(subject, a)).toBe('SignerNotAllowed');
    } finally {
      await chain.write(gate, 'ComplianceGate', 'setSigner', [a.signer, true]);
    }
  });
});

describe('two projects with a scenario of the same id (issue 36: a tenant\'s attestation passed another tenant\'s gate)', () => {
  const A = { authorization: 'Bearer token-of-project-a-0123456789' };
  const B = { authorization: 'Bearer token-of-project-b-0123456789' };
  let tenants: FastifyInstance;
  let gateA: Address;
  let gateB: Address;

  beforeAll(async () => {
    tenants = await makeApp({ ATTESTATION_EIP712_KEY: KEY, REQUIRE_HOLDER_BINDING: 'true', API_TOKENS: 'token-of-project-a-0123456789:proj-a,token-of-project-b-0123456789:proj-b' });
    // A's `kyc` is strict (an adult with a green review); B's asks only for the green review.
    const strict = scenario({ projectId: 'proj-a' });
    const lax = scenario({ projectId: 'proj-b', queryConfigurations: strict.queryConfigurations.slice(0, 1) });
    for (const [headers, input] of [[A, strict], [B, lax]] as const) {
      const res = await tenants.inject({ method: 'POST', url: '/compliance/scenarios', headers, payload: { id: 'kyc', input } });
      expect(res.statusCode, res.body).toBe(201);
    }
    gateA = await chain.deploy('ComplianceGate', [scenarioHash('proj-a', 'kyc'), privateKeyToAccount(KEY).address]);
    gateB = await chain.deploy('ComplianceGate', [scenarioHash('proj-b', 'kyc'), privateKeyToAccount(KEY).address]);
  }, 60_000);
  afterAll(async () => tenants?.close());

  it('each project\'s attestation passes its own gate and neither passes the other\'s', async () => {
    const subject = chain.accounts[3]!;
    // A 12-year-old passes B's lax `kyc` only.
    const fromB = await attestation(subject, { service: tenants, age: 12, to: gateA, headers: B, scenarioId: 'kyc' });
    expect(fromB.message).toMatchObject({ scenario: scenarioHash('proj-b', 'kyc'), verdict: 1 });
    expect(await outcome(subject, fromB, {}, gateA)).toBe('SignerNotAllowed');
    const fromA = await attestation(subject, { service: tenants, to: gateB, headers: A, scenarioId: 'kyc' });
    expect(fromA.message).toMatchObject({ scenario: scenarioHash('proj-a', 'kyc'), verdict: 1 });
    expect(await outcome(subject, fromA, {}, gateB)).toBe('SignerNotAllowed');
    // Signed for their own gates, both pass.
    const ownA = await attestation(subject, { service: tenants, to: gateA, headers: A, scenarioId: 'kyc' });
    expect(await outcome(subject, ownA, {}, gateA)).toBe('ok');
    const ownB = await attestation(subject, { service: tenants, age: 12, to: gateB, headers: B, scenarioId: 'kyc' });
    expect(await outcome(subject, ownB, {}, gateB)).toBe('ok');
  });
});
