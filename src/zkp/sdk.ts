/**
 * Typed here for the reason given in src/trust/iden3.ts. These are the ESM copies src/trust loads too, not the
 * CommonJS ones inside @iden3/js-iden3-auth, so importing this module adds nothing to what is loaded at start.
 */
import * as jsSdk from '@0xpolygonid/js-sdk';
import * as core from '@iden3/js-iden3-core';
import type { Id } from '../trust/iden3.js';

/** A missing name throws at load instead of at first use. */
function exportsOf<T extends object>(library: string, namespace: object, names: readonly (keyof T & string)[]): T {
  const missing = names.filter((name) => Reflect.get(namespace, name) === undefined);
  if (missing.length > 0) throw new Error(`${library} no longer exports ${missing.join(', ')}`);
  return namespace as unknown as T;
}

export type DocumentLoader = (url: string) => Promise<{ document: unknown }>;

interface QueryV2PubSignals {
  requestID: bigint;
  userID: Id;
  issuerID: Id;
  timestamp: number;
  operator: number;
}
type PubSignalsClass<S> = new () => { pubSignalsUnmarshal(data: Uint8Array): S };
interface QueryV3PubSignals extends QueryV2PubSignals {
  linkID: bigint;
  nullifier: bigint;
}
/** No identity, issuer or time: the link id ties a linkedMultiQuery proof to the V3 proof of its group. */
interface LinkedMultiQueryPubSignals {
  linkID: bigint;
}
export interface QueryMetadata { slotIndex: number; values: bigint[]; claimPathKey: bigint; merklizedSchema: boolean }
type SchemaHash = unknown;

interface SdkSubset {
  AtomicQueryMTPV2PubSignals: PubSignalsClass<QueryV2PubSignals>;
  AtomicQuerySigV2PubSignals: PubSignalsClass<QueryV2PubSignals>;
  AtomicQueryV3PubSignals: PubSignalsClass<QueryV3PubSignals>;
  LinkedMultiQueryPubSignals: new (queryCount: number) => { pubSignalsUnmarshal(data: Uint8Array): LinkedMultiQueryPubSignals };
  parseQueriesMetadata(
    credentialType: string, ldContextJSON: string, credentialSubject: Record<string, unknown>, options: { documentLoader: DocumentLoader },
  ): Promise<unknown[]>;
  QueryOperators: Record<string, number>;
  parseQueryMetadata(
    q: { fieldName: string; operator: number; operatorValue?: unknown }, ldContextJSON: string, type: string, options: { documentLoader: DocumentLoader },
  ): Promise<QueryMetadata>;
  calculateCoreSchemaHash(id: Uint8Array): { bigInt(): bigint };
  calculateQueryHashV2(values: bigint[], schema: SchemaHash, slotIndex: bigint, operator: bigint, claimPathKey: bigint, claimPathNotExists: bigint): bigint;
  calculateQueryHashV3(
    values: bigint[], schema: SchemaHash, slotIndex: bigint, operator: bigint, claimPathKey: bigint, valueArraySize: number, merklized: number,
    isRevocationChecked: number, verifierID: bigint, nullifierSessionID: bigint,
  ): bigint;
  prepareCircuitArrayValues(values: bigint[], size: number): bigint[];
  getGroupedCircuitIdsWithSubVersions(circuitId: string): string[];
  /** Per circuit: how many queries it proves, and its subversions with theirs (linkedMultiQuery3 and 5: 3 and 5). */
  circuitValidator: Record<string, { validation: { maxQueriesCount: number }; subVersions?: Array<{ queryCount?: number; targetCircuitId: string }> } | undefined>;
}

export const {
  AtomicQueryMTPV2PubSignals, AtomicQuerySigV2PubSignals, AtomicQueryV3PubSignals, LinkedMultiQueryPubSignals, parseQueriesMetadata,
  QueryOperators, parseQueryMetadata, calculateCoreSchemaHash, calculateQueryHashV2, calculateQueryHashV3, prepareCircuitArrayValues,
  getGroupedCircuitIdsWithSubVersions, circuitValidator,
} = exportsOf<SdkSubset>('@0xpolygonid/js-sdk', jsSdk, [
  'AtomicQueryMTPV2PubSignals', 'AtomicQuerySigV2PubSignals', 'AtomicQueryV3PubSignals', 'LinkedMultiQueryPubSignals', 'parseQueriesMetadata',
  'QueryOperators', 'parseQueryMetadata', 'calculateCoreSchemaHash', 'calculateQueryHashV2', 'calculateQueryHashV3', 'prepareCircuitArrayValues',
  'getGroupedCircuitIdsWithSubVersions', 'circuitValidator',
]);

export const { SchemaHash } = exportsOf<{ SchemaHash: { newSchemaHashFromInt(i: bigint): SchemaHash } }>(
  '@iden3/js-iden3-core', core, ['SchemaHash'],
);
