/**
 * The few @0xpolygonid/js-sdk values this module uses, with local types (did.ts does the same for
 * @iden3/js-iden3-core). The ESM packages (@0xpolygonid/js-sdk, @iden3/js-iden3-core,
 * @iden3/js-jsonld-merklization) ship declaration files with extensionless relative re-exports, which TypeScript's
 * NodeNext resolution cannot follow: their named exports look missing to tsc while they exist at run time. So they
 * are imported as namespaces and typed here, narrowly. This is the ESM js-sdk that src/trust loads too, not the
 * CommonJS copy inside @iden3/js-iden3-auth, so the create-time schema check (schema-check.ts) adds nothing to what
 * is loaded at start.
 */
import * as jsSdk from '@0xpolygonid/js-sdk';

/** A JSON-LD document loader, as jsonld.js and the iden3 libraries call it. */
type JsonLdDocumentLoader = (url: string) => Promise<{ contextUrl: string | null; documentUrl: string; document: unknown }>;

/** The public signals of the V2 query circuits that this module reads. */
interface QueryV2PubSignals {
  requestID: bigint;
  userID: unknown;
  issuerID: unknown;
  timestamp: number;
  operator: number;
}
type PubSignalsClass = new () => { pubSignalsUnmarshal(data: Uint8Array): QueryV2PubSignals };
/** The V3 query circuit's signals this module reads besides the V2 ones. */
interface QueryV3PubSignals extends QueryV2PubSignals {
  linkID: bigint;
  nullifier: bigint;
}
/** The linkedMultiQuery circuit's signals: no identity, no issuer, no time; the link id ties it to a V3 proof. */
interface LinkedMultiQueryPubSignals {
  linkID: bigint;
}

interface SdkSubset {
  AtomicQueryMTPV2PubSignals: PubSignalsClass;
  AtomicQuerySigV2PubSignals: PubSignalsClass;
  AtomicQueryV3PubSignals: new () => { pubSignalsUnmarshal(data: Uint8Array): QueryV3PubSignals };
  LinkedMultiQueryPubSignals: new (queryCount: number) => { pubSignalsUnmarshal(data: Uint8Array): LinkedMultiQueryPubSignals };
  parseQueriesMetadata(
    credentialType: string,
    ldContextJSON: string,
    credentialSubject: Record<string, unknown>,
    options: { documentLoader: JsonLdDocumentLoader },
  ): Promise<unknown[]>;
}
const sdk = jsSdk as unknown as SdkSubset;

export const {
  AtomicQueryMTPV2PubSignals, AtomicQuerySigV2PubSignals, AtomicQueryV3PubSignals, LinkedMultiQueryPubSignals, parseQueriesMetadata,
} = sdk;
