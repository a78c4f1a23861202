/**
 * Iden3ReverseSparseMerkleTreeProof: the issuer publishes its state and revocation tree nodes to a reverse hash
 * service (a real local one here), the DID resolver says which state is the latest, and the verifier walks the
 * revocation tree from that state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCredentialVerifier, type TrustOptions, type TrustVerdict } from '../../src/trust/index.js';
import { createDemoIssuer, nonceFromStatusPath, type DemoIssuer, type ReverseHashNode } from '../../src/trust/demo-issuer.js';
import type { Credential } from '../../src/schemas/credential.js';
import { startServer, type TestServer } from './servers.js';
import { startDidResolver, type TestDidResolver } from './did-resolver-server.js';
import { only } from '../elements.js';
import { trustOptions } from './options.js';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const NONCE = 3001;

let status: TestServer;
let rhs: TestServer;
/** Says which state of the issuer is the latest published one (a resolver negotiating as driver-did-iden3). */
let resolver: TestDidResolver;
let issuer: DemoIssuer;
let credential: Credential;
const nodes = new Map<string, ReverseHashNode>();
let tamper = false;

const verifier = (over: Partial<TrustOptions> = {}) =>
  createCredentialVerifier(trustOptions({
    mode: 'strict',
    trustedIssuers: '*',
    resolverUrl: resolver.base,
    timeoutMs: 5000,
    revocationCacheMs: 0,
    ...over,
  }));

async function verify(over: Partial<TrustOptions> = {}): Promise<TrustVerdict> {
  return only(await verifier(over).verify([credential], { address: ADDRESS, now: Date.now() }));
}

async function publish(revoked?: number[]) {
  for (const n of await issuer.reverseHashNodes(revoked)) nodes.set(n.hash, n);
  resolver.publish(issuer.did, await issuer.currentState());
}

beforeAll(async () => {
  status = await startServer(async (req) => {
    const nonce = nonceFromStatusPath(new URL(req.url ?? '/', 'http://x').pathname);
    return nonce === undefined ? { status: 404 } : { json: await issuer.status(nonce) };
  });
  rhs = await startServer(async (req) => {
    const hash = (req.url ?? '').split('/node/')[1];
    const node = hash === undefined ? undefined : nodes.get(hash);
    if (!node) return { status: 404, json: { status: 'not found' } };
    return { json: { node: tamper ? { ...node, children: [...node.children].reverse() } : node, status: 'OK' } };
  });
  resolver = await startDidResolver();
  issuer = await createDemoIssuer({ seed: 'trust-tests-issuer-RHS-000000003', statusUrl: `${status.url}/status` });
  credential = (await issuer.issue({
    subjectId: `did:pkh:eip155:1:${ADDRESS}`,
    claims: { reviewAnswer: 'GREEN', personalData: { age: 40 } },
    nonce: NONCE,
    revocation: { type: 'Iden3ReverseSparseMerkleTreeProof', id: rhs.url },
  })) as unknown as Credential;
}, 30_000);

afterAll(async () => {
  await Promise.all([status?.close(), rhs?.close(), resolver?.close()]);
});

describe('Iden3ReverseSparseMerkleTreeProof', () => {
  it('names the issuance state in the status URL', () => {
    expect(credential.credentialStatus as Record<string, unknown>).toMatchObject({ type: 'Iden3ReverseSparseMerkleTreeProof', revocationNonce: NONCE });
    expect((credential.credentialStatus as { id: string }).id).toMatch(new RegExp(`^${rhs.url}/node\\?state=[0-9a-f]{64}$`));
  });

  it('walks from the genesis state named in the URL while the resolver knows no published state', async () => {
    await publish();
    resolver.reset();
    expect(await verify()).toEqual({ ok: true });
    expect(rhs.hits.some((h) => h.startsWith('GET /node/'))).toBe(true);
  });

  it('walks from the latest published state, and sees a revocation published there', async () => {
    await publish();
    expect(await verify()).toEqual({ ok: true });
    await issuer.revoke(NONCE);
    await publish([NONCE]);
    expect(await verify()).toEqual({ ok: false, status: 'not-valid', check: 'revocation', reason: 'revoked by its issuer (Iden3ReverseSparseMerkleTreeProof)' });
  });

  it('answers error without a DID resolver, when the service is down, or when a node does not hash to its key', async () => {
    expect(await verify({ resolverUrl: undefined })).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/no DID resolver is configured/) });
    tamper = true;
    try {
      expect(await verify()).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/does not hash to the requested key/) });
    } finally {
      tamper = false;
    }
    const saved = new Map(nodes);
    nodes.clear();
    try {
      expect(await verify()).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/cannot be resolved: HTTP 404/) });
    } finally {
      for (const [k, v] of saved) nodes.set(k, v);
    }
  });
});
