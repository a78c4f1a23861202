import type pg from 'pg';
import {
  BY_RULE, CLEAR_SHADOW, COUNTED, FLIPPED, PG_RULES, PURGED_COLUMNS, PURGE_COMPARISONS, REVISION_STATE, RULE_COUNTED, RUN, RUN_EXISTS,
  SET_SHADOW, SHADOW_HEAD, START_RUN, STOP_RUN, batchCounts, comparisonValues, flippedPage, insertComparisonsSql, shadowRun,
  uncountRulesSql, uncountRunsSql, type RunRow,
} from '../shadow-rows.js';
import { guard } from '../errors.js';
import type { ShadowRepository } from '../types.js';
import type { PostgresDatabase } from './database.js';
import { inTransaction } from './revisions.js';

/**
 * CTEs of the retention purge's one statement: the comparisons deleted (RETURNING what they counted) and the counts
 * lessened by them, grouped; one statement, so one transaction.
 */
export const PURGE_COMPARISONS_CTES = `shadows AS (${PURGE_COMPARISONS} RETURNING ${PURGED_COLUMNS}),
  shadow_run_counts AS (${uncountRunsSql('shadows')}),
  shadow_rule_uncounts AS (${uncountRulesSql('shadows', ...PG_RULES)})`;

/** In approve's and reject's transactions, after their write to the revision. */
export async function stopShadowIn(client: pg.PoolClient, incarnation: number, revision: number, now: string): Promise<void> {
  await client.query(CLEAR_SHADOW, [incarnation, revision]);
  await client.query(STOP_RUN, [incarnation, revision, now]);
}

export function postgresShadows(db: PostgresDatabase): ShadowRepository {
  return {
    // The scenario's row locked first: approve and reject write the revision, then that row, so a start that read
    // "proposed" is cleared by the decision that follows it.
    startShadow: (incarnation, revision, by, now) => inTransaction(db, async (client) => {
      const { rows: [row] } = await client.query<{ shadow: number | null }>(`${SHADOW_HEAD} FOR UPDATE`, [incarnation]);
      if (!row) return 'gone' as const;
      const { rows: [kept] } = await client.query<{ state: string }>(REVISION_STATE, [incarnation, revision]);
      if (kept?.state !== 'proposed') return 'not-proposed' as const;
      if (row.shadow !== null && row.shadow !== revision) return 'busy' as const;
      await client.query(SET_SHADOW, [incarnation, revision]);
      await client.query(START_RUN, [incarnation, revision, now, by]);
      return 'started' as const;
    }),
    stopShadow: (incarnation, revision, now) => inTransaction(db, (client) => stopShadowIn(client, incarnation, revision, now)),
    // One snapshot: counts and page agree while another instance writes comparisons.
    shadowRun: (incarnation, revision, limit, after = 0) => guard(async () => {
      const client = await db.pool.connect();
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const key = [incarnation, revision];
        const { rows: [run] } = await client.query<RunRow>(RUN, key);
        if (!run) return undefined;
        const { rows } = await client.query<{ id: string; live: string; shadow: string; n: string }>(BY_RULE, key);
        const page = await client.query<{ seq: string; execution_id: string }>(FLIPPED, [incarnation, revision, after, limit + 1]);
        return flippedPage(shadowRun(run, rows), page.rows, limit);
      } finally {
        await client.query('ROLLBACK').catch(() => {});
        client.release();
      }
    }),
    hasShadowRun: async (incarnation, revision) => (await db.query(RUN_EXISTS, [incarnation, revision])).rows.length > 0,
    async recordComparisons(comparisons, skips) {
      if (comparisons.length === 0 && skips.length === 0) return;
      await inTransaction(db, async (client) => {
        if (comparisons.length > 0) {
          await client.query(insertComparisonsSql(comparisons.length, (k) => `$${k + 1}`), comparisons.flatMap(comparisonValues));
        }
        const { runs, rules } = batchCounts(comparisons, skips);
        for (const r of runs) await client.query(COUNTED, r);
        for (const r of rules) await client.query(RULE_COUNTED, r);
      });
    },
  };
}
