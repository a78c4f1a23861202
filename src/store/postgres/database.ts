import type pg from 'pg';
import { readers } from '../rows.js';
import type { StorageState } from '../storage-state.js';

/** The pool and how the repositories reach it: reads through `query`, writes through `write` (the storage state). */
export interface PostgresDatabase {
  pool: pg.Pool;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  write<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  storage: StorageState;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type Paged<R> = R & { page_rows: string };

export const read = readers<unknown, Date>({ json: (v) => v, time: (v) => v.toISOString() });

export const placeholders = (count: number) => Array.from({ length: count }, (_, k) => `$${k + 1}`).join(', ');
