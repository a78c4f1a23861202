import type { DatabaseConfig } from '../config.js';
import { openSqliteStore } from './sqlite.js';
import type { ScenarioStore } from './types.js';

export type { ScenarioStore, ScenarioRow, ScenarioPage } from './types.js';

export async function openStore(config: DatabaseConfig): Promise<ScenarioStore> {
  if (config.kind === 'sqlite') return openSqliteStore(config);
  const { openPostgresStore } = await import('./postgres.js');
  return openPostgresStore({ url: config.url });
}
