/**
 * Real credentials issued by iden3 issuer nodes (js-sdk and go-schema-processor test vectors, Polygon ID's dev issuer
 * node: realworld/ of the shared fixtures, test/shared-fixtures.ts) that carry an Iden3SparseMerkleTreeProof
 * at a state published on Polygon Mumbai. Offline: the local DID resolver answers those states as published (as the
 * real one did), and their revocation status, whose servers are gone, is answered as at that very state where its
 * revocation tree was empty (a non-revocation proof against the root the proof names), else not at all.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCredentialVerifier, type TrustVerdict } from '../../src/trust/index.js';
import { StatusFailure, verifyStatusAnswer, type StatusResolverFn } from '../../src/trust/revocation.js';
import type { Credential } from '../../src/schemas/credential.js';
import { only } from '../elements.js';
import { startPeers, type Json, type Peers } from './mtp-peers.js';
import { trustOptions } from './options.js';
import { haveSharedFixtures, sharedFixture } from '../shared-fixtures.js';

const CREDENTIALS = [
  'js-sdk-kycage-bjj-mtp-rhs', 'js-sdk-kycage-bjj-genesis-rhs', 'js-sdk-kycage-bjj-mtp-agent',
  'go-schema-processor-kycage-bjj-issuer-status', 'polygonid-dev-testnewtype-bjj-mtp', 'privado-testing-operators-bjj',
].map((name) => `realworld/credentials/${name}.json`);
const present = haveSharedFixtures(...CREDENTIALS, 'realworld/jsonld-documents.json');
const MTP = 'Iden3SparseMerkleTreeProof';
const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const ZERO = '0'.repeat(64);

const read = (f: string): Json => JSON.parse(fs.readFileSync(f, 'utf8')) as Json;
const proofs = (c: Json): Json[] => (Array.isArray(c.proof) ? c.proof : [c.proof]);
const mtpOf = (c: Json): Json | undefined => proofs(c).find((p) => p.type === MTP);
const withMtp = present
  ? CREDENTIALS.map((f) => ({ file: f.slice('realworld/credentials/'.length), c: read(sharedFixture(f)) })).filter((x) => mtpOf(x.c) !== undefined)
  : [];

let peers: Peers;
let documents: Record<string, unknown>;

/** Answers a status as at the MTP's own state when its revocation tree is empty there; otherwise cannot. */
const asAtState = (c: Json): StatusResolverFn => async (request) => {
  const st = mtpOf(c)!.issuerData.state as Json;
  if (st.revocationTreeRoot !== ZERO) throw new StatusFailure('the status server of this test vector is gone');
  return verifyStatusAnswer({ issuer: { state: st.value, claimsTreeRoot: st.claimsTreeRoot, revocationTreeRoot: ZERO, rootOfRoots: st.rootOfRoots }, mtp: { existence: false, siblings: [] } }, request.nonce);
};

async function verdict(c: Json, statusOf: Json): Promise<TrustVerdict> {
  const resolver = asAtState(statusOf);
  const v = createCredentialVerifier(
    trustOptions({ mode: 'strict', trustedIssuers: '*', resolverUrl: peers.resolverUrl, timeoutMs: 5000, revocationCacheMs: 0, documents }),
    {
      statusResolvers: { SparseMerkleTreeProof: resolver, 'Iden3commRevocationStatusV1.0': resolver, Iden3ReverseSparseMerkleTreeProof: resolver },
      // The resolver only: their status URLs (localhost:8001, staging hosts) are not asked.
      fetch: (input, init) => (String(input).startsWith(peers.resolverUrl) ? fetch(input, init) : Promise.reject(new Error('offline'))),
    },
  );
  try {
    return only(await v.verify([c as unknown as Credential], { address: ADDRESS, now: Date.parse('2026-06-01T00:00:00Z') }));
  } finally {
    await v.close();
  }
}

describe.skipIf(!present)('real Iden3SparseMerkleTreeProof credentials', () => {
  beforeAll(async () => {
    documents = read(sharedFixture('realworld/jsonld-documents.json'));
    const published = new Set(withMtp.map(({ c }) => `${c.issuer} ${mtpOf(c)!.issuerData.state.value}`));
    peers = await startPeers(['realworld-unused-issuer-A-000001', 'realworld-unused-issuer-B-000002'], documents, (did, state) => published.has(`${did} ${state}`));
  }, 60_000);
  afterAll(async () => {
    await peers?.close();
  });

  it('there are some (js-sdk, go-schema-processor and Polygon ID dev issuer node vectors)', () => {
    expect(withMtp.length).toBeGreaterThanOrEqual(3);
  });

  for (const { file, c } of withMtp) {
    it(`${file}: js-sdk and the service accept its MTP; a changed copy is refused by both`, async () => {
      expect(await peers.jsSdk(c, MTP)).toBe(true);
      const mtpOnly: Json = { ...structuredClone(c), proof: [structuredClone(mtpOf(c))] };
      const v = await verdict(mtpOnly, c);
      if (mtpOf(c)!.issuerData.state.revocationTreeRoot === ZERO) {
        expect(v).toEqual({ ok: true });
      } else {
        // Its proof verified: the only thing left undecided is its revocation, whose server is gone.
        expect(v).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/^credentialStatus .*cannot be resolved/) });
      }
      const changed = structuredClone(mtpOnly);
      const subject = changed.credentialSubject as Json;
      const key = Object.keys(subject).find((k) => k !== 'id' && k !== 'type') as string;
      subject[key] = typeof subject[key] === 'number' ? subject[key] + 1 : `${String(subject[key])}x`;
      expect(await peers.jsSdk(changed, MTP)).not.toBe(true);
      expect(await verdict(changed, c)).toMatchObject({ ok: false, status: 'not-valid' });
    });
  }

  it('a BJJ + MTP credential whose BJJ key state is neither genesis nor published here is valid by its MTP', async () => {
    const dev = withMtp.find(({ file }) => file.startsWith('polygonid-dev'));
    expect(dev).toBeDefined();
    const v = await verdict(dev!.c, dev!.c);
    // Its status (revocation tree not empty at that state) is undecided: the proof part passed through the MTP.
    expect(v).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/^credentialStatus /) });
  });
});
