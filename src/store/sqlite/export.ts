import type Database from 'better-sqlite3';
import type { EvidenceRange, ExecutionExport } from '../types.js';
import { evidenceColumns, evidenceWhere, type EvidenceColumns } from '../rows.js';
import { read, statementCache } from './database.js';

const RULES = `(SELECT json_group_array(json_object('id', json_extract(value, '$.objectId'), 'status', json_extract(value, '$.result.status')))
  FROM json_each(results))`;
const DIGESTS = "(SELECT json_group_array(json_extract(value, '$.sha256')) FROM json_each(credentials))";
const COLUMNS = evidenceColumns(RULES, DIGESTS);

/** The index is named: with a scenario filter the planner would sort that scenario's records for every page. */
function ranged(range: EvidenceRange): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return '?';
  };
  const where = evidenceWhere(range, param);
  const index = range.project === undefined ? 'executions_period' : 'executions_project_period';
  return { sql: `FROM executions INDEXED BY ${index} WHERE ${where} ORDER BY created_at, seq`, values };
}

/** Reads on the request thread's connection, a page per call: nothing is held between pages. */
export function sqliteExport(db: Database.Database): ExecutionExport {
  const prepared = statementCache(db);
  return {
    async evidencePage(range, limit) {
      const { sql, values } = ranged(range);
      const rows = prepared(`SELECT ${COLUMNS} ${sql} LIMIT ?`).all(...values, limit) as EvidenceColumns<string, string>[];
      return rows.map(read.evidence);
    },
    async evidenceCut(range, n) {
      const { sql, values } = ranged(range);
      const [row, next] = prepared(`SELECT created_at, seq ${sql} LIMIT 2 OFFSET ?`).all(...values, n - 1) as { created_at: string; seq: number }[];
      return { ...(row && { key: { createdAt: row.created_at, seq: row.seq } }), more: next !== undefined };
    },
  };
}
