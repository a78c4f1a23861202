/**
 * "One holder, one address": a V3 rule's nullifier identifies the holder; the first address it comes with in a
 * scenario keeps it. Only SHA-256 hashes are stored.
 */
import { createHash } from 'node:crypto';
import type { ExecutionRecord, NullifierRepository } from '../../store/types.js';
import type { ZkpVerdict } from '../../zkp/verify-types.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Without the nullifiers themselves. */
export async function bindNullifiers(nullifiers: NullifierRepository, record: ExecutionRecord, verdicts: readonly ZkpVerdict[], now: number): Promise<ZkpVerdict[]> {
  const out: ZkpVerdict[] = [];
  for (const verdict of verdicts) {
    const { nullifier, ...checked } = verdict;
    if (nullifier !== undefined && checked.is_valid) {
      const addressHash = sha256(`address\n${record.address}`);
      const holder = await nullifiers.bindNullifier({
        projectId: record.projectId ?? '',
        scenarioId: record.scenarioId,
        nullifierHash: sha256(`iden3 nullifier\n${nullifier}`),
        addressHash,
        at: new Date(now).toISOString(),
      });
      if (holder !== addressHash) {
        checked.is_valid = false;
        checked.status = 'not-valid';
        checked.reasons = [...checked.reasons, 'the holder of this credential already proved this rule for another address in this scenario ' +
          '(the same nullifier): one holder, one address'];
        delete checked.disclosed;
      }
    }
    out.push(checked);
  }
  return out;
}
