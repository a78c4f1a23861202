/** In the order they are tried on a credential that carries several. */
import { bjjSignature2021 } from './proof-bjj.js';
import { iden3SparseMerkleTreeProof } from './proof-mtp.js';
import type { ProofType } from './proof-check.js';
import { notValid, OK, type Json } from './structure.js';
import { isRecord } from '../schemas/json.js';
import type { TrustVerdict } from '../engine/types.js';

export const PROOF_TYPES: Readonly<Record<string, ProofType>> = Object.freeze({
  [bjjSignature2021.type]: bjjSignature2021,
  [iden3SparseMerkleTreeProof.type]: iden3SparseMerkleTreeProof,
});

const NAMES = Object.keys(PROOF_TYPES);
/** A credential carries one or two. */
const MAX_PROOFS = 8;

export function supportedProofs(proof: unknown): { type: ProofType; proof: Json }[] {
  const entries = (Array.isArray(proof) ? proof.slice(0, MAX_PROOFS) : [proof]).filter(isRecord);
  const found: { type: ProofType; proof: Json }[] = [];
  for (const type of Object.values(PROOF_TYPES)) {
    const entry = entries.find((p) => p.type === type.type);
    if (entry !== undefined) found.push({ type, proof: entry });
  }
  return found;
}

export function checkProofStructure(proof: unknown): TrustVerdict {
  const found = supportedProofs(proof);
  if (found.length === 0) return notValid(`has no ${NAMES.join(' or ')} proof (the proof types this service verifies)`);
  for (const p of found) {
    const v = p.type.structure(p.proof);
    if (!v.ok) return v;
  }
  return OK;
}
