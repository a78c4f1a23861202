import { PAGE_MAX_BYTES, type ScenarioColumns } from '../rows.js';
import {
  PURGE_REVISIONS, REVISION_ONE, REVISION_PAGE, REVISION_RAN, insertRevisionsSql, readRevision, revisionPage, revisionValues,
  type PagedRevision, type RevisionColumns,
} from '../revision-rows.js';
import type { Revise, ScenarioRevisionRepository, ScenarioRow } from '../types.js';
import { read, type PostgresDatabase } from './database.js';

type Row = ScenarioColumns<unknown, Date>;

export const PURGE_REVISIONS_CTE = `revisions AS (${PURGE_REVISIONS})`;

export function postgresRevisions({ query }: PostgresDatabase): ScenarioRevisionRepository {
  return {
    async listRevisions(incarnation, limit, after = 0) {
      const { rows } = await query<PagedRevision>(REVISION_PAGE, [incarnation, after, limit + 1, PAGE_MAX_BYTES]);
      return revisionPage(rows, limit);
    },
    async getRevision(incarnation, revision) {
      const { rows } = await query<RevisionColumns>(REVISION_ONE, [incarnation, revision]);
      return rows[0] && readRevision(rows[0]);
    },
    async revisionRan(run) {
      const { rows } = await query<RevisionColumns>(REVISION_RAN, [run.scenarioId, run.projectId ?? '', run.scenarioRevision, run.scenarioDigest ?? '', run.createdAt]);
      return rows[0] && readRevision(rows[0]);
    },
  };
}

/**
 * One scenario write (`text` RETURNING its row) and its revisions in one transaction. Revised from the row as read
 * back: jsonb orders keys its own way, and the content is what a GET reads.
 */
export function writeRevised({ pool, write, storage }: PostgresDatabase) {
  return async (text: string, values: unknown[], revise: Revise | undefined): Promise<ScenarioRow | null> => {
    if (!revise) {
      const { rows } = await write<Row>(text, values);
      return rows[0] ? read.scenario(rows[0]) : null;
    }
    return storage.write(async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<Row>(text, values);
        const row = rows[0] && read.scenario(rows[0]);
        if (row) {
          // Made whether missing or not: cheaper than a round trip to ask.
          const { made, replaced } = revise(row);
          const drafts = replaced ? [replaced.draft(), made] : [made];
          await client.query(insertRevisionsSql(drafts.length, (k) => `$${k + 1}`), drafts.flatMap((d) => revisionValues(row, d)));
        }
        await client.query('COMMIT');
        return row ?? null;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    });
  };
}
