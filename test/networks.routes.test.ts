/**
 * Issuers and holders on every network @iden3/js-iden3-core 1.8 knows, through execute: for each network and DID
 * method, a demo issuer of that network (js-sdk) issues a credential to a holder DID of that network made from the
 * request's address, signed at a later issuer state; the service parses both DIDs with the library (it has no list of
 * networks of its own), asks the configured DID resolver (DID_RESOLVER_URL, a local driver-did-iden3 on 127.0.0.1)
 * about that state, and fetches the credential's status from the issuer's (local) status endpoint. The credential is
 * not-valid while the resolver has not seen the state published, and valid once it has.
 * test/trust/networks.test.ts checks the same below the HTTP layer, with the on-chain status resolver too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoIssuer, type DemoIssuer } from '../src/trust/demo-issuer.js';
import { auth, makeApp, scenario } from './helpers.js';
import { startDidResolver, type TestDidResolver } from './trust/did-resolver-server.js';
import { iden3DidFromEthAddress } from './trust/iden3-test.js';
import { startServer, type TestServer } from './trust/servers.js';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
/** The networks of @iden3/js-iden3-core 1.8 (DOMAIN.md). */
const NETWORKS: [blockchain: string, networkId: string][] = [
  ['polygon', 'amoy'], ['polygon', 'main'], ['privado', 'main'], ['privado', 'test'], ['billions', 'main'], ['billions', 'test'],
  ['linea', 'main'], ['linea', 'sepolia'], ['base', 'main'], ['base', 'sepolia'], ['bnb', 'main'], ['bnb', 'test'],
];
const CASES = NETWORKS.flatMap(([blockchain, networkId]) => (['iden3', 'polygonid'] as const).map((method) => ({ method, blockchain, networkId })));

let resolver: TestDidResolver;
let statuses: TestServer;
const issuers: DemoIssuer[] = [];
let app: Awaited<ReturnType<typeof makeApp>>;

beforeAll(async () => {
  resolver = await startDidResolver();
  // Each issuer's revocation status at /status/{its index}/{nonce} (js-sdk appends the nonce to the status URL).
  statuses = await startServer(async (req) => {
    const [, , index, nonce] = (req.url ?? '').split('/');
    const issuer = issuers[Number(index)];
    return issuer ? { json: await issuer.status(Number(nonce)) } : { status: 404, json: null };
  });
  for (const [i, { method, blockchain, networkId }] of CASES.entries()) {
    issuers.push(await createDemoIssuer({
      seed: `route-${method}-${blockchain}-${networkId}`.padEnd(32, '.'), statusUrl: `${statuses.url}/status/${i}`, network: { method, blockchain, networkId },
    }));
  }
  app = await makeApp({
    DEMO_ISSUER: '0', TRUSTED_ISSUERS: issuers.map((x) => x.did).join(','), DID_RESOLVER_URL: resolver.base, DID_RESOLVER_CACHE_MS: '0', TRUST_REFUSAL_CACHE_MS: '0',
    REVOCATION_CACHE_MS: '0', // also how long "not published" is remembered: the test publishes between two executes
  });
  const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
  expect(created.statusCode, created.body).toBe(201);
}, 180_000);

afterAll(async () => {
  await app?.close();
  await resolver?.close();
  await statuses?.close();
});

const OTHER = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const execute = async (credential: unknown, address = ADDRESS) => {
  const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address, credentials: [credential], scenarioId: 'adult' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as Array<{ result: { status: string; result: { reasons: string[] } } }>).map((r) => [r.result.status, ...r.result.result.reasons]);
};

describe('issuers and holders on every network @iden3/js-iden3-core knows, through execute', () => {
  it.each(CASES.map((c, i) => [`${c.method}:${c.blockchain}:${c.networkId}`, i] as const))('%s: the DIDs parsed, the issuer state asked of the configured resolver, the holder bound to its address', async (where, i) => {
    const issuer = issuers[i]!;
    const { method, blockchain, networkId } = CASES[i]!;
    expect(issuer.did).toMatch(new RegExp(`^did:${method}:${blockchain}:${networkId}:`));
    const holder = iden3DidFromEthAddress(ADDRESS, method, { blockchain, networkId });
    const issued = await issuer.issue({ subjectId: holder, claims: { reviewAnswer: 'GREEN', personalData: { age: 30 } }, nonce: 7 });
    // Signed with the key at a later state, which only the resolver can vouch for.
    const at = await issuer.advanceState();
    const later = structuredClone(issued) as { proof: Array<{ issuerData: Record<string, unknown> }> };
    later.proof[0]!.issuerData.state = at.state;
    later.proof[0]!.issuerData.mtp = at.mtp;

    const asked = resolver.hits.length;
    const unpublished = await execute(later);
    expect(unpublished.map((r) => r[0]), where).toEqual(['not-valid', 'not-valid']);
    expect(unpublished[0]!.join(' ')).toMatch(/neither the issuer's genesis state nor a published one/);
    expect(resolver.hits.slice(asked).some((h) => h.includes(encodeURIComponent(issuer.did)) || h.includes(issuer.did)), where).toBe(true);

    resolver.publish(issuer.did, at.state.value);
    expect(await execute(later), where).toEqual([['valid'], ['valid']]);
    expect(statuses.hits.some((h) => h.startsWith(`GET /status/${i}/7`)), where).toBe(true);
    // The holder DID is bound to the address it was made from, not to another one.
    const other = await execute(later, OTHER);
    expect(other.map((r) => r[0]), where).toEqual(['not-valid', 'not-valid']);
    expect(other[0]!.join(' '), where).toMatch(/belongs to another holder: credentialSubject.id encodes an address other than the request's address/);
  }, 60_000);
});
