/**
 * ChainReader against a real EVM: Hardhat's in-process network served over HTTP on 127.0.0.1, with test verifiers
 * compiled by solc-js (current iden3 interface, legacy interface, bool-only, not a verifier).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import {
  chainReaderFor, isProofStatusError, noChains, type ProofStatusEntry, type ProofStatusRead, type ReadProofStatusesRequest,
} from '../../src/chain/index.js';
import { loadConfig } from '../../src/config.js';
import { ChainReader } from '../../src/chain/reader.js';
import { startLocalChain, type LocalChain } from './evm.js';

let chain: LocalChain;
let owner: Address;
let alice: Address; // submits proofs
let bob: Address; // never does
let current: Address;
let legacy: Address;
let boolOnly: Address;
let notVerifier: Address;
const submitted = {} as Record<'current1' | 'legacy1', { hash: string; blockNumber: bigint }>;

/** The settings the configuration schema defaults (no chains). */
const chainDefaults = loadConfig({}).chains;
const readers: ChainReader[] = [];
function reader(options: Partial<ConstructorParameters<typeof ChainReader>[0]> = {}): ChainReader {
  const r = new ChainReader({
    ...chainDefaults,
    chains: [{ chain: chain.chain, chainId: chain.chainId, url: chain.url }],
    timeoutMs: 30_000,
    errorTtlMs: 0,
    ...options,
  });
  readers.push(r);
  return r;
}

function read(entries: ProofStatusEntry[], id: number): ProofStatusRead {
  const e = entries.find((x) => x.requestId === id);
  if (!e || isProofStatusError(e)) throw new Error(`request ${id}: ${JSON.stringify(e, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
  return e;
}

/** A TCP server on 127.0.0.1 that accepts connections and never answers. */
async function blackhole(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A port on 127.0.0.1 nobody listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  chain = await startLocalChain();
  [owner, alice, bob] = chain.accounts as [Address, Address, Address];
  current = await chain.deploy('TestUniversalVerifier');
  legacy = await chain.deploy('TestLegacyZKPVerifier');
  boolOnly = await chain.deploy('TestBoolOnlyVerifier');
  notVerifier = await chain.deploy('NotAVerifier');
  for (const id of [1n, 2n, 3n]) {
    await chain.write(current, 'TestUniversalVerifier', 'setRequest', [id], owner);
    await chain.write(legacy, 'TestLegacyZKPVerifier', 'setZKPRequest', [id], owner);
  }
  submitted.current1 = await chain.write(current, 'TestUniversalVerifier', 'submitResponse', [1n], alice);
  submitted.legacy1 = await chain.write(legacy, 'TestLegacyZKPVerifier', 'submitZKPResponse', [1n], alice);
  await chain.write(boolOnly, 'TestBoolOnlyVerifier', 'setProofVerified', [alice, 1n], owner);
  await chain.mine(5);
});

afterAll(async () => {
  await chain?.stop();
});

describe('current iden3 interface (getRequestProofStatus)', () => {
  it('valid for the submitting address and request, not for another address or request, error for an unknown request', async () => {
    const r = reader({ multicall: 'off' });
    const head = await chain.blockNumber();
    const entries = await r.readProofStatuses({ chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1, 2, 9] });
    expect(entries.map((e) => e.requestId)).toEqual([1, 2, 9]);
    const one = read(entries, 1);
    expect(one).toMatchObject({ verified: true, method: 'getRequestProofStatus', cached: false, txHash: submitted.current1.hash });
    expect(one.blockNumber).toBe(head);
    expect(one.provedAt).toBeGreaterThan(1_600_000_000);
    expect(read(entries, 2)).toMatchObject({ verified: false, blockNumber: head });
    expect(read(entries, 2).txHash).toBeUndefined();
    expect(entries[2]).toMatchObject({ requestId: 9, code: 'request-not-found', blockNumber: head });

    const other = await r.readProofStatuses({ chain: chain.chain, verifierAddress: current, sender: bob, requestIds: [1] });
    expect(read(other, 1)).toMatchObject({ verified: false, method: 'getRequestProofStatus' });
    // Only the contract's first contact probes; both reads found the interface at the first try. The unknown request 9
    // costs one more call: it is asked as a multi-request (getMultiRequestProofsStatus).
    expect(r.stats()).toMatchObject({ ethCalls: 5, multicalls: 0, logQueries: 1 });
  });

  it('accepts lower-case addresses and bigint request ids, and keeps the request order and duplicates', async () => {
    const r = reader({ multicall: 'off' });
    const entries = await r.readProofStatuses({
      chain: 'eip155:31337', verifierAddress: current.toLowerCase(), sender: alice.toLowerCase(), requestIds: [2n, 1, 1],
    });
    expect(entries.map((e) => e.requestId)).toEqual([2n, 1, 1]);
    expect(entries.map((e) => !isProofStatusError(e) && e.verified)).toEqual([false, true, true]);
    expect(r.stats().ethCalls).toBe(2);
  });

  it('finds txHash only from the submission logs at or after fromBlock, within the lookback window', async () => {
    const after = await reader({ multicall: 'off' }).readProofStatuses({
      chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1], fromBlock: submitted.current1.blockNumber + 1n,
    });
    expect(read(after, 1).verified).toBe(true);
    expect(read(after, 1).txHash).toBeUndefined();
    // A search that found nothing is not repeated on every read (kept a minute).
    const r = reader({ multicall: 'off', cacheTtlMs: 0 });
    const q = { chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1], fromBlock: submitted.current1.blockNumber + 1n };
    await r.readProofStatuses(q);
    expect(read(await r.readProofStatuses(q), 1).txHash).toBeUndefined();
    expect(r.stats()).toMatchObject({ chainReads: 2, logQueries: 1 });
    const off = await reader({ multicall: 'off', txHashLookbackBlocks: 0 }).readProofStatuses({
      chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1],
    });
    expect(read(off, 1).txHash).toBeUndefined();
  });
});

describe('interface detection', () => {
  it('falls back to the legacy interface (getProofStatus) and finds txHash at the proof block', async () => {
    const r = reader({ multicall: 'off' });
    const entries = await r.readProofStatuses({ chain: chain.chain, verifierAddress: legacy, sender: alice, requestIds: [1, 2, 9] });
    expect(read(entries, 1)).toMatchObject({ verified: true, method: 'getProofStatus', txHash: submitted.legacy1.hash });
    expect(read(entries, 2)).toMatchObject({ verified: false, method: 'getProofStatus' });
    expect(entries[2]).toMatchObject({ code: 'request-not-found' });
    // Two absent methods tried first (3 calls each), then the legacy one.
    expect(r.stats().ethCalls).toBe(9);

    // The detected interface is kept per contract: another sender costs one try.
    const again = await r.readProofStatuses({ chain: chain.chain, verifierAddress: legacy, sender: bob, requestIds: [1, 2] });
    expect(again.map((e) => !isProofStatusError(e) && e.verified)).toEqual([false, false]);
    expect(r.stats().ethCalls).toBe(11);
  });

  it('uses isRequestProofVerified when the contract has only that', async () => {
    const entries = await reader({ multicall: 'off' }).readProofStatuses({
      chain: chain.chain, verifierAddress: boolOnly, sender: alice, requestIds: [1, 2],
    });
    expect(read(entries, 1)).toMatchObject({ verified: true, method: 'isRequestProofVerified' });
    expect(read(entries, 2)).toMatchObject({ verified: false, method: 'isRequestProofVerified' });
  });

  it('says when the address holds no contract, or a contract that is no verifier', async () => {
    const r = reader({ multicall: 'off' });
    const [none] = await r.readProofStatuses({ chain: chain.chain, verifierAddress: bob, sender: alice, requestIds: [1] });
    expect(none).toMatchObject({ code: 'no-contract' });
    const [other] = await r.readProofStatuses({ chain: chain.chain, verifierAddress: notVerifier, sender: alice, requestIds: [1] });
    expect(other).toMatchObject({ code: 'not-a-verifier' });
    expect((other as { error: string }).error).toContain('iden3 verifier functions');
    // Chain answers, so cached like statuses: no new probing within the TTL.
    const calls = r.stats().ethCalls;
    const [again] = await r.readProofStatuses({ chain: chain.chain, verifierAddress: notVerifier, sender: alice, requestIds: [1] });
    expect(again).toMatchObject({ code: 'not-a-verifier', cached: true });
    expect(r.stats().ethCalls).toBe(calls);
  });
});

describe('Multicall3', () => {
  it('batches every read into one aggregate3 call when the chain has Multicall3, with the same answers', async () => {
    await chain.installMulticall3();
    try {
      const r = reader({ multicall: 'auto' });
      const head = await chain.blockNumber();
      const entries = await r.readProofStatuses({ chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1, 2, 3, 9] });
      expect(r.stats()).toMatchObject({ ethCalls: 2, multicalls: 2 }); // the reads, then the unknown 9 as a multi-request
      expect(read(entries, 1)).toMatchObject({ verified: true, txHash: submitted.current1.hash, blockNumber: head });
      expect(read(entries, 2).verified).toBe(false);
      expect(read(entries, 3).verified).toBe(false);
      expect(entries[3]).toMatchObject({ code: 'request-not-found' });

      const old = await r.readProofStatuses({ chain: chain.chain, verifierAddress: legacy, sender: alice, requestIds: [1, 2] });
      expect(read(old, 1)).toMatchObject({ verified: true, method: 'getProofStatus', txHash: submitted.legacy1.hash });
      expect(r.stats()).toMatchObject({ ethCalls: 5, multicalls: 5 }); // 2 absent methods + the legacy one

      // Chunks of multicallBatchSize, all at one block.
      const small = reader({ multicall: 'auto', multicallBatchSize: 2 });
      const many = await small.readProofStatuses({ chain: chain.chain, verifierAddress: current, sender: bob, requestIds: [1, 2, 3] });
      expect(small.stats().multicalls).toBe(2);
      expect(new Set(many.map((e) => (e as ProofStatusRead).blockNumber)).size).toBe(1);
    } finally {
      await chain.removeMulticall3();
    }
  });
});

describe('cache', () => {
  it('reuses a verified status for cacheTtlMs; "not verified" only at the block it was read at, 1 s at most', async () => {
    let now = 1_000_000;
    const r = reader({ multicall: 'off', cacheTtlMs: 5000, clock: () => now });
    const q = { chain: chain.chain, verifierAddress: current, sender: bob, requestIds: [3] };
    expect(read(await r.readProofStatuses(q), 3)).toMatchObject({ verified: false, cached: false });
    now += 500;
    expect(read(await r.readProofStatuses(q), 3)).toMatchObject({ verified: false, cached: true }); // same block
    await chain.mine();
    expect(read(await r.readProofStatuses(q), 3)).toMatchObject({ verified: false, cached: false }); // a new block
    now += 1000;
    expect(read(await r.readProofStatuses(q), 3)).toMatchObject({ verified: false, cached: false }); // same block, 1 s later
    expect(r.stats()).toMatchObject({ cacheHits: 1, chainReads: 3 });

    // A proof mined right after a read is seen by the next read (the regression: it used to wait out cacheTtlMs).
    await chain.write(current, 'TestUniversalVerifier', 'setProofVerified', [bob, 3n, true], owner);
    expect(read(await r.readProofStatuses(q), 3)).toMatchObject({ verified: true, cached: false });
    now += 4999;
    await chain.mine();
    expect(read(await r.readProofStatuses(q), 3)).toMatchObject({ verified: true, cached: true });
    now += 1;
    expect(read(await r.readProofStatuses(q), 3)).toMatchObject({ verified: true, cached: false });
    expect(r.stats()).toMatchObject({ cacheHits: 2, chainReads: 5 });
    await chain.write(current, 'TestUniversalVerifier', 'setProofVerified', [bob, 3n, false], owner);
  });

  it('shares one chain read between concurrent callers', async () => {
    const r = reader({ multicall: 'off' });
    const q = { chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1, 2] };
    const [a, b] = await Promise.all([r.readProofStatuses(q), r.readProofStatuses(q)]);
    expect(a.map((e) => (e as ProofStatusRead).verified)).toEqual([true, false]);
    expect(b.map((e) => (e as ProofStatusRead).verified)).toEqual([true, false]);
    expect(r.stats()).toMatchObject({ batches: 1, chainReads: 2, ethCalls: 2 });
  });

  it('is off with cacheTtlMs 0', async () => {
    const r = reader({ multicall: 'off', cacheTtlMs: 0 });
    const q = { chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1] };
    await r.readProofStatuses(q);
    expect(read(await r.readProofStatuses(q), 1).cached).toBe(false);
    expect(r.stats().chainReads).toBe(2);
  });
});

describe('failures answer error entries, never hang or reject', () => {
  it('refuses unknown chains and bad input without any RPC', async () => {
    const r = reader();
    const [a] = await r.readProofStatuses({ chain: 'eip155:80002', verifierAddress: current, sender: alice, requestIds: [1] });
    expect(a).toMatchObject({ code: 'no-rpc' });
    expect((a as { error: string }).error).toContain('eip155:80002');
    const [b] = await r.readProofStatuses({ chain: chain.chain, verifierAddress: 'nope', sender: alice, requestIds: [1] });
    expect(b).toMatchObject({ code: 'bad-request' });
    const [c] = await r.readProofStatuses({ chain: chain.chain, verifierAddress: current, sender: 'tz1abc', requestIds: [1] });
    expect(c).toMatchObject({ code: 'bad-request' });
    const [d] = await r.readProofStatuses({ chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [-1] });
    expect(d).toMatchObject({ code: 'bad-request' });
    expect(await r.readProofStatuses({ chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [] })).toEqual([]);
    expect(r.stats().ethCalls).toBe(0);
  });

  it('where no chain is configured: noChains, answering as a ChainReader over no chains does (test/chain/lazy-load.test.ts checks it loads no viem)', async () => {
    expect(await chainReaderFor(loadConfig({}).chains)).toBe(noChains);
    expect(await chainReaderFor(loadConfig({ CHAIN_RPC_URLS: `${chain.chain}=${chain.url}` }).chains)).toBeInstanceOf(ChainReader);
    const none = new ChainReader({ ...chainDefaults, chains: [] });
    for (const r of [none, noChains]) expect([r.defaultChain, r.hasChain(chain.chain), r.hasChain('eip155:1')]).toEqual([undefined, false, false]);
    const requests: ReadProofStatusesRequest[] = [
      { chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1, 2n, 1] },
      { chain: 'EIP155:1', verifierAddress: 'nope', sender: 'tz1abc', requestIds: [-1] },
      { chain: 'solana:x', verifierAddress: current, sender: alice, requestIds: [1] },
      { chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [] },
    ];
    for (const q of requests) expect(await noChains.readProofStatuses(q)).toEqual(await none.readProofStatuses(q));
  });

  it('connection refused on 127.0.0.1: unreachable, at once, without the URL in the message', async () => {
    const port = await closedPort();
    const r = new ChainReader({ ...chainDefaults, chains: [{ chain: 'eip155:31337', chainId: 31337, url: `http://127.0.0.1:${port}/secret-key` }], timeoutMs: 2000 });
    // Unreachable, not timeout: the refusal was taken at once, not waited out (timing goals belong in bench/).
    const entries = await r.readProofStatuses({ chain: 'eip155:31337', verifierAddress: current, sender: alice, requestIds: [1, 2] });
    for (const e of entries) {
      expect(e).toMatchObject({ code: 'unreachable' });
      expect((e as { error: string }).error).not.toContain('secret-key');
      expect((e as { error: string }).error).not.toContain(String(port));
    }
  });

  it('a node that accepts and never answers: timeout within the deadline', async () => {
    const hole = await blackhole();
    try {
      const r = new ChainReader({ ...chainDefaults, chains: [{ chain: 'eip155:31337', chainId: 31337, url: hole.url }], timeoutMs: 400, errorTtlMs: 10_000 });
      const t0 = performance.now();
      const entries = await r.readProofStatuses({ chain: 'eip155:31337', verifierAddress: current, sender: alice, requestIds: [1] });
      const took = performance.now() - t0;
      expect(entries[0]).toMatchObject({ code: 'timeout', requestId: 1 });
      expect(took).toBeGreaterThanOrEqual(390);
      // The failure is remembered for errorTtlMs: the next read answers at once, without a connection.
      await new Promise((resolve) => setTimeout(resolve, 100)); // let the transport's own timeout land
      const opened = hole.connections();
      const [again] = await r.readProofStatuses({ chain: 'eip155:31337', verifierAddress: current, sender: bob, requestIds: [1] });
      expect(again).toMatchObject({ code: 'timeout' });
      expect(hole.connections()).toBe(opened); // answered from memory: no new connection to the node
    } finally {
      await hole.close();
    }
  });

  it('a node that stops answers unreachable, and is read again once it is back', async () => {
    const r = reader({ multicall: 'off', cacheTtlMs: 0, errorTtlMs: 300 });
    const q = { chain: chain.chain, verifierAddress: current, sender: alice, requestIds: [1] };
    expect(read(await r.readProofStatuses(q), 1).verified).toBe(true);
    await chain.stop();
    try {
      const [down] = await r.readProofStatuses(q);
      expect(down).toMatchObject({ requestId: 1, code: 'unreachable' });
      const batches = r.stats().batches;
      const [still] = await r.readProofStatuses(q); // remembered: no new attempt
      expect(still).toMatchObject({ code: 'unreachable' });
      expect(r.stats().batches).toBe(batches);
    } finally {
      await chain.start();
    }
    await new Promise((resolve) => setTimeout(resolve, 320));
    expect(read(await r.readProofStatuses(q), 1).verified).toBe(true);
  });

  it('an endpoint serving another chain than configured: wrong-chain', async () => {
    const r = new ChainReader({ ...chainDefaults, chains: [{ chain: 'eip155:1', chainId: 1, url: chain.url }], timeoutMs: 2000 });
    const [e] = await r.readProofStatuses({ chain: 'eip155:1', verifierAddress: current, sender: alice, requestIds: [1] });
    expect(e).toMatchObject({ code: 'wrong-chain' });
    expect((e as { error: string }).error).toContain('eip155:31337');
  });
});
