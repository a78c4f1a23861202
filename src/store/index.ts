import { postgresTarget, type DatabaseConfig } from './config.js';
import { postgresStartError } from './errors.js';
import { openSqliteStore } from './sqlite.js';
import { observeStore, type StoreObserver } from './observer.js';
import type { Store } from './types.js';

export type * from './types.js';

/** Opens the database and migrates it. An unusable PostgreSQL is a ConfigError saying what to do. */
export async function openStore(config: DatabaseConfig, onError?: (err: Error) => void, observer?: StoreObserver): Promise<Store> {
  const observed = (store: Store) => (observer ? observeStore(store, observer) : store);
  if (config.kind === 'sqlite') return observed(openSqliteStore({ ...config, onError }));
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
