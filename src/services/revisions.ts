import type { Scenario } from '../schemas/scenario.js';
import type { RevisionPage, RevisionRun, ScenarioRepository, ScenarioRevision, ScenarioRevisionRepository } from '../store/types.js';
import { RevisionNotFound } from './errors.js';
import type { Access } from './access.js';
import { findScenarioIn } from './scenarios.js';

export type { ScenarioRevision } from '../store/types.js';

/** An execution's revision: its link, its rules when asked. */
export type RevisionRan = { links?: { revision: string }; rules?: Scenario['queryConfigurations'] };

/** Narrowed by `?projectId=` as a scenario lookup is. */
export const reaches = (access: Access, projectId: string | null) =>
  access.sees(projectId) && (access.projects === undefined || access.projects.includes(projectId ?? ''));

export class RevisionService {
  constructor(private readonly store: ScenarioRepository & ScenarioRevisionRepository) {}

  /** Revisions from when it was in a project the caller lacks are left out. */
  async list(access: Access, id: string, limit: number, after?: number): Promise<RevisionPage> {
    const row = await findScenarioIn(this.store, access, id);
    const page = await this.store.listRevisions(row.seq, limit, after);
    return { ...page, items: page.items.filter((r) => reaches(access, r.projectId)) };
  }

  async get(access: Access, id: string, n: number, incarnation?: number): Promise<ScenarioRevision> {
    const seq = incarnation ?? (await findScenarioIn(this.store, access, id)).seq;
    const revision = await this.store.getRevision(seq, n);
    if (!revision || revision.scenarioId !== id || !reaches(access, revision.projectId)) throw new RevisionNotFound(id, n);
    return revision;
  }

  /** The caller has checked the execution's project. */
  async ranBy(run: RevisionRun, withRules: boolean): Promise<RevisionRan> {
    const ran = await this.store.revisionRan(run);
    if (!ran) return {};
    const links = { revision: revisionPath(ran) };
    if (!withRules) return { links };
    const content: { input: Scenario } = JSON.parse(ran.content);
    return { links, rules: content.input.queryConfigurations };
  }
}

/** Names the incarnation: the one that ran, after a delete and a new create too. */
export const revisionPath = (r: ScenarioRevision) =>
  `/compliance/scenarios/${encodeURIComponent(r.scenarioId)}/revisions/${r.revision}?incarnation=${r.incarnation}` +
  (r.projectId === null ? '' : `&projectId=${encodeURIComponent(r.projectId)}`);
