import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import { isRecord } from '../schemas/json.js';
import type { VerifiedProof } from './proof.js';
import { PROOF_TYPES } from './proof-types.js';
import { keyStatusFrom, type RevocationChecker, type RevocationOutcome, type RevocationRequest } from './revocation.js';
import { notValid, OK, undecided, type Json } from './structure.js';

/** A revocation question no status source the issuer signed can answer: nothing is requested. */
const UNSIGNED: RevocationOutcome = Object.freeze({ kind: 'unsigned' });
const NOT_RAISED: RevocationOutcome = Object.freeze({ kind: 'active' });

/** Only a source the issuer signed is ever asked, so a failure may name it. */
function describeRevocation(o: RevocationOutcome, status: Json, what: 'credential' | 'key', ownSigned: boolean): TrustVerdict {
  const type = String(status.type).slice(0, 100);
  const where = what === 'credential' ? 'credentialStatus' : "the issuer key's status (asked of the credential's credentialStatus)";
  switch (o.kind) {
    case 'unsigned':
      return what === 'credential' || !ownSigned
        ? undecided("its credentialStatus is not covered by the issuer's signature, so revocation cannot be checked (no unsigned status URL is used)")
        : undecided(`its credentialStatus (${type}) does not name the revocation nonce in a way that lets the signing key's status be asked of it, so the key's revocation cannot be checked`);
    case 'active':
      return OK;
    case 'revoked':
      return what === 'credential'
        ? notValid(`revoked by its issuer (${type})`)
        : notValid('its issuer has revoked the key that signed it');
    case 'unsupported':
      return undecided(`${where} type ${JSON.stringify(type)} is not supported, so revocation cannot be checked`);
    default:
      return undecided(`${where} (${type} at ${String(status.id).slice(0, 300)}) cannot be resolved: ${o.why}`);
  }
}

type RevocationRequests = [RevocationRequest | undefined, RevocationRequest | undefined | null];

export interface RevocationVerdicts {
  /**
   * Undefined for a question no signed source can be asked: the answer is then undecided (never valid). Made once per
   * verified proof.
   */
  requests(c: Credential, proof: VerifiedProof): RevocationRequests;
  check(r: RevocationRequest | undefined | null): Promise<RevocationOutcome>;
  known(r: RevocationRequest | undefined | null): RevocationOutcome | undefined;
  conclude(c: Credential, proof: VerifiedProof, own: RevocationOutcome, key: RevocationOutcome, keyRequest: RevocationRequest | undefined | null): TrustVerdict;
}

export function createRevocationVerdicts(revocation: RevocationChecker): RevocationVerdicts {
  // The requests depend only on content, so the revocation cache keys them without rebuilding its key.
  const requestsByProof = new WeakMap<VerifiedProof, RevocationRequests>();
  const requests = (c: Credential, proof: VerifiedProof): RevocationRequests => {
    let found = requestsByProof.get(proof);
    if (found === undefined) {
      const { issuer: issuerDid, credentialStatus: own } = c;
      const subjectId = isRecord(c.credentialSubject) ? c.credentialSubject.id : undefined;
      const { nonce, keyNonce } = proof;
      const raisesKey = proof.proofType === undefined || PROOF_TYPES[proof.proofType]?.keyRevocation !== false;
      const signed = proof.statusSigned === true && nonce !== undefined;
      const keyStatus = raisesKey && signed && keyNonce !== undefined ? keyStatusFrom(own, nonce, keyNonce) : undefined;
      found = [
        signed ? { status: own, nonce, issuerDid, holderDid: typeof subjectId === 'string' ? subjectId : issuerDid } : undefined,
        !raisesKey ? null : keyStatus === undefined || keyNonce === undefined ? undefined : { status: keyStatus, nonce: keyNonce, issuerDid, holderDid: issuerDid },
      ];
      requestsByProof.set(proof, found);
    }
    return found;
  };

  const conclude = (
    c: Credential, proof: VerifiedProof, own: RevocationOutcome, key: RevocationOutcome, keyRequest: RevocationRequest | undefined | null,
  ): TrustVerdict => {
    const signed = proof.statusSigned === true;
    const ownStatus = c.credentialStatus;
    const ownVerdict = describeRevocation(own, ownStatus, 'credential', signed);
    const keyVerdict = describeRevocation(key, keyRequest?.status ?? ownStatus, 'key', signed);
    // A definite answer wins over an undecided one.
    if (!ownVerdict.ok && ownVerdict.status === 'not-valid') return ownVerdict;
    if (!keyVerdict.ok && keyVerdict.status === 'not-valid') return keyVerdict;
    if (!ownVerdict.ok) return ownVerdict;
    return keyVerdict;
  };

  return {
    requests,
    check: (r) => (r === null ? Promise.resolve(NOT_RAISED) : r === undefined ? Promise.resolve(UNSIGNED) : revocation.check(r)),
    known: (r) => (r === null ? NOT_RAISED : r === undefined ? UNSIGNED : revocation.known(r)),
    conclude,
  };
}
