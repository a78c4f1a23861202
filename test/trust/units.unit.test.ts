/** Unit tests of the pieces of src/trust that need no issuer: holder DIDs, issuer lists, caches, canonical JSON, env. */
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentDigest } from '../../src/domain/canonical-json.js';
import { createDocumentLoader, ID_INFORMATION_CONTEXT_URL, ID_INFORMATION_SCHEMA_URL, jsonLdDocuments, remoteDocumentUrl } from '../../src/jsonld/documents.js';
import { checkHolder, ethAddressOfPublicKey, holderAddressOf } from '../../src/trust/holder.js';
import { checkIssuer } from '../../src/trust/issuers.js';
import { keep, lruCache } from '../../src/domain/cache.js';
import { fetchJson } from '../../src/trust/http.js';
import { keyStatusFrom } from '../../src/trust/revocation.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/config.js';
import { iden3DidFromEthAddress } from './iden3-test.js';
import { startServer } from './servers.js';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

describe('holder DIDs', () => {
  it('reads the address of did:pkh, any namespace', () => {
    expect(holderAddressOf(`did:pkh:eip155:1:${ADDRESS}`)).toEqual({ kind: 'address', namespace: 'eip155', address: ADDRESS });
    expect(holderAddressOf('did:pkh:tezos:NetXdQprcVkpaWU:tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb')).toEqual({
      kind: 'address', namespace: 'tezos', address: 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb',
    });
    expect(holderAddressOf('did:pkh:eip155:1').kind).toBe('malformed');
  });

  it('reads did:ethr with an address or a secp256k1 public key', () => {
    expect(holderAddressOf(`did:ethr:${ADDRESS}`)).toMatchObject({ kind: 'address', address: ADDRESS });
    expect(holderAddressOf(`did:ethr:0x5:${ADDRESS}`)).toMatchObject({ kind: 'address', address: ADDRESS });
    // The public key of private key 1 and its well-known address.
    const g = '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';
    expect(ethAddressOfPublicKey(`0x${g}`)).toBe('0x7e5f4552091a69125d5dfcb7b8c2659029395bdf');
    expect(holderAddressOf(`did:ethr:mainnet:0x${g}`)).toMatchObject({ kind: 'address', address: '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf' });
    const odd = '03' + g.slice(2); // the other point with the same x
    expect(ethAddressOfPublicKey(odd)).not.toBe('0x7e5f4552091a69125d5dfcb7b8c2659029395bdf');
    expect(holderAddressOf('did:ethr:0x1234').kind).toBe('malformed');
  });

  it('reads iden3 DIDs made from an Ethereum address, and no address from other DIDs', () => {
    for (const method of ['iden3', 'polygonid'] as const) {
      const did = iden3DidFromEthAddress(ADDRESS, method);
      const h = holderAddressOf(did);
      expect(h).toMatchObject({ kind: 'address', namespace: 'eip155' });
      expect(h.kind === 'address' && h.address.toLowerCase()).toBe(ADDRESS.toLowerCase());
    }
    // A BabyJubJub-key iden3 identity (the demo issuer's DID form) encodes no address.
    expect(holderAddressOf('did:iden3:polygon:amoy:xGaS2qAWCYcNf4bLz5nKAMTh9S6cHVwqCnFweEfCY')).toEqual({ kind: 'none' });
    expect(holderAddressOf('did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK')).toEqual({ kind: 'none' });
    expect(holderAddressOf(undefined)).toEqual({ kind: 'none' });
    expect(holderAddressOf(42).kind).toBe('malformed');
  });

  it('binds EVM addresses case-insensitively and others exactly; requires binding only when asked', () => {
    expect(checkHolder({ id: `did:pkh:eip155:1:${ADDRESS.toLowerCase()}` }, ADDRESS, false).ok).toBe(true);
    expect(checkHolder({ id: iden3DidFromEthAddress(ADDRESS) }, ADDRESS.toLowerCase(), false).ok).toBe(true);
    expect(checkHolder({ id: iden3DidFromEthAddress(ADDRESS) }, '0x8ba1f109551bD432803012645Ac136ddd64DBA72', false).ok).toBe(false);
    expect(checkHolder({ id: 'did:pkh:tezos:x:tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb' }, 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb', false).ok).toBe(true);
    expect(checkHolder({ id: 'did:pkh:tezos:x:tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb' }, 'TZ1VSUR8WWNHLAZEMPOCH5D6HLRITH8CJCJB', false).ok).toBe(false);
    expect(checkHolder({}, ADDRESS, false).ok).toBe(true);
    expect(checkHolder({}, ADDRESS, true)).toEqual({ ok: false, status: 'not-valid', reason: expect.stringMatching(/holder binding is required/) });
    const other = checkHolder({ id: `did:ethr:${ADDRESS}` }, '0x8ba1f109551bD432803012645Ac136ddd64DBA72', false);
    expect(other.ok).toBe(false);
    if (!other.ok) expect(other.reason).not.toContain(ADDRESS.slice(2, 10));
  });
});

describe('trusted issuers', () => {
  const A = 'did:iden3:polygon:amoy:xA';
  const B = 'did:iden3:polygon:amoy:xB';
  it('intersects the service and scenario lists, * meaning no restriction', () => {
    expect(checkIssuer(A, [A], undefined).ok).toBe(true);
    expect(checkIssuer(A, '*', undefined).ok).toBe(true);
    expect(checkIssuer(A, '*', [A]).ok).toBe(true);
    expect(checkIssuer(A, '*', [B]).ok).toBe(false);
    expect(checkIssuer(A, [A, B], ['*']).ok).toBe(true);
    expect(checkIssuer(A, [B], [A]).ok).toBe(false);
    expect(checkIssuer(A, [A], []).ok).toBe(false);
    expect(checkIssuer(A.toUpperCase(), [A], undefined).ok).toBe(false);
  });
});

describe('caches and hashing', () => {
  it('canonical JSON sorts keys at every level and hashes equal content equally', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 'x' }, null], e: undefined })).toBe('{"a":[{"c":"x","d":2},null],"b":1}');
    expect(contentDigest({ x: 1, y: { a: true } })).toBe(contentDigest({ y: { a: true }, x: 1 }));
    expect(contentDigest({ x: 1 })).not.toBe(contentDigest({ x: 2 }));
    expect(contentDigest({ x: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('LRU evicts the least recently used entry and expires entries by the injected clock at once', () => {
    let now = 1000; // lru-cache reads a start time of 0 as "not set": a real clock is never at 0
    const lru = lruCache<string, number>(2, () => now)!;
    keep(lru, 'a', 1);
    keep(lru, 'b', 2);
    expect(lru.get('a')).toBe(1);
    keep(lru, 'c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    keep(lru, 't', 4, 100);
    now = 1099;
    expect(lru.get('t')).toBe(4);
    now = 1100;
    expect(lru.get('t')).toBeUndefined();
    keep(lru, 'z', 5, 0);
    expect(lru.get('z')).toBeUndefined();
  });

  it('a cache of size 0 is no cache (CREDENTIAL_CACHE_SIZE=0)', () => {
    expect(lruCache(0)).toBeUndefined();
    expect(() => keep(lruCache<string, number>(0), 'a', 1)).not.toThrow();
  });

  it('keeps an entry read all the time while many others come and go, and stays bounded', () => {
    const lru = lruCache<string, number>(10)!;
    lru.set('hot', 0);
    for (let i = 0; i < 1000; i++) {
      lru.set(`k${i}`, i);
      expect(lru.get('hot'), `after ${i} insertions`).toBe(0);
      expect(lru.size).toBeLessThanOrEqual(10);
    }
    expect(lru.get('k999')).toBe(999);
    expect(lru.get('k0')).toBeUndefined(); // the least recently used went first
  });
});

describe('document loader', () => {
  const KYC_V4 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v4.jsonld';

  it('ships only the project\'s own documents and its libraries\', iden3\'s KYC contexts only when handed in', async () => {
    expect([...jsonLdDocuments().keys()].sort()).toEqual([
      ID_INFORMATION_SCHEMA_URL, ID_INFORMATION_CONTEXT_URL,
      'https://schema.iden3.io/core/jsonld/auth.jsonld', 'https://schema.iden3.io/core/jsonld/displayMethod.jsonld',
      'https://schema.iden3.io/core/jsonld/iden3proofs.jsonld', 'https://schema.iden3.io/core/json/auth.json',
      'https://www.w3.org/2018/credentials/v1',
    ].sort());
    const offline = createDocumentLoader();
    expect(offline.has(KYC_V4)).toBe(false);
    await expect(offline(KYC_V4)).rejects.toThrow(/is not available offline/);
    const handed = createDocumentLoader({ documents: { [KYC_V4]: { '@context': { KYCAgeCredential: 'urn:x' } } } });
    expect((await handed(KYC_V4)).document).toEqual({ '@context': { KYCAgeCredential: 'urn:x' } });
  });

  it('serves bundled documents offline and refuses others', async () => {
    const loader = createDocumentLoader({ fetch: () => Promise.reject(new Error('no network')), timeoutMs: 100 });
    for (const url of [
      'https://www.w3.org/2018/credentials/v1',
      'https://schema.iden3.io/core/jsonld/iden3proofs.jsonld',
      ID_INFORMATION_CONTEXT_URL,
      ID_INFORMATION_SCHEMA_URL,
    ]) {
      const doc = await loader(url);
      expect(doc.documentUrl).toBe(url);
      expect(typeof doc.document).toBe('object');
    }
    await expect(loader('https://example.org/other.jsonld')).rejects.toThrow(/is not available offline/);
    // Each load is a fresh copy: a caller cannot alter what the next one reads.
    const first = (await loader(ID_INFORMATION_CONTEXT_URL)).document as Record<string, unknown>;
    first['@context'] = null;
    expect((await loader(ID_INFORMATION_CONTEXT_URL)).document).not.toEqual(first);
  });

  it('fetches a document under an allowed prefix once, and serves documents handed in', async () => {
    const server = await startServer(async () => ({ json: { '@context': { x: 'https://x.example/#x' } } }));
    try {
      const loader = createDocumentLoader({
        fetch: (u, i) => fetch(u, i),
        timeoutMs: 2000,
        remoteDocumentPrefixes: [`${server.url}/ctx/`],
        documents: { 'https://mine.example/ctx.jsonld': { '@context': {} } },
      });
      expect((await loader(`${server.url}/ctx/a.jsonld`)).document).toEqual({ '@context': { x: 'https://x.example/#x' } });
      await loader(`${server.url}/ctx/a.jsonld`);
      expect(server.hits).toEqual(['GET /ctx/a.jsonld']);
      await expect(loader(`${server.url}/other/a.jsonld`)).rejects.toThrow(/not available offline/);
      expect((await loader('https://mine.example/ctx.jsonld')).document).toEqual({ '@context': {} });
    } finally {
      await server.close();
    }
  });

  it('fetches nothing outside the allowed prefix, however the URL is spelled (dot segments, encoded dots or slashes)', async () => {
    const server = await startServer(async () => ({ json: { '@context': {} } }));
    try {
      const loader = createDocumentLoader({ fetch: (u, i) => fetch(u, i), timeoutMs: 2000, remoteDocumentPrefixes: [`${server.url}/ctx/`] });
      const host = server.url.replace(/^http:\/\//, '');
      for (const url of [
        `${server.url}/ctx/../admin`,
        `${server.url}/ctx/%2e%2e/admin`,
        `${server.url}/ctx/%2E%2e/admin`,
        `${server.url}/ctx/.%2e/admin`,
        `${server.url}/ctx/..%2fadmin`,
        `${server.url}/ctx/..%5cadmin`,
        `${server.url}/ctx-evil/a.jsonld`,
        `http://user:pw@${host}/ctx/a.jsonld`,
        `${server.url.replace('127.0.0.1', 'localhost')}/ctx/a.jsonld`,
      ]) {
        await expect(loader(url), url).rejects.toThrow(/not available offline/);
      }
      expect(server.hits).toEqual([]);
      // A harmless spelling under the prefix is fetched at its normalised URL.
      await loader(`${server.url}/ctx/sub/../a.jsonld`);
      expect(server.hits).toEqual(['GET /ctx/a.jsonld']);
    } finally {
      await server.close();
    }
  });

  it('matches a prefix without a final slash only as a whole path segment', () => {
    expect(remoteDocumentUrl('https://s.example/ctx/a.jsonld', ['https://s.example/ctx'])).toBe('https://s.example/ctx/a.jsonld');
    expect(remoteDocumentUrl('https://s.example/ctx', ['https://s.example/ctx'])).toBe('https://s.example/ctx');
    expect(remoteDocumentUrl('https://s.example/ctxevil/a', ['https://s.example/ctx'])).toBeUndefined();
    expect(remoteDocumentUrl('https://s.example:8443/ctx/a', ['https://s.example/ctx/'])).toBeUndefined();
    expect(remoteDocumentUrl('http://s.example/ctx/a', ['https://s.example/ctx/'])).toBeUndefined();
  });
});

describe('options from the environment', () => {
  it('has safe defaults', () => {
    expect(loadConfig({}).trust).toMatchObject({
      mode: 'strict',
      trustedIssuers: [],
      resolverUrl: undefined,
      timeoutMs: 3000,
      revocationCacheMs: 60000,
      resolverCacheMs: 3600000,
      cacheSize: 10000,
      requireHolderBinding: false,
      remoteDocumentPrefixes: [],
    });
  });

  it('reads every variable', () => {
    const o = loadConfig({
      CREDENTIAL_VERIFICATION: 'OFF',
      TRUSTED_ISSUERS: 'did:iden3:a, did:iden3:b did:pkh:eip155:1:0x1',
      DID_RESOLVER_URL: 'https://resolver.privado.id/1.0/identifiers',
      TRUST_HTTP_TIMEOUT_MS: '1500',
      REVOCATION_CACHE_MS: '0',
      DID_RESOLVER_CACHE_MS: '10',
      CREDENTIAL_CACHE_SIZE: '5',
      REQUIRE_HOLDER_BINDING: 'true',
      JSONLD_REMOTE_PREFIXES: 'https://schemas.example/ctx/',
    }).trust;
    expect(o).toMatchObject({
      mode: 'off',
      trustedIssuers: ['did:iden3:a', 'did:iden3:b', 'did:pkh:eip155:1:0x1'],
      resolverUrl: 'https://resolver.privado.id/1.0/identifiers',
      timeoutMs: 1500,
      revocationCacheMs: 0,
      resolverCacheMs: 10,
      cacheSize: 5,
      requireHolderBinding: true,
      remoteDocumentPrefixes: ['https://schemas.example/ctx/'],
    });
    expect(loadConfig({ TRUSTED_ISSUERS: '*' }).trust.trustedIssuers).toBe('*');
  });

  it('refuses bad values with the variable name', () => {
    expect(() => loadConfig({ CREDENTIAL_VERIFICATION: 'lenient' }).trust).toThrow(ConfigError);
    expect(() => loadConfig({ TRUSTED_ISSUERS: 'issuer-a' }).trust).toThrow(/TRUSTED_ISSUERS/);
    expect(() => loadConfig({ DID_RESOLVER_URL: 'ftp://x' }).trust).toThrow(/DID_RESOLVER_URL/);
    expect(() => loadConfig({ TRUST_HTTP_TIMEOUT_MS: '0' }).trust).toThrow(/TRUST_HTTP_TIMEOUT_MS/);
    expect(() => loadConfig({ JSONLD_DOCUMENTS_FILE: '/nonexistent/x.json' }).trust).toThrow(/JSONLD_DOCUMENTS_FILE/);
    expect(() => loadConfig({ REQUIRE_HOLDER_BINDING: 'maybe' }).trust).toThrow(/REQUIRE_HOLDER_BINDING/);
  });
});

describe('HTTP client', () => {
  const get = (url: string, timeoutMs = 2000) => fetchJson((u, i) => fetch(u, i), { url, timeoutMs, maxBytes: 64 });

  it('sends a request again once when the connection is closed before any answer', async () => {
    let n = 0;
    const server = await startServer(async (req) => {
      if (n++ === 0) {
        req.socket.destroy();
        return { hang: true };
      }
      return { json: { ok: 1 } };
    });
    try {
      expect(await get(`${server.url}/x`)).toEqual({ ok: 1 });
      expect(server.hits).toEqual(['GET /x', 'GET /x']);
    } finally {
      await server.close();
    }
  });

  it('fails with short, safe messages: closed connections, HTTP errors, redirects, size, not JSON', async () => {
    const server = await startServer(async (req) => {
      switch (req.url) {
        case '/reset': req.socket.destroy(); return { hang: true };
        case '/500': return { status: 500, json: {} };
        case '/302': return { status: 302, json: {} };
        case '/big': return { json: 'x'.repeat(100) };
        default: return { json: undefined };
      }
    });
    try {
      await expect(get(`${server.url}/reset`)).rejects.toThrow(/^connection closed by the server$|^connection reset$/);
      await expect(get(`${server.url}/500`)).rejects.toThrow(/^HTTP 500$/);
      await expect(get(`${server.url}/302`)).rejects.toThrow(/redirect \(HTTP 302\) not followed/);
      await expect(get(`${server.url}/big`)).rejects.toThrow(/answer larger than 64 bytes/);
      expect(await get(`${server.url}/null`)).toBeNull();
    } finally {
      await server.close();
    }
  });
});

describe("the issuer key's status source", () => {
  const smt = (id: string) => ({ type: 'SparseMerkleTreeProof', id, revocationNonce: 1001 });

  it("asks the credential's own signed source for the key's nonce: path suffix, revocationNonce parameter", () => {
    expect(keyStatusFrom(smt('https://issuer.example/v1/status/1001'), 1001n, 0n)).toEqual(smt('https://issuer.example/v1/status/0'));
    const param = { type: 'Iden3commRevocationStatusV1.0', id: 'https://issuer.example/agent?revocationNonce=1001&x=1', revocationNonce: 1001 };
    expect(keyStatusFrom(param, 1001n, 7n)).toEqual({ ...param, id: 'https://issuer.example/agent?revocationNonce=7&x=1' });
  });

  it('asks an agent, a contract or a reverse hash service as it is (the nonce travels in the question)', () => {
    for (const own of [
      { type: 'Iden3commRevocationStatusV1.0', id: 'https://issuer.example/agent', revocationNonce: 1001 },
      { type: 'Iden3OnchainSparseMerkleTreeProof2023', id: 'did:iden3:x?contractAddress=80001:0x49b8&state=1', revocationNonce: 1001 },
      { type: 'Iden3ReverseSparseMerkleTreeProof', id: 'https://rhs.example', revocationNonce: 1001 },
    ]) expect(keyStatusFrom(own, 1001n, 0n)).toEqual(own);
  });

  it("rewrites a reverse hash service's issuer fallback, or drops one that does not name the nonce", () => {
    const rhs = { type: 'Iden3ReverseSparseMerkleTreeProof', id: 'https://rhs.example', revocationNonce: 1001 };
    expect(keyStatusFrom({ ...rhs, statusIssuer: smt('https://issuer.example/status/1001') }, 1001n, 0n))
      .toEqual({ ...rhs, statusIssuer: smt('https://issuer.example/status/0') });
    expect(keyStatusFrom({ ...rhs, statusIssuer: smt('https://elsewhere.example/status') }, 1001n, 0n)).toEqual(rhs);
  });

  it('gives no source when the signed id does not name the credential\'s nonce where it must', () => {
    expect(keyStatusFrom(smt('https://issuer.example/status'), 1001n, 0n)).toBeUndefined();
    expect(keyStatusFrom(smt('https://issuer.example/status/1002'), 1001n, 0n)).toBeUndefined();
    expect(keyStatusFrom({ ...smt('https://issuer.example/s?revocationNonce=5'), type: 'Iden3commRevocationStatusV1.0' }, 1001n, 0n)).toBeUndefined();
    expect(keyStatusFrom({ type: 'SparseMerkleTreeProof', revocationNonce: 1001 }, 1001n, 0n)).toBeUndefined();
  });
});
