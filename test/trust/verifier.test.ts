/**
 * The credential verifier against real credentials: issued by js-sdk's in-memory issuer (src/trust/demo-issuer.ts),
 * revocation statuses served by a real local HTTP server from the issuer's own trees, issuer states answered by a
 * local DID resolver. Offline: no request leaves 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hex, PrivateKey, poseidon } from '@iden3/js-crypto';
import { createCredentialVerifier, type TrustOptions, type TrustVerdict } from '../../src/trust/index.js';
import { createDemoIssuer, nonceFromStatusPath, type DemoIssuer } from '../../src/trust/demo-issuer.js';
import type { TrustDeps } from '../../src/trust/types.js';
import type { Credential } from '../../src/schemas/credential.js';
import type { RuleTrace } from '../../src/schemas/trace.js';
import { closedPortUrl, startServer, type TestServer } from './servers.js';
import { startDidResolver, type TestDidResolver } from './did-resolver-server.js';
import { Claim as ClaimNs, W3CCredential } from './iden3-test.js';
import { computeCoreClaim } from '../../src/trust/proof-check.js';
import { createDocumentLoader } from '../../src/jsonld/documents.js';
import { IdPosition, MerklizedRootPosition } from '../../src/trust/iden3.js';
import { compilePlan } from '../../src/engine/index.js';
import { contentDigest } from '../../src/domain/canonical-json.js';
import { only } from '../elements.js';
import { TYPES } from '../engine/factories.js';
import { traceBoth } from '../engine/dry-run.js';
import { trustOptions } from './options.js';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const OTHER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const HOLDER = `did:pkh:eip155:1:${ADDRESS}`;
const SEED_A = 'trust-tests-issuer-A-00000000001';
const SEED_B = 'trust-tests-issuer-B-00000000002';
const NOW = Date.now();

type Json = Record<string, any>;

let status: TestServer;
/** Issuer states: published only where a test publishes them (a resolver negotiating as driver-did-iden3). */
let resolver: TestDidResolver;
let a: DemoIssuer;
let b: DemoIssuer;

const creds = {} as Record<'valid' | 'revocable' | 'agent' | 'onchain' | 'otherHolder' | 'fromB', Json>;

const clone = <T>(x: T): T => structuredClone(x);
const asCredential = (x: Json) => x as unknown as Credential;

let clockNow = 1_000_000;
function verifier(over: Partial<TrustOptions> = {}, deps: TrustDeps = {}) {
  return createCredentialVerifier(
    trustOptions({
      mode: 'strict',
      trustedIssuers: [a.did, b.did],
      resolverUrl: resolver.base,
      timeoutMs: 5000,
      revocationCacheMs: 30_000,
      ...over,
    }),
    { clock: () => clockNow, ...deps },
  );
}

/** One verifier with the default options, shared by the tests that do not depend on its caches. */
let sharedVerifier: ReturnType<typeof verifier> | undefined;
const shared = () => (sharedVerifier ??= verifier());

async function one(v: ReturnType<typeof verifier>, c: Json, address = ADDRESS, trustedIssuers?: string[]): Promise<TrustVerdict> {
  return only(await v.verify([asCredential(c)], { address, now: NOW, trustedIssuers }));
}

function expectFail(v: TrustVerdict, status: 'not-valid' | 'error', reason: RegExp) {
  expect(v.ok).toBe(false);
  if (v.ok) return;
  expect(v.status).toBe(status);
  expect(v.reason).toMatch(reason);
}

beforeAll(async () => {
  status = await startServer(async (req, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/hang/')) return { hang: true };
    const issuer = url.pathname.startsWith('/a/') ? a : url.pathname.startsWith('/b/') ? b : undefined;
    if (!issuer) return { status: 404, json: { error: 'not found' } };
    if (req.method === 'POST' && url.pathname.endsWith('/agent')) {
      const msg = JSON.parse(body) as { type: string; body: { revocation_nonce: number } };
      if (msg.type !== 'https://iden3-communication.io/revocation/1.0/request-status') return { status: 400, json: {} };
      return { json: { type: 'https://iden3-communication.io/revocation/1.0/status', body: await issuer.status(msg.body.revocation_nonce) } };
    }
    const nonce = nonceFromStatusPath(url.pathname);
    return nonce === undefined ? { status: 404, json: {} } : { json: await issuer.status(nonce) };
  });
  resolver = await startDidResolver();
  [a, b] = await Promise.all([
    createDemoIssuer({ seed: SEED_A, statusUrl: `${status.url}/a/status` }),
    createDemoIssuer({ seed: SEED_B, statusUrl: `${status.url}/b/status` }),
  ]);
  const claims = { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA', birthDate: 19950101 } };
  const expirationDate = new Date(NOW + 365 * 86_400_000);
  const issuanceDate = new Date(NOW - 86_400_000);
  const base = { subjectId: HOLDER, claims, expirationDate, issuanceDate };
  const issued = await Promise.all([
    a.issue({ ...base, nonce: 1001 }),
    a.issue({ ...base, nonce: 1002 }),
    a.issue({ ...base, nonce: 1003, revocation: { type: 'Iden3commRevocationStatusV1.0', id: `${status.url}/a/agent` } }),
    a.issue({ ...base, nonce: 1004, revocation: { type: 'Iden3OnchainSparseMerkleTreeProof2023', id: '0x49b84b9Dd137de488924b18299De8bf46fD11469' } }),
    a.issue({ ...base, nonce: 1007, subjectId: `did:pkh:eip155:1:${OTHER}` }),
    b.issue({ ...base, nonce: 2001 }),
  ]);
  [creds.valid, creds.revocable, creds.agent, creds.onchain, creds.otherHolder, creds.fromB] = issued;
}, 60_000);

afterAll(async () => {
  await Promise.all([status?.close(), resolver?.close()]);
});

describe('a valid credential', () => {
  it('passes every check, and the second time comes from the cache', async () => {
    const v = verifier();
    expect(await one(v, creds.valid)).toEqual({ ok: true });
    expect(v.stats().coldChecks).toBe(1);
    const fetched = status.hits.length + resolver.hits.length;
    expect(await one(v, creds.valid)).toEqual({ ok: true });
    // The cache, counted: no second cold proof check and no second request to the status server or the resolver.
    expect(v.stats().coldChecks).toBe(1);
    expect(status.hits.length + resolver.hits.length).toBe(fetched);
  });

  it('passes with the holder address in another case, and is bound by did:pkh to the request address', async () => {
    const v = shared();
    expect(await one(v, creds.valid, ADDRESS.toLowerCase())).toEqual({ ok: true });
    expect(await one(v, creds.valid, ADDRESS.toUpperCase().replace('0X', '0x'))).toEqual({ ok: true });
  });

  it('is verified whatever the key order of its JSON (the cache key is over canonical JSON)', async () => {
    const v = shared();
    await one(v, creds.valid);
    const reordered = Object.fromEntries(Object.entries(creds.valid).reverse());
    expect(await one(v, reordered)).toEqual({ ok: true });
  });

  it('answers one verdict per credential, in order', async () => {
    const v = shared();
    const tampered = clone(creds.valid);
    tampered.credentialSubject.reviewAnswer = 'RED';
    const verdicts = await v.verify([asCredential(creds.valid), asCredential(tampered), asCredential(creds.fromB)], { address: ADDRESS, now: NOW });
    expect(verdicts.map((x) => x.ok)).toEqual([true, false, true]);
  });

  it('recomputes the core claim exactly as js-sdk toCoreClaim does (one merklization instead of two)', async () => {
    const loader = createDocumentLoader({ fetch: () => Promise.reject(new Error('offline')), timeoutMs: 1 });
    const doc = clone(creds.valid);
    delete doc.proof;
    const sdkClaim = await W3CCredential.fromJSON(creds.valid).toCoreClaim({
      revNonce: 1001, version: 0, subjectPosition: 'index', merklizedRootPosition: 'index', updatable: false,
      merklizeOpts: { documentLoader: loader },
    });
    const mine = await computeCoreClaim(doc, {
      revNonce: 1001n, version: 0, subjectPosition: IdPosition.Index, merklizedRootPosition: MerklizedRootPosition.Index, updatable: false,
    }, loader);
    expect(mine.hex()).toBe(sdkClaim.hex());
    expect(mine.hex()).toBe(creds.valid.proof[0].coreClaim);
  });

  it('skips credentials of types no rule reads when told which types are read', async () => {
    const v = shared();
    const image = { ...clone(creds.valid), id: 'urn:image', type: ['VerifiableCredential', 'SelfieImage'] };
    const verdicts = await v.verify([asCredential(image), asCredential(creds.valid)], {
      address: ADDRESS, now: NOW, relevantTypes: new Map([['IDInformation', 0]]),
    });
    expect(verdicts).toEqual([{ ok: false, status: 'not-valid', reason: 'not verified: no rule of this scenario reads its type' }, { ok: true }]);
  });

  it('off mode answers ok for everything without looking', async () => {
    const v = verifier({ mode: 'off', trustedIssuers: [] });
    const junk = { id: 'x' };
    expect(await v.verify([asCredential(junk), asCredential(creds.otherHolder)], { address: ADDRESS, now: NOW })).toEqual([{ ok: true }, { ok: true }]);
    expect(v.mode).toBe('off');
  });
});

describe('tampering and forgery', () => {
  const MISMATCH = /content does not match its BJJSignature2021 proof/;

  it('refuses a changed credentialSubject value, without quoting it', async () => {
    const c = clone(creds.valid);
    c.credentialSubject.personalData.age = 31;
    const v = await one(shared(), c);
    expectFail(v, 'not-valid', MISMATCH);
    if (!v.ok) expect(v.reason).not.toMatch(/31|30|FRA/);
  });

  it('refuses a changed expirationDate', async () => {
    const c = clone(creds.valid);
    c.expirationDate = new Date(NOW + 10 * 365 * 86_400_000).toISOString();
    expectFail(await one(shared(), c), 'not-valid', MISMATCH);
  });

  it('refuses a changed issuanceDate, type or credentialStatus URL', async () => {
    const v = shared();
    const issued = clone(creds.valid);
    issued.issuanceDate = new Date(NOW - 5 * 86_400_000).toISOString();
    expectFail(await one(v, issued), 'not-valid', MISMATCH);
    const status = clone(creds.valid);
    status.credentialStatus.id = `${a.statusUrl}/1002`;
    expectFail(await one(v, status), 'not-valid', MISMATCH);
  });

  it('refuses a field or type added to the signed content (JSON-LD safe mode)', async () => {
    const v = shared();
    const field = clone(creds.valid);
    field.credentialSubject.personalData.sanctioned = false;
    expectFail(await one(v, field), 'not-valid', /cannot be verified against its JSON-LD @context \(invalid property\)/);
    const type = clone(creds.valid);
    type.type = [...type.type, 'AMLScreeningsResults'];
    expectFail(await one(v, type), 'not-valid', /cannot be verified against its JSON-LD @context/);
  });

  it('refuses a revocation nonce other than the signed one', async () => {
    const c = clone(creds.valid);
    c.credentialStatus.revocationNonce = 1002;
    // The nonce is also in the merklized content, so the content check fires first.
    expectFail(await one(shared(), c), 'not-valid', /does not match|revocation nonce/);
  });

  it('refuses a signature made with another key', async () => {
    const c = clone(creds.valid);
    const proof = c.proof[0];
    const claim = ClaimNs.fromHex(proof.coreClaim);
    const { hi, hv } = claim.hiHv();
    const signature = new PrivateKey(new TextEncoder().encode(SEED_B)).signPoseidon(poseidon.hash([hi, hv]));
    proof.signature = Hex.encodeString(signature.compress());
    expectFail(await one(shared(), c), 'not-valid', /signature does not verify against the issuer key/);
  });

  it("refuses another key's signature even with that key's claim in the proof: the key is not the issuer's", async () => {
    const c = clone(creds.valid);
    const proof = c.proof[0];
    const fromB = creds.fromB.proof[0];
    const claim = ClaimNs.fromHex(proof.coreClaim);
    const { hi, hv } = claim.hiHv();
    proof.signature = Hex.encodeString(new PrivateKey(new TextEncoder().encode(SEED_B)).signPoseidon(poseidon.hash([hi, hv])).compress());
    proof.issuerData.authCoreClaim = fromB.issuerData.authCoreClaim;
    expectFail(await one(shared(), c), 'not-valid', /signing key is not in the issuer's claims tree/);
    // ... and with B's state and key proof too: B's genesis state is not a state of A (resolver: not published).
    proof.issuerData.state = fromB.issuerData.state;
    proof.issuerData.mtp = fromB.issuerData.mtp;
    expectFail(await one(shared(), c), 'not-valid', /neither the issuer's genesis state nor a published one/);
    // Without a DID resolver that cannot be told: error, never valid.
    expectFail(await one(verifier({ resolverUrl: undefined }), c), 'error', /no DID resolver is configured/);
  });

  it("refuses a credential whose issuer is not the proof's issuer", async () => {
    const c = clone(creds.valid);
    c.issuer = b.did;
    expectFail(await one(shared(), c), 'not-valid', /made by another issuer than the credential names/);
  });

  it("fetches no JSON-LD document for a credential whose signing key is not shown to be its issuer's", async () => {
    const contexts = await startServer(async () => ({ json: { '@context': {} } }));
    try {
      const c = clone(creds.valid);
      const proof = c.proof[0];
      const fromB = creds.fromB.proof[0];
      const { hi, hv } = ClaimNs.fromHex(proof.coreClaim).hiHv();
      proof.signature = Hex.encodeString(new PrivateKey(new TextEncoder().encode(SEED_B)).signPoseidon(poseidon.hash([hi, hv])).compress());
      proof.issuerData.authCoreClaim = fromB.issuerData.authCoreClaim;
      proof.issuerData.state = fromB.issuerData.state;
      proof.issuerData.mtp = fromB.issuerData.mtp;
      c['@context'] = [...c['@context'], `${contexts.url}/ctx/extra.jsonld`];
      const v = verifier({ remoteDocumentPrefixes: [`${contexts.url}/ctx/`] });
      expectFail(await one(v, c), 'not-valid', /neither the issuer's genesis state nor a published one/);
      expect(contexts.hits).toEqual([]);
    } finally {
      await contexts.close();
    }
  });

  it('answers error when a JSON-LD context is not available offline', async () => {
    const c = clone(creds.valid);
    c['@context'] = [...c['@context'].slice(0, 2), 'https://schemas.unknown.example/IDInformation.jsonld'];
    expectFail(await one(shared(), c), 'error', /is not available offline/);
  });
});

describe('structure', () => {
  it('refuses credentials without a proof of a supported type, or with malformed proof, status or schema', async () => {
    const v = shared();
    const noProof = clone(creds.valid);
    noProof.proof = [{ type: 'EcdsaSecp256k1Signature2019' }];
    expectFail(await one(v, noProof), 'not-valid', /has no BJJSignature2021 or Iden3SparseMerkleTreeProof proof/);
    const emptyMtp = clone(creds.valid);
    emptyMtp.proof = [{ type: 'Iden3SparseMerkleTreeProof' }];
    expectFail(await one(v, emptyMtp), 'not-valid', /Iden3SparseMerkleTreeProof proof has no issuerData/);
    const badStatus = clone(creds.valid);
    badStatus.credentialStatus = { id: 'ftp://x/1', type: 'SparseMerkleTreeProof', revocationNonce: 1001 };
    expectFail(await one(v, badStatus), 'not-valid', /credentialStatus.id must be an http\(s\) URL/);
    const noNonce = clone(creds.valid);
    delete noNonce.credentialStatus.revocationNonce;
    expectFail(await one(v, noNonce), 'not-valid', /revocationNonce must be a non-negative integer/);
    const badSchema = clone(creds.valid);
    badSchema.credentialSchema.type = 'Whatever';
    expectFail(await one(v, badSchema), 'not-valid', /credentialSchema.type must be/);
    const malformed = clone(creds.valid);
    malformed.proof[0].signature = 'zz';
    expectFail(await one(v, malformed), 'not-valid', /proof is malformed/);
  });
});

describe('trusted issuers', () => {
  it('refuses an issuer not in TRUSTED_ISSUERS, and trusts any issuer with *', async () => {
    expectFail(await one(verifier({ trustedIssuers: [b.did] }), creds.valid), 'not-valid', /is not trusted \(not in TRUSTED_ISSUERS\)/);
    expectFail(await one(verifier({ trustedIssuers: [] }), creds.valid), 'not-valid', /TRUSTED_ISSUERS is empty/);
    expect(await one(verifier({ trustedIssuers: '*' }), creds.valid)).toEqual({ ok: true });
  });

  it('lets a per-scenario list narrow the service list, never widen it', async () => {
    expectFail(await one(shared(), creds.valid, ADDRESS, [b.did]), 'not-valid', /not trusted by this scenario/);
    expect(await one(shared(), creds.valid, ADDRESS, [a.did])).toEqual({ ok: true });
    // A scenario cannot trust an issuer the service does not trust.
    expectFail(await one(verifier({ trustedIssuers: [b.did] }), creds.valid, ADDRESS, [a.did]), 'not-valid', /is not trusted \(not in TRUSTED_ISSUERS\)/);
    expectFail(await one(verifier({ trustedIssuers: [b.did] }), creds.valid, ADDRESS, [b.did]), 'not-valid', /trusted neither by the service/);
    expect(await one(verifier({ trustedIssuers: '*' }), creds.valid, ADDRESS, [a.did])).toEqual({ ok: true });
  });
});

describe('holder binding', () => {
  it('refuses a credential whose subject DID encodes another address, without quoting it', async () => {
    const v = await one(shared(), creds.otherHolder);
    expectFail(v, 'not-valid', /belongs to another holder/);
    if (!v.ok) expect(v.reason.toLowerCase()).not.toContain(OTHER.toLowerCase().slice(2));
    expect(await one(shared(), creds.otherHolder, OTHER)).toEqual({ ok: true });
  });

  it('remembers structure and holder per (digest, address): the same content from another address is refused', async () => {
    const v = verifier();
    const digests = [contentDigest(creds.otherHolder)];
    const at = (address: string) => v.verify([asCredential(creds.otherHolder)], { address, now: NOW, digests }).then(only);
    expect(await at(OTHER)).toEqual({ ok: true });
    expectFail(await at(ADDRESS), 'not-valid', /belongs to another holder/);
    expect(await at(OTHER)).toEqual({ ok: true });
    // The issuer is checked on every call (it depends on the scenario), after the remembered structure check.
    expectFail(await v.verify([asCredential(creds.otherHolder)], { address: OTHER, now: NOW, digests, trustedIssuers: [b.did] }).then(only),
      'not-valid', /not trusted by this scenario/);
  });

  it('refuses a non-EVM request address against an EVM holder', async () => {
    expectFail(await one(shared(), creds.valid, 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb'), 'not-valid', /another holder/);
  });
});

describe('revocation', () => {
  it('answers ok through the status server, then not-valid once the issuer revoked it (after the cache time)', async () => {
    const v = verifier();
    const before = status.hits.length;
    // With the digest, as execute calls it: a credential seen before is decided from the caches without waiting.
    const digests = [contentDigest(creds.revocable)];
    const check = () => v.verify([asCredential(creds.revocable)], { address: ADDRESS, now: NOW, digests }).then(only);
    expect(await check()).toEqual({ ok: true });
    expect(status.hits.length).toBe(before + 2); // the credential's status and the issuer key's
    await a.revoke(1002);
    expect(await check()).toEqual({ ok: true }); // "not revoked" is reused for revocationCacheMs
    expect(await one(v, creds.revocable)).toEqual({ ok: true }); // also without the digest
    expect(status.hits.length).toBe(before + 2);
    clockNow += 30_001;
    expectFail(await check(), 'not-valid', /^revoked by its issuer \(SparseMerkleTreeProof\)$/);
    expect(status.hits.length).toBe(before + 4); // both asked again after the cache time
    expectFail(await check(), 'not-valid', /^revoked by its issuer \(SparseMerkleTreeProof\)$/); // "revoked" is kept
    expect(await one(v, creds.valid)).toEqual({ ok: true }); // another nonce of the same issuer is untouched
  });

  it('checks Iden3commRevocationStatusV1.0 through the issuer agent', async () => {
    const v = verifier({ revocationCacheMs: 0 });
    expect(await one(v, creds.agent)).toEqual({ ok: true });
    expect(status.hits).toContain('POST /a/agent');
    await a.revoke(1003);
    expectFail(await one(v, creds.agent), 'not-valid', /revoked by its issuer \(Iden3commRevocationStatusV1.0\)/);
  });

  it('answers error when the status server is unreachable or silent', async () => {
    // The issuer's status server is down: every request to it goes to a port where nothing listens ...
    const closed = await closedPortUrl();
    const down = verifier({}, { fetch: (url, init) => fetch(url.replace(status.url, closed), init) });
    expectFail(await one(down, creds.valid), 'error', /^credentialStatus \(SparseMerkleTreeProof at http:\/\/127\.0\.0\.1:\d+\/a\/status\/1001\) cannot be resolved: connection refused$/);
    // ... or to a server that never answers.
    const silent = verifier({ timeoutMs: 300 }, { fetch: (url, init) => fetch(url.replace(`${status.url}/a/`, `${status.url}/hang/`), init) });
    expectFail(await one(silent, creds.valid), 'error', /cannot be resolved: no answer within 300 ms$/);
  });

  it('answers error for a status type it cannot check', async () => {
    expectFail(await one(verifier(), creds.onchain), 'error', /Iden3OnchainSparseMerkleTreeProof2023" is not supported, so revocation cannot be checked/);
  });

  it('uses a status resolver handed in for a type', async () => {
    const v = verifier({}, { statusResolvers: { Iden3OnchainSparseMerkleTreeProof2023: async () => true } });
    expectFail(await one(v, creds.onchain), 'not-valid', /revoked by its issuer \(Iden3OnchainSparseMerkleTreeProof2023\)/);
  });

  it('refuses an answer that is not a valid proof for the nonce', async () => {
    let answerFor = 0;
    const liar = await startServer(async () => ({ json: await a.status(answerFor) }));
    try {
      const v = verifier({ revocationCacheMs: 0 }, {
        fetch: (url, init) => fetch(url.replace(status.url, liar.url), init),
      });
      // The liar answers the proof of nonce 0 (the issuer key's) for every nonce: wrong for the credential's 1001.
      expectFail(await one(v, creds.valid), 'error', /^credentialStatus \(SparseMerkleTreeProof at .*\/a\/status\/1001\) cannot be resolved: the answer's Merkle proof does not verify against its revocation tree root for this nonce$/);
      // Now the proof of 1001 for every nonce: wrong for the issuer key's status, asked of the same signed source.
      answerFor = 1001;
      expectFail(await one(v, creds.valid), 'error', /^the issuer key's status \(asked of the credential's credentialStatus\) \(SparseMerkleTreeProof at .*\/a\/status\/0\) cannot be resolved: the answer's Merkle proof does not verify/);
    } finally {
      await liar.close();
    }
  });
});

describe('issuer states', () => {
  it('checks a non-genesis issuer state with the DID resolver: published, not published, resolver down', async () => {
    const at = await b.advanceState();
    const c = clone(creds.fromB);
    c.proof[0].issuerData.state = at.state;
    c.proof[0].issuerData.mtp = at.mtp;
    expectFail(await one(verifier(), c), 'not-valid', /neither the issuer's genesis state nor a published one/);
    resolver.down = true;
    try {
      expectFail(await one(verifier(), c), 'error', /cannot be checked: the DID resolver did not answer: HTTP 503/);
    } finally {
      resolver.down = false;
    }
    resolver.publish(b.did, at.state.value);
    expect(await one(verifier(), c)).toEqual({ ok: true });
  });

  it('refuses a credential once its issuer revoked the signing key', async () => {
    const v = verifier({ revocationCacheMs: 0 });
    expect(await one(v, creds.fromB)).toEqual({ ok: true });
    await b.revoke(0); // the auth claim of a new identity has revocation nonce 0
    expectFail(await one(v, creds.fromB), 'not-valid', /its issuer has revoked the key that signed it/);
  });

  it("keeps a revoked signing key revoked wherever the proof's unsigned key status points, and asks nothing there", async () => {
    if (!((await b.status(0)).mtp as { existence: boolean }).existence) await b.revoke(0);
    // A server of the holder's choosing that answers a self-consistent "not revoked" for every nonce (issuer A's tree,
    // where nonce 0 is not revoked), however it is asked: GET by path, POST as an agent.
    const liar = await startServer(async (req) => {
      const nonce = nonceFromStatusPath(new URL(req.url ?? '/', 'http://x').pathname) ?? 0n;
      const doc = await a.status(nonce);
      return { json: req.method === 'POST' ? { type: 'https://iden3-communication.io/revocation/1.0/status', body: doc } : doc };
    });
    try {
      const v = verifier({ revocationCacheMs: 0 });
      const redirects = [
        { type: 'SparseMerkleTreeProof', id: `${liar.url}/status/0`, revocationNonce: 0 },
        { type: 'Iden3commRevocationStatusV1.0', id: `${liar.url}/agent`, revocationNonce: 0 },
        { type: 'Iden3ReverseSparseMerkleTreeProof', id: `${liar.url}/rhs`, revocationNonce: 0, statusIssuer: { type: 'SparseMerkleTreeProof', id: `${liar.url}/status/0`, revocationNonce: 0 } },
      ];
      for (const redirect of redirects) {
        const c = clone(creds.fromB);
        c.proof[0].issuerData.credentialStatus = redirect;
        expectFail(await one(v, c), 'not-valid', /^its issuer has revoked the key that signed it$/);
      }
      expect(liar.hits).toEqual([]);
    } finally {
      await liar.close();
    }
  });
});

describe('with the engine', () => {
  it('turns verdicts into rule results: valid, not-valid with the reason, error when undecided', async () => {
    const plan = compilePlan('scn', 1, {
      name: 'Adult KYC',
      type: 'ChallengeQuery',
      smartContractDeployments: [],
      queryConfigurations: [{ id: 'age', query: { type: 'IDInformation', attribute: 'personalData.age', operator: '$gte', value: 18 } }],
    }, TYPES);
    let lastTrace: RuleTrace | undefined;
    const run = async (credentials: Json[], v = shared()) => {
      const list = credentials.map(asCredential);
      const trust = await v.verify(list, { address: ADDRESS, now: NOW, relevantTypes: plan.credentialSlots });
      const dry = traceBoth(plan, { address: ADDRESS, credentials: list, now: NOW, executionId: '00000000-0000-4000-8000-000000000000', trust });
      lastTrace = only(dry.trace);
      return only(dry.results).result;
    };
    expect((await run([creds.valid])).status).toBe('valid');

    const forged = clone(creds.valid);
    forged.credentialSubject.personalData.age = 45;
    const r = await run([forged]);
    expect(r.status).toBe('not-valid');
    expect(r.result.reasons[1]).toMatch(/^credential #1 \(urn:uuid:[0-9a-f-]+\): its content does not match its BJJSignature2021 proof/);
    expect(JSON.stringify(r.result.reasons)).not.toContain('45');
    expect(lastTrace?.decidingCheck).toEqual({ check: 'proof', credential: 0 });

    const closed = await closedPortUrl();
    const down = verifier({}, { fetch: (url, init) => fetch(url.replace(status.url, closed), init) });
    expect((await run([creds.valid], down)).status).toBe('error');
    expect(lastTrace?.decidingCheck).toEqual({ check: 'revocation', credential: 0 });
    expect((await run([creds.valid], verifier({ trustedIssuers: [b.did] }))).status).toBe('not-valid');
    expect(lastTrace?.decidingCheck).toEqual({ check: 'issuer', credential: 0 });
    expect((await run([creds.otherHolder])).status).toBe('not-valid');
    expect(lastTrace?.decidingCheck).toEqual({ check: 'holder', credential: 0 });
    expect((await run([creds.otherHolder, creds.valid], down)).status).toBe('error');
    expect((await run([forged, creds.valid])).status).toBe('valid');
  });
});
