/**
 * js-iden3-auth checks equal link ids only across the rules of one call; each rule is checked in its own call here.
 * A linkedMultiQuery proof binds no holder: it stands only with a valid V3 proof of its group.
 */
import type { ProofResponse } from './verify-envelope.js';
import type { PendingRule } from './request.js';
import type { ZkpVerdict } from './verify-types.js';
import { isRecord } from '../schemas/json.js';

function fail(verdict: ZkpVerdict, reason: string): void {
  if (verdict.status === 'valid') verdict.status = 'not-valid';
  verdict.is_valid = false;
  verdict.reasons.push(reason);
  delete verdict.disclosed;
}

function disclosedValue(vp: unknown, attribute: string): string | number | boolean | undefined {
  const credential = isRecord(vp) ? vp.verifiableCredential : undefined;
  let at: unknown = isRecord(credential) ? credential.credentialSubject : undefined;
  for (const segment of attribute.split('.')) at = isRecord(at) && Object.hasOwn(at, segment) ? at[segment] : undefined;
  return typeof at === 'string' || typeof at === 'number' || typeof at === 'boolean' ? at : undefined;
}

export function judgeAcrossRules(rules: readonly PendingRule[], verdicts: ZkpVerdict[], proofs: ReadonlyMap<number, ProofResponse>): void {
  rules.forEach((rule, i) => {
    const verdict = verdicts[i];
    if (!verdict || !verdict.is_valid || rule.disclose === undefined) return;
    const value = disclosedValue(proofs.get(rule.requestId)?.vp, rule.disclose);
    if (value === undefined) fail(verdict, `the answer does not disclose ${rule.disclose} as the request asks`);
    else verdict.disclosed = { attribute: rule.disclose, value };
  });

  const groups = new Map<number, number[]>();
  rules.forEach((rule, i) => {
    if (rule.groupId !== undefined) groups.set(rule.groupId, [...(groups.get(rule.groupId) ?? []), i]);
  });
  for (const [groupId, members] of groups) {
    const valid = members.flatMap((i) => {
      const verdict = verdicts[i];
      return verdict?.is_valid ? [{ verdict, circuitId: rules[i]?.circuitId }] : [];
    });
    const linkIds = new Set(valid.map((v) => v.verdict.linkId));
    if (linkIds.size > 1 || linkIds.has(undefined)) {
      for (const { verdict } of valid) fail(verdict, `the proofs of group ${groupId} are not about one credential (their link ids differ)`);
      continue;
    }
    const anchored = valid.some((v) => v.circuitId === 'credentialAtomicQueryV3');
    if (anchored) continue;
    for (const { verdict, circuitId } of valid) {
      if (circuitId === 'linkedMultiQuery') {
        fail(verdict, `this condition is proved on the credential of group ${groupId}, whose credentialAtomicQueryV3 ` +
          'proof (the holder has it from a trusted issuer) is not valid');
      }
    }
  }
}
