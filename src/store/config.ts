// The store owns its options: src/config.ts composes `storeEnv` with the other modules' variables.
import fs from 'node:fs';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { ConfigError } from '../config/errors.js';
import { integer, oneOf, text } from '../config/variables.js';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string; synchronous: 'NORMAL' | 'FULL' }
  | {
    kind: 'postgres';
    url: string;
    /** A schema of its own, created when missing; unset = the server's default (public). */
    schema?: string;
    poolSize: number;
    statementTimeoutMs: number;
    connectionTimeoutMs: number;
  };

const postgresOnly = 'PostgreSQL only: ';

export const storeEnv = Type.Object({
  DATABASE_URL: Type.Optional(text({
    expect: 'a sqlite:// or postgres:// URL',
    docDefault: 'unset: SQLite at `$DATA_DIR/scenarios.db`',
    description: '`sqlite:///abs/path.db`, `sqlite://relative/path.db` (relative to the working directory), `sqlite://:memory:` or ' +
      '`postgres://user@host:port/db`.',
  })),
  DATA_DIR: text({ expect: 'a directory (created when missing)', default: './data', description: 'Directory of the default SQLite file.' }),
  DATABASE_SCHEMA: Type.Optional(text({
    expect: 'a lowercase SQL identifier (a-z, 0-9, _; at most 63 characters)',
    pattern: '^[a-z_][a-z0-9_]{0,62}$',
    docDefault: 'unset (the server\'s default, `public`)',
    description: `${postgresOnly}a schema of its own, created when missing.`,
  })),
  DATABASE_POOL_SIZE: integer(1, 1000, { default: 10, description: `${postgresOnly}connections per instance.` }),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(10, 600_000, {
    default: 2000,
    description: `${postgresOnly}a statement running longer is cancelled and the request answers 503.`,
  }),
  DATABASE_CONNECT_TIMEOUT_MS: integer(10, 600_000, {
    default: 2000,
    description: `${postgresOnly}how long to wait for a connection before answering 503.`,
  }),
  SQLITE_SYNCHRONOUS: oneOf(['NORMAL', 'FULL'] as const, {
    default: 'NORMAL',
    description: '`NORMAL`: a write survives a crash of the process; `FULL`: also a power loss (one fsync per commit).',
  }),
});

export type StoreEnv = Static<typeof storeEnv>;

/** DATABASE_URL unset: SQLite at DATA_DIR/scenarios.db; postgres:// or postgresql:// selects PostgreSQL. */
export function databaseConfig(env: StoreEnv): DatabaseConfig {
  const url = env.DATABASE_URL;
  const synchronous = env.SQLITE_SYNCHRONOUS;
  if (url === undefined) {
    // The store creates DATA_DIR when missing; a file in its place would only fail when the store opens.
    if (fs.statSync(env.DATA_DIR, { throwIfNoEntry: false })?.isDirectory() === false) {
      throw new ConfigError('DATA_DIR must be a directory (created when missing), not a file');
    }
    return { kind: 'sqlite', file: path.resolve(env.DATA_DIR, 'scenarios.db'), synchronous };
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    if (!URL.canParse(url)) throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    return {
      kind: 'postgres',
      url,
      schema: env.DATABASE_SCHEMA,
      poolSize: env.DATABASE_POOL_SIZE,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      connectionTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
    };
  }
  const sqlite = /^sqlite:\/\/(.+)$/i.exec(url);
  const rest = sqlite?.[1];
  if (rest !== undefined) {
    if (rest === ':memory:' || rest === '/:memory:') return { kind: 'sqlite', file: ':memory:', synchronous };
    return { kind: 'sqlite', file: rest.startsWith('/') ? rest : path.resolve(rest), synchronous };
  }
  throw new ConfigError('DATABASE_URL must start with sqlite:// or postgres:// (see README)');
}

/** `host:port/database`, never the user or password; `?host=` and `?port=` win, as they do for the driver. */
export function postgresTarget(url: string): string {
  const u = new URL(url);
  const host = u.searchParams.get('host') ?? (decodeURIComponent(u.hostname) || 'localhost');
  const port = u.searchParams.get('port') ?? (u.port || '5432');
  const database = decodeURIComponent(u.pathname.slice(1));
  return `${host}:${port}/${database || '(the user\'s default database)'}`;
}

/** Without credentials: `SQLite /data/scenarios.db`, `PostgreSQL host:5432/db`. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === 'sqlite') return database.file === ':memory:' ? 'SQLite in memory (gone at exit)' : `SQLite ${database.file}`;
  return `PostgreSQL ${postgresTarget(database.url)}${database.schema === undefined ? '' : ` schema ${database.schema}`}`;
}
