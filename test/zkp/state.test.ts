/**
 * The production state resolvers (js-iden3-auth's EthStateResolver over JSON-RPC, cached) against a local JSON-RPC
 * server that plays the iden3 State contract, and the real verifier on top of them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildAuthorizationRequest, createRpcStateResolvers, createZkpVerifier, InMemoryReplayGuard, proofFingerprint,
  type ZkpVerifier,
} from '../../src/zkp/index.js';
import { fixtureConfiguration, fixtureRequest, fixtureResponse, haveMtpVector, iden3DocumentLoader, plainResponse, VERIFIER_DID, verifierSettings, requestSettings } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';

const present = haveMtpVector() && haveIden3Documents();

const CONTRACT = '0x134B1BE34911E39A8397ec6289782989729807a4';
const GET_STATE_INFO = '0x53c87312'; // getStateInfoByIdAndState(uint256,uint256)

/** What the fake State contract answers: the state is the latest, was replaced in 2020, is unknown, or the node is down. */
let mode: 'latest' | 'replaced' | 'unknown' | 'down' = 'latest';
const calls: string[] = [];
let server: Server;
let rpcUrl: string;

const word = (n: bigint) => n.toString(16).padStart(64, '0');

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: Array<{ to: string; data: string }> };
      const reply = (x: object) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ jsonrpc: '2.0', id, ...x })); };
      if (mode === 'down') { res.statusCode = 502; res.end('bad gateway'); return; }
      if (method === 'eth_chainId') return reply({ result: '0x13881' });
      if (method === 'net_version') return reply({ result: '80001' });
      if (method !== 'eth_call') return reply({ error: { code: -32601, message: 'method not found' } });
      const data = params[0]!.data;
      calls.push(data.slice(0, 10));
      if (params[0]!.to.toLowerCase() !== CONTRACT.toLowerCase() || data.slice(0, 10) !== GET_STATE_INFO) {
        return reply({ error: { code: 3, message: 'execution reverted' } });
      }
      if (mode === 'unknown') return reply({ error: { code: 3, message: 'execution reverted: State does not exist' } });
      const stateId = BigInt(`0x${data.slice(10, 74)}`);
      const state = BigInt(`0x${data.slice(74, 138)}`);
      const replacedAt = mode === 'replaced' ? 1_600_000_000n : 0n;
      const replacedBy = mode === 'replaced' ? state + 1n : 0n;
      // StateInfo {id, state, replacedByState, createdAtTimestamp, replacedAtTimestamp, createdAtBlock, replacedAtBlock}
      return reply({ result: `0x${[stateId, state, replacedBy, 1_500_000_000n, replacedAt, 100n, mode === 'replaced' ? 200n : 0n].map(word).join('')}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe.skipIf(!present)('createRpcStateResolvers', () => {
  const ISSUER_ID = BigInt(fixtureResponse?.proof.pub_signals[3] ?? 0);
  const STATE = BigInt(fixtureResponse?.proof.pub_signals[4] ?? 0);

  it('reads the State contract and caches the answers', async () => {
    mode = 'latest';
    const resolvers = createRpcStateResolvers({ 'polygon:mumbai': { rpcUrl, contractAddress: CONTRACT } });
    calls.length = 0;
    expect(await resolvers['polygon:mumbai']!.resolve(ISSUER_ID, STATE)).toMatchObject({ latest: true, genesis: false, transitionTimestamp: 0 });
    expect(await resolvers['polygon:mumbai']!.resolve(ISSUER_ID, STATE)).toMatchObject({ latest: true });
    expect(calls).toEqual([GET_STATE_INFO]);
  });

  it('says when a state was replaced, and refuses unknown states', async () => {
    const fresh = () => createRpcStateResolvers({ 'polygon:mumbai': { rpcUrl, contractAddress: CONTRACT } })['polygon:mumbai']!;
    mode = 'replaced';
    expect(await fresh().resolve(ISSUER_ID, STATE)).toMatchObject({ latest: false, transitionTimestamp: 1_600_000_000 });
    mode = 'unknown';
    await expect(fresh().resolve(ISSUER_ID, STATE)).rejects.toThrow(/not genesis and not registered/);
    mode = 'latest';
  });

  it('checks its configuration', () => {
    expect(() => createRpcStateResolvers({ mumbai: { rpcUrl, contractAddress: CONTRACT } })).toThrow(/polygon:amoy/);
    expect(() => createRpcStateResolvers({ 'polygon:mumbai': { rpcUrl: 'nope', contractAddress: CONTRACT } })).toThrow(/rpcUrl/);
    expect(() => createRpcStateResolvers({ 'polygon:mumbai': { rpcUrl, contractAddress: '0x12' } })).toThrow(/contractAddress/);
  });
});

describe.skipIf(!present)('the verifier on RPC state resolvers', () => {
  let verifier: ZkpVerifier;
  beforeAll(async () => {
    verifier = await createZkpVerifier({
      ...verifierSettings,
      documentLoader: iden3DocumentLoader(),
      stateResolvers: createRpcStateResolvers({ 'polygon:mumbai': { rpcUrl, contractAddress: CONTRACT } }, { latestTtlMs: 1, replacedTtlMs: 1 }),
      proofMaxAgeMs: 100 * 365 * 86_400_000,
      allowPlainMessages: true,
    });
  });
  const pending = () => buildAuthorizationRequest([fixtureConfiguration()], {
    ...requestSettings, callbackUrl: 'https://svc.example/cb', verifierDid: VERIFIER_DID, message: fixtureRequest.message, thid: fixtureRequest.thid,
  }).pending;

  it('accepts the proof when the issuer state is the latest on chain', async () => {
    mode = 'latest';
    expect((await verifier.verify(plainResponse(), pending())).verdicts[0]).toMatchObject({ status: 'valid', is_valid: true });
  });

  it('refuses it when the issuer replaced its state long ago, and is undecided when the node is down', async () => {
    mode = 'replaced';
    await new Promise((r) => setTimeout(r, 5)); // past the 1 ms cache
    expect((await verifier.verify(plainResponse(), pending())).verdicts[0]).toMatchObject({ status: 'not-valid', is_valid: false });
    mode = 'unknown';
    await new Promise((r) => setTimeout(r, 5));
    expect((await verifier.verify(plainResponse(), pending())).verdicts[0]).toMatchObject({
      status: 'not-valid', reasons: ['the issuer state in the proof is not published on chain'],
    });
    mode = 'down';
    await new Promise((r) => setTimeout(r, 5));
    const down = (await verifier.verify(plainResponse(), pending())).verdicts[0];
    expect(down).toMatchObject({ status: 'error', is_valid: false });
    mode = 'latest';
  });
});

describe('InMemoryReplayGuard', () => {
  it('lets a thread re-claim its proofs, refuses others until the entry expires', async () => {
    let now = 1000;
    const guard = new InMemoryReplayGuard({ now: () => now });
    const fp = proofFingerprint('c', ['1', '2']);
    expect(fp).not.toBe(proofFingerprint('c', ['1', '3']));
    expect(fp).not.toBe(proofFingerprint('d', ['1', '2']));
    expect(await guard.claim([fp], 't1', 2000)).toBeNull();
    expect(await guard.claim([fp], 't1', 2000)).toBeNull();
    expect(await guard.claim(['other', fp], 't2', 3000)).toBe(fp);
    expect(guard.size).toBe(1); // nothing recorded for t2
    now = 2001;
    expect(await guard.claim([fp], 't2', 3000)).toBeNull();
  });

  it('stays bounded', async () => {
    const guard = new InMemoryReplayGuard({ now: () => 0, maxEntries: 100 });
    for (let i = 0; i < 500; i++) await guard.claim([`fp${i}`], `t${i}`, 10);
    expect(guard.size).toBeLessThanOrEqual(100);
  });
});
