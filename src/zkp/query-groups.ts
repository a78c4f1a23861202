/**
 * A group with linkedMultiQuery rules needs a credentialAtomicQueryV3 rule: a linkedMultiQuery proof alone proves
 * nothing about who holds the credential.
 */
import type { FieldProblem } from '../engine/validate.js';

const LINKED_MAX_CONDITIONS = 10;

interface CheckedRule {
  index: number;
  query: Record<string, unknown>;
  circuitId: string;
  context?: string;
}

export function checkGroups(rules: readonly CheckedRule[], base: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const at = (r: CheckedRule, field: string) => `${base}/${r.index}/query/${field}`;

  const byRequestId = new Map<unknown, CheckedRule[]>();
  for (const r of rules) {
    if (!Number.isSafeInteger(r.query.requestId)) continue;
    const same = byRequestId.get(r.query.requestId) ?? [];
    const first = same[0];
    if (first && !(first.circuitId === 'linkedMultiQuery' && r.circuitId === 'linkedMultiQuery' && first.query.groupId === r.query.groupId)) {
      problems.push({
        pointer: at(r, 'requestId'),
        message: `duplicate requestId ${String(r.query.requestId)} (first used by ${base}/${first.index}): each proof request needs its own id ` +
          '(only the linkedMultiQuery rules of one group share theirs)',
      });
      continue;
    }
    same.push(r);
    byRequestId.set(r.query.requestId, same);
  }
  for (const same of byRequestId.values()) {
    const first = same[0];
    if (!first || first.circuitId !== 'linkedMultiQuery') continue;
    const beyond = same[LINKED_MAX_CONDITIONS];
    if (beyond) {
      problems.push({
        pointer: at(beyond, 'requestId'),
        message: `one linkedMultiQuery proof shows at most ${LINKED_MAX_CONDITIONS} conditions; request ${String(first.query.requestId)} has ${same.length}: ` +
          'give the others another requestId',
      });
    }
    const seen = new Map<string, CheckedRule>();
    for (const r of same) {
      const key = `${String(r.query.attribute)}\u0000${String(r.query.operator)}`;
      const twin = seen.get(key);
      if (twin) {
        problems.push({
          pointer: at(r, 'operator'),
          message: `${base}/${twin.index} asks ${String(r.query.operator)} on ${String(r.query.attribute)} in the same linkedMultiQuery proof: ` +
            'one condition per attribute and operator',
        });
      }
      seen.set(key, r);
    }
  }

  const byGroup = new Map<unknown, CheckedRule[]>();
  for (const r of rules) {
    if (r.query.groupId === undefined || !Number.isSafeInteger(r.query.groupId)) continue;
    byGroup.set(r.query.groupId, [...(byGroup.get(r.query.groupId) ?? []), r]);
  }
  for (const [groupId, members] of byGroup) {
    const [first, ...others] = members;
    if (!first) continue;
    for (const r of others) {
      if (r.query.type !== first.query.type) {
        problems.push({ pointer: at(r, 'type'), message: `the rules of group ${String(groupId)} are about one credential: type must be ${JSON.stringify(first.query.type)}, as in ${base}/${first.index}` });
      } else if (r.context !== first.context) {
        problems.push({ pointer: at(r, 'context'), message: `the rules of group ${String(groupId)} are about one credential: their JSON-LD context must be the same (${base}/${first.index} has ${String(first.context)})` });
      }
    }
    const linked = members.find((r) => r.circuitId === 'linkedMultiQuery');
    if (linked && !members.some((r) => r.circuitId === 'credentialAtomicQueryV3')) {
      problems.push({
        pointer: at(linked, 'groupId'),
        message: `group ${String(groupId)} needs a credentialAtomicQueryV3 rule: a linkedMultiQuery proof shows conditions on a credential, ` +
          'the V3 proof of the same group shows that the holder has that credential from a trusted issuer',
      });
    }
  }
  return problems;
}
