/**
 * DID syntax checks, on @iden3/js-iden3-core (ESM, the copy src/trust loads too; typed narrowly here for the reason
 * given in sdk.ts). They serve the configuration (ZKP_VERIFIER_DID, ZKP_ALLOWED_ISSUERS) as well as requests and
 * verification, so this module must not load @iden3/js-iden3-auth.
 */
import * as coreNs from '@iden3/js-iden3-core';

interface Did {
  string(): string;
}
interface DidStatic {
  parse(did: string): Did;
  parseFromId(id: unknown): Did;
  idFromDID(did: Did): unknown;
}
export const DID: DidStatic = (coreNs as unknown as { DID: DidStatic }).DID;

/**
 * True when `did` is an iden3 identity DID (did:iden3, did:polygonid, ...: it round-trips through its iden3 id)
 * written canonically (the verifier compares DID strings).
 */
export function isCanonicalIden3Did(did: string): boolean {
  try {
    return DID.parseFromId(DID.idFromDID(DID.parse(did))).string() === did;
  } catch {
    return false;
  }
}

/** True when `did` parses as a DID and is written canonically (the verifier's own DID: any method iden3 parses). */
export function isCanonicalDid(did: string): boolean {
  try {
    return DID.parse(did).string() === did;
  } catch {
    return false;
  }
}
