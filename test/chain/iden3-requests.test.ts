/**
 * OnChainZKP against the real iden3 stack of @iden3/contracts 3.4.0 on a local Hardhat node (scripts/iden3-stack.mjs):
 * State, UniversalVerifier, and the real credential validators CredentialAtomicQuerySigV2Validator and
 * CredentialAtomicQueryV3Validator holding the requests' params. Only the Groth16 verifier behind the validators is
 * a stand-in that accepts every proof (no proving keys offline): the responses carry the public signals a wallet's
 * proof would, and the validators check them against the request (query hash, challenge, issuer state, GIST root).
 *
 * The request params use the constants of iden3's own deployment scripts (KYCAgeCredential's schema hash and the
 * claimPathKey of `birthday` under the kyc-v3 context), and query hashes are js-sdk's: the service's comparison
 * (src/chain/request-match.ts, computing them from the rule) is checked against those, not against itself.
 */
import { createRequire } from 'node:module';
import * as jsSdk from '@0xpolygonid/js-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFunctionSelector, type Abi, type AbiFunction, type Address, type EIP1193Provider, type Hex } from 'viem';
import { evaluateOnChainRules, type OnChainInput } from '../../src/chain/index.js';
import { requestAbi } from '../../src/chain/abi.js';
import { ChainReader } from '../../src/chain/reader.js';
import { RequestCheck } from '../../src/chain/request-check.js';
import { RequestMatcher } from '../../src/chain/request-match.js';
import type { QueryConfiguration } from '../../src/schemas/scenario.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { iden3DocumentLoader } from '../zkp/fixtures.js';
// @ts-expect-error: a JavaScript module without declarations (it is also the demo's)
import * as stackModule from '../../scripts/iden3-stack.mjs';
import { startLocalChain, type LocalChain } from './evm.js';
import { loadConfig } from '../../src/config.js';
import { DID, Id } from '../../src/trust/iden3.js';

/** The settings the configuration schema defaults (no chains). */
const chainDefaults = loadConfig({}).chains;

const require = createRequire(import.meta.url);
const universal = require('@iden3/contracts/build/contracts/UniversalVerifier.json') as { abi: Abi };

interface Query {
  schema: bigint; claimPathKey: bigint; operator: bigint; values: bigint[]; queryHash?: bigint;
  allowedIssuers?: bigint[]; skipClaimRevocationCheck?: boolean; groupID?: bigint; nullifierSessionID?: bigint; proofType?: bigint;
}
interface Stack {
  accounts: Address[]; owner: Address; verifier: Address; sigV2Validator: Address; v3Validator: Address; issuerID: bigint;
  deployLinkedValidator(): Promise<Address>;
  setRequest(id: bigint, validator: Address, params: Hex, metadata?: string): Promise<unknown>;
  setRequests(requests: { requestId: bigint; validator: Address; params: Hex }[]): Promise<unknown>;
  submit(sender: Address, id: bigint, o: { kind: 'v2' | 'v3' | 'custom'; queryHash?: bigint; revocationChecked?: boolean }): Promise<unknown>;
  whitelist(validator: Address): Promise<unknown>;
  setMultiRequest(requestIds: bigint[], groupIds?: bigint[]): Promise<bigint>;
}
const stack = stackModule as {
  deployIden3Stack(p: EIP1193Provider): Promise<Stack>;
  sigV2Params(q: Query): Hex; v3Params(q: Query): Hex; linkedParams(conditions: Query[], groupID: bigint): Hex;
  queryHashV2(q: Query): bigint; queryHashV3(q: Query): bigint; queryHashLinked(q: Query): bigint;
  typeOneRequestId(params: Hex, creator: Address): bigint;
  circuitQuery(type: { url: string; document: unknown; type: string }, attribute: string, operator: bigint, value: unknown): Promise<Query>;
  KYC_AGE: { context: string; type: string; schema: bigint; birthdayPathKey: bigint };
  OPERATORS: Record<string, bigint>;
};
const { KYC_AGE, OPERATORS } = stack;

let chain: LocalChain;
let s: Stack;
let alice: Address;
let bob: Address;
let carol: Address;

/** The contract side of `birthday $lt <value>` (KYCAgeCredential). */
const born = (before: bigint, operator = OPERATORS.$lt!): Query =>
  ({ schema: KYC_AGE.schema, claimPathKey: KYC_AGE.birthdayPathKey, operator, values: [before] });
/** The scenario side of it. */
const rule = (id: string, requestId: number | string, value = 20020101, operator: '$lt' | '$gt' = '$lt'): QueryConfiguration =>
  ({ id, query: { type: KYC_AGE.type, context: KYC_AGE.context, requestId, attribute: 'birthday', operator, value } });

const ID_64 = 2n ** 63n + 7n;
const ID_200 = 2n ** 200n - 1n;
let typeOne: bigint;

const check = (allowUnchecked = false) =>
  new RequestCheck({ matcher: new RequestMatcher({ documentLoader: iden3DocumentLoader() }), allowUnchecked });
const reader = (cacheTtlMs = 5000) =>
  new ChainReader({ ...chainDefaults, chains: [{ chain: chain.chain, chainId: chain.chainId, url: chain.url }], timeoutMs: 30_000, cacheTtlMs, errorTtlMs: 0 });
const input = (queryConfigurations: QueryConfiguration[], address: Address, trustedIssuers?: string[]): OnChainInput => ({
  queryConfigurations,
  trustedIssuers,
  smartContractDeployments: [{ id: 'uv', status: 'Deployed', address: s.verifier, chain: chain.chain } as never],
  address,
});

beforeAll(async () => {
  chain = await startLocalChain();
  const hre = require('hardhat') as { network: { provider: EIP1193Provider } };
  s = await stack.deployIden3Stack(hre.network.provider);
  [, alice, bob, carol] = s.accounts as [Address, Address, Address, Address];

  const asked = born(20020101n);
  // 1: the rule's query. 2: another value. 3: the rule's fields under the hash of another query (a wallet proves the hash).
  await s.setRequest(1n, s.sigV2Validator, stack.sigV2Params(asked));
  await s.setRequest(2n, s.sigV2Validator, stack.sigV2Params(born(20100101n)));
  await s.setRequest(3n, s.sigV2Validator, stack.sigV2Params({ ...asked, queryHash: stack.queryHashV2(born(20100101n)) }));
  await s.setRequest(4n, s.sigV2Validator, stack.sigV2Params(born(20020101n, OPERATORS.$gt)));
  await s.setRequest(ID_64, s.sigV2Validator, stack.sigV2Params(asked));
  await s.setRequest(ID_200, s.v3Validator, stack.v3Params(asked));
  const typeOneParams = stack.v3Params(asked);
  // js-sdk's own derivation of a type-1 id (what a dApp built on it registers), checked against the contract's below.
  typeOne = (jsSdk as unknown as { calculateRequestId(p: Hex, c: Address): bigint }).calculateRequestId(typeOneParams, s.owner);
  expect(typeOne).toBe(stack.typeOneRequestId(typeOneParams, s.owner));
  await s.setRequest(typeOne, s.v3Validator, typeOneParams);

  // Alice proved every one of them; the contract accepted each response (its validators checked the signals).
  await s.submit(alice, 1n, { kind: 'v2', queryHash: stack.queryHashV2(asked) });
  await s.submit(alice, 2n, { kind: 'v2', queryHash: stack.queryHashV2(born(20100101n)) });
  await s.submit(alice, 3n, { kind: 'v2', queryHash: stack.queryHashV2(born(20100101n)) });
  await s.submit(alice, 4n, { kind: 'v2', queryHash: stack.queryHashV2(born(20020101n, OPERATORS.$gt)) });
  await s.submit(alice, ID_64, { kind: 'v2', queryHash: stack.queryHashV2(asked) });
  await s.submit(alice, ID_200, { kind: 'v3', queryHash: stack.queryHashV3(asked) });
  await s.submit(alice, typeOne, { kind: 'v3', queryHash: stack.queryHashV3(asked) });
}, 180_000);

afterAll(async () => {
  await chain?.stop();
});

describe('the request ABI matches the iden3 build artifact', () => {
  it('getRequest has the same selector and output types', () => {
    const mine = requestAbi.find((x) => x.type === 'function' && x.name === 'getRequest') as AbiFunction;
    const theirs = universal.abi.find((x) => x.type === 'function' && x.name === 'getRequest') as AbiFunction;
    expect(toFunctionSelector(mine)).toBe(toFunctionSelector(theirs));
    const types = (f: AbiFunction) => JSON.stringify(f.outputs.map((o) => ('components' in o ? o.components.map((c) => c.type) : o.type)));
    expect(types(mine)).toBe(types(theirs));
  });
});

describe.skipIf(!haveIden3Documents())('the demo\'s circuit query from a JSON-LD context (scripts/iden3-stack.mjs circuitQuery)', () => {
  it('gives iden3\'s own deployment constants for KYCAgeCredential birthday under kyc-v3', async () => {
    const { document } = await iden3DocumentLoader()(KYC_AGE.context);
    const q = await stack.circuitQuery({ url: KYC_AGE.context, document, type: KYC_AGE.type }, 'birthday', OPERATORS.$lt!, 20020101);
    expect(q).toMatchObject({ schema: KYC_AGE.schema, claimPathKey: KYC_AGE.birthdayPathKey, operator: OPERATORS.$lt, values: [20020101n] });
  });
});

describe.skipIf(!haveIden3Documents())('a rule is checked against the contract\'s request for its id', () => {
  it('answers valid where the request asks what the rule says (SigV2 validator), not-valid for an address without a proof', async () => {
    const r = reader();
    const [a] = await evaluateOnChainRules(r, input([rule('adult', 1)], alice), check());
    expect(a).toMatchObject({ status: 'valid', is_valid: true, reasons: [], requestId: '1' });
    const [b] = await evaluateOnChainRules(r, input([rule('adult', 1)], bob), check());
    expect(b).toMatchObject({ status: 'not-valid', is_valid: false });
  });

  it('answers error, never valid, where the request\'s params ask another value or operator, naming the rule and the difference', async () => {
    const [value, operator] = await evaluateOnChainRules(reader(), input([rule('adult', 2), rule('adult-gt', 4)], alice), check());
    expect(value).toMatchObject({ status: 'error', is_valid: false });
    expect(value!.reasons.join(' ')).toMatch(/rule "adult".*request 2.*values are \[20100101\], the rule's \[20020101\]/);
    expect(operator).toMatchObject({ status: 'error', is_valid: false });
    expect(operator!.reasons.join(' ')).toMatch(/rule "adult-gt".*request 4.*operator is \$gt, the rule's is \$lt/);
  });

  it('answers error where the fields look right but the query hash is another query\'s (what the wallet proved)', async () => {
    const [o] = await evaluateOnChainRules(reader(), input([rule('adult', 3)], alice), check());
    expect(o).toMatchObject({ status: 'error', is_valid: false });
    expect(o!.reasons.join(' ')).toMatch(/rule "adult".*request 3.*query hash .* is not the hash of its fields/);
  });

  it('addresses 64-bit, 2^200-1 and keccak-derived type-1 (256-bit) request ids, given as integers or decimal strings', async () => {
    expect(typeOne >> 240n).toBe(1n);
    const rules = [rule('id64', ID_64.toString()), rule('id200', ID_200.toString()), rule('type1', typeOne.toString())];
    const outcomes = await evaluateOnChainRules(reader(), input(rules, alice), check());
    expect(outcomes.map((o) => [o.status, o.requestId])).toEqual([
      ['valid', ID_64.toString()], ['valid', ID_200.toString()], ['valid', typeOne.toString()],
    ]);
    const others = await evaluateOnChainRules(reader(), input(rules, bob), check());
    expect(others.map((o) => o.status)).toEqual(['not-valid', 'not-valid', 'not-valid']);
  });

  it('shows a proof submitted after a first execute on the very next one (no stale "not verified")', async () => {
    const r = reader(60_000);
    const [before] = await evaluateOnChainRules(r, input([rule('adult', 1)], carol), check());
    expect(before!.status).toBe('not-valid');
    await s.submit(carol, 1n, { kind: 'v2', queryHash: stack.queryHashV2(born(20020101n)) });
    const [after] = await evaluateOnChainRules(r, input([rule('adult', 1)], carol), check());
    expect(after).toMatchObject({ status: 'valid', is_valid: true });
    const [again] = await evaluateOnChainRules(r, input([rule('adult', 1)], carol), check());
    expect(again!.status).toBe('valid'); // verified answers are kept as before
    expect(r.stats().cacheHits).toBeGreaterThan(0);
  });
});

describe.skipIf(!haveIden3Documents())('a multi-request (getMultiRequestProofsStatus)', () => {
  let multi: bigint;
  beforeAll(async () => {
    // Requests 1 (the rule's query) and 2 (another value) as one multi-request: alice proved both, carol only 1.
    multi = await s.setMultiRequest([1n, 2n]);
  });

  it('is valid when every request of it is proved and one of them asks what the rule says; not-valid otherwise', async () => {
    const r = reader();
    const [a] = await evaluateOnChainRules(r, input([rule('adult', multi.toString())], alice), check());
    expect(a).toMatchObject({ status: 'valid', is_valid: true, requestId: multi.toString() });
    const [c] = await evaluateOnChainRules(r, input([rule('adult', multi.toString())], carol), check());
    expect(c).toMatchObject({ status: 'not-valid', is_valid: false });
  });

  it('answers error when none of its requests asks what the rule says', async () => {
    const [o] = await evaluateOnChainRules(reader(), input([rule('born-2012', multi.toString(), 20120101)], alice), check());
    expect(o).toMatchObject({ status: 'error', is_valid: false });
    expect(o!.reasons.join(' ')).toMatch(/rule "born-2012" does not match request \d+ \(multi-request of 1, 2\)/);
  });
});

describe.skipIf(!haveIden3Documents())('a request the service cannot compare', () => {
  let customId: bigint;
  beforeAll(async () => {
    const custom = await chain.deploy('TestCustomValidator');
    await s.whitelist(custom);
    customId = 77n;
    await s.setRequest(customId, custom, '0x000000000000000000000000000000000000000000000000000000000000002a');
    await s.submit(alice, customId, { kind: 'custom' });
  });

  it('answers error by default (a custom validator), saying why and what allows it', async () => {
    const [o] = await evaluateOnChainRules(reader(), input([rule('adult', 77)], alice), check());
    expect(o).toMatchObject({ status: 'error', is_valid: false });
    expect(o!.reasons.join(' ')).toMatch(/cannot tell whether request 77 .* not a credential validator's query .*CHAIN_ALLOW_UNCHECKED_REQUESTS=true/);
  });

  it('answers from the proof status with CHAIN_ALLOW_UNCHECKED_REQUESTS=true, its reasons saying it was not compared', async () => {
    const [o] = await evaluateOnChainRules(reader(), input([rule('adult', 77)], alice), check(true));
    expect(o).toMatchObject({ status: 'valid', is_valid: true });
    expect(o!.reasons.join(' ')).toMatch(/request 77 was not compared with rule "adult"/);
  });

  it('answers error for a rule without a JSON-LD context (its circuit query is unknown)', async () => {
    const noContext: QueryConfiguration = { id: 'bare', query: { type: KYC_AGE.type, requestId: 1, attribute: 'birthday', operator: '$lt', value: 20020101 } };
    const [o] = await evaluateOnChainRules(reader(), input([noContext], alice), check());
    expect(o).toMatchObject({ status: 'error', is_valid: false });
    expect(o!.reasons.join(' ')).toMatch(/names no JSON-LD context/);
  });
});

describe.skipIf(!haveIden3Documents())('the params the query hash leaves out are compared too', () => {
  /** The issuer the stack's responses name, and another one (the example DID of the scenario schema). */
  let issuer: string;
  const other = 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa';
  const otherId = () => DID.idFromDID(DID.parse(other)).bigInt();
  const asked = born(20020101n);
  const v3 = (id: string, requestId: bigint | number, extra: Partial<QueryConfiguration['query']> = {}): QueryConfiguration =>
    ({ id, query: { ...rule(id, requestId.toString()).query, circuitId: 'credentialAtomicQueryV3', ...extra } });

  beforeAll(async () => {
    issuer = DID.parseFromId(Id.fromBigInt(s.issuerID)).string();
    await s.setRequest(11n, s.sigV2Validator, stack.sigV2Params({ ...asked, allowedIssuers: [s.issuerID] }));
    await s.setRequest(12n, s.sigV2Validator, stack.sigV2Params({ ...asked, allowedIssuers: [s.issuerID, otherId()] }));
    await s.setRequest(13n, s.sigV2Validator, stack.sigV2Params({ ...asked, skipClaimRevocationCheck: true }));
    await s.setRequest(14n, s.v3Validator, stack.v3Params({ ...asked, proofType: 1n }));
    await s.setRequest(15n, s.v3Validator, stack.v3Params({ ...asked, nullifierSessionID: 5n }));
    await s.setRequests([16n, 17n].map((requestId) => ({ requestId, validator: s.v3Validator, params: stack.v3Params({ ...asked, groupID: 3n }) })));
    for (const id of [11n, 12n]) await s.submit(alice, id, { kind: 'v2', queryHash: stack.queryHashV2(asked) });
    await s.submit(alice, 13n, { kind: 'v2', queryHash: stack.queryHashV2(asked), revocationChecked: false });
    await s.submit(alice, 14n, { kind: 'v3', queryHash: stack.queryHashV3(asked) });
    await s.setRequest(18n, s.v3Validator, stack.v3Params(born(20020101n, OPERATORS.$lte)));
    await s.setRequest(19n, s.v3Validator, stack.v3Params({ ...born(0n, 16n), values: [] }));
    await s.submit(alice, 18n, { kind: 'v3', queryHash: stack.queryHashV3(born(20020101n, OPERATORS.$lte)) });
  });

  it('addresses a V3 request that discloses on chain ($sd, operator 16): the rule matches it, another attribute does not', async () => {
    const sd = (id: string, attribute: string): QueryConfiguration =>
      ({ id, query: { type: KYC_AGE.type, context: KYC_AGE.context, requestId: 19, attribute, operator: '$sd', circuitId: 'credentialAtomicQueryV3' } });
    const [same, other] = await evaluateOnChainRules(reader(), input([sd('show-birthday', 'birthday'), sd('show-document', 'documentType')], bob), check());
    expect(same).toMatchObject({ status: 'not-valid' }); // compared equal; bob proved nothing
    expect(other).toMatchObject({ status: 'error' });
    expect(other!.reasons.join(' ')).toMatch(/it asks about another attribute/);
  });

  it('addresses a V3 request asking $lte (what only V3 proves): valid with the rule\'s circuitId, error for $lt', async () => {
    const [lte, lt] = await evaluateOnChainRules(reader(), input([v3('lte', 18, { operator: '$lte' }), v3('lt', 18)], alice), check());
    expect(lte).toMatchObject({ status: 'valid', is_valid: true, reasons: [] });
    expect(lt).toMatchObject({ status: 'error' });
    expect(lt!.reasons.join(' ')).toMatch(/its operator is \$lte, the rule's is \$lt/);
  });

  it('answers error where the request accepts any issuer or one the scenario does not trust, valid where it keeps to them', async () => {
    const r = reader();
    const [any, kept, more] = await evaluateOnChainRules(r, input([rule('any', 1), rule('kept', 11), rule('more', 12)], alice, [issuer]), check());
    expect(any).toMatchObject({ status: 'error', is_valid: false });
    expect(any!.reasons.join(' ')).toMatch(new RegExp(`rule "any" does not match request 1 .*accepts credentials of any issuer; the scenario trusts only ${issuer}`));
    expect(kept).toMatchObject({ status: 'valid', is_valid: true, reasons: [] });
    expect(more).toMatchObject({ status: 'error', is_valid: false });
    expect(more!.reasons.join(' ')).toMatch(new RegExp(`accepts issuers the scenario does not trust: ${other}`));
    // A scenario that does not narrow its issuers (absent, or "*") takes the contract's.
    const open = await evaluateOnChainRules(r, input([rule('any', 1), rule('more', 12)], alice, ['*']), check());
    expect(open.map((o) => o.status)).toEqual(['valid', 'valid']);
  });

  it('answers error where the request skips the revocation check (a revoked credential would prove it)', async () => {
    const [o] = await evaluateOnChainRules(reader(), input([rule('adult', 13)], alice), check());
    expect(o).toMatchObject({ status: 'error', is_valid: false });
    expect(o!.reasons.join(' ')).toMatch(/rule "adult" does not match request 13 .*skips the revocation check/);
  });

  it('compares the V3 proof type: another one is error; a request that asks one the rule leaves open stands, saying so', async () => {
    const r = reader();
    const [open, mtp] = await evaluateOnChainRules(r, input([v3('open', 14), v3('mtp', 14, { proofType: 'Iden3SparseMerkleTreeProof' })], alice), check());
    expect(open).toMatchObject({ status: 'valid', is_valid: true });
    expect(open!.reasons).toEqual(['request 14 asks more than rule "open": it also asks for BJJSignature2021 proofs']);
    expect(mtp).toMatchObject({ status: 'error', is_valid: false });
    expect(mtp!.reasons.join(' ')).toMatch(/it accepts BJJSignature2021, the rule asks Iden3SparseMerkleTreeProof/);
    const [sig] = await evaluateOnChainRules(r, input([v3('sig', 14, { proofType: 'BJJSignature2021' })], alice), check());
    expect(sig).toMatchObject({ status: 'valid', reasons: [] });
  });

  it('compares the nullifier session, the group and the circuit; a request that asks none of what the rule asks is error', async () => {
    const r = reader();
    const nullifier = { params: { nullifierSessionId: 5 } };
    const outcomes = await evaluateOnChainRules(r, input([
      v3('no-nullifier', ID_200, nullifier), v3('same-session', 15, nullifier), v3('other-session', 15, { params: { nullifierSessionId: '6' } }),
      v3('no-group', ID_200, { groupId: 3 }), v3('same-group', 16, { groupId: 3 }), v3('v3-on-v2', 1),
    ], bob), check());
    const by = Object.fromEntries(outcomes.map((o) => [o.objectId, o]));
    expect(by['no-nullifier']!.reasons.join(' ')).toMatch(/it asks for no nullifier, the rule for one of session 5/);
    expect(by['other-session']!.reasons.join(' ')).toMatch(/its nullifier session is 5, the rule's 6/);
    expect(by['no-group']!.reasons.join(' ')).toMatch(/it links no group, the rule is in group 3/);
    expect(by['v3-on-v2']!.reasons.join(' ')).toMatch(/its circuits are credentialAtomicQuerySigV2OnChain, the rule's circuitId is credentialAtomicQueryV3/);
    for (const id of ['no-nullifier', 'other-session', 'no-group', 'v3-on-v2']) expect(by[id]).toMatchObject({ status: 'error', is_valid: false });
    // Bob proved nothing: where the request asks what the rule says, the chain's answer stands.
    for (const id of ['same-session', 'same-group']) expect(by[id]).toMatchObject({ status: 'not-valid', is_valid: false });
    // The other way round, a request that asks more than the rule (a nullifier, a group) stands, saying so.
    const [more] = await evaluateOnChainRules(r, input([v3('plain', 15)], bob), check());
    expect(more).toMatchObject({ status: 'not-valid' });
    expect(more!.reasons.join(' ')).toMatch(/request 15 asks more than rule "plain": it also asks for a nullifier \(session 5\)/);
  });
});

describe.skipIf(!haveIden3Documents())('a linked multi-query request (LinkedMultiQueryValidator)', () => {
  const asked = born(20020101n);
  const after1900 = born(19000101n, OPERATORS.$gt);
  const linked = (id: string, requestId: bigint, value: number, groupId = 5): QueryConfiguration =>
    ({ id, query: { ...rule(id, requestId.toString(), value, '$gt').query, circuitId: 'linkedMultiQuery', groupId } });

  beforeAll(async () => {
    // Group 5: the V3 request of the credential (born before 2002) and two more conditions on it, one of them under
    // the hash of another condition (what a wallet would prove instead).
    const linkedValidator = await s.deployLinkedValidator();
    await s.setRequests([
      { requestId: 20n, validator: s.v3Validator, params: stack.v3Params({ ...asked, groupID: 5n }) },
      { requestId: 21n, validator: linkedValidator, params: stack.linkedParams([asked, after1900], 5n) },
      { requestId: 22n, validator: linkedValidator, params: stack.linkedParams([{ ...after1900, queryHash: stack.queryHashLinked(born(19500101n, OPERATORS.$gt)) }], 5n) },
    ]);
  });

  it('matches a rule to the condition that asks what it says: the chain\'s answer stands', async () => {
    const [o] = await evaluateOnChainRules(reader(), input([linked('after-1900', 21n, 19000101)], bob), check());
    expect(o).toMatchObject({ status: 'not-valid', is_valid: false });
  });

  it('answers error where no condition asks it, where the group differs, or where the fields sit under another hash', async () => {
    const outcomes = await evaluateOnChainRules(reader(), input([
      linked('after-1950', 21n, 19500101), linked('group-6', 21n, 19000101, 6), linked('other-hash', 22n, 19000101),
    ], bob), check());
    expect(outcomes.map((o) => o.status)).toEqual(['error', 'error', 'error']);
    const [value, group, hash] = outcomes.map((o) => o.reasons.join(' '));
    expect(value).toMatch(/rule "after-1950" does not match request 21 .*condition 1: its operator is \$lt, the rule's is \$gt.*condition 2: its values are \[19000101\], the rule's \[19500101\]/);
    expect(group).toMatch(/rule "group-6" does not match request 21 .*its group is 5, the rule's 6/);
    expect(hash).toMatch(/rule "other-hash" does not match request 22 .*condition 1: its query hash \d+ is not the hash of its fields/);
  });
});
