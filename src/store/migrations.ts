export interface Migration {
  version: number;
  sql: string;
}

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
    // Export pages by (created_at, seq).
    version: 14,
    sql: `
      CREATE INDEX executions_period ON executions (created_at, seq);
      DROP INDEX executions_created;
    `,
  },
];
