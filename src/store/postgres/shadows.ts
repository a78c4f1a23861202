import type pg from 'pg';
import {
  CLEAR_SHADOW, COUNTS, FLIPPED, REVISION_STATE, RUN, SET_SHADOW, SHADOW_HEAD, SKIPPED, START_RUN, STOP_RUN, byRuleSql,
  comparisonValues, flippedPage, insertComparisonsSql, shadowRun, skipValues, type RunRow,
} from '../shadow-rows.js';
import { guard } from '../errors.js';
import type { ShadowRepository } from '../types.js';
import type { PostgresDatabase } from './database.js';
import { inTransaction } from './revisions.js';

const BY_RULE = byRuleSql('jsonb_array_elements(c.rules::jsonb) r', (name) => `r->>'${name}'`);

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
        const { rows: [counts] } = await client.query<{ compared: string; flipped: string }>(COUNTS, key);
        const { rows } = await client.query<{ id: string; live: string | null; shadow: string | null; n: string }>(BY_RULE, key);
        const page = await client.query<{ seq: string; execution_id: string }>(FLIPPED, [incarnation, revision, after, limit + 1]);
        return flippedPage(shadowRun(run, counts ?? { compared: 0, flipped: 0 }, rows), page.rows, limit);
      } finally {
        await client.query('ROLLBACK').catch(() => {});
        client.release();
      }
    }),
    async recordComparisons(comparisons, skips) {
      if (comparisons.length === 0 && skips.length === 0) return;
      await inTransaction(db, async (client) => {
        if (comparisons.length > 0) {
          await client.query(insertComparisonsSql(comparisons.length, (k) => `$${k + 1}`), comparisons.flatMap(comparisonValues));
        }
        for (const s of skips) await client.query(SKIPPED, skipValues(s));
      });
    },
  };
}
