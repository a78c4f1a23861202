/** When none verifies, an undecided refusal (it might have verified) wins over a definite one. */
import { done, type ColdContext, type ColdResult, type ColdTask, type VerifiedProof } from './proof-check.js';
import { supportedProofs } from './proof-types.js';
import { notValid, undecided } from './structure.js';

export type { ColdContext, ColdResult, ColdTask, VerifiedProof } from './proof-check.js';

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

/** Never throws. */
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
