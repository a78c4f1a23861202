/** Revision rows: the same columns, types and SQL in both databases. */
import type { RevisionDraft, RevisionPage, RevisionState, ScenarioRevision, ScenarioRow } from './types.js';

export interface RevisionColumns {
  scenario_seq: number;
  revision: number;
  scenario_id: string;
  project_id: string | null;
  content: string;
  digest: string;
  patch: string | null;
  author: string | null;
  created_at: string;
  state: RevisionState;
  base_revision: number | null;
  decided_by: string | null;
  decided_at: string | null;
}

export type PagedRevision = RevisionColumns & { page_rows: number | string };

const REVISION_COLUMNS = 'scenario_seq, revision, scenario_id, project_id, content, digest, patch, author, created_at, state, base_revision, decided_by, decided_at';
const REVISION_FIELDS = REVISION_COLUMNS.split(',').length;

export const readRevision = (r: RevisionColumns): ScenarioRevision => ({
  incarnation: Number(r.scenario_seq),
  scenarioId: r.scenario_id,
  projectId: r.project_id,
  revision: r.revision,
  content: r.content,
  digest: r.digest,
  patch: r.patch,
  author: r.author,
  createdAt: r.created_at,
  state: r.state,
  baseRevision: r.base_revision,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at,
});

/** `base`: a proposal's live revision. */
export const revisionValues = (row: ScenarioRow, d: RevisionDraft, base: number | null = null) => [
  row.seq, d.revision, row.id, d.projectId, d.content, d.digest, d.patch, d.author, d.createdAt,
  base === null ? 'live' : 'proposed', base, null, null,
];

/** PostgreSQL's `$n` placeholders are named parameters in SQLite. */
export const numbered = (values: readonly unknown[]) => Object.fromEntries(values.map((v, k) => [k + 1, v]));

export const REVISION_PAGE = `WITH page AS (
      SELECT revision, octet_length(content) + COALESCE(octet_length(patch), 0) AS bytes FROM scenario_revisions
      WHERE scenario_seq = $1 AND revision > $2 ORDER BY revision LIMIT $3
    ), sized AS (
      SELECT revision, row_number() OVER w AS n, sum(bytes) OVER w AS running, count(*) OVER () AS page_rows FROM page WINDOW w AS (ORDER BY revision)
    )
    SELECT ${REVISION_COLUMNS.split(', ').map((c) => `t.${c}`).join(', ')}, sized.page_rows
    FROM sized JOIN scenario_revisions t ON t.scenario_seq = $1 AND t.revision = sized.revision
    WHERE sized.n = 1 OR sized.running <= $4 ORDER BY t.revision`;

export function revisionPage(rows: readonly PagedRevision[], limit: number): RevisionPage {
  const items = rows.slice(0, limit).map(readRevision);
  const last = items.at(-1);
  const cut = rows.length > limit || rows.length < Number(rows[0]?.page_rows ?? 0);
  return last && cut ? { items, next: last.revision } : { items };
}

/** By digest where kept (same digest, same rules); the incarnation live then first, as instances' clocks differ. */
export const REVISION_RAN = `SELECT ${REVISION_COLUMNS} FROM scenario_revisions WHERE scenario_id = $1 AND COALESCE(project_id, '') = $2
  AND revision = $3 AND ($4 = '' OR digest = $4) AND ($4 <> '' OR created_at <= $5)
  ORDER BY CASE WHEN created_at <= $5 THEN 0 ELSE 1 END, scenario_seq DESC LIMIT 1`;

export const REVISION_ONE = `SELECT ${REVISION_COLUMNS} FROM scenario_revisions WHERE scenario_seq = $1 AND revision = $2`;

/** A draft of the revision a write replaced only fills a gap. */
export const insertRevisionsSql = (rows: number, placeholder: (k: number) => string) => `INSERT INTO scenario_revisions (${REVISION_COLUMNS}) VALUES ${
  Array.from({ length: rows }, (_, r) => `(${Array.from({ length: REVISION_FIELDS }, (_, k) => placeholder(r * REVISION_FIELDS + k)).join(', ')})`).join(', ')
} ON CONFLICT DO NOTHING`;

/** Revisions of deleted scenarios no execution kept past the cut ($1) ran; matched loosely, so kept when in doubt. */
export const PURGE_REVISIONS = `DELETE FROM scenario_revisions AS r WHERE scenario_seq NOT IN (SELECT seq FROM scenarios) AND NOT EXISTS (
  SELECT 1 FROM executions e WHERE e.scenario_id = r.scenario_id AND COALESCE(e.project_id, '') = COALESCE(r.project_id, '')
    AND e.scenario_revision = r.revision AND e.created_at >= $1)`;

/** After the live revision and every one kept, so a proposal and a later write never share a number. */
export const NEXT_REVISION = `SELECT CASE WHEN COALESCE(MAX(revision), 0) > $2 THEN MAX(revision) ELSE $2 END + 1 AS next
  FROM scenario_revisions WHERE scenario_seq = $1`;

export const APPROVE_REVISION = `UPDATE scenario_revisions SET state = 'approved', decided_by = $3, decided_at = $4, content = $5, digest = $6
  WHERE scenario_seq = $1 AND revision = $2 AND state = 'proposed'`;

export const REJECT_REVISION = `UPDATE scenario_revisions SET state = 'rejected', decided_by = $3, decided_at = $4
  WHERE scenario_seq = $1 AND revision = $2 AND state = 'proposed'`;

/** A write's revision in `UPDATE scenarios`: after the live one and after any proposal kept. */
export const REVISION_AFTER_KEPT = `revision = 1 + (SELECT CASE WHEN MAX(r.revision) > scenarios.revision THEN MAX(r.revision) ELSE scenarios.revision END
  FROM scenario_revisions r WHERE r.scenario_seq = scenarios.seq)`;
