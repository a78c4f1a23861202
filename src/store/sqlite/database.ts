import type Database from 'better-sqlite3';
import { EXECUTION_INSERT_COLUMNS, EXECUTION_INSERT_FIELDS, WEBHOOK_COLUMNS, WEBHOOK_FIELDS, readers } from '../rows.js';

/** One `BEGIN IMMEDIATE` transaction: its COMMIT throws on failure, unlike a lone .get()'s sqlite3_reset. */
export type Transactional = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => Promise<R>;

export type Paged<R> = R & { page_rows: number };

/** Statements whose SQL is built at run time from a few fixed shapes (filters given or not), each prepared once. */
export function statementCache(db: Database.Database): (sql: string) => Database.Statement<unknown[]> {
  const statements = new Map<string, Database.Statement<unknown[]>>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare<unknown[]>(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}

export const read = readers<string, string>({ json: (v) => JSON.parse(v), time: (v) => v });

const placeholders = (count: number) => Array(count).fill('?').join(', ');
export const EXECUTION_INSERT = `INSERT INTO executions (${EXECUTION_INSERT_COLUMNS}) VALUES (${placeholders(EXECUTION_INSERT_FIELDS)})`;
export const WEBHOOK_INSERT = `INSERT INTO webhook_deliveries (${WEBHOOK_COLUMNS}) VALUES (${placeholders(WEBHOOK_FIELDS)})`;
