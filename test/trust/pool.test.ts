/**
 * The cold verification path (src/trust/pool.ts and its use in src/trust/verifier.ts): the same verdicts in worker
 * threads as on the calling thread, admission per tenant and in all, fair turns between tenants, the size limits before
 * any hashing, refusals that never evict verified proofs, and undecidable proofs remembered for a short time. Real
 * credentials from the demo issuer (js-sdk), a real local DID resolver; the threads run dist/trust/cold-worker.js
 * (built by test/build.global.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateKey, Hex, poseidon } from '@iden3/js-crypto';
import { createCredentialVerifier, ColdWorkRefused, CredentialTooLarge, type TrustOptions } from '../../src/trust/index.js';
import { ColdPool } from '../../src/trust/pool.js';
import type { ColdResult, ColdTask } from '../../src/trust/proof.js';
import { createDemoIssuer, type DemoIssuer } from '../../src/trust/demo-issuer.js';
import type { Credential } from '../../src/schemas/credential.js';
import { startServer, type TestServer } from './servers.js';
import { trustOptions } from './options.js';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const HOLDER = `did:pkh:eip155:1:${ADDRESS}`;
const NOW = Date.now();
type Json = Record<string, any>;

let issuer: DemoIssuer;
let resolver: TestServer;
let resolverRequests = 0;
let genuine: [Json, Json, Json, Json];

const asCredentials = (xs: Json[]) => xs as unknown as Credential[];
const clone = <T>(x: T): T => structuredClone(x);

/** A copy of a genuine credential with one subject value and the id changed: new content, a signature that no longer matches. */
function forged(from: Json, n: number): Json {
  const c = clone(from);
  c.id = `${from.id}-forged-${n}`;
  c.credentialSubject.personalData.age = 100 + n;
  return c;
}

/** A credential whose signature was made with another key (over another message), its proof still naming the trusted issuer. */
function otherKeySigned(from: Json): Json {
  const c = clone(from);
  const key = new PrivateKey(Hex.decodeString('11'.repeat(32)));
  const proof = c.proof[0];
  const sig = key.signPoseidon(poseidon.hash([1n, 2n]));
  proof.signature = Hex.encodeString(sig.compress());
  return c;
}

function options(over: Partial<TrustOptions> = {}): TrustOptions {
  return trustOptions({
    mode: 'strict',
    trustedIssuers: [issuer.did],
    resolverUrl: `${resolver.url}/1.0/identifiers`,
    timeoutMs: 5000,
    revocationCacheMs: 30_000,
    ...over,
  });
}

const deps = () => ({ statusResolvers: { SparseMerkleTreeProof: async () => false } });
const ctx = (tenant = 'tenant-a') => ({ address: ADDRESS, now: NOW, tenant });

beforeAll(async () => {
  resolver = await startServer(async () => {
    resolverRequests++;
    return { status: 503, json: {} };
  });
  issuer = await createDemoIssuer({ seed: 'cold-path-tests-issuer-000000001', statusUrl: 'http://127.0.0.1:9/status' });
  const claims = (n: number) => ({ reviewAnswer: 'GREEN', personalData: { firstName: `Ada${n}`, age: 30 + n, citizenship: 'FRA' } });
  genuine = await Promise.all([0, 1, 2, 3].map((n) => issuer.issue({
    subjectId: HOLDER,
    claims: claims(n),
    issuanceDate: new Date(NOW - 86_400_000),
    expirationDate: new Date(NOW + 365 * 86_400_000),
  }))) as typeof genuine;
}, 60_000);

afterAll(async () => {
  await resolver?.close();
});

describe('cold checks in worker threads', () => {
  it('give the same verdicts as on the calling thread: genuine, forged, signed with another key, another issuer in the proof', async () => {
    const inline = createCredentialVerifier(options({ threads: 0 }), deps());
    const threads = createCredentialVerifier(options({ threads: 2 }), deps());
    try {
      const wrongIssuer = clone(genuine[1]);
      wrongIssuer.proof[0].issuerData.id = 'did:iden3:polygon:amoy:xBfjzwxBhAASWc5ov1mvvzXWXANGY1rSeK5dabSxp';
      const set = [genuine[0], forged(genuine[1], 1), otherKeySigned(genuine[2]), wrongIssuer, genuine[3]];
      const a = await inline.verify(asCredentials(set), ctx());
      const b = await threads.verify(asCredentials(set), ctx());
      expect(b).toEqual(a);
      expect(a[0]).toEqual({ ok: true });
      expect(a[1]).toMatchObject({ ok: false, status: 'not-valid', reason: expect.stringMatching(/does not match/) });
      expect(a[2]).toMatchObject({ ok: false, status: 'not-valid', reason: expect.stringMatching(/signature does not verify/) });
      expect(a[3]).toMatchObject({ ok: false, status: 'not-valid' });
      expect(a[4]).toEqual({ ok: true });
      expect(threads.stats().coldChecks).toBe(5);
      expect(threads.stats().coldReserved).toBe(0);
    } finally {
      await Promise.all([inline.close(), threads.close()]);
    }
  });
});

describe('admission', () => {
  it('refuses a request over its tenant budget with 429 and Retry-After, and starts none of its checks', async () => {
    const v = createCredentialVerifier(options({ threads: 0, coldPerTenant: 2 }), deps());
    const err = await v.verify(asCredentials([forged(genuine[0], 10), forged(genuine[0], 11), forged(genuine[0], 12)]), ctx()).catch((e) => e);
    expect(err).toBeInstanceOf(ColdWorkRefused);
    expect(err).toMatchObject({ statusCode: 429, code: 'SCS_VERIFICATION_BUDGET', scope: 'tenant' });
    expect(err.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(v.stats()).toMatchObject({ coldChecks: 0, coldReserved: 0 });
    // Within the budget it goes through, and the slots come back.
    await v.verify(asCredentials([forged(genuine[0], 10), forged(genuine[0], 11)]), ctx());
    expect(v.stats()).toMatchObject({ coldChecks: 2, coldReserved: 0 });
  });

  it("refuses with 503 when the service's queue is full, and a known credential never needs a slot", async () => {
    const v = createCredentialVerifier(options({ threads: 0, coldQueue: 1 }), deps());
    expect(await v.verify(asCredentials([genuine[0]]), ctx())).toEqual([{ ok: true }]);
    const err = await v.verify(asCredentials([forged(genuine[0], 20), forged(genuine[0], 21)]), ctx('tenant-b')).catch((e) => e);
    expect(err).toMatchObject({ statusCode: 503, code: 'SCS_VERIFICATION_QUEUE_FULL', scope: 'service' });
    // Warm: already verified, no admission.
    expect(await v.verify(asCredentials([genuine[0], genuine[0]]), ctx('tenant-b'))).toEqual([{ ok: true }, { ok: true }]);
  });

  it('say a tenant is at its budget, before its request is read, while every slot is taken or after a refusal while busy', async () => {
    const pool = new ColdPool({ threads: 0, maxQueued: 100, perTenant: 4, inline: async () => ({ kind: 'done', proof: { verdict: { ok: true }, cacheable: true } }) });
    expect(pool.atBudget('a')).toBeUndefined();
    const all = pool.reserve('a', 4);
    expect(pool.atBudget('a')).toMatchObject({ statusCode: 429, code: 'SCS_VERIFICATION_BUDGET' });
    expect(pool.atBudget('b')).toBeUndefined();
    all.release();
    expect(pool.atBudget('a')).toBeUndefined();
    // A request too large for the room left: refused, and the tenant is at its budget until its checks end.
    const some = pool.reserve('a', 1);
    expect(() => pool.reserve('a', 4)).toThrow(ColdWorkRefused);
    expect(pool.atBudget('a')?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    some.release();
    expect(pool.atBudget('a')).toBeUndefined();
    // One request over the budget alone, with nothing running, is its own refusal only.
    expect(() => pool.reserve('a', 5)).toThrow(ColdWorkRefused);
    expect(pool.atBudget('a')).toBeUndefined();
    await pool.close();
  });

  it('takes tenants in turn: one tenant with many waiting delays another by one turn, not by its whole queue', async () => {
    const order: string[] = [];
    const pool = new ColdPool({
      threads: 0,
      maxQueued: 100,
      perTenant: 50,
      inline: async (task: ColdTask): Promise<ColdResult> => {
        order.push(String(task.credential.id));
        await new Promise((r) => setTimeout(r, 1));
        return { kind: 'done', proof: { verdict: { ok: true }, cacheable: true } };
      },
    });
    const a = pool.reserve('a', 10);
    const b = pool.reserve('b', 1);
    const runs = Array.from({ length: 10 }, (_, i) => a.run({ credential: { id: `a${i}` } }));
    runs.push(b.run({ credential: { id: 'b0' } }));
    await Promise.all(runs);
    // a0 was running when b0 came, and a's turn was next: b0 is third, not eleventh.
    expect(order.slice(0, 3)).toEqual(['a0', 'a1', 'b0']);
    expect(pool.load.reserved).toBe(11);
    a.release();
    a.release(); // idempotent
    b.release();
    expect(pool.load.reserved).toBe(0);
    await pool.close();
  });
});

describe('size limits before any hashing', () => {
  it('names the first credential over the leaves or bytes limit, and checks nothing', async () => {
    const v = createCredentialVerifier(options({ threads: 0, maxCredentialLeaves: 64, maxCredentialBytes: 8192 }), deps());
    const wide = clone(genuine[1]);
    wide.credentialSubject.personalData.list = Array.from({ length: 4000 }, (_, i) => i);
    const err = await v.verify(asCredentials([genuine[0], wide]), ctx()).catch((e) => e);
    expect(err).toBeInstanceOf(CredentialTooLarge);
    expect(err).toMatchObject({ index: 1, size: { over: 'leaves' } });
    expect(err.message).toMatch(/at most 64 values .*MAX_CREDENTIAL_LEAVES/);
    const long = clone(genuine[2]);
    long.credentialSubject.personalData.firstName = 'x'.repeat(9000);
    const err2 = await v.verify(asCredentials([long]), ctx()).catch((e) => e);
    expect(err2).toMatchObject({ index: 0, size: { over: 'bytes' } });
    expect(err2.message).toMatch(/at most 8192 bytes .*MAX_CREDENTIAL_BYTES/);
    expect(v.stats().coldChecks).toBe(0);
    // A credential no rule reads is not verified, so not measured either.
    expect(await v.verify(asCredentials([wide]), { ...ctx(), relevantTypes: new Set(['Other']) })).toMatchObject([{ ok: false }]);
  });
});

describe('caches', () => {
  it('keep verified proofs when refusals flood in', async () => {
    const v = createCredentialVerifier(options({ threads: 0, cacheSize: 2 }), deps());
    expect(await v.verify(asCredentials([genuine[0], genuine[1]]), ctx())).toEqual([{ ok: true }, { ok: true }]);
    await v.verify(asCredentials([0, 1, 2, 3, 4].map((n) => forged(genuine[0], 30 + n))), ctx());
    expect(v.stats()).toMatchObject({ coldChecks: 7, verified: 2, refused: 2 });
    expect(await v.verify(asCredentials([genuine[0], genuine[1]]), ctx())).toEqual([{ ok: true }, { ok: true }]);
    expect(v.stats().coldChecks).toBe(7);
  });

  it('remember an undecidable issuer state as a refusal for TRUST_REFUSAL_CACHE_MS, then ask again', async () => {
    let now = 1_000_000;
    const v = createCredentialVerifier(options({ threads: 0, refusalCacheMs: 30_000 }), { ...deps(), clock: () => now });
    const at = await issuer.advanceState();
    const c = clone(genuine[3]);
    c.proof[0].issuerData.state = at.state;
    c.proof[0].issuerData.mtp = at.mtp;
    const before = resolverRequests;
    const [first] = await v.verify(asCredentials([c]), ctx());
    expect(first).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/issuer state in its proof cannot be checked/) });
    expect(resolverRequests).toBe(before + 1);
    const [again] = await v.verify(asCredentials([c]), ctx());
    expect(again).toEqual(first);
    expect(resolverRequests).toBe(before + 1);
    expect(v.stats().coldChecks).toBe(1);
    now += 30_001;
    await v.verify(asCredentials([c]), ctx());
    expect(resolverRequests).toBe(before + 2);
    expect(v.stats().coldChecks).toBe(2);
  });
});
