/**
 * Issuers on every network @iden3/js-iden3-core 1.8 knows, with both DID methods (iden3, polygonid): the service
 * parses their DIDs with the library (no list of networks of its own), so a credential of an issuer on any of them
 * verifies like one on Polygon Amoy: a genesis issuer state, a published one (DID resolver), holder binding of an
 * iden3 holder DID on that network, and the on-chain status resolver's chain lookup (js-sdk names the network's chain
 * in the status id; the service reads the chain configured for it). Offline: 127.0.0.1 only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCredentialVerifier, type TrustVerdict } from '../../src/trust/index.js';
import { loadConfig } from '../../src/config.js';
import { createDemoIssuer, demoStatusResolver, type DemoIssuer } from '../../src/trust/demo-issuer.js';
import { onchainStatusResolver, parseOnchainStatusId } from '../../src/trust/onchain-status.js';
import { parseChainRpcUrls } from '../../src/chain/config.js';
import { isCanonicalIden3Did } from '../../src/zkp/did.js';
import type { Credential } from '../../src/schemas/credential.js';
import { startDidResolver, type TestDidResolver } from './did-resolver-server.js';
import { chainIdOfDid, iden3DidFromEthAddress } from './iden3-test.js';
import { closedPortUrl } from './servers.js';
import { only } from '../elements.js';
import { trustOptions } from './options.js';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const ONCHAIN = 'Iden3OnchainSparseMerkleTreeProof2023';
const STATUS_CONTRACT = '0x49b84b9Dd137de488924b18299De8bf46fD11469';

/** The networks of @iden3/js-iden3-core 1.8 (DOMAIN.md), with the chain ids the iden3 ecosystem gives them. */
const NETWORKS: [blockchain: string, networkId: string, chainId: number][] = [
  ['polygon', 'amoy', 80002], ['polygon', 'main', 137],
  ['privado', 'main', 21000], ['privado', 'test', 21001],
  ['billions', 'main', 45056], ['billions', 'test', 6913],
  ['linea', 'main', 59144], ['linea', 'sepolia', 59141],
  ['base', 'main', 8453], ['base', 'sepolia', 84532],
  ['bnb', 'main', 56], ['bnb', 'test', 97],
];
const METHODS = ['iden3', 'polygonid'] as const;

let resolver: TestDidResolver;
let closed: string;

beforeAll(async () => {
  resolver = await startDidResolver();
  closed = await closedPortUrl();
});

afterAll(async () => {
  await resolver?.close();
});

async function verify(issuer: DemoIssuer, c: unknown, deps: Parameters<typeof createCredentialVerifier>[1] = {}): Promise<TrustVerdict> {
  const v = createCredentialVerifier(
    trustOptions({ mode: 'strict', trustedIssuers: [issuer.did], resolverUrl: resolver.base, timeoutMs: 3000, revocationCacheMs: 0 }),
    { statusResolvers: { SparseMerkleTreeProof: demoStatusResolver(issuer) }, ...deps },
  );
  return only(await v.verify([c as Credential], { address: ADDRESS, now: Date.now() }));
}

describe('issuer DIDs on every network @iden3/js-iden3-core knows', () => {
  it.each(NETWORKS)('%s:%s (chain %i): both methods parse, verify at genesis and published states, and bind holders', async (blockchain, networkId, chainId) => {
    for (const method of METHODS) {
      const issuer = await createDemoIssuer({
        seed: `net-${method}-${blockchain}-${networkId}`.padEnd(32, '.'),
        statusUrl: 'http://127.0.0.1:9/status',
        network: { method, blockchain, networkId },
      });
      const where = `${method} on ${blockchain}:${networkId}`;
      expect(issuer.did, where).toMatch(new RegExp(`^did:${method}:${blockchain}:${networkId}:[1-9A-HJ-NP-Za-km-z]+$`));
      expect(isCanonicalIden3Did(issuer.did), where).toBe(true);
      expect(chainIdOfDid(issuer.did), where).toBe(chainId);
      expect(loadConfig({ TRUSTED_ISSUERS: issuer.did }).trust.trustedIssuers, where).toEqual([issuer.did]);

      // A holder DID of the same network made from the request's address: bound to it, as on Polygon Amoy.
      const holder = iden3DidFromEthAddress(ADDRESS, method, { blockchain, networkId });
      const c = await issuer.issue({ subjectId: holder, claims: { reviewAnswer: 'GREEN', personalData: { age: 30 } }, nonce: 11 });
      expect(await verify(issuer, c), where).toEqual({ ok: true });

      // The signing key at a later state: asked of the DID resolver, valid once published.
      const at = await issuer.advanceState();
      const later = structuredClone(c) as { proof: { issuerData: Record<string, unknown> }[] };
      later.proof[0]!.issuerData.state = at.state;
      later.proof[0]!.issuerData.mtp = at.mtp;
      expect(await verify(issuer, later), where).toMatchObject({ ok: false, status: 'not-valid', reason: expect.stringMatching(/neither the issuer's genesis state nor a published one/) });
      resolver.publish(issuer.did, at.state.value);
      expect(await verify(issuer, later), where).toEqual({ ok: true });

      // On-chain status: js-sdk names the network's chain; the service looks that chain up in CHAIN_RPC_URLS.
      const onchain = await issuer.issue({ subjectId: holder, claims: { reviewAnswer: 'GREEN', personalData: { age: 30 } }, nonce: 12, revocation: { type: ONCHAIN, id: STATUS_CONTRACT } });
      expect(parseOnchainStatusId((onchain.credentialStatus as { id: string }).id), where).toMatchObject({ chain: `eip155:${chainId}`, chainId });
      const unconfigured = await onchainStatusResolver({ chains: new Map(), timeoutMs: 1000 });
      expect(await verify(issuer, onchain, { statusResolvers: { [ONCHAIN]: unconfigured } }), where)
        .toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(new RegExp(`eip155:${chainId}, which is not configured`)) });
      // Configured (an RPC that refuses connections): the issuer DID parses and the chain's RPC is the one asked.
      const down = await onchainStatusResolver({ chains: parseChainRpcUrls(`eip155:${chainId}=${closed}`), timeoutMs: 1000 });
      expect(await verify(issuer, onchain, { statusResolvers: { [ONCHAIN]: down } }), where)
        .toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(new RegExp(`the status contract on eip155:${chainId} could not be read`)) });
    }
  }, 60_000);
});
