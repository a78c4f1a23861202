import type Database from 'better-sqlite3';
import { DEPLOYMENT_DELIVERY_INSERT, PAGE_MAX_BYTES, webhookValues } from '../rows.js';
import {
  PURGE_REVISIONS, REVISION_ONE, REVISION_PAGE, REVISION_RAN, insertRevisionsSql, numbered, readRevision, revisionPage, revisionValues,
  type PagedRevision, type RevisionColumns,
} from '../revision-rows.js';
import type { Revise, ScenarioRevisionRepository, ScenarioRow } from '../types.js';

/** What the scenario writes (`keep`, `propose`) and the purge (`purge`) run inside their own transactions. */
export interface RevisionWrites {
  keep(row: ScenarioRow, revise: Revise | undefined): void;
  /** `row`: the scenario as it would be; `base`: its live revision. */
  propose(row: ScenarioRow, base: number, revise: Revise): void;
  purge(createdBefore: string): void;
}

export function sqliteRevisions(db: Database.Database): { repository: ScenarioRevisionRepository; writes: RevisionWrites } {
  const page = db.prepare<[Record<string, unknown>], PagedRevision>(REVISION_PAGE);
  const one = db.prepare<[Record<string, unknown>], RevisionColumns>(REVISION_ONE);
  const ran = db.prepare<[Record<string, unknown>], RevisionColumns>(REVISION_RAN);
  const purge = db.prepare<[Record<string, unknown>]>(PURGE_REVISIONS);
  const insert = db.prepare<unknown[]>(insertRevisionsSql(1, () => '?'));
  const deliver = db.prepare<unknown[]>(DEPLOYMENT_DELIVERY_INSERT(() => '?'));
  const kept = db.prepare<[number, number]>('SELECT 1 FROM scenario_revisions WHERE scenario_seq = ? AND revision = ?').pluck();

  const repository: ScenarioRevisionRepository = {
    async listRevisions(incarnation, limit, after = 0) {
      return revisionPage(page.all(numbered([incarnation, after, limit + 1, PAGE_MAX_BYTES])), limit);
    },
    async getRevision(incarnation, revision) {
      const row = one.get(numbered([incarnation, revision]));
      return row ? readRevision(row) : undefined;
    },
    async revisionRan(run) {
      const row = ran.get(numbered([run.scenarioId, run.projectId ?? '', run.scenarioRevision, run.scenarioDigest ?? '', run.createdAt]));
      return row ? readRevision(row) : undefined;
    },
  };

  /** In the caller's transaction; the replaced revision made only where it is missing. */
  const keep = (row: ScenarioRow, revise: Revise | undefined, base: number | null = null) => {
    if (!revise) return;
    const { made, replaced, deliveries = [] } = revise(row);
    if (replaced && kept.get(row.seq, replaced.revision) === undefined) insert.run(...revisionValues(row, replaced.draft()));
    insert.run(...revisionValues(row, made, base));
    for (const d of deliveries) deliver.run(...webhookValues(d), row.input.projectId ?? null);
  };

  return {
    repository,
    writes: { keep, propose: (row, base, revise) => keep(row, revise, base), purge: (createdBefore) => purge.run(numbered([createdBefore])) },
  };
}
