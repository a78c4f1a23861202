/**
 * The cold check of a credential's proof (step 4 of verifier.ts), run on the verification threads (pool.ts,
 * cold-worker.ts) with no I/O: what it needs from the network is asked for in its result (ColdResult).
 *
 * The credential's supported proofs (proof-types.ts) are checked in the registry's order until one verifies: a
 * credential is believed when one supported proof verifies and binds its content (each checks that the core claim
 * recomputed from the credential is the one it proves). A proof type's own steps, cheapest refusal first, are in its
 * module (proof-bjj.ts, proof-mtp.ts). When none verifies, a single proof's refusal is the verdict as it is; with
 * several, an undecided one (`error`: it might have verified) wins over refusals, and the reason names each proof.
 *
 * The checks use the fast Poseidon of poseidon.ts, the fast BabyJubJub verification of babyjub.ts and the one-pass
 * tree root of merklize.ts; their results are equal to the iden3 libraries' (see their tests). The result does not
 * depend on time or on the request, so the verifier caches it per credential content.
 */
import { done, type ColdContext, type ColdResult, type ColdTask, type VerifiedProof } from './proof-check.js';
import { supportedProofs } from './proof-types.js';
import { notValid, undecided } from './structure.js';

export type { ColdContext, ColdResult, ColdTask, VerifiedProof } from './proof-check.js';

/** The verdict of a credential none of whose proofs verified, from each one's (in the order they were checked). */
function noneVerified(refused: [string, VerifiedProof][]): VerifiedProof {
  const [first] = refused;
  if (refused.length === 1 && first !== undefined) return { ...first[1], proofType: first[0] };
  const reasons = refused.map(([type, p]) => `${type}: ${p.verdict.ok ? 'verified' : p.verdict.reason}`).join('; ');
  const cacheable = refused.every(([, p]) => p.cacheable);
  const undecidedOne = refused.find(([, p]) => !p.verdict.ok && p.verdict.status === 'error');
  return undecidedOne !== undefined
    ? { verdict: undecided(`none of its proofs could be verified (${reasons})`), cacheable, proofType: undecidedOne[0] }
    : { verdict: notValid(`none of its proofs verifies (${reasons})`), cacheable, proofType: first?.[0] };
}

/** The cold check of one credential that passed the structure checks. Never throws. */
export async function coldCheck(task: ColdTask, ctx: ColdContext): Promise<ColdResult> {
  const credential = task.credential;
  const refused: Record<string, VerifiedProof> = { ...task.refused };
  for (const { type, proof } of supportedProofs(credential.proof)) {
    if (refused[type.type] !== undefined) continue;
    let r: ColdResult;
    try {
      r = await type.check(credential, proof, task, ctx);
    } catch {
      r = done({ verdict: undecided(`its ${type.type} proof could not be checked (unexpected failure)`), cacheable: false });
    }
    if (r.kind !== 'done') return Object.keys(refused).length === 0 ? r : { ...r, refused };
    if (r.proof.verdict.ok) return done({ ...r.proof, proofType: type.type });
    refused[type.type] = r.proof;
  }
  const list = Object.entries(refused);
  return done(list.length > 0 ? noneVerified(list) : { verdict: notValid('has no proof of a type this service verifies'), cacheable: true });
}
