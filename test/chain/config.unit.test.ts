import { describe, expect, it } from 'vitest';
import { parseChainRef, parseChainRpcUrls, redactRpcUrl } from '../../src/chain/index.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/config.js';

describe('parseChainRpcUrls', () => {
  it('parses chain=url entries, keeping query strings with = in the URL', () => {
    const m = parseChainRpcUrls(' eip155:80002=https://rpc-amoy.example/v2/KEY?x=1&y=2 , eip155:31337=http://127.0.0.1:8545');
    expect([...m.values()]).toEqual([
      { chain: 'eip155:80002', chainId: 80002, url: 'https://rpc-amoy.example/v2/KEY?x=1&y=2' },
      { chain: 'eip155:31337', chainId: 31337, url: 'http://127.0.0.1:8545' },
    ]);
  });

  it('is empty when unset or blank', () => {
    expect(parseChainRpcUrls(undefined).size).toBe(0);
    expect(parseChainRpcUrls('  ').size).toBe(0);
  });

  it('names every bad entry, never quoting a URL', () => {
    const bad = 'eip155:1=https://a.example/SECRET1,80002=https://b.example/SECRET2,eip155:1=https://c.example/SECRET3,' +
      'eip155:5=ftp://d.example/SECRET4,eip155:7=not a url SECRET5,eip155:007=http://x,,eip155:9';
    let message = '';
    try {
      parseChainRpcUrls(bad);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toMatch(/^CHAIN_RPC_URLS: /);
    for (const part of [
      'entry 2: "80002" is not a CAIP-2 EVM chain reference',
      'entry 3: eip155:1 is listed twice',
      'entry 4 (eip155:5): the URL must be http:// or https://',
      'entry 5 (eip155:7): the URL is not valid',
      'entry 6: "eip155:007" is not',
      'entry 7 is empty',
      'entry 8 must be chain=url',
    ]) expect(message).toContain(part);
    expect(message).not.toMatch(/SECRET|\/\/[a-d]\.example/);
  });
});

describe('parseChainRef and redactRpcUrl', () => {
  it('accepts eip155:<id> only', () => {
    expect(parseChainRef('eip155:1')).toEqual({ chain: 'eip155:1', chainId: 1 });
    expect(parseChainRef('EIP155:137')).toEqual({ chain: 'eip155:137', chainId: 137 });
    for (const bad of ['eip155:0', 'eip155:01', 'eip155:', '137', 'tezos:NetXdQprcVkpaWU', 'eip155:99999999999999999999', 5]) {
      expect(parseChainRef(bad)).toBeUndefined();
    }
  });

  it('keeps scheme and host only', () => {
    expect(redactRpcUrl('https://user:pw@rpc.example:8443/v2/KEY?apikey=1')).toBe('https://rpc.example:8443/…');
    expect(redactRpcUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(redactRpcUrl('nope')).toBe('(invalid URL)');
  });
});

describe('chainSettingsFromEnv', () => {
  it('has documented defaults', () => {
    expect(loadConfig({}).chains).toEqual({
      chains: new Map(), defaultChain: undefined, timeoutMs: 3000, cacheTtlMs: 5000, cacheMaxEntries: 10_000,
      errorTtlMs: 1000, multicall: 'auto', txHashLookbackBlocks: 10_000, allowUncheckedRequests: false,
      followIntervalMs: 5000, confirmations: 12, txDropAfterMs: 1_800_000, rpcBatchLimit: 100, followMaxTxs: 5000,
    });
  });

  it('defaults the chain to the only configured one, or to CHAIN_DEFAULT', () => {
    expect(loadConfig({ CHAIN_RPC_URLS: 'eip155:5=http://a' }).chains.defaultChain).toBe('eip155:5');
    expect(loadConfig({ CHAIN_RPC_URLS: 'eip155:5=http://a,eip155:6=http://b' }).chains.defaultChain).toBeUndefined();
    expect(loadConfig({ CHAIN_RPC_URLS: 'eip155:5=http://a,eip155:6=http://b', CHAIN_DEFAULT: 'eip155:6' }).chains.defaultChain).toBe('eip155:6');
    expect(() => loadConfig({ CHAIN_RPC_URLS: 'eip155:5=http://a', CHAIN_DEFAULT: 'eip155:6' }).chains).toThrow(/CHAIN_DEFAULT is eip155:6, which CHAIN_RPC_URLS does not list/);
    expect(() => loadConfig({ CHAIN_DEFAULT: 'mainnet' }).chains).toThrow(/CHAIN_DEFAULT must be a CAIP-2/);
  });

  it('validates the numbers and the multicall mode', () => {
    const s = loadConfig({
      CHAIN_READ_TIMEOUT_MS: '1500', CHAIN_CACHE_TTL_MS: '0', CHAIN_CACHE_MAX_ENTRIES: '5', CHAIN_ERROR_TTL_MS: '0',
      CHAIN_MULTICALL: 'OFF', CHAIN_TXHASH_LOOKBACK_BLOCKS: '0',
    }).chains;
    expect(s).toMatchObject({ timeoutMs: 1500, cacheTtlMs: 0, cacheMaxEntries: 5, errorTtlMs: 0, multicall: 'off', txHashLookbackBlocks: 0 });
    expect(() => loadConfig({ CHAIN_READ_TIMEOUT_MS: '10' }).chains).toThrow(/CHAIN_READ_TIMEOUT_MS must be an integer from 100/);
    expect(() => loadConfig({ CHAIN_CACHE_TTL_MS: '-1' }).chains).toThrow(ConfigError);
    expect(() => loadConfig({ CHAIN_MULTICALL: 'yes' }).chains).toThrow(/CHAIN_MULTICALL must be auto or off/);
  });
});
