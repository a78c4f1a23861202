/** What the store contract files share: both backends, one store of each per file, and the records they write. */
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { ExecutionRecord, Store } from '../../src/store/types.js';
import type { Scenario } from '../../src/schemas/scenario.js';
import { scenario, tempDir } from '../helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from '../pg.js';

/** A claim that skips nothing and takes up to 100 of one target. */
export const fair = { perTarget: 100, perProject: 1000, scan: 500, skipTargets: [], skipProjects: [], targetRooms: {}, projectRooms: {} };
export const input = (over: Record<string, unknown> = {}) => scenario(over) as unknown as Scenario;
export const now = () => new Date().toISOString();

type Backend = [string, () => Promise<Store>, boolean];

/** SQLite in a fresh file and PostgreSQL in fresh schemas, which are dropped once the file's tests end. */
export function storeBackends(prefix: string): Backend[] {
  const schema = freshSchema(prefix);
  afterAll(async () => {
    if (!pgAvailable) return;
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    const { rows } = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`${schema}%`]);
    await client.end();
    for (const r of rows) await dropSchema(r.nspname);
  });
  return [
    ['sqlite', async () => openSqliteStore({ file: path.join(tempDir(), 's.db'), synchronous: 'NORMAL' }), true],
    ['postgres', async () => openPostgresStore({ url: PG_URL, schema: `${schema}_${Math.random().toString(36).slice(2, 6)}` }), pgAvailable],
  ];
}

/** The store a describe block's tests share: opened before them (when its backend is available), closed after. */
export function sharedStore(open: () => Promise<Store>, available: boolean): Store {
  let store: Store | undefined;
  beforeAll(async () => {
    if (available) store = await open();
  });
  afterAll(async () => {
    await store?.close();
  });
  return new Proxy({} as Store, {
    get(_target, prop) {
      if (store === undefined) throw new Error('the store is not open');
      return Reflect.get(store, prop);
    },
  });
}

export const execution = (over: Partial<ExecutionRecord> = {}): ExecutionRecord => ({
  executionId: crypto.randomUUID(),
  scenarioId: 'audited',
  scenarioRevision: 3,
  projectId: 'proj',
  address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  state: 'completed',
  results: [{
    objectType: 'ChallengeQuery', objectId: 'q', name: 'n', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    scenarioId: 'audited', executionId: 'x',
    result: { result: { is_valid: false, reasons: ['r1', 'r2'] }, executionId: 'x', status: 'not-valid', query: { type: 'T', operator: '$noop' } },
  }],
  credentials: [{ id: 'urn:uuid:1', sha256: 'a'.repeat(64) }],
  createdAt: '2026-03-04T05:06:07.089Z',
  updatedAt: '2026-03-04T05:06:07.089Z',
  ...over,
});
