import { EXECUTION_INSERT_COLUMNS, EXECUTION_INSERT_FIELDS, WEBHOOK_COLUMNS, WEBHOOK_FIELDS, readers } from '../rows.js';

/** One `BEGIN IMMEDIATE` transaction: its COMMIT throws on failure, unlike a lone .get()'s sqlite3_reset. */
export type Transactional = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => Promise<R>;

export type Paged<R> = R & { page_rows: number };

export const read = readers<string, string>({ json: (v) => JSON.parse(v), time: (v) => v });

const placeholders = (count: number) => Array(count).fill('?').join(', ');
export const EXECUTION_INSERT = `INSERT INTO executions (${EXECUTION_INSERT_COLUMNS}) VALUES (${placeholders(EXECUTION_INSERT_FIELDS)})`;
export const WEBHOOK_INSERT = `INSERT INTO webhook_deliveries (${WEBHOOK_COLUMNS}) VALUES (${placeholders(WEBHOOK_FIELDS)})`;
