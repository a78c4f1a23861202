/**
 * OnChainZKP rules against requests held by CredentialAtomicQueryV3StableValidator, the V3 validator current
 * deployments use (@iden3/contracts 3.4.0's build artifact), on a local Hardhat node with the stack of
 * scripts/iden3-stack.mjs; compared as test/chain/iden3-requests.test.ts compares the beta validator's. The stable
 * validator reads the same params (circuit credentialAtomicQueryV3OnChain) and picks its Groth16 verifier by the
 * circuit the response names in its metadata (here the subversion credentialAtomicQueryV3OnChain-16-16-64-16-32);
 * the Groth16 verifier behind it is the stand-in that accepts every proof, as in the other chain tests.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, EIP1193Provider, Hex } from 'viem';
import { evaluateOnChainRules, type OnChainInput } from '../../src/chain/index.js';
import { ChainReader } from '../../src/chain/reader.js';
import { RequestCheck } from '../../src/chain/request-check.js';
import { RequestMatcher } from '../../src/chain/request-match.js';
import type { QueryConfiguration } from '../../src/schemas/scenario.js';
import { loadConfig } from '../../src/config.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { iden3DocumentLoader } from '../zkp/fixtures.js';
// @ts-expect-error: a JavaScript module without declarations (it is also the demo's)
import * as stackModule from '../../scripts/iden3-stack.mjs';
import { startLocalChain, type LocalChain } from './evm.js';

const require = createRequire(import.meta.url);

interface Query {
  schema: bigint; claimPathKey: bigint; operator: bigint; values: bigint[]; queryHash?: bigint; circuitIds?: string[];
  groupID?: bigint; nullifierSessionID?: bigint; proofType?: bigint;
}
interface Stack {
  accounts: Address[]; verifier: Address; v3Validator: Address;
  deployStableV3Validator(): Promise<Address>;
  setRequest(id: bigint, validator: Address, params: Hex): Promise<unknown>;
  submit(sender: Address, id: bigint, o: { kind: 'v3'; queryHash?: bigint; circuitId?: string }): Promise<unknown>;
}
const stack = stackModule as {
  deployIden3Stack(p: EIP1193Provider): Promise<Stack>;
  v3Params(q: Query): Hex; queryHashV3(q: Query): bigint;
  KYC_AGE: { context: string; type: string; schema: bigint; birthdayPathKey: bigint };
  OPERATORS: Record<string, bigint>;
};
const { KYC_AGE, OPERATORS } = stack;
const STABLE = ['credentialAtomicQueryV3OnChain'];
const SUBVERSION = 'credentialAtomicQueryV3OnChain-16-16-64-16-32';

let chain: LocalChain;
let s: Stack;
let stable: Address;
let alice: Address;
let bob: Address;

const born = (before: bigint, operator = OPERATORS.$lt!): Query =>
  ({ schema: KYC_AGE.schema, claimPathKey: KYC_AGE.birthdayPathKey, operator, values: [before] });
const v3 = (id: string, requestId: bigint, extra: Partial<QueryConfiguration['query']> = {}): QueryConfiguration => ({
  id,
  query: {
    type: KYC_AGE.type, context: KYC_AGE.context, requestId: requestId.toString(), attribute: 'birthday', operator: '$lt', value: 20020101,
    circuitId: 'credentialAtomicQueryV3', ...extra,
  },
});
const check = () => new RequestCheck({ matcher: new RequestMatcher({ documentLoader: iden3DocumentLoader() }), allowUnchecked: false });
const reader = () => new ChainReader({
  ...loadConfig({}).chains, chains: [{ chain: chain.chain, chainId: chain.chainId, url: chain.url }], timeoutMs: 30_000, cacheTtlMs: 5000, errorTtlMs: 0,
});
const input = (queryConfigurations: QueryConfiguration[], address: Address): OnChainInput => ({
  queryConfigurations, smartContractDeployments: [{ id: 'uv', status: 'Deployed', address: s.verifier, chain: chain.chain } as never], address,
});

beforeAll(async () => {
  chain = await startLocalChain();
  const hre = require('hardhat') as { network: { provider: EIP1193Provider } };
  s = await stack.deployIden3Stack(hre.network.provider);
  [, alice, bob] = s.accounts as [Address, Address, Address];
  stable = await s.deployStableV3Validator();
  const asked = born(20020101n);
  // 31: the rule's query. 32: another value. 33: a nullifier session and a group. 34: the same query on the beta validator.
  await s.setRequest(31n, stable, stack.v3Params({ ...asked, circuitIds: STABLE }));
  await s.setRequest(32n, stable, stack.v3Params({ ...born(20100101n), circuitIds: STABLE }));
  await s.setRequest(33n, stable, stack.v3Params({ ...asked, circuitIds: STABLE, nullifierSessionID: 5n, proofType: 1n }));
  await s.setRequest(34n, s.v3Validator, stack.v3Params(asked));
  // Alice proved 31, 32 and 34 with the circuit a wallet uses today (the contract checked each response's signals).
  await s.submit(alice, 31n, { kind: 'v3', queryHash: stack.queryHashV3(asked), circuitId: SUBVERSION });
  await s.submit(alice, 32n, { kind: 'v3', queryHash: stack.queryHashV3(born(20100101n)), circuitId: SUBVERSION });
  await s.submit(alice, 34n, { kind: 'v3', queryHash: stack.queryHashV3(asked) });
}, 180_000);

afterAll(async () => {
  await chain?.stop();
});

describe.skipIf(!haveIden3Documents())('requests held by the stable V3 validator (CredentialAtomicQueryV3StableValidator)', () => {
  it('answers valid where the request asks what the rule says, as for the beta validator; not-valid without a proof', async () => {
    const outcomes = await evaluateOnChainRules(reader(), input([v3('stable', 31n), v3('beta', 34n)], alice), check());
    expect(outcomes.map((o) => [o.objectId, o.status, o.reasons])).toEqual([['stable', 'valid', []], ['beta', 'valid', []]]);
    const [none] = await evaluateOnChainRules(reader(), input([v3('stable', 31n)], bob), check());
    expect(none).toMatchObject({ status: 'not-valid', is_valid: false });
  });

  it('answers error where the request asks another value, naming the rule and the difference', async () => {
    const [o] = await evaluateOnChainRules(reader(), input([v3('adult', 32n)], alice), check());
    expect(o).toMatchObject({ status: 'error', is_valid: false });
    expect(o!.reasons.join(' ')).toMatch(/rule "adult".*request 32.*values are \[20100101\], the rule's \[20020101\]/);
  });

  it('compares its nullifier session, proof type and circuit as the beta validator\'s', async () => {
    const outcomes = await evaluateOnChainRules(reader(), input([
      v3('same', 33n, { params: { nullifierSessionId: 5 }, proofType: 'BJJSignature2021' }),
      v3('other-session', 33n, { params: { nullifierSessionId: 6 }, proofType: 'BJJSignature2021' }),
      v3('mtp', 33n, { params: { nullifierSessionId: 5 }, proofType: 'Iden3SparseMerkleTreeProof' }),
      v3('v2', 31n, { circuitId: 'credentialAtomicQuerySigV2' }),
    ], bob), check());
    const by = Object.fromEntries(outcomes.map((o) => [o.objectId, o]));
    // Compared equal: bob proved nothing, so the chain's answer stands.
    expect(by.same).toMatchObject({ status: 'not-valid', reasons: [expect.stringMatching(/holds no verified proof of request 33 from/)] });
    expect(by['other-session']!.reasons.join(' ')).toMatch(/its nullifier session is 5, the rule's 6/);
    expect(by.mtp!.reasons.join(' ')).toMatch(/it accepts BJJSignature2021, the rule asks Iden3SparseMerkleTreeProof/);
    expect(by.v2!.reasons.join(' ')).toMatch(/its circuits are credentialAtomicQueryV3OnChain, the rule's circuitId is credentialAtomicQuerySigV2/);
    for (const id of ['other-session', 'mtp', 'v2']) expect(by[id]).toMatchObject({ status: 'error', is_valid: false });
  });
});
