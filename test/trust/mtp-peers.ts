/**
 * The peers of the Iden3SparseMerkleTreeProof tests: two js-sdk issuers (src/trust/demo-issuer.ts: js-sdk's
 * IdentityWallet adds a credential's claim to the issuer's claims tree and generates the MTP), a status server
 * answering from their trees, a DID resolver answering `?state=` from the states they published, and js-sdk's own
 * W3CCredential.verifyProof for the same proof type, to compare with.
 */
import { createDemoIssuer, nonceFromStatusPath, type DemoIssuer } from '../../src/trust/demo-issuer.js';
import { createDocumentLoader } from '../../src/jsonld/documents.js';
import { startServer, type TestServer } from './servers.js';
import { W3CCredential } from './iden3-test.js';

export type Json = Record<string, any>;

export interface Peers {
  a: DemoIssuer;
  b: DemoIssuer;
  status: TestServer;
  resolver: TestServer;
  resolverUrl: string;
  /** While true the resolver answers 503. */
  setResolverDown(down: boolean): void;
  /** js-sdk's verdict on one proof type of `c`: true, or the message it throws. */
  jsSdk(c: Json, proofType?: string): Promise<true | string>;
  close(): Promise<void>;
}

export async function startPeers(seeds: [string, string], documents?: Record<string, unknown>, alsoPublished?: (did: string, state: string) => boolean): Promise<Peers> {
  const issuers: DemoIssuer[] = []; // a, then b
  let down = false;
  const status = await startServer(async (req) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const issuer = url.pathname.startsWith('/a/') ? issuers[0] : url.pathname.startsWith('/b/') ? issuers[1] : undefined;
    const nonce = nonceFromStatusPath(url.pathname);
    return issuer === undefined || nonce === undefined ? { status: 404, json: {} } : { json: await issuer.status(nonce) };
  });
  const resolver = await startServer(async (req) => {
    if (down) return { status: 503, json: {} };
    const url = new URL(req.url ?? '/', 'http://x');
    const did = decodeURIComponent(url.pathname.split('/').pop() ?? '');
    const state = url.searchParams.get('state') ?? '';
    const issuer = issuers.find((x) => x.did === did);
    const published = (issuer?.isPublished(state) ?? false) || (alsoPublished?.(did, state) ?? false);
    return { json: { didDocument: { id: did, verificationMethod: [{ id: `${did}#state-info`, type: 'Iden3StateInfo2023', published, info: { id: did, state } }] } } };
  });
  const [a, b] = await Promise.all([
    createDemoIssuer({ seed: seeds[0], statusUrl: `${status.url}/a/status` }),
    createDemoIssuer({ seed: seeds[1], statusUrl: `${status.url}/b/status` }),
  ]);
  issuers.push(a, b);
  const resolverUrl = `${resolver.url}/1.0/identifiers`;
  const documentLoader = createDocumentLoader({ documents, fetch: () => Promise.reject(new Error('offline')), timeoutMs: 1 });
  return {
    a,
    b,
    status,
    resolver,
    resolverUrl,
    setResolverDown: (d) => {
      down = d;
    },
    async jsSdk(c, proofType = 'Iden3SparseMerkleTreeProof') {
      try {
        return (await W3CCredential.fromJSON(c).verifyProof(proofType, resolverUrl, { merklizeOptions: { documentLoader } })) ? true : 'false';
      } catch (e) {
        return (e as Error).message;
      }
    },
    close: async () => {
      await Promise.all([status.close(), resolver.close()]);
    },
  };
}
