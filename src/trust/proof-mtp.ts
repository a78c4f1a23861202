/**
 * Besides what js-sdk checks: the state is not the genesis state (whose tree holds only the issuer's key claims), and
 * `mtp` proves existence (js-sdk never reads it). See docs/credential-trust.md.
 */
import { claimFromHex, DID, Hash, isGenesisState, Proof, validateTreeState, verifyProof, type Claim as ClaimT, type Did, type Proof as ProofT } from './iden3.js';
import { done, matchContent, refusal, stateKey, statusCovered, type ProofType } from './proof-check.js';
import { notValid, OK, undecided, type Json } from './structure.js';
import { isRecord } from '../schemas/json.js';

const NAME = 'Iden3SparseMerkleTreeProof';
const HASH_HEX = /^[0-9a-f]{64}$/;
const ROOTS = ['value', 'claimsTreeRoot', 'revocationTreeRoot', 'rootOfRoots'] as const;

interface Parsed {
  issuer: Did;
  claim: ClaimT;
  mtp: ProofT;
  state: Record<(typeof ROOTS)[number], string>;
}

/** 32 bytes of hex that are a field element (Hash.fromHex throws otherwise). */
function root(st: Json, k: (typeof ROOTS)[number]): string | undefined {
  const v = st[k];
  if (typeof v !== 'string' || !HASH_HEX.test(v)) return undefined;
  Hash.fromHex(v);
  return v;
}

function parse(raw: Json): Parsed | undefined {
  try {
    const issuerData = raw.issuerData;
    if (!isRecord(issuerData) || !isRecord(issuerData.state)) return undefined;
    const st = issuerData.state;
    const [value, claimsTreeRoot, revocationTreeRoot, rootOfRoots] = ROOTS.map((k) => root(st, k));
    if (value === undefined || claimsTreeRoot === undefined || revocationTreeRoot === undefined || rootOfRoots === undefined) return undefined;
    const state = { value, claimsTreeRoot, revocationTreeRoot, rootOfRoots };
    return { issuer: DID.parse(String(issuerData.id)), claim: claimFromHex(String(raw.coreClaim)), mtp: Proof.fromJSON(raw.mtp), state };
  } catch {
    return undefined;
  }
}

export const iden3SparseMerkleTreeProof: ProofType = {
  type: NAME,
  keyRevocation: false,

  structure(proof) {
    const issuerData = proof.issuerData;
    if (!isRecord(issuerData)) return notValid(`${NAME} proof has no issuerData`);
    if (typeof issuerData.id !== 'string') return notValid(`${NAME} proof: issuerData.id must be a DID`);
    if (!isRecord(issuerData.state)) return notValid(`${NAME} proof has no issuerData.state`);
    if (typeof proof.coreClaim !== 'string' || !/^[0-9a-f]{512}$/i.test(proof.coreClaim)) return notValid(`${NAME} proof: coreClaim must be 256 bytes in hex`);
    if (!isRecord(proof.mtp) || !Array.isArray(proof.mtp.siblings) || proof.mtp.siblings.length > 256) {
      return notValid(`${NAME} proof: mtp must be a Merkle proof (existence, at most 256 siblings)`);
    }
    return OK;
  },

  async check(credential, raw, task, ctx) {
    const p = parse(raw);
    if (p === undefined) return refusal(`its ${NAME} is malformed (issuerData, state, coreClaim or mtp cannot be read)`);
    const issuerDid = p.issuer.string();
    if (issuerDid !== credential.issuer) return refusal(`its ${NAME} was made by another issuer than the credential names (issuerData.id)`);
    let genesis: boolean;
    try {
      genesis = isGenesisState(p.issuer, p.state.value);
    } catch {
      return refusal(`the issuer of its ${NAME} is not an iden3 identity`);
    }
    if (genesis) return refusal(`its ${NAME} names the issuer's genesis state, which holds no issued credential`);
    if (!validateTreeState({ state: p.state.value, claimsTreeRoot: p.state.claimsTreeRoot, revocationTreeRoot: p.state.revocationTreeRoot, rootOfRoots: p.state.rootOfRoots })) {
      return refusal(`the issuer state in its ${NAME} is not the hash of its tree roots`);
    }
    let included = false;
    try {
      const { hi, hv } = p.claim.hiHv();
      included = p.mtp.existence && (await verifyProof(Hash.fromHex(p.state.claimsTreeRoot), p.mtp, hi, hv));
    } catch {
      included = false;
    }
    if (!included) return refusal(`its ${NAME} does not prove that its claim is in the issuer's claims tree at the state it names`);

    const published = task.states?.[stateKey(issuerDid, p.state.value)];
    if (published === undefined) return { kind: 'state', issuerDid, state: p.state.value };
    if (typeof published === 'string') {
      return done({ verdict: undecided(`the issuer state of its ${NAME} cannot be checked: ${published}`), cacheable: false });
    }
    if (!published) return done({ verdict: notValid(`the issuer state of its ${NAME} was not published by the issuer`), cacheable: false });

    const mismatch = await matchContent(credential, p.claim, NAME, ctx);
    if (mismatch !== undefined) return mismatch;
    return done({ verdict: OK, cacheable: true, nonce: p.claim.getRevocationNonce(), statusSigned: statusCovered(p.claim) });
  },
};
