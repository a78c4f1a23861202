import { isUniqueViolation, ScenarioIdTaken } from '../errors.js';
import { APPROVE_REVISION, NEXT_REVISION, REJECT_REVISION, REVISION_ONE, readRevision, type RevisionColumns } from '../revision-rows.js';
import { SCENARIO_COLUMNS, type ScenarioColumns } from '../rows.js';
import type { ScenarioApprovals } from '../types.js';
import { read, type PostgresDatabase } from './database.js';
import { inTransaction, insertRevised } from './revisions.js';
import { stopShadowIn } from './shadows.js';

export function postgresApprovals(db: PostgresDatabase): ScenarioApprovals {
  return {
    // The row's lock orders proposals of one scenario, so each takes its own number.
    propose: (current, input, now, revise) => inTransaction(db, async (client) => {
      const { rows: [live] } = await client.query<{ revision: number }>('SELECT revision FROM scenarios WHERE seq = $1 FOR UPDATE', [current.seq]);
      if (live?.revision !== current.revision) return null;
      const { rows: [next] } = await client.query<{ next: number }>(NEXT_REVISION, [current.seq, current.revision]);
      const revision = next?.next ?? current.revision + 1;
      await insertRevised(client, { ...current, input, revision, updatedAt: now }, revise, current.revision);
      const { rows: [made] } = await client.query<RevisionColumns>(REVISION_ONE, [current.seq, revision]);
      return made ? readRevision(made) : null;
    }),
    async approve({ seq, revision, base, input, decidedBy, now, revise }) {
      try {
        return await inTransaction(db, async (client) => {
          const { rows: [proposal] } = await client.query<{ state: string }>(
            'SELECT state FROM scenario_revisions WHERE scenario_seq = $1 AND revision = $2 FOR UPDATE', [seq, revision],
          );
          if (proposal?.state !== 'proposed') return 'decided' as const;
          const { rows: [row] } = await client.query<ScenarioColumns<unknown, Date>>(
            `UPDATE scenarios SET input = $1, project_id = $2, revision = $3, updated_at = $4 WHERE seq = $5 AND revision = $6 RETURNING ${SCENARIO_COLUMNS}`,
            [JSON.stringify(input), input.projectId ?? null, revision, now, seq, base],
          );
          if (!row) return 'stale' as const;
          const scenario = read.scenario(row);
          const { made } = revise(scenario);
          await client.query(APPROVE_REVISION, [seq, revision, decidedBy, now, made.content, made.digest]);
          await stopShadowIn(client, seq, revision, now);
          return scenario;
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new ScenarioIdTaken(input.projectId ?? null);
        throw err;
      }
    },
    // A decision stops the proposal's shadow run in its transaction.
    reject: (incarnation, revision, decidedBy, now) => inTransaction(db, async (client) => {
      const { rowCount } = await client.query(REJECT_REVISION, [incarnation, revision, decidedBy, now]);
      if (!rowCount) return false;
      await stopShadowIn(client, incarnation, revision, now);
      return true;
    }),
  };
}
