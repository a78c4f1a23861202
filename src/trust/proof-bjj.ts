/**
 * BJJSignature2021, step by step as @0xpolygonid/js-sdk's W3CCredential.verifyProof does it, with the I/O replaced by
 * ours (offline document loader, issuer state publication asked of the request thread) and with the checks js-sdk
 * leaves out added:
 *
 * 1. The proof's issuer (issuerData.id) is the credential's `issuer` (js-sdk does not compare them).
 * 2. Core claim match (proof-check.ts matchContent): the core claim recomputed from the credential equals the signed
 *    one: any change to credentialSubject, the dates, the types, credentialStatus or credentialSchema, or any field
 *    added, fails.
 * 3. Signature: the issuer key is the public key in the proof's auth claim (issuerData.authCoreClaim, which must be
 *    an AuthBJJCredential claim); the BabyJubJub signature of poseidon(hi, hv) of the core claim must verify with it.
 * 4. The key belongs to the issuer: the auth claim must be in the issuer's claims tree (issuerData.mtp against
 *    issuerData.state.claimsTreeRoot; js-sdk skips this), the stated issuer state must be the hash of its three roots
 *    (js-sdk skips this too), and that state must be the issuer's genesis state (the DID itself commits to it: checked
 *    offline) or a published one.
 * 5. The auth claim's revocation nonce equals the one in issuerData.credentialStatus (the key's own revocation is
 *    checked by the revocation step, with a short cache, not here: keyRevocation).
 *
 * Order of work: 1, then 3 and the local part of 4, then the state's publication (asked of the request thread), and
 * only then 2 (JSON-LD merklization, about as costly as all the rest together, and the only step that may need a
 * document from the network). A forged signature or a key self-signed under a trusted issuer's name thus costs no
 * JSON-LD processing, and no document is fetched for a credential whose signing key is not shown to be its issuer's.
 */
import { poseidon } from '@iden3/js-crypto';
import { BJJSignatureProof2021, isGenesisState, SchemaHash, validateTreeState, verifyProof, type BjjProof } from './iden3.js';
import { verifyPoseidonSignature } from './babyjub.js';
import { done, matchContent, refusal, sameNonce, stateKey, statusCovered, type ProofType } from './proof-check.js';
import { checkStatus, notValid, OK, undecided } from './structure.js';
import { isRecord } from '../schemas/json.js';

const NAME = 'BJJSignature2021';

export const bjjSignature2021: ProofType = {
  type: NAME,
  keyRevocation: true,

  structure(proof) {
    const issuerData = proof.issuerData;
    if (!isRecord(issuerData)) return notValid('BJJSignature2021 proof has no issuerData');
    return checkStatus(issuerData.credentialStatus, 'the issuer key status in the proof (issuerData.credentialStatus)');
  },

  async check(credential, raw, task, ctx) {
    let proof: BjjProof;
    try {
      proof = BJJSignatureProof2021.fromJSON(raw);
    } catch {
      return refusal('its BJJSignature2021 proof is malformed (issuerData, coreClaim or signature cannot be read)');
    }
    const issuerDid = proof.issuerData.id.string();
    if (issuerDid !== credential.issuer) return refusal('its BJJSignature2021 proof was made by another issuer than the credential names');
    const signed = proof.coreClaim;

    // 3. Signature with the key of the auth claim.
    const auth = proof.issuerData.authCoreClaim;
    if (auth.getSchemaHash().bigInt() !== SchemaHash.authSchemaHash.bigInt()) {
      return refusal('the key claim in its proof (issuerData.authCoreClaim) is not an AuthBJJCredential claim');
    }
    let signatureValid = false;
    try {
      // The key is the claim's index slots 2 and 3 (X and Y of the BabyJubJub point).
      const slots = auth.rawSlotsAsInts();
      const x = slots[2];
      const y = slots[3];
      const { hi, hv } = signed.hiHv();
      signatureValid = x !== undefined && y !== undefined && verifyPoseidonSignature([x, y], poseidon.hash([hi, hv]), proof.signature);
    } catch {
      signatureValid = false;
    }
    if (!signatureValid) return refusal('its signature does not verify against the issuer key named in its proof');

    // 4. The key belongs to the issuer at a genesis or published state.
    const st = proof.issuerData.state;
    const treeOk = validateTreeState({
      state: st.value.hex(),
      claimsTreeRoot: st.claimsTreeRoot.hex(),
      revocationTreeRoot: st.revocationTreeRoot.hex(),
      rootOfRoots: st.rootOfRoots.hex(),
    });
    if (!treeOk) return refusal('the issuer state in its proof is not the hash of its tree roots');
    let included = false;
    try {
      const { hi, hv } = auth.hiHv();
      included = proof.issuerData.mtp.existence && (await verifyProof(st.claimsTreeRoot, proof.issuerData.mtp, hi, hv));
    } catch {
      included = false;
    }
    if (!included) return refusal("the signing key is not in the issuer's claims tree at the state its proof names");
    let genesis = false;
    try {
      genesis = isGenesisState(proof.issuerData.id, st.value.bigInt());
    } catch {
      genesis = false;
    }
    if (!genesis) {
      const state = st.value.hex();
      const published = task.states?.[stateKey(issuerDid, state)];
      if (published === undefined) return { kind: 'state', issuerDid, state };
      if (typeof published === 'string') {
        return done({ verdict: undecided(`the issuer state in its proof cannot be checked: ${published}`), cacheable: false });
      }
      if (!published) {
        return done({ verdict: notValid("the issuer state in its proof is neither the issuer's genesis state nor a published one"), cacheable: false });
      }
    }

    // 2. Core claim match: the expensive step (JSON-LD processing), after every cheap check.
    const mismatch = await matchContent(credential, signed, NAME, ctx);
    if (mismatch !== undefined) return mismatch;

    // 5. The key's revocation nonce, whose status is checked later (of the credential's own signed status source; the
    // unsigned issuerData.credentialStatus must still state the nonce, as js-sdk requires).
    const keyNonce = auth.getRevocationNonce();
    if (!sameNonce(proof.issuerData.credentialStatus.revocationNonce, keyNonce)) {
      return refusal("the issuer key's credentialStatus in its proof does not carry the key's revocation nonce");
    }
    const exp = auth.getExpirationDate();
    return done({
      verdict: OK,
      cacheable: true,
      nonce: signed.getRevocationNonce(),
      keyNonce,
      keyExpiresAt: exp ? exp.getTime() : undefined,
      statusSigned: statusCovered(signed),
    });
  },
};
