import type { DatabaseConfig } from './config.js';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './types.js';

export type * from './types.js';

/** Opens the configured database and brings its schema up to date (migrations run here). */
export async function openStore(config: DatabaseConfig, onError?: (err: Error) => void): Promise<Store> {
  if (config.kind === 'sqlite') return openSqliteStore(config);
  const { openPostgresStore } = await import('./postgres.js');
  return openPostgresStore({
    url: config.url,
    schema: config.schema,
    poolSize: config.poolSize,
    statementTimeoutMs: config.statementTimeoutMs,
    connectionTimeoutMs: config.connectionTimeoutMs,
    onError,
  });
}
