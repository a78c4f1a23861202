/** Numbered schema migrations, applied in order, each once (recorded in schema_migrations). */
export interface Migration {
  version: number;
  sql: string;
}

export const sqliteMigrations: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE scenarios (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        input TEXT NOT NULL,
        project_id TEXT,
        revision INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX scenarios_project ON scenarios (project_id, seq);
    `,
  },
];

export const postgresMigrations: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE scenarios (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        input JSONB NOT NULL,
        project_id TEXT,
        revision INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX scenarios_project ON scenarios (project_id, seq);
    `,
  },
];
