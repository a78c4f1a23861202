import type { EvidenceRange, ExecutionExport } from '../types.js';
import { evidenceColumns, evidenceWhere, type EvidenceColumns } from '../rows.js';
import { read, type PostgresDatabase } from './database.js';

const RULES = `(SELECT coalesce(jsonb_agg(jsonb_build_object('id', r->>'objectId', 'status', r->'result'->>'status') ORDER BY n), '[]')
  FROM jsonb_array_elements(results) WITH ORDINALITY AS rule(r, n))`;
const DIGESTS = "(SELECT coalesce(jsonb_agg(c->>'sha256' ORDER BY n), '[]') FROM jsonb_array_elements(credentials) WITH ORDINALITY AS digest(c, n))";
const COLUMNS = evidenceColumns(RULES, DIGESTS);

function ranged(range: EvidenceRange): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  const where = evidenceWhere(range, param);
  return { sql: `FROM executions WHERE ${where} ORDER BY created_at, seq`, values };
}

/**
 * Keyset pages, each its own short statement on any pooled connection: a cursor held while a slow client reads would
 * keep a connection of the pool, and a snapshot that holds back vacuum, for as long as that client takes.
 */
export function postgresExport({ query }: PostgresDatabase): ExecutionExport {
  return {
    async evidencePage(range, limit) {
      const { sql, values } = ranged(range);
      const { rows } = await query<EvidenceColumns<unknown, Date>>(`SELECT ${COLUMNS} ${sql} LIMIT $${values.length + 1}`, [...values, limit]);
      return rows.map(read.evidence);
    },
    async evidenceCut(range, n) {
      const { sql, values } = ranged(range);
      const { rows: [row, next] } = await query<{ created_at: Date; seq: number }>(`SELECT created_at, seq ${sql} LIMIT 2 OFFSET $${values.length + 1}`, [...values, n - 1]);
      return { ...(row && { key: { createdAt: row.created_at.toISOString(), seq: row.seq } }), more: next !== undefined };
    },
  };
}
