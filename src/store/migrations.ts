export interface Migration {
  version: number;
  sql: string;
}

/** The lease the chain follower holds (src/services/deployment-follower.ts): one instance follows at a time. */
export const LEASES_TABLE = 'CREATE TABLE service_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at TEXT NOT NULL);';

/** These end both dialects' lists. */
export const SAME_IN_BOTH: Migration[] = [
  {
    version: 11,
    sql: 'ALTER TABLE webhook_deliveries ADD COLUMN replay_requested INTEGER NOT NULL DEFAULT 0;',
  },
  {
    version: 12,
    sql: `
      ALTER TABLE executions ADD COLUMN scenario_digest TEXT;
      ALTER TABLE executions ADD COLUMN holder_bound INTEGER;
    `,
  },
  {
    // Text, to the byte; no foreign key: kept while executions ran them.
    version: 13,
    sql: `
      CREATE TABLE scenario_revisions (
        scenario_seq BIGINT NOT NULL,
        revision INTEGER NOT NULL,
        scenario_id TEXT NOT NULL,
        project_id TEXT,
        content TEXT NOT NULL,
        digest TEXT NOT NULL,
        patch TEXT,
        author TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (scenario_seq, revision)
      );
      CREATE INDEX scenario_revisions_ran ON scenario_revisions (scenario_id, revision);
    `,
  },
  {
    // Export pages by (created_at, seq).
    version: 14,
    sql: `
      CREATE INDEX executions_period ON executions (created_at, seq);
      DROP INDEX executions_created;
    `,
  },
  {
    // Four eyes: proposals beside the live revisions.
    version: 15,
    sql: `
      ALTER TABLE scenario_revisions ADD COLUMN state TEXT NOT NULL DEFAULT 'live';
      ALTER TABLE scenario_revisions ADD COLUMN base_revision INTEGER;
      ALTER TABLE scenario_revisions ADD COLUMN decided_by TEXT;
      ALTER TABLE scenario_revisions ADD COLUMN decided_at TEXT;
    `,
  },
  {
    // A project's export reads only its own executions.
    version: 16,
    sql: 'CREATE INDEX executions_project_period ON executions (project_id, created_at, seq);',
  },
];

/** After each dialect's 17 (the follower's). */
export const CHAIN_SENDS: Migration[] = [
  {
    // Deploy transactions: one row per (chain, sender) holds the next nonce and is locked while a send takes one; each
    // signed transaction is stored before it is broadcast, so a restart sends it again rather than signing another.
    version: 18,
    sql: `
      CREATE TABLE chain_senders (
        chain TEXT NOT NULL,
        sender TEXT NOT NULL,
        next_nonce BIGINT NOT NULL,
        PRIMARY KEY (chain, sender)
      );
      CREATE TABLE chain_sends (
        id TEXT PRIMARY KEY,
        chain TEXT NOT NULL,
        sender TEXT NOT NULL,
        nonce BIGINT NOT NULL,
        request TEXT NOT NULL,
        raw TEXT,
        tx_hash TEXT,
        purpose TEXT NOT NULL,
        state TEXT NOT NULL,
        replaces TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX chain_sends_open ON chain_sends (state, chain, sender, nonce);
    `,
  },
];
/** After each dialect's 20. The follower looks up its deployments' transactions by hash (sendsWithHashes) every round. */
export const CHAIN_SENDS_BY_HASH: Migration = {
  version: 21,
  sql: 'CREATE INDEX chain_sends_hash ON chain_sends (chain, tx_hash);',
};

/** `results`' verdict as verdictOf gives it; `hasStatus(results, s)` is the dialect's test for a rule of status `s`. */
export type HasStatus = (results: string, status: string) => string;
export const verdictSql = (hasStatus: HasStatus, results: string) => `CASE WHEN ${hasStatus(results, 'not-valid')} THEN 'failed'
  WHEN ${hasStatus(results, 'error')} THEN 'error' WHEN ${hasStatus(results, 'pending')} THEN 'pending' ELSE 'passed' END`;

/**
 * After each dialect's 21. Each execution's verdict kept beside its results, so the decisions filters and counts read
 * an indexed column. Only the column, indexes and the dialect's `triggers` here: they set the verdict of rows an older
 * instance writes without it (rolling upgrade); existing rows are filled in batches after start (VERDICT_BACKFILL),
 * found by the partial index of the rows without one.
 */
export const verdictMigration = (triggers: string): Migration => ({
  version: 22,
  sql: `
    ALTER TABLE executions ADD COLUMN verdict TEXT;
    CREATE INDEX executions_scenario_verdict ON executions (scenario_id, verdict, seq);
    CREATE INDEX executions_scenario_address ON executions (scenario_id, address, seq);
    CREATE INDEX executions_scenario_period ON executions (scenario_id, created_at, verdict, project_id);
    CREATE INDEX executions_verdict_missing ON executions (seq) WHERE verdict IS NULL;
    ${triggers}
  `,
});

/** Rows a backfill batch fills: each its own short transaction. */
export const VERDICT_BACKFILL_BATCH = 1000;
export const verdictBackfill = (hasStatus: HasStatus) => `UPDATE executions SET verdict = ${verdictSql(hasStatus, 'results')}
  WHERE seq IN (SELECT seq FROM executions WHERE verdict IS NULL ORDER BY seq LIMIT ${VERDICT_BACKFILL_BATCH})`;

/**
 * Migration 19 in both dialects but for the key and the time (an execution's type, compared by the purge): the shadowed revision on the head row execute reads anyway, each
 * shadow run's start and stop, and per comparison only statuses (no credential, no address). `created_at` is the
 * execution's, so the retention purge takes a comparison with its execution.
 */
export const shadowMigration = (seqKey: string, time: string) => `
  ALTER TABLE scenarios ADD COLUMN shadow_revision INTEGER;
  CREATE TABLE shadow_runs (
    scenario_seq BIGINT NOT NULL,
    revision INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    started_by TEXT,
    stopped_at TEXT,
    skipped BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (scenario_seq, revision)
  );
  CREATE TABLE shadow_comparisons (
    seq ${seqKey},
    scenario_seq BIGINT NOT NULL,
    revision INTEGER NOT NULL,
    execution_id TEXT NOT NULL,
    created_at ${time} NOT NULL,
    flipped INTEGER NOT NULL,
    rules TEXT NOT NULL
  );
  CREATE INDEX shadow_comparisons_run ON shadow_comparisons (scenario_seq, revision, flipped, seq);
  CREATE INDEX shadow_comparisons_created ON shadow_comparisons (created_at);
`;

/**
 * Shadow counts kept as comparisons are written (a read no longer folds every comparison's rules): run-level counters
 * and one row per (rule, live status, shadow status). '' stands for a rule absent from one side (NULL cannot be in a
 * primary key). Existing comparisons are folded in; `rules`/`field` name the dialect's JSON rows as in byRuleSql.
 */
export const shadowCountsMigration = (rules: string, field: (name: string) => string) => `
  ALTER TABLE shadow_runs ADD COLUMN compared BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE shadow_runs ADD COLUMN flipped BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE shadow_runs ADD COLUMN undecided BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE shadow_comparisons ADD COLUMN undecided INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE shadow_rule_counts (
    scenario_seq BIGINT NOT NULL,
    revision INTEGER NOT NULL,
    rule_id TEXT NOT NULL,
    live TEXT NOT NULL,
    shadow TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (scenario_seq, revision, rule_id, live, shadow)
  );
  UPDATE shadow_runs SET
    compared = (SELECT count(*) FROM shadow_comparisons c WHERE c.scenario_seq = shadow_runs.scenario_seq AND c.revision = shadow_runs.revision),
    flipped = (SELECT COALESCE(sum(c.flipped), 0) FROM shadow_comparisons c
      WHERE c.scenario_seq = shadow_runs.scenario_seq AND c.revision = shadow_runs.revision);
  INSERT INTO shadow_rule_counts (scenario_seq, revision, rule_id, live, shadow, n)
    SELECT c.scenario_seq, c.revision, ${field('id')}, COALESCE(${field('live')}, ''), COALESCE(${field('shadow')}, ''), count(*)
    FROM shadow_comparisons c, ${rules} GROUP BY 1, 2, 3, 4, 5;
`;
