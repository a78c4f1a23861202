/**
 * The few iden3 library values this module uses, with local types. The ESM packages (@0xpolygonid/js-sdk,
 * @iden3/js-iden3-core, @iden3/js-jsonld-merklization) ship declaration files with extensionless relative
 * re-exports, which TypeScript's NodeNext resolution cannot follow: their named exports look missing to tsc while
 * they exist at run time. So they are imported as namespaces and typed here, narrowly.
 */
import { core } from '@iden3/js-iden3-auth';
import * as jsSdk from '@0xpolygonid/js-sdk';

/** A JSON-LD document loader, as jsonld.js and the iden3 libraries call it. */
export type JsonLdDocumentLoader = (url: string) => Promise<{ contextUrl: string | null; documentUrl: string; document: unknown }>;

interface Did {
  string(): string;
}
interface DidStatic {
  parse(did: string): Did;
  parseFromId(id: unknown): Did;
  idFromDID(did: Did): unknown;
}
export const DID: DidStatic = (core as unknown as { DID: DidStatic }).DID;

/** The public signals of the V2 query circuits that this module reads. */
export interface QueryV2PubSignals {
  requestID: bigint;
  userID: unknown;
  issuerID: unknown;
  timestamp: number;
  operator: number;
}
type PubSignalsClass = new () => { pubSignalsUnmarshal(data: Uint8Array): QueryV2PubSignals };

interface SdkSubset {
  AtomicQueryMTPV2PubSignals: PubSignalsClass;
  AtomicQuerySigV2PubSignals: PubSignalsClass;
  parseQueriesMetadata(
    credentialType: string,
    ldContextJSON: string,
    credentialSubject: Record<string, unknown>,
    options: { documentLoader: JsonLdDocumentLoader },
  ): Promise<unknown[]>;
}
const sdk = jsSdk as unknown as SdkSubset;

export const { AtomicQueryMTPV2PubSignals, AtomicQuerySigV2PubSignals, parseQueriesMetadata } = sdk;
