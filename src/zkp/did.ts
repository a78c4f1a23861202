/** DID syntax checks for the configuration, requests and verification: this module must not load js-iden3-auth. */
import { DID } from '../trust/iden3.js';

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
