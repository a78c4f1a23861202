import { postgresTarget, type DatabaseConfig } from './config.js';
import { postgresStartError } from './errors.js';
import { openSqliteStore } from './sqlite.js';
import { observeStore, type StoreObserver } from './observer.js';
import type { Store } from './types.js';

export type * from './types.js';

/**
 * Opens the configured database and brings its schema up to date (migrations run here). A PostgreSQL that cannot be
 * used (no such database, nothing listening, a refused login) is a ConfigError whose one line says what to do.
 * `observer` (the metrics) is told of every operation.
 */
export async function openStore(config: DatabaseConfig, onError?: (err: Error) => void, observer?: StoreObserver): Promise<Store> {
  const observed = (store: Store) => (observer ? observeStore(store, observer) : store);
  if (config.kind === 'sqlite') return observed(openSqliteStore(config));
  const { openPostgresStore } = await import('./postgres.js');
  try {
    return observed(await openPostgresStore({
      url: config.url,
      schema: config.schema,
      poolSize: config.poolSize,
      statementTimeoutMs: config.statementTimeoutMs,
      connectionTimeoutMs: config.connectionTimeoutMs,
      onError,
    }));
  } catch (err) {
    throw postgresStartError(err, postgresTarget(config.url), config.connectionTimeoutMs) ?? err;
  }
}
