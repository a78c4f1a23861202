/**
 * Step 6 of verifier.ts, for a credential whose proof verified: the two revocation questions (the credential's own
 * status and its issuer key's, both put to the status source the issuer signed), and the verdict worded from their
 * answers. The questions are asked of revocation.ts's checker, which caches the answers for a short time.
 */
import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import { isRecord } from '../schemas/json.js';
import type { VerifiedProof } from './proof.js';
import { PROOF_TYPES } from './proof-types.js';
import { keyStatusFrom, type RevocationChecker, type RevocationOutcome, type RevocationRequest } from './revocation.js';
import { notValid, OK, undecided, type Json } from './structure.js';

/** A revocation question no status source the issuer signed can answer: nothing is requested. */
const UNSIGNED: RevocationOutcome = Object.freeze({ kind: 'unsigned' });
/** A question the verified proof does not raise (the signing key's, for a proof type without one): nothing to ask. */
const NOT_RAISED: RevocationOutcome = Object.freeze({ kind: 'active' });

/**
 * The verdict of one revocation answer. `status` is the source that was asked (for the key: the credential's own,
 * signed status with the key's nonce, see keyStatusFrom); only a source the issuer signed is ever asked, so a failure
 * may name it. `ownSigned`: whether the credential's own status is covered by the signature.
 */
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

/**
 * The credential's own revocation question and its issuer key's; undefined for one no signed source can answer, null
 * for one its proof type does not raise (ProofType.keyRevocation).
 */
type RevocationRequests = [RevocationRequest | undefined, RevocationRequest | undefined | null];

export interface RevocationVerdicts {
  /**
   * The two revocation questions of a credential whose proof verified: its own status, and its issuer key's, both put
   * to the status source the issuer signed (keyStatusFrom). Undefined for a question no signed source can be asked:
   * the service then requests nothing, and the answer is undecided (never valid). Made once per verified proof: the
   * same array, and request objects, for the same proof.
   */
  requests(c: Credential, proof: VerifiedProof): RevocationRequests;
  /** The answer to one question (asked of the checker, which caches it). */
  check(r: RevocationRequest | undefined | null): Promise<RevocationOutcome>;
  /** The answer to one question when it is known without asking, else undefined. */
  known(r: RevocationRequest | undefined | null): RevocationOutcome | undefined;
  /** The verdict once the proof and both revocation answers are known. */
  conclude(c: Credential, proof: VerifiedProof, own: RevocationOutcome, key: RevocationOutcome, keyRequest: RevocationRequest | undefined | null): TrustVerdict;
}

export function createRevocationVerdicts(revocation: RevocationChecker): RevocationVerdicts {
  // Made once per verified proof: the proof is per content digest, and the requests depend only on that content (so
  // the revocation cache keys them without rebuilding its key each time).
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
