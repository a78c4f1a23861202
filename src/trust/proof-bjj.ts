/**
 * Signature and key first, the state's publication next, the content match last: a forged signature or a self-signed
 * key costs no JSON-LD work and fetches nothing.
 */
import { poseidon } from '@iden3/js-crypto';
import { BJJSignatureProof2021, isGenesisState, SchemaHash, validateTreeState, verifyProof, type BjjProof } from './iden3.js';
import { rememberIssuerKey, verifyPoseidonSignature } from './babyjub.js';
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

    const auth = proof.issuerData.authCoreClaim;
    if (auth.getSchemaHash().bigInt() !== SchemaHash.authSchemaHash.bigInt()) {
      return refusal('the key claim in its proof (issuerData.authCoreClaim) is not an AuthBJJCredential claim');
    }
    let signatureValid = false;
    try {
      // The key is the auth claim's index slots 2 and 3 (X and Y).
      const slots = auth.rawSlotsAsInts();
      const x = slots[2];
      const y = slots[3];
      const { hi, hv } = signed.hiHv();
      signatureValid = x !== undefined && y !== undefined && verifyPoseidonSignature([x, y], poseidon.hash([hi, hv]), proof.signature);
    } catch {
      signatureValid = false;
    }
    if (!signatureValid) return refusal('its signature does not verify against the issuer key named in its proof');

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

    const mismatch = await matchContent(credential, signed, NAME, ctx);
    if (mismatch !== undefined) return mismatch;

    // The unsigned issuerData.credentialStatus must still state the key's nonce, as js-sdk requires.
    const keyNonce = auth.getRevocationNonce();
    if (!sameNonce(proof.issuerData.credentialStatus.revocationNonce, keyNonce)) {
      return refusal("the issuer key's credentialStatus in its proof does not carry the key's revocation nonce");
    }
    const exp = auth.getExpirationDate();
    const [, , keyX, keyY] = auth.rawSlotsAsInts();
    if (keyX !== undefined && keyY !== undefined) rememberIssuerKey(keyX, keyY);
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
