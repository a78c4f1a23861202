import type { ScenarioHead, ScenarioPage, ScenarioRepository } from '../types.js';
import { SCENARIO_COLUMNS, PAGE_MAX_BYTES, pageWithinBytes, pageWithinBytesSql, type ScenarioColumns } from '../rows.js';
import { isUniqueViolation, ScenarioIdTaken } from '../errors.js';
import { REVISION_AFTER_KEPT } from '../revision-rows.js';
import { read, type Paged, type PostgresDatabase } from './database.js';
import { writeRevised } from './revisions.js';

type Row = ScenarioColumns<unknown, Date>;
const COLS = SCENARIO_COLUMNS;
// Listings are bounded in bytes too (PAGE_MAX_BYTES), measured on the JSON text (jsonb's, a little longer than the
// response's). Parameters: the filter's, then $n = limit, $n+1 = budget, and the projects last where filtered.
const scenarioPage = (where: string) => pageWithinBytesSql({
  table: 'scenarios', columns: COLS, where, order: 'ASC', size: 'octet_length(input::text)', limit: '$2', budget: '$3',
});
const SCENARIO_PAGE = scenarioPage('seq > $1');
const SCENARIO_PAGE_IN = scenarioPage('seq > $1 AND project_id = ANY($4)');

export function postgresScenarios(db: PostgresDatabase): ScenarioRepository {
  const { query, write } = db;
  // A scenario's revisions are kept in the transaction that writes it.
  const revised = writeRevised(db);
  return {
    async create(id, input, now, revise) {
      return revised(
        `INSERT INTO scenarios (id, input, project_id, revision, created_at, updated_at)
         VALUES ($1, $2, $3, 1, $4, $4) ON CONFLICT DO NOTHING RETURNING ${COLS}`,
        [id, JSON.stringify(input), input.projectId ?? null, now],
        revise,
      );
    },
    // Lookups by id within a scope read at most two rows: enough to tell one scenario from an ambiguous id.
    async find(id, scope) {
      const { rows } = scope
        ? await query<Row>(`SELECT ${COLS} FROM scenarios WHERE id = $1 AND COALESCE(project_id, '') = ANY($2) ORDER BY seq LIMIT 2`, [id, scope])
        : await query<Row>(`SELECT ${COLS} FROM scenarios WHERE id = $1 ORDER BY seq LIMIT 2`, [id]);
      return rows.map(read.scenario);
    },
    async heads(id, scope) {
      const { rows } = scope
        ? await query<ScenarioHead>("SELECT seq, revision, shadow_revision AS shadow FROM scenarios WHERE id = $1 AND COALESCE(project_id, '') = ANY($2) ORDER BY seq LIMIT 2", [id, scope])
        : await query<ScenarioHead>('SELECT seq, revision, shadow_revision AS shadow FROM scenarios WHERE id = $1 ORDER BY seq LIMIT 2', [id]);
      return rows;
    },
    async list(limit, after = 0, projects): Promise<ScenarioPage> {
      const { rows } = projects
        ? await query<Paged<Row>>(SCENARIO_PAGE_IN, [after, limit + 1, PAGE_MAX_BYTES, projects])
        : await query<Paged<Row>>(SCENARIO_PAGE, [after, limit + 1, PAGE_MAX_BYTES]);
      return pageWithinBytes(rows, limit, read.scenario);
    },
    async update(seq, input, expectedRevision, now, revise) {
      try {
        return await revised(
          `UPDATE scenarios SET input = $1, project_id = $2, ${REVISION_AFTER_KEPT}, updated_at = $3
           WHERE seq = $4 AND revision = $5 RETURNING ${COLS}`,
          [JSON.stringify(input), input.projectId ?? null, now, seq, expectedRevision],
          revise,
          seq,
        );
      } catch (err) {
        if (isUniqueViolation(err)) throw new ScenarioIdTaken(input.projectId ?? null);
        throw err;
      }
    },
    async delete(seq) {
      const { rowCount } = await write('DELETE FROM scenarios WHERE seq = $1', [seq]);
      return (rowCount ?? 0) > 0;
    },
  };
}
