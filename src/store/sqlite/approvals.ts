import type Database from 'better-sqlite3';
import type { Scenario } from '../../schemas/scenario.js';
import { isUniqueViolation, ScenarioIdTaken } from '../errors.js';
import { APPROVE_REVISION, NEXT_REVISION, REJECT_REVISION, numbered, readRevision, type RevisionColumns } from '../revision-rows.js';
import { SCENARIO_COLUMNS, type ScenarioColumns } from '../rows.js';
import type { Revise, ScenarioApprovals, ScenarioRow } from '../types.js';
import { read, type Transactional } from './database.js';
import type { RevisionWrites } from './revisions.js';
import type { StopShadow } from './shadows.js';

/** A decision stops the proposal's shadow run in its transaction. */
export function sqliteApprovals(db: Database.Database, write: Transactional, revisions: RevisionWrites, stopShadow: StopShadow): ScenarioApprovals {
  const live = db.prepare<[number], number>('SELECT revision FROM scenarios WHERE seq = ?').pluck();
  const next = db.prepare<[Record<string, unknown>], number>(NEXT_REVISION).pluck();
  const one = db.prepare<[number, number], RevisionColumns>('SELECT * FROM scenario_revisions WHERE scenario_seq = ? AND revision = ?');
  const makeLive = db.prepare<[string, string | null, number, string, number, number], ScenarioColumns<string, string>>(
    `UPDATE scenarios SET input = ?, project_id = ?, revision = ?, updated_at = ? WHERE seq = ? AND revision = ? RETURNING ${SCENARIO_COLUMNS}`,
  );
  const approved = db.prepare<[Record<string, unknown>]>(APPROVE_REVISION);
  const rejected = db.prepare<[Record<string, unknown>]>(REJECT_REVISION);

  const proposeTx = write((current: ScenarioRow, input: Scenario, now: string, revise: Revise) => {
    if (live.get(current.seq) !== current.revision) return null;
    const revision = next.get(numbered([current.seq, current.revision])) ?? current.revision + 1;
    revisions.propose({ ...current, input, revision, updatedAt: now }, current.revision, revise);
    const row = one.get(current.seq, revision);
    return row ? readRevision(row) : null;
  });
  const approveTx = write((seq: number, revision: number, base: number, input: Scenario, decidedBy: string, now: string, revise: Revise) => {
    if (one.get(seq, revision)?.state !== 'proposed') return 'decided' as const;
    const row = makeLive.get(JSON.stringify(input), input.projectId ?? null, revision, now, seq, base);
    if (!row) return 'stale' as const;
    const scenario = read.scenario(row);
    const { made } = revise(scenario);
    approved.run(numbered([seq, revision, decidedBy, now, made.content, made.digest]));
    stopShadow(seq, revision, now);
    return scenario;
  });
  const rejectTx = write((seq: number, revision: number, decidedBy: string, now: string) => {
    if (rejected.run(numbered([seq, revision, decidedBy, now])).changes === 0) return false;
    stopShadow(seq, revision, now);
    return true;
  });

  return {
    propose: (current, input, now, revise) => proposeTx(current, input, now, revise),
    async approve({ seq, revision, base, input, decidedBy, now, revise }) {
      try {
        return await approveTx(seq, revision, base, input, decidedBy, now, revise);
      } catch (err) {
        if (isUniqueViolation(err)) throw new ScenarioIdTaken(input.projectId ?? null);
        throw err;
      }
    },
    reject: (incarnation, revision, decidedBy, now) => rejectTx(incarnation, revision, decidedBy, now),
  };
}
