import type Database from 'better-sqlite3';
import type { Revise, ScenarioHead, ScenarioPage, ScenarioRepository } from '../types.js';
import { SCENARIO_COLUMNS, PAGE_MAX_BYTES, pageWithinBytes, pageWithinBytesSql, type ScenarioColumns } from '../rows.js';
import { isUniqueViolation, ScenarioIdTaken } from '../errors.js';
import { REVISION_AFTER_KEPT } from '../revision-rows.js';
import { read, type Paged, type Transactional } from './database.js';
import type { RevisionWrites } from './revisions.js';

type Row = ScenarioColumns<string, string>;
const cols = SCENARIO_COLUMNS;

export function sqliteScenarios(db: Database.Database, write: Transactional, revisions: RevisionWrites): ScenarioRepository {
  const insert = db.prepare<[string, string, string | null, string, string], Row>(
    `INSERT INTO scenarios (id, input, project_id, revision, created_at, updated_at)
     VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING RETURNING ${cols}`,
  );
  // Lookups by id within a scope read at most two rows: enough to tell one scenario from an ambiguous id.
  const select = db.prepare<[string], Row>(`SELECT ${cols} FROM scenarios WHERE id = ? ORDER BY seq LIMIT 2`);
  const selectIn = db.prepare<[string, string], Row>(
    `SELECT ${cols} FROM scenarios WHERE id = ? AND COALESCE(project_id, '') IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT 2`,
  );
  const selectHeads = db.prepare<[string], ScenarioHead>('SELECT seq, revision, shadow_revision AS shadow FROM scenarios WHERE id = ? ORDER BY seq LIMIT 2');
  const selectHeadsIn = db.prepare<[string, string], ScenarioHead>(
    "SELECT seq, revision, shadow_revision AS shadow FROM scenarios WHERE id = ? AND COALESCE(project_id, '') IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT 2",
  );
  // Listings are bounded in bytes too (PAGE_MAX_BYTES); octet_length reads a value's size, not the value.
  const scenarioPage = (where: string) => pageWithinBytesSql({
    table: 'scenarios', columns: cols, where, order: 'ASC', size: 'octet_length(input)', limit: '?', budget: '?',
  });
  const page = db.prepare<[number, number, number], Paged<Row>>(scenarioPage('seq > ?'));
  const pageIn = db.prepare<[number, string, number, number], Paged<Row>>(
    scenarioPage('seq > ? AND project_id IN (SELECT value FROM json_each(?))'),
  );
  const cas = db.prepare<[string, string | null, string, number, number], Row>(
    `UPDATE scenarios SET input = ?, project_id = ?, ${REVISION_AFTER_KEPT}, updated_at = ?
     WHERE seq = ? AND revision = ? RETURNING ${cols}`,
  );
  const remove = db.prepare<[number]>('DELETE FROM scenarios WHERE seq = ?');
  // A scenario's revisions are kept in the transaction that writes it.
  const revised = (row: Row | undefined, revise: Revise | undefined) => {
    const scenario = row && read.scenario(row);
    if (scenario) revisions.keep(scenario, revise);
    return scenario ?? null;
  };
  const createTx = write((revise: Revise | undefined, ...args: Parameters<typeof insert.get>) => revised(insert.get(...args), revise));
  const casTx = write((revise: Revise | undefined, ...args: Parameters<typeof cas.get>) => revised(cas.get(...args), revise));
  const removeTx = write((seq: number) => remove.run(seq));

  return {
    async create(id, input, now, revise) {
      return createTx(revise, id, JSON.stringify(input), input.projectId ?? null, now, now);
    },
    async find(id, scope) {
      return (scope ? selectIn.all(id, JSON.stringify(scope)) : select.all(id)).map(read.scenario);
    },
    async heads(id, scope) {
      return scope ? selectHeadsIn.all(id, JSON.stringify(scope)) : selectHeads.all(id);
    },
    async list(limit, after = 0, projects): Promise<ScenarioPage> {
      const rows = projects
        ? pageIn.all(after, JSON.stringify(projects), limit + 1, PAGE_MAX_BYTES)
        : page.all(after, limit + 1, PAGE_MAX_BYTES);
      return pageWithinBytes(rows, limit, read.scenario);
    },
    async update(seq, input, expectedRevision, now, revise) {
      try {
        return await casTx(revise, JSON.stringify(input), input.projectId ?? null, now, seq, expectedRevision);
      } catch (err) {
        if (isUniqueViolation(err)) throw new ScenarioIdTaken(input.projectId ?? null);
        throw err;
      }
    },
    async delete(seq) {
      return (await removeTx(seq)).changes > 0;
    },
  };
}
