import type pg from 'pg';
import { DEPLOYMENT_DELIVERY_INSERT, PAGE_MAX_BYTES, webhookValues, type ScenarioColumns } from '../rows.js';
import {
  PURGE_REVISIONS, REVISION_ONE, REVISION_PAGE, REVISION_RAN, insertRevisionsSql, readRevision, revisionPage, revisionValues,
  type PagedRevision, type RevisionColumns,
} from '../revision-rows.js';
import type { Revise, ScenarioRevisionRepository, ScenarioRow } from '../types.js';
import { guard } from '../errors.js';
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
export function writeRevised(db: PostgresDatabase) {
  return async (text: string, values: unknown[], revise: Revise | undefined, lockSeq?: number): Promise<ScenarioRow | null> => {
    if (!revise && lockSeq === undefined) {
      const { rows } = await db.write<Row>(text, values);
      return rows[0] ? read.scenario(rows[0]) : null;
    }
    return inTransaction(db, async (client) => {
      // The row locked by a statement of its own: the write's numbering then reads, in a fresh snapshot, a proposal
      // committed while it waited (one statement would number from the snapshot it took before the wait).
      if (lockSeq !== undefined) await client.query('SELECT 1 FROM scenarios WHERE seq = $1 FOR UPDATE', [lockSeq]);
      const { rows } = await client.query<Row>(text, values);
      const row = rows[0] && read.scenario(rows[0]);
      // Made whether missing or not: cheaper than a round trip to ask.
      if (row && revise) await insertRevised(client, row, revise);
      return row ?? null;
    });
  };
}

/** `base`: a proposal's live revision. */
export async function insertRevised(client: pg.PoolClient, row: ScenarioRow, revise: Revise, base: number | null = null) {
  const { made, replaced, deliveries = [] } = revise(row);
  const values = [...(replaced ? revisionValues(row, replaced.draft()) : []), ...revisionValues(row, made, base)];
  await client.query(insertRevisionsSql(replaced ? 2 : 1, (k) => `$${k + 1}`), values);
  for (const d of deliveries) await client.query(DEPLOYMENT_DELIVERY_INSERT((k) => `$${k + 1}`), [...webhookValues(d), row.input.projectId ?? null]);
}

/** Rolled back when `work` throws. */
async function transaction<T>(pool: pg.Pool, begin: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** `work` in one REPEATABLE READ, READ ONLY transaction on one connection: its reads see one snapshot. */
export function readOnly<T>({ pool }: PostgresDatabase, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return guard(() => transaction(pool, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', work));
}

export async function inTransaction<T>({ pool, storage }: PostgresDatabase, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return storage.write(() => transaction(pool, 'BEGIN', work));
}
