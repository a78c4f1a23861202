/** The demo path: the deterministic demo issuer's credentials verify end to end, with or without a status server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCredentialVerifier } from '../../src/trust/index.js';
import {
  DEMO_REVOKED_NONCE, createDemoIssuer, demoStatePublication, demoStatusResolver, nonceFromStatusPath, revokeDemoNonce, type DemoIssuer,
} from '../../src/trust/demo-issuer.js';
import type { Credential } from '../../src/schemas/credential.js';
import { closedPortUrl, startServer, type TestServer } from './servers.js';
import { trustOptions } from './options.js';
import { DEMO_ISSUER_DID } from '../../src/trust/demo-did.js';

/** Pinned: the demo script prints this DID; changing the seed or the issuer setup changes it. */
const DEMO_DID = 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa';
const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

let server: TestServer;
let demo: DemoIssuer;
let credential: Credential;

beforeAll(async () => {
  server = await startServer(async (req) => {
    const nonce = nonceFromStatusPath(new URL(req.url ?? '/', 'http://x').pathname);
    return nonce === undefined ? { status: 404 } : { json: await demo.status(nonce) };
  });
  demo = await createDemoIssuer({ statusUrl: `${server.url}/demo-issuer/status` });
  credential = (await demo.issue({
    subjectId: `did:pkh:eip155:1:${ADDRESS}`,
    claims: { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA' } },
  })) as unknown as Credential;
}, 30_000);

afterAll(async () => {
  await server?.close();
});

describe('demo issuer', () => {
  it('has the same DID on every machine and run', () => {
    expect(demo.did).toBe(DEMO_DID);
    expect(credential.issuer).toBe(DEMO_DID);
    expect(DEMO_ISSUER_DID, 'src/trust/demo-did.ts').toBe(DEMO_DID);
  });

  it('issues credentials that verify against its status server', async () => {
    const v = createCredentialVerifier(trustOptions({ mode: 'strict', trustedIssuers: [DEMO_DID], timeoutMs: 5000, revocationCacheMs: 0 }));
    expect(await v.verify([credential], { address: ADDRESS, now: Date.now() })).toEqual([{ ok: true }]);
    expect(server.hits.length).toBe(2);
  });

  it('verifies with no status server at all through demoStatusResolver (the DEMO_ISSUER=1 proposal)', async () => {
    const inProcess = await createDemoIssuer({ statusUrl: await closedPortUrl() });
    const v = createCredentialVerifier(
      trustOptions({ mode: 'strict', trustedIssuers: [DEMO_DID], timeoutMs: 5000, revocationCacheMs: 0 }),
      { statusResolvers: { SparseMerkleTreeProof: demoStatusResolver(inProcess) }, fetch: () => Promise.reject(new Error('no network')) },
    );
    expect(await v.verify([credential], { address: ADDRESS, now: Date.now() })).toEqual([{ ok: true }]);
  });

  it('answers a credential of DEMO_REVOKED_NONCE (--revoked) revoked from another instance, and every other one not', async () => {
    const revoked = (await demo.issue({
      subjectId: `did:pkh:eip155:1:${ADDRESS}`, claims: { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA' } }, nonce: DEMO_REVOKED_NONCE,
    })) as unknown as Credential;
    // The answering instance, as a service with DEMO_ISSUER=1 makes it: nothing shared with the issuing one.
    const answering = await revokeDemoNonce(await createDemoIssuer({ statusUrl: await closedPortUrl() }));
    const v = createCredentialVerifier(
      trustOptions({ mode: 'strict', trustedIssuers: [DEMO_DID], timeoutMs: 5000, revocationCacheMs: 0 }),
      {
        statusResolvers: { SparseMerkleTreeProof: demoStatusResolver(answering) },
        statePublication: (resolver) => demoStatePublication(answering, resolver),
        fetch: () => Promise.reject(new Error('no network')),
      },
    );
    const [r, ok] = await v.verify([revoked, credential], { address: ADDRESS, now: Date.now() });
    expect(r).toMatchObject({ ok: false, status: 'not-valid', reason: 'revoked by its issuer (SparseMerkleTreeProof)' });
    expect(ok).toEqual({ ok: true });
  });

  it('issues MTP-only and BJJ + MTP credentials (--proof mtp|both) that verify in process, as with DEMO_ISSUER=1', async () => {
    const subjectId = `did:pkh:eip155:1:${ADDRESS}`;
    const claims = { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA' } };
    const mtp = await demo.issue({ subjectId, claims, nonce: 71, proof: 'mtp' });
    const both = await demo.issue({ subjectId, claims, nonce: 72, proof: 'both' });
    expect((mtp.proof as { type: string }[]).map((p) => p.type)).toEqual(['Iden3SparseMerkleTreeProof']);
    expect((both.proof as { type: string }[]).map((p) => p.type)).toEqual(['BJJSignature2021', 'Iden3SparseMerkleTreeProof']);
    // Another instance, as the service's: it never saw these states, and answers its own as published.
    const inProcess = await createDemoIssuer({ statusUrl: await closedPortUrl() });
    const noResolver = { isPublished: () => Promise.reject(new Error('no resolver')) };
    const v = createCredentialVerifier(
      trustOptions({ mode: 'strict', trustedIssuers: [DEMO_DID], timeoutMs: 5000, revocationCacheMs: 0 }),
      {
        statusResolvers: { SparseMerkleTreeProof: demoStatusResolver(inProcess) },
        statePublication: () => demoStatePublication(inProcess, noResolver),
        fetch: () => Promise.reject(new Error('no network')),
      },
    );
    const verdicts = await v.verify([mtp, both, { ...both, proof: [(both.proof as unknown[])[1]] }] as unknown as Credential[], { address: ADDRESS, now: Date.now() });
    expect(verdicts).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
  });
});
