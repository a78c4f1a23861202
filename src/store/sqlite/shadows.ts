import type Database from 'better-sqlite3';
import { numbered } from '../revision-rows.js';
import {
  BY_RULE, CLEAR_SHADOW, COUNTED, FLIPPED, PURGED_COMPARISONS, PURGE_COMPARISONS, REVISION_STATE, RULE_COUNTED, RUN, RUN_EXISTS, SET_SHADOW,
  SHADOW_HEAD, SQLITE_RULES, START_RUN, STOP_RUN, batchCounts, comparisonValues, flippedPage, insertComparisonsSql, shadowRun,
  uncountRulesSql, uncountRunsSql, type RunRow,
} from '../shadow-rows.js';
import type { ShadowComparison, ShadowRepository, ShadowSkip } from '../types.js';
import type { Transactional } from './database.js';

const CHUNK = 32;

/** Run inside approve's and reject's transactions. */
export type StopShadow = (incarnation: number, revision: number, now: string) => void;

/** Run inside the retention purge's transaction: the counts lose what the delete takes, read before it. */
export function sqlitePurgeComparisons(db: Database.Database): (createdBefore: string) => void {
  const gone = `(${PURGED_COMPARISONS})`;
  const runs = db.prepare<[Record<string, unknown>]>(uncountRunsSql(gone));
  const rules = db.prepare<[Record<string, unknown>]>(uncountRulesSql(gone, ...SQLITE_RULES));
  const purge = db.prepare<[Record<string, unknown>]>(PURGE_COMPARISONS);
  return (createdBefore) => {
    const key = numbered([createdBefore]);
    runs.run(key);
    rules.run(key);
    purge.run(key);
  };
}

export function sqliteShadows(db: Database.Database, write: Transactional): { repository: ShadowRepository; stop: StopShadow } {
  const head = db.prepare<[Record<string, unknown>], { shadow: number | null }>(SHADOW_HEAD);
  const state = db.prepare<[Record<string, unknown>], { state: string }>(REVISION_STATE);
  const set = db.prepare<[Record<string, unknown>]>(SET_SHADOW);
  const startRun = db.prepare<[Record<string, unknown>]>(START_RUN);
  const clear = db.prepare<[Record<string, unknown>]>(CLEAR_SHADOW);
  const stopRun = db.prepare<[Record<string, unknown>]>(STOP_RUN);
  const run = db.prepare<[Record<string, unknown>], RunRow>(RUN);
  const exists = db.prepare<[Record<string, unknown>], { found: number }>(RUN_EXISTS);
  const rules = db.prepare<[Record<string, unknown>], { id: string; live: string; shadow: string; n: number }>(BY_RULE);
  const counted = db.prepare<[Record<string, unknown>]>(COUNTED);
  const ruleCounted = db.prepare<[Record<string, unknown>]>(RULE_COUNTED);
  const flipped = db.prepare<[Record<string, unknown>], { seq: number; execution_id: string }>(FLIPPED);
  const insertOne = db.prepare<unknown[]>(insertComparisonsSql(1, () => '?'));
  // Whole chunks in one statement: a third of the per-row cost of single inserts (the bench's profile).
  const insertChunk = db.prepare<unknown[]>(insertComparisonsSql(CHUNK, () => '?'));

  const stop: StopShadow = (incarnation, revision, now) => {
    clear.run(numbered([incarnation, revision]));
    stopRun.run(numbered([incarnation, revision, now]));
  };
  const startTx = write((incarnation: number, revision: number, by: string | null, now: string) => {
    const row = head.get(numbered([incarnation]));
    if (!row) return 'gone' as const;
    if (state.get(numbered([incarnation, revision]))?.state !== 'proposed') return 'not-proposed' as const;
    if (row.shadow !== null && row.shadow !== revision) return 'busy' as const;
    set.run(numbered([incarnation, revision]));
    startRun.run(numbered([incarnation, revision, now, by]));
    return 'started' as const;
  });
  const stopTx = write(stop);
  const recordTx = write((comparisons: readonly ShadowComparison[], skips: readonly ShadowSkip[]) => {
    let i = 0;
    for (; i + CHUNK <= comparisons.length; i += CHUNK) insertChunk.run(...comparisons.slice(i, i + CHUNK).flatMap(comparisonValues));
    for (; i < comparisons.length; i++) insertOne.run(...comparisonValues(comparisons[i] as ShadowComparison));
    const { runs, rules: byRule } = batchCounts(comparisons, skips);
    for (const r of runs) counted.run(numbered(r));
    for (const r of byRule) ruleCounted.run(numbered(r));
  });

  return {
    stop,
    repository: {
      startShadow: (incarnation, revision, by, now) => startTx(incarnation, revision, by, now),
      stopShadow: (incarnation, revision, now) => stopTx(incarnation, revision, now),
      // One synchronous turn: no write comes between the reads.
      async shadowRun(incarnation, revision, limit, after = 0) {
        const key = numbered([incarnation, revision]);
        const found = run.get(key);
        if (!found) return undefined;
        return flippedPage(shadowRun(found, rules.all(key)), flipped.all(numbered([incarnation, revision, after, limit + 1])), limit);
      },
      hasShadowRun: async (incarnation, revision) => exists.get(numbered([incarnation, revision])) !== undefined,
      recordComparisons: (comparisons, skips) => recordTx(comparisons, skips),
    },
  };
}
