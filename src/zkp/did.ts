import { DID } from '../trust/iden3.js';

/** The verifier compares DID strings. */
export function isCanonicalIden3Did(did: string): boolean {
  try {
    return DID.parseFromId(DID.idFromDID(DID.parse(did))).string() === did;
  } catch {
    return false;
  }
}

export function isCanonicalDid(did: string): boolean {
  try {
    return DID.parse(did).string() === did;
  } catch {
    return false;
  }
}
