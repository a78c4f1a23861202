import type Database from 'better-sqlite3';
import { numbered } from '../revision-rows.js';
import {
  CLEAR_SHADOW, COUNTS, FLIPPED, REVISION_STATE, RUN, SET_SHADOW, SHADOW_HEAD, SKIPPED, START_RUN, STOP_RUN, byRuleSql,
  comparisonValues, flippedPage, insertComparisonsSql, shadowRun, skipValues, type RunRow,
} from '../shadow-rows.js';
import type { ShadowComparison, ShadowRepository, ShadowSkip } from '../types.js';
import type { Transactional } from './database.js';

const CHUNK = 32;

/** Run inside approve's and reject's transactions. */
export type StopShadow = (incarnation: number, revision: number, now: string) => void;

export function sqliteShadows(db: Database.Database, write: Transactional): { repository: ShadowRepository; stop: StopShadow } {
  const head = db.prepare<[Record<string, unknown>], { shadow: number | null }>(SHADOW_HEAD);
  const state = db.prepare<[Record<string, unknown>], { state: string }>(REVISION_STATE);
  const set = db.prepare<[Record<string, unknown>]>(SET_SHADOW);
  const startRun = db.prepare<[Record<string, unknown>]>(START_RUN);
  const clear = db.prepare<[Record<string, unknown>]>(CLEAR_SHADOW);
  const stopRun = db.prepare<[Record<string, unknown>]>(STOP_RUN);
  const run = db.prepare<[Record<string, unknown>], RunRow>(RUN);
  const counts = db.prepare<[Record<string, unknown>], { compared: number; flipped: number }>(COUNTS);
  const rules = db.prepare<[Record<string, unknown>], { id: string; live: string | null; shadow: string | null; n: number }>(
    byRuleSql('json_each(c.rules) r', (name) => `json_extract(r.value, '$.${name}')`),
  );
  const flipped = db.prepare<[Record<string, unknown>], { seq: number; execution_id: string }>(FLIPPED);
  const skipped = db.prepare<[Record<string, unknown>]>(SKIPPED);
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
    for (const s of skips) skipped.run(numbered(skipValues(s)));
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
        const counted = shadowRun(found, counts.get(key) ?? { compared: 0, flipped: 0 }, rules.all(key));
        return flippedPage(counted, flipped.all(numbered([incarnation, revision, after, limit + 1])), limit);
      },
      recordComparisons: (comparisons, skips) => recordTx(comparisons, skips),
    },
  };
}
