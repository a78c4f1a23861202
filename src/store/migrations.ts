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
